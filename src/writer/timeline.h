/* The layout the timeline formats (pftrace, json) share: which track each event goes
 * on, when a slice ends, and the counters derived from the events.
 *
 * Events arrive as export gives them (processes, agents, then timed events in start
 * order). The timeline turns them into calls of its ops in time order:
 *  - a process track per process; a thread track per thread, for API calls;
 *  - a queue track per device queue or stream, for kernels and copies; a slice that
 *    overlaps another without nesting in it goes on an overlap track beneath (so that
 *    every track nests properly, as both viewers require);
 *  - counter tracks per device: bytes being copied, and device memory allocated; and one
 *    per metric series (gpuprof sys): the machine's, the process's and each GPU's;
 *  - slice ends and counter changes are held until no earlier event can follow, so the
 *    ops see one stream ordered by time (an end before a begin at the same time).
 * Memory is bounded by the number of tracks and of slices open at once, not by the
 * number of events. */
#ifndef GPUPROF_WRITER_TIMELINE_H
#define GPUPROF_WRITER_TIMELINE_H

#include <stdint.h>

#include "writer/writer.h"

enum track_kind { TRACK_PROCESS, TRACK_THREAD, TRACK_QUEUE, TRACK_COUNTER };

struct track {
	uint64_t uuid;        /* unique within the output, never 0 */
	uint64_t parent_uuid; /* the process track, or the track an overlap lane relieves;
			       * 0 for process tracks */
	enum track_kind kind;
	int64_t process_id, pid;
	int64_t tid;          /* thread tracks: the thread; others: a number unique within
			       * the process that is no thread id (for formats keyed by tid) */
	int64_t sort_index;   /* order among the process's tracks */
	int64_t start_ns;     /* process tracks: when the process began */
	const char *name;
	const char *process_label; /* process tracks: "command (host, rank N)" */
	const char *unit;     /* counter tracks: "bytes", or a metric's unit ("W", "%") */
};

struct timeline_ops {
	/* A track, announced before its first slice or counter value. */
	int (*track)(void *ctx, const struct track *t, struct error *err);
	/* A slice begins; e gives its end too. */
	int (*slice_begin)(void *ctx, const struct track *t, const struct event *e,
			   struct error *err);
	/* The last slice begun on t and not yet ended ends at ts. */
	int (*slice_end)(void *ctx, const struct track *t, int64_t ts, struct error *err);
	/* A counter takes a new value at ts. */
	int (*counter)(void *ctx, const struct track *t, int64_t ts, double value,
		       struct error *err);
};

struct timeline;

struct timeline *timeline_new(const struct timeline_ops *ops, void *ctx);
int timeline_event(struct timeline *tl, const struct event *e, struct error *err);
/* Ends everything still open. */
int timeline_finish(struct timeline *tl, struct error *err);
void timeline_free(struct timeline *tl);

/* Whether a counter value is a whole number the formats write as an integer (bytes). */
static inline int timeline_whole(double v)
{
	return v > -9e18 && v < 9e18 && v == (double)(int64_t)v;
}

/* The version of the layout the timeline formats write, stamped in each output. */
#define TIMELINE_FORMAT_VERSION "1.0"

/* One argument of a slice: a number, or a text when text is set. */
struct slice_arg {
	const char *name;
	const char *text;
	int64_t value;
};

#define TIMELINE_MAX_ARGS 24

/* The name a slice is shown with: the kernel, the transfer's direction or operation
 * (MEMORY_COPY_HOST_TO_DEVICE, MEMORY_FILL), the API function. */
const char *timeline_slice_name(const struct event *e);
/* Its category: KERNEL_DISPATCH, MEMORY_COPY or the API domain. */
const char *timeline_category(const struct event *e);
/* Its arguments (fields that are 0 and mean "none" are left out); returns the count. */
int timeline_args(const struct event *e, struct slice_arg args[TIMELINE_MAX_ARGS]);

/* The flow that links an API call to the device work it enqueued: the same number for
 * both within one output (the process id and the low 32 bits of the correlation id), 0
 * unless both are in the output (event.linked): a flow never has only one end. (An MPI
 * call's messages have flows of their own: event.api.message_flows, 2^51 and above.) */
uint64_t timeline_flow_id(const struct event *e);

/* Whether the event is device work that an API call enqueued (a flow ends on it). */
int timeline_is_device_work(const struct event *e);

#endif
