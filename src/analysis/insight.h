/* Findings that explain a recorded run (gpuprof advise, gpuprof summary's findings): the
 * run read back from a database into per-process arrays, and rules over them, each in
 * its own file under src/analysis/rules/ and listed in insight.c's table. A finding
 * says what it costs (ns, and % of its process's recorded time), the evidence (time
 * ranges, kernels, API calls, threads) and what to change. */
#ifndef GPUPROF_ANALYSIS_INSIGHT_H
#define GPUPROF_ANALYSIS_INSIGHT_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

#include "util/error.h"
#include "util/strbuf.h"

/* What a device did: a kernel or a memory command, on one queue. */
enum insight_kind { INSIGHT_KERNEL, INSIGHT_COPY, INSIGHT_OTHER_MEMORY };

/* The memory kinds and copy directions as the database codes them (docs/SCHEMA.md). */
enum { INSIGHT_PAGEABLE = 1 };
enum { INSIGHT_HOST_TO_DEVICE = 1, INSIGHT_DEVICE_TO_HOST = 2 };

struct insight_activity {
	int64_t start, end;           /* ns, trace clock */
	int64_t queue;                /* the process's queue index; -1 when unknown */
	int64_t correlation_id;       /* links it to the API call that enqueued it */
	int64_t tid;                  /* the thread that enqueued it */
	int64_t bytes;                /* copies: bytes moved */
	const char *name;             /* kernel name, or the copy's function */
	enum insight_kind kind;
	int direction, src_memory_kind, dst_memory_kind; /* copies (database codes) */
	/* kernels measured with the speed-of-light counters (gpuprof trace --pmc, compute
	 * profile -b 2): the busiest unit of the SMs and of memory, % of peak; NAN without */
	double sm_pct, memory_pct;
};

/* An API call at the top of its thread's stack of calls (a driver call made by a
 * runtime call is left out: the runtime call covers it). */
struct insight_call {
	int64_t tid, start, end, correlation_id; /* ns */
	const char *name;
	unsigned launch : 1;          /* it enqueued a kernel */
	unsigned blocking : 1;        /* it enqueued a copy and returned after its end */
	unsigned waited : 1;          /* a launch its thread waited for (a wait call, or a
					 blocking copy) before it launched again */
};

/* A call-stack sample: the function it was in. */
struct insight_sample {
	int64_t tid, time;            /* ns */
	const char *function;
};

/* A device of a process and what ran on it, sorted by start. */
struct insight_device {
	int64_t agent;
	char *label;                  /* "GPU 1 (NVIDIA H100 80GB HBM3)" */
	struct insight_activity *items;
	size_t count;
	/* its busy intervals: the items merged where they overlap, sorted */
	struct insight_interval {
		int64_t start, end;
	} *busy;
	size_t busy_count;
	int64_t busy_ns, idle_ns;     /* idle: between the first start and the last end */
};

struct insight_process {
	int64_t id, pid;
	char *host;
	int64_t start, end;           /* ns: the recording's bounds */
	struct insight_device *devices;
	size_t device_count;
	struct insight_call *calls;   /* sorted by thread, then start */
	size_t call_count;
	struct insight_sample *samples; /* sorted by time */
	size_t sample_count;
	int has_calls, has_samples;   /* API calls / samples were recorded */
	/* correlation id -> index in calls of the top-level call (open addressing) */
	struct insight_link {
		int64_t correlation_id;
		size_t call;              /* index + 1; 0: an empty slot */
	} *links;
	size_t link_slots;
};

struct insight_run {
	char *path;
	struct insight_process *processes;
	size_t process_count;
	char **strings;               /* the names the arrays point to */
	size_t string_count;
};

/* Reads a database: 0, or -1 with err set. */
int insight_read(sqlite3 *db, const char *path, struct insight_run *run, struct error *err);
void insight_run_release(struct insight_run *run);

struct finding {
	const char *rule;             /* the rule's id */
	int64_t pid;
	char *device;                 /* the device's label; NULL for the process */
	int64_t cost_ns;
	double cost_pct;              /* of the process's recorded time */
	struct strbuf what;           /* one sentence: what happened */
	struct strbuf evidence;       /* lines: the numbers, time ranges, names, threads */
	struct strbuf advice;         /* what to change */
};

struct findings {
	struct finding *items;
	size_t count;
};

/* A rule: a name, a line of what it looks for, and its check of one process. */
struct insight_rule {
	const char *id;
	const char *title;
	void (*check)(const struct insight_process *p, struct findings *out);
};

extern const struct insight_rule insight_rules[];
extern const size_t insight_rule_count;

/* Every rule over every process of run, the findings added to out (most costly first
 * within a run). */
void insight_check(const struct insight_run *run, struct findings *out);
void findings_release(struct findings *f);

/* ---- for the rules ------------------------------------------------------------------- */

/* A new finding of rule id about process p (and device d, may be NULL) that costs
 * cost_ns: its texts are filled in by the rule. */
struct finding *finding_add(struct findings *out, const char *rule,
			    const struct insight_process *p, const struct insight_device *d,
			    int64_t cost_ns);

/* Whether an API call waits for the device (clFinish, cudaStreamSynchronize, ...). */
int insight_is_wait(const char *name);

/* The median of count values (sorted in place); 0 for none. */
int64_t insight_median(int64_t *values, size_t count);

/* A time in ns for people: "12.345 ms". */
void insight_duration(struct strbuf *out, int64_t ns);

/* The queues a device's work ran on, each once, in order of first use (malloc()ed into
 * *queues, NULL for none); returns how many. */
size_t insight_device_queues(const struct insight_device *d, int64_t **queues);

/* The process's calls of thread tid: the first and one past the last index. */
void insight_thread_calls(const struct insight_process *p, int64_t tid, size_t *first,
			  size_t *end);

/* The top-level call that enqueued an activity (by correlation id), NULL when none. */
const struct insight_call *insight_call_of(const struct insight_process *p,
					   const struct insight_activity *a);

/* What the host was doing during the device's idle gaps: the API calls it was in
 * (their names, with the share of the idle time), the idle time outside any call and,
 * where samples were taken, the functions sampled then; lines added to out. */
void insight_describe_gaps(const struct insight_process *p,
			   const struct insight_interval *gaps, size_t gap_count,
			   struct strbuf *out);

#endif
