/* The call-stack samples of databases (gpuprof sys) as one call tree, merged across
 * processes and inputs by the functions on the path, for gpuprof profile and the HOT
 * FUNCTIONS of gpuprof summary. */
#ifndef GPUPROF_ANALYSIS_PROFILE_H
#define GPUPROF_ANALYSIS_PROFILE_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

#include "util/error.h"
#include "util/strbuf.h"

struct profile_filter {
	long long tid;     /* -1: every thread */
	double from, to;   /* seconds from each process's start; to < 0: to its end */
	const char *range; /* only inside marker ranges of this name on the same thread */
	int device;        /* 1: only while a kernel or copy of the process ran on a device;
			    * -1: only while none did; 0: either */
	int64_t process_id; /* only the process of this id in the database; 0: every one */
};

#define PROFILE_ALL { -1, 0, -1, NULL, 0, 0 }

/* A call: its caller's node, its function and module, its samples (total: on the stack
 * there; self: running there). */
struct profile_node {
	uint32_t parent;
	char *function, *module;
	uint64_t total, self;
	uint64_t launches;  /* profile_gather_launches(): on a kernel's or copy's node, how
			     * many it counts */
	uint32_t first_child, next_sibling; /* after profile_link() */
};

struct profile_tree {
	struct profile_node *nodes; /* nodes[0]: the root */
	size_t count;
	uint32_t *slots;
	size_t slot_count;
	uint64_t samples;
	/* samples the kernel lost (its buffer full) in the time the filter keeps, of any
	 * thread: how many, and from when to when (ns from their process's start) */
	uint64_t lost;
	int64_t lost_from, lost_to;
	/* profile_gather_launches(): weights are device ns, not samples */
	int device_time;
	/* with device time: ns per unit the flat profile prints in (0: ns) */
	double unit_ns;
	uint64_t launches;
	/* set before gathering: keep the frames that only pass a call on (see
	 * profile_passes_through()); by default they are left out of the paths, and
	 * where they are innermost beneath a Python function, that function is (the
	 * Python view: the interpreter ran it) */
	int all_frames;
	/* set before gathering: a frame is its function at the line running there (its
	 * name followed by " (file:line)"), each line its own call */
	int lines;
};

/* Whether a frame is one that, where it is not the innermost, only passes a call on:
 * the Python interpreter's (its executable, libpython: the Python functions stand for
 * it) and the C library's and loader's (libc, ld.so, _start). */
int profile_passes_through(const char *function, const char *module);

void profile_init(struct profile_tree *t);
/* Adds the samples of db that the filter keeps (none from a database of schema 3.0), and
 * the samples lost in its time window. */
int profile_gather(sqlite3 *db, const struct profile_filter *f, struct profile_tree *t,
		   struct error *err);
/* Instead of samples, the launches of db with a call stack (--launch-stacks) that the
 * filter keeps (thread, time, marker range of the launch; not the device filter), each
 * weighted by the device time of the kernel or copy it launched, which becomes a node
 * beneath the call (the kernel's name, or "[copy host to device]"..., module
 * "[device]"): the tree's weights are then ns, device_time is set and launches counted. */
int profile_gather_launches(sqlite3 *db, const struct profile_filter *f,
			    struct profile_tree *t, struct error *err);
void profile_release(struct profile_tree *t);

/* What each filter alone finds in db, added to *out, to say which one emptied a
 * profile: the samples (or launch stacks) of every thread, those of the filter's
 * thread, and the marker ranges its --range names. */
struct profile_filter_counts {
	uint64_t all, of_thread, ranges_named;
};
int profile_filter_count(sqlite3 *db, const struct profile_filter *f, int launches,
			 struct profile_filter_counts *out, struct error *err);

/* "call-stack samples: N" for a title, and "; M more lost by the kernel between A s and
 * B s" when the kernel lost some in the time shown; for launches, their count and device
 * time. */
void profile_count_text(const struct profile_tree *t, struct strbuf *out);

/* A function's samples: self (running), total (on the stack, once per sample however
 * deep its recursion). */
struct profile_function {
	const char *function, *module;
	uint64_t self, total;
};

/* The order of the flat profile: the most self samples first (where the time went),
 * or the most total (the calls it went through). */
enum profile_sort { PROFILE_SORT_SELF, PROFILE_SORT_TOTAL };

/* The functions of the tree in that order (ties: the other count, then the name);
 * returns how many. */
size_t profile_flat(const struct profile_tree *t, enum profile_sort sort,
		    struct profile_function **out);

/* The flat profile as one table of util/table.h (key and title as table_begin() takes
 * them), the first `limit` functions (0: all). */
int profile_flat_table(const struct profile_tree *t, enum profile_sort sort, int format,
		       const char *key, const char *title, size_t limit, struct error *err);

/* A launch site of profile_gather_launches()'s tree: the innermost frame of the user's
 * code (analysis/user-code.h) on the path of a launch of a kernel (or copy), else the
 * caller of the API function; the frame it called on the way (the library it launched
 * through: "" when it called the API itself); the API function; what was launched; the
 * launches and their device time. */
struct profile_launch_site {
	const char *function, *module; /* the site: "" when the API call was the root */
	const char *through;           /* the frame below the site on the path, or "" */
	const char *call;              /* the API function */
	const char *launched;          /* the kernel's name, or [copy ...] */
	uint64_t launches, ns;
};

/* The launch sites of the tree, the most device time first; returns how many. */
size_t profile_launch_sites(const struct profile_tree *t, struct profile_launch_site **out);

/* The launch sites as one table of util/table.h (key and title as table_begin() takes
 * them), the first `limit` (0: all), device times divided by divisor with `decimals`
 * in `units`. */
int profile_launch_sites_table(const struct profile_tree *t, int format, const char *key,
			       const char *title, size_t limit, double divisor, int decimals,
			       const char *units, struct error *err);

/* Fills first_child and next_sibling. */
void profile_link(struct profile_tree *t);

/* Appends one line of folded stacks (flamegraph.pl, inferno, speedscope) to out: the n
 * functions of a stack from the outermost, separated by ';' (a ';' in a name becomes
 * ':'), a space, its count of samples and a newline. */
void profile_folded_line(struct strbuf *out, const char *const *functions, size_t n,
			 uint64_t count);

/* Each stack of the tree that was sampled (self > 0) as a folded line into out. */
void profile_folded(const struct profile_tree *t, struct strbuf *out);

#endif
