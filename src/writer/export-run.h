/* What the two exports share (export.c from a database, export-recording.c from a
 * recording): the writers run over the events in order (export-run.c), with the flows
 * between launches and their work, the kernels' counters and kernel names truncated once. */
#ifndef GPUPROF_WRITER_EXPORT_RUN_H
#define GPUPROF_WRITER_EXPORT_RUN_H

#include <stddef.h>
#include <stdint.h>

#include "analysis/unwind.h"
#include "util/extsort.h"
#include "util/progress.h"
#include "writer/launch-stacks.h"
#include "writer/writer.h"

/* Kernel names truncated once each, kept for the whole export (see writer.h): by the
 * address of the full name, which is stable too. */
struct truncated {
	const char **full;
	char **names;
	size_t count, slot_count;
};

/* The ends of the flows that join an API call to the device work it enqueued (see
 * timeline_flow_id()), so that each flow is written with both its ends or none. The
 * device work in the output is known before the export begins; the calls are met as
 * they go by. Events come in start order, a call before its work: a call starts a flow
 * when its work is in the output and has not gone by, and the work ends the flow when
 * its call went by first. */
struct flow_end {
	int64_t process_id, correlation_id;
	uint8_t state;
};

/* The work is sorted on disk (an external sort) and looked up in a shared mapping of a
 * temporary file: its pages are the kernel's to keep or drop, so that the export holds
 * no memory per event. */
#define EXPORT_FLOW_PARTS 4
struct flows {
	struct extsort *adding[EXPORT_FLOW_PARTS]; /* until ready: each part's work */
	unsigned parts;               /* parts added (export_flows_split; 0: one) */
	struct tempfile file;         /* from ready: the work sorted, without repeats */
	int has_file;
	struct flow_end *work;        /* the file mapped */
	size_t count;
	size_t next[2];               /* after the last found for API calls, for work: where
					 the next is likely (events come by start, their
					 correlation ids mostly rising) */
};

/* The kernels' hardware counters, by process and correlation id: kernel events point
 * into values, which stay valid until the export ends. */
struct counter_index {
	int64_t (*keys)[2];           /* process id, correlation id; sorted */
	struct event_counter *values; /* in the order of keys */
	size_t count, alloc;
};

/* One pass of events through a set of writers. */
struct export_run {
	const struct writer_ops *const *writers;
	void *states[8];
	int count, begun;
	const struct output_options *options;
	struct truncated truncated;
	int timeline; /* one of the writers is a timeline */
	struct flows flows;
	struct progress_task *progress;
	uint64_t events;
	struct counter_index counters;
	struct launch_stack_index launch_stacks; /* for the timelines' API slices */
	struct {                  /* each process's start, for the time window */
		int64_t process_id, start_ns;
	} *starts;
	size_t start_count;
	uint64_t outside;         /* timed events left out by the window */
};

/* The flows' work added in parts, each part by one thread at a time, before any is
 * added: parts at most EXPORT_FLOW_PARTS (the memory of one sort shared among them). */
void export_flows_split(struct flows *f, unsigned parts);
/* The flows' work: a kernel or copy of that process and correlation id (none for 0), in
 * part (0 unless split); export_flows_ready() sorts them once all are added. 0, or -1
 * with err set (a temporary file that cannot be written). */
int export_flows_add(struct flows *f, unsigned part, int64_t process_id,
		     int64_t correlation_id, struct error *err);
int export_flows_ready(struct flows *f, struct error *err);
/* A kernel's counter, for its event. */
void export_counters_add(struct counter_index *ci, int64_t process_id, int64_t correlation_id,
			 const char *name, double value);

/* Begins every writer: 0, or -1 with err. */
int export_run_begin(struct export_run *run, const struct writer_ops *const *writers, int count,
		     const struct output_options *options, struct error *err);
/* One event to every writer (its name truncated, its counters, flow and launch stack
 * attached first). */
int export_run_event(struct export_run *run, struct event *e, struct error *err);
/* Ends every writer that began: normally, or discarding its files when failed. */
int export_run_end(struct export_run *run, int failed, struct strbuf *written,
		   struct error *err);
/* A slice of the sampled stacks as a timeline event. */
void export_event_from_slice(const struct sample_stacks *stacks, const struct sample_slice *s,
			     struct event *e);

#endif
