/* Findings that explain a recorded run (gpuprof advise, gpuprof summary's findings): the
 * run streamed from a database, a process at a time in order of time, through rules
 * that keep state per device, thread, queue or name (never per event), each in its own
 * file under src/analysis/rules/ and listed in insight.c's table. A finding
 * says what it costs (ns, and % of its process's recorded time), the evidence (time
 * ranges, kernels, API calls, threads) and what to change. */
#ifndef GPUPROF_ANALYSIS_INSIGHT_H
#define GPUPROF_ANALYSIS_INSIGHT_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "util/error.h"
#include "util/strbuf.h"

/* What a device did: a kernel or a memory command, on one queue. */
enum insight_kind { INSIGHT_KERNEL, INSIGHT_COPY, INSIGHT_OTHER_MEMORY };

/* The memory kinds and copy directions as the database codes them (docs/SCHEMA.md). */
enum { INSIGHT_PAGEABLE = 1 };
enum { INSIGHT_HOST_TO_DEVICE = 1, INSIGHT_DEVICE_TO_HOST = 2 };

/* An API call at the top of its thread's stack of calls (a driver call made by a
 * runtime call is left out: the runtime call covers it). */
struct insight_call {
	int64_t tid, start, end;      /* ns */
	const char *name;             /* NULL where the stream does not carry it */
	unsigned launch : 1;          /* it enqueued a kernel */
	unsigned blocking : 1;        /* it enqueued a copy and returned after its end */
	unsigned waited : 1;          /* a launch its thread waited for (a wait call, or a
					 blocking copy) before it launched again */
};

struct insight_activity {
	int64_t start, end;           /* ns, trace clock */
	int64_t queue;                /* the process's queue index; -1 when unknown */
	size_t queue_index;           /* its place in its device's queues; SIZE_MAX: none */
	int64_t tid;                  /* the thread that enqueued it */
	int64_t bytes;                /* copies: bytes moved */
	const char *name;             /* kernel name, or the copy's function */
	enum insight_kind kind;
	int direction, src_memory_kind, dst_memory_kind; /* copies (database codes) */
	/* kernels measured with the speed-of-light counters (gpuprof trace --pmc, compute
	 * profile -b 2): the busiest unit of the SMs and of memory, % of peak; NAN without */
	double sm_pct, memory_pct;
	const struct insight_call *call; /* the top-level call that enqueued it; NULL: none */
};

struct insight_interval {
	int64_t start, end;
};

/* A device of a process. Its work is streamed in order of start; busy intervals are
 * its items merged where they overlap or touch. */
struct insight_device {
	size_t index;                 /* in its process's devices */
	int64_t agent;
	char *label;                  /* "GPU 1 (NVIDIA H100 80GB HBM3)" */
	int64_t kernels_from, kernels_to; /* its first kernel's start, last kernel's end;
					     from >= to: no kernel */
	/* while its items stream: the busy interval of the last item (merged so far), and
	 * the end of the interval before it (INT64_MIN: none) */
	struct insight_interval open;
	int64_t before_open;
	int64_t *queues;              /* the queues its work ran on, in order of first use */
	size_t queue_count;           /* (so far, while streaming) */
	/* after its items streamed: busy time, and idle time between the first start and
	 * the last end */
	int64_t busy_ns, idle_ns;
};

struct insight_engine;

struct insight_process {
	int64_t id, pid;
	char *host;
	int64_t start, end;           /* ns: the recording's bounds (its records' where the
					 process never ended cleanly) */
	struct insight_device *devices;
	size_t device_count;
	int has_calls, has_samples;   /* API calls / samples were recorded */
	struct insight_engine *engine; /* what replays need */
};

struct finding {
	const char *rule;             /* the rule's id */
	int64_t pid;
	char *device;                 /* the device's label; NULL for the process */
	int64_t cost_ns;
	double cost_pct;              /* of the time share_of names */
	const char *share_of;         /* what cost_pct is a share of: NULL for the process's
				       * recorded time (finding_share_of() gives the words) */
	struct strbuf what;           /* one sentence: what happened */
	struct strbuf evidence;       /* lines: the numbers, time ranges, names, threads */
	struct strbuf advice;         /* what to change */
	size_t order;                 /* found after the findings of lower order */
	int64_t from_ns, to_ns;       /* trace clock: where in the run it happens (a device's
				       * finding: its kernels' span); 0, 0: the whole process */
};

struct findings {
	struct finding *items;
	size_t count;
};

/* A rule: a name, a line of what it looks for, and its hooks into the stream of one
 * process: begin() makes its state; call() sees each top-level API call (by thread, then
 * start); item() each device's work (a device after another, each in order of start; the
 * device's open interval already holds the item); busy() each busy interval as it
 * closes, with the item that opens the next (NULL at the device's end); finish() adds
 * its findings and frees its state. Any hook but begin and finish may be NULL. The
 * state holds what a rule needs per device, thread, queue or name: never per event. */
struct insight_rule {
	const char *id;
	const char *title;
	void *(*begin)(const struct insight_process *p);
	void (*call)(void *state, const struct insight_process *p, const struct insight_call *c);
	void (*item)(void *state, const struct insight_process *p, const struct insight_device *d,
		     const struct insight_activity *a);
	void (*busy)(void *state, const struct insight_process *p, const struct insight_device *d,
		     const struct insight_interval *b, const struct insight_activity *next);
	void (*finish)(void *state, const struct insight_process *p, struct findings *out);
};

extern const struct insight_rule insight_rules[];
extern const size_t insight_rule_count;

/* The rules that look at a whole process or run rather than its stream: device memory
 * (memory-findings.c) and the ranks of an MPI run (mpi-ranks.c). */
struct insight_rule_name {
	const char *id, *title;
};
extern const struct insight_rule_name insight_run_rules[];
extern const size_t insight_run_rule_count;

/* What a caller sees of a run besides the findings (gpuprof report's lanes): each
 * process before its devices, each device before its busy intervals, every busy
 * interval, and each device after them (its busy_ns final). Any may be NULL. */
struct insight_observer {
	void *arg;
	void (*process)(void *arg, const struct insight_process *p);
	void (*device)(void *arg, const struct insight_process *p, const struct insight_device *d);
	void (*busy)(void *arg, const struct insight_process *p, const struct insight_device *d,
		     const struct insight_interval *b);
	void (*device_end)(void *arg, const struct insight_process *p,
			   const struct insight_device *d);
};

/* Every rule over every process of a database (opened with store_open), streamed: the
 * findings added to out (most costly first within the database), the observer (may be
 * NULL) told what ran. Memory holds a process's devices, threads, queues and names,
 * never its events: SQLite's temporary tables (in its temporary directory) carry those.
 * 0, or -1 with err set. */
int insight_check(sqlite3 *db, const char *path, const struct insight_observer *observer,
		  struct findings *out, struct error *err);
/* As insight_check(), and the analysis across MPI ranks it made is kept in *ranks
 * (analysis/mpi-ranks.h; released by the caller; zero ranks where none was recorded). */
struct mpi_ranks;
int insight_check_ranks(sqlite3 *db, const char *path, const struct insight_observer *observer,
			struct findings *out, struct mpi_ranks *ranks, struct error *err);
void findings_release(struct findings *f);
/* One finding as a block for people (gpuprof advise's text), numbered index. */
void finding_print_text(FILE *out, const struct finding *f, size_t index);
/* What a finding's cost_pct is a share of, in words: "the process's time" unless the
 * rule said otherwise (the ranks that waited, for mpi-imbalance). */
const char *finding_share_of(const struct finding *f);

/* ---- for the rules ------------------------------------------------------------------- */

/* A new finding of rule id about process p (and device d, may be NULL) that costs
 * cost_ns: its texts are filled in by the rule. */
struct finding *finding_add(struct findings *out, const char *rule,
			    const struct insight_process *p, const struct insight_device *d,
			    int64_t cost_ns);

/* Whether an API call waits for the device (clFinish, cudaStreamSynchronize, ...). */
int insight_is_wait(const char *name);

/* A device as findings name it, from its agent's type (database code), index and name:
 * "GPU 1 (NVIDIA H100)". */
void insight_agent_label(struct strbuf *out, int type, int64_t agent, const char *name);

/* SQL: the times a record aliased t may have; a record outside (a corrupt database) is
 * left out, so that no difference or sum of the rules' can overflow. */
#define INSIGHT_VALID_TIMES(t) t ".start >= 0 AND " t ".end >= " t ".start AND " t ".end <= " \
		       "4611686018427387904 AND " t ".end - " t ".start <= 1125899906842624"

/* A time or duration read from a database, bounded to [-2^61, 2^61]: a corrupt row's
 * times then never overflow a difference, or a sum of disjoint intervals. */
static inline int64_t insight_bounded(int64_t t)
{
	const int64_t bound = (int64_t)1 << 61;
	return t < -bound ? -bound : t > bound ? bound : t;
}

/* a + b, held at INT64_MAX or INT64_MIN rather than overflowing. */
static inline int64_t insight_add(int64_t a, int64_t b)
{
	int64_t sum;
	return __builtin_add_overflow(a, b, &sum) ? (b > 0 ? INT64_MAX : INT64_MIN) : sum;
}

/* A time in ns for people: "12.345 ms". */
void insight_duration(struct strbuf *out, int64_t ns);

/* The device's items streamed again (a rule that needs a second pass: a median), the
 * busy intervals merged as in the first: item() and busy() called as a rule's are, with
 * arg for state. An error ends the stream and is reported by insight_check. */
typedef void (*insight_item_fn)(void *arg, const struct insight_device *d,
				const struct insight_activity *a);
typedef void (*insight_busy_fn)(void *arg, const struct insight_device *d,
				const struct insight_interval *b,
				const struct insight_activity *next);
void insight_replay(const struct insight_process *p, const struct insight_device *d,
		    insight_item_fn item, insight_busy_fn busy, void *arg);

/* An exact median over a second pass: values added one at a time (kept by SQLite, not
 * in memory), then the median read (0 for none). */
struct insight_median;
struct insight_median *insight_median_begin(const struct insight_process *p);
void insight_median_add(struct insight_median *m, int64_t value);
int64_t insight_median_end(struct insight_median *m);

/* What the host was doing while device d sat idle in its gaps inside [from, to] (a gap
 * counts when the busy interval before it ends at from or later and the one after it
 * starts at to or earlier): the API calls it was in (their names, with the share of
 * the idle time), the idle time outside any call and, where samples were taken, the
 * functions sampled then; lines added to out. A second pass over the device's work. */
void insight_describe_gaps(const struct insight_process *p, const struct insight_device *d,
			   int64_t from, int64_t to, struct strbuf *out);

#endif
