/* Tracks, overlap lanes, held slice ends and counters for the timeline formats (see
 * timeline.h). */
#include "writer/timeline.h"

#include <stdlib.h>
#include <string.h>

#include "analysis/domain-stats.h"
#include "util/hash.h"
#include "util/strbuf.h"

/* What a table entry is: a track, or an agent's name for naming tracks. */
enum entry_kind { ENTRY_PROCESS, ENTRY_THREAD, ENTRY_QUEUE, ENTRY_COPY_COUNTER,
		  ENTRY_MEMORY_COUNTER, ENTRY_AGENT, ENTRY_THREAD_NAME, ENTRY_METRIC,
		  ENTRY_SAMPLES };

/* A track on which slices nest: the ends of the slices open on it, innermost last, and
 * the overlap track beneath it, if any. */
struct lane {
	struct track track;
	char *name;
	int64_t *ends;
	size_t depth, alloc;
	struct lane *next;
};

struct entry {
	enum entry_kind kind;
	int64_t process_id, key;
	struct lane lane;   /* the track (lanes of tracks without slices stay empty) */
	int64_t value;      /* counters of bytes: the current value */
	char *label;        /* processes: "command (host, rank N)"; agents: "GPU 1 name";
			       thread names */
	int64_t tracks;     /* processes: tracks made for it so far */
};

/* A slice end or counter change, held until time reaches it. */
struct pending {
	int64_t ts;
	uint64_t seq;       /* ties keep the order they were held in */
	struct lane *lane;  /* a slice end on this lane, or */
	struct entry *counter; /* a change of this counter by delta */
	int64_t delta;
};

struct timeline {
	const struct timeline_ops *ops;
	void *ctx;
	struct entry **slots;
	size_t slot_count, entry_count;
	struct pending *heap;
	size_t heap_count, heap_alloc;
	uint64_t seq, next_uuid;
	int64_t last_start; /* of the last timed event: they must come in start order */
};

struct timeline *timeline_new(const struct timeline_ops *ops, void *ctx)
{
	struct timeline *tl = xcalloc(1, sizeof(*tl));
	tl->ops = ops;
	tl->ctx = ctx;
	tl->slot_count = 64;
	tl->slots = xcalloc(tl->slot_count, sizeof(*tl->slots));
	tl->next_uuid = 1;
	tl->last_start = INT64_MIN;
	return tl;
}

static void lane_free(struct lane *lane)
{
	free(lane->name);
	free(lane->ends);
}

void timeline_free(struct timeline *tl)
{
	if (!tl)
		return;
	for (size_t i = 0; i < tl->slot_count; i++) {
		struct entry *e = tl->slots[i];
		if (!e)
			continue;
		for (struct lane *l = e->lane.next, *next; l; l = next) {
			next = l->next;
			lane_free(l);
			free(l);
		}
		lane_free(&e->lane);
		free(e->label);
		free(e);
	}
	free(tl->slots);
	free(tl->heap);
	free(tl);
}

/* ---- the table of tracks and agents ------------------------------------------------- */

static size_t slot_of(const struct timeline *tl, enum entry_kind kind, int64_t process_id,
		      int64_t key)
{
	uint64_t h = hash_int((uint64_t)key ^ hash_int((uint64_t)process_id * 8 + kind));
	size_t mask = tl->slot_count - 1, i = (size_t)h & mask;
	for (;; i = (i + 1) & mask) {
		const struct entry *e = tl->slots[i];
		if (!e || (e->kind == kind && e->process_id == process_id && e->key == key))
			return i;
	}
}

static struct entry *find(const struct timeline *tl, enum entry_kind kind,
			  int64_t process_id, int64_t key)
{
	return tl->slots[slot_of(tl, kind, process_id, key)];
}

static struct entry *add(struct timeline *tl, enum entry_kind kind, int64_t process_id,
			 int64_t key)
{
	if (2 * (tl->entry_count + 1) > tl->slot_count) {
		struct entry **old = tl->slots;
		size_t old_count = tl->slot_count;
		tl->slot_count *= 2;
		tl->slots = xcalloc(tl->slot_count, sizeof(*tl->slots));
		for (size_t i = 0; i < old_count; i++)
			if (old[i])
				tl->slots[slot_of(tl, old[i]->kind, old[i]->process_id,
						  old[i]->key)] = old[i];
		free(old);
	}
	struct entry *e = xcalloc(1, sizeof(*e));
	e->kind = kind;
	e->process_id = process_id;
	e->key = key;
	tl->slots[slot_of(tl, kind, process_id, key)] = e;
	tl->entry_count++;
	return e;
}

/* ---- tracks --------------------------------------------------------------------------- */

/* The process track, made from the process event or, for events of a process the
 * input did not describe, from the event's pid. */
static int process_track(struct timeline *tl, const struct event *ev, struct entry **out,
			 struct error *err)
{
	struct entry *p = find(tl, ENTRY_PROCESS, ev->process_id, 0);
	if (!p) {
		p = add(tl, ENTRY_PROCESS, ev->process_id, 0);
		struct strbuf label = STRBUF_INIT;
		if (ev->kind == EVENT_PROCESS) {
			strbuf_addstr(&label, *ev->name ? ev->name : "process");
			strbuf_addf(&label, " (pid %lld", (long long)ev->pid);
			if (*ev->process.hostname)
				strbuf_addf(&label, ", %s", ev->process.hostname);
			if (ev->process.rank >= 0)
				strbuf_addf(&label, ", rank %lld", (long long)ev->process.rank);
			strbuf_addch(&label, ')');
		} else {
			strbuf_addf(&label, "process %lld", (long long)ev->pid);
		}
		p->label = strbuf_detach(&label);
		struct track *t = &p->lane.track;
		t->uuid = tl->next_uuid++;
		t->kind = TRACK_PROCESS;
		t->process_id = ev->process_id;
		t->pid = ev->pid;
		t->tid = ev->pid;
		t->sort_index = ev->process_id;
		t->start_ns = ev->start_ns;
		t->name = p->label;
		t->process_label = p->label;
		if (tl->ops->track(tl->ctx, t, err))
			return -1;
	}
	*out = p;
	return 0;
}

/* A track of a process: a thread, a queue or a counter beneath the process, or an
 * overlap lane beneath the track it relieves (under). */
static int child_track(struct timeline *tl, struct entry *process, const struct track *under,
		       struct lane *lane, enum track_kind kind, int64_t tid, const char *name,
		       struct error *err)
{
	struct track *t = &lane->track;
	lane->name = xstrdup(name);
	t->uuid = tl->next_uuid++;
	t->parent_uuid = under ? under->uuid : process->lane.track.uuid;
	t->kind = kind;
	t->process_id = process->process_id;
	t->pid = process->lane.track.pid;
	/* not a thread: a number above any thread id (pid_max is at most 2^22) */
	t->tid = kind == TRACK_THREAD ? tid : (1 << 30) + process->tracks;
	t->sort_index = process->tracks++;
	t->name = lane->name;
	t->process_label = process->label;
	return tl->ops->track(tl->ctx, t, err);
}

static const char *agent_label(struct timeline *tl, int64_t process_id, int64_t agent,
			       struct strbuf *fallback)
{
	struct entry *a = find(tl, ENTRY_AGENT, process_id, agent);
	if (a)
		return a->label;
	strbuf_reset(fallback);
	strbuf_addf(fallback, "agent %lld", (long long)agent);
	return fallback->buf;
}

/* The thread track of an API call or marker, or the queue track of device work. */
static int slice_track(struct timeline *tl, const struct event *ev, struct entry **out,
		       struct error *err)
{
	struct entry *process;
	if (process_track(tl, ev, &process, err))
		return -1;
	int thread = ev->kind == EVENT_API_CALL || ev->kind == EVENT_MARKER;
	int64_t key = thread ? ev->tid
		      : ev->kind == EVENT_KERNEL ? ev->kernel.queue : ev->copy.queue;
	enum entry_kind kind = thread ? ENTRY_THREAD : ENTRY_QUEUE;
	struct entry *e = find(tl, kind, ev->process_id, key);
	if (e) {
		*out = e;
		return 0;
	}
	e = add(tl, kind, ev->process_id, key);
	struct strbuf name = STRBUF_INIT, fallback = STRBUF_INIT;
	if (thread) {
		struct entry *named = find(tl, ENTRY_THREAD_NAME, ev->process_id, ev->tid);
		if (named)
			strbuf_addf(&name, "%s (thread %lld)", named->label, (long long)ev->tid);
		else
			strbuf_addf(&name, "thread %lld", (long long)ev->tid);
	} else {
		int64_t agent = ev->kind == EVENT_KERNEL ? ev->kernel.agent
				: ev->copy.dst_agent ? ev->copy.dst_agent : ev->copy.src_agent;
		int64_t stream = ev->kind == EVENT_KERNEL ? ev->kernel.stream : ev->copy.stream;
		strbuf_addstr(&name, agent_label(tl, ev->process_id, agent, &fallback));
		if (stream && stream != key) /* OpenCL gives the queue number as its stream */
			strbuf_addf(&name, ", stream %lld", (long long)stream);
		else
			strbuf_addf(&name, ", queue %lld", (long long)key);
	}
	int rc = child_track(tl, process, NULL, &e->lane, thread ? TRACK_THREAD : TRACK_QUEUE,
			     ev->tid, name.buf, err);
	strbuf_release(&name);
	strbuf_release(&fallback);
	*out = e;
	return rc;
}

/* The track of a thread's sampled stacks: beneath the thread's track, so the flame
 * chart sits under the thread's API calls and markers. */
static int samples_track(struct timeline *tl, const struct event *ev, struct entry **out,
			 struct error *err)
{
	*out = find(tl, ENTRY_SAMPLES, ev->process_id, ev->tid);
	if (*out)
		return 0;
	struct event as_call = *ev; /* the thread's own track first */
	as_call.kind = EVENT_API_CALL;
	struct entry *thread, *process;
	if (slice_track(tl, &as_call, &thread, err) || process_track(tl, ev, &process, err))
		return -1;
	struct entry *e = add(tl, ENTRY_SAMPLES, ev->process_id, ev->tid);
	struct strbuf name = STRBUF_INIT;
	strbuf_addf(&name, "%s call stacks", thread->lane.name);
	int rc = child_track(tl, process, &thread->lane.track, &e->lane, TRACK_QUEUE, 0,
			     name.buf, err);
	strbuf_release(&name);
	*out = e;
	return rc;
}

static int counter_track(struct timeline *tl, const struct event *ev, enum entry_kind kind,
			 int64_t agent, struct entry **out, struct error *err)
{
	*out = find(tl, kind, ev->process_id, agent);
	if (*out)
		return 0;
	struct entry *process;
	if (process_track(tl, ev, &process, err))
		return -1;
	struct entry *e = add(tl, kind, ev->process_id, agent);
	struct strbuf name = STRBUF_INIT, fallback = STRBUF_INIT;
	strbuf_addf(&name, "%s %s", agent_label(tl, ev->process_id, agent, &fallback),
		    kind == ENTRY_COPY_COUNTER ? "bytes being copied" : "memory allocated");
	e->lane.track.unit = "bytes";
	int rc = child_track(tl, process, NULL, &e->lane, TRACK_COUNTER, 0, name.buf, err);
	strbuf_release(&name);
	strbuf_release(&fallback);
	*out = e;
	return rc;
}

/* A metric series' value: on a counter track of its own, named after what it measures. */
static int metric(struct timeline *tl, const struct event *ev, struct error *err)
{
	struct entry *e = find(tl, ENTRY_METRIC, ev->process_id, ev->metric.series);
	if (!e) {
		struct entry *process;
		if (process_track(tl, ev, &process, err))
			return -1;
		e = add(tl, ENTRY_METRIC, ev->process_id, ev->metric.series);
		struct strbuf name = STRBUF_INIT;
		writer_metric_label(&name, ev->metric.source, ev->metric.device, ev->metric.pid,
				    ev->name);
		strbuf_addf(&name, " (%s)", ev->metric.unit);
		e->label = xstrdup(ev->metric.unit);
		e->lane.track.unit = e->label;
		int rc = child_track(tl, process, NULL, &e->lane, TRACK_COUNTER, 0, name.buf, err);
		strbuf_release(&name);
		if (rc)
			return -1;
	}
	return tl->ops->counter(tl->ctx, &e->lane.track, ev->start_ns, ev->metric.value, err);
}

/* ---- held ends and counter changes (a binary heap by time) ---------------------------- */

static int before(const struct pending *a, const struct pending *b)
{
	return a->ts != b->ts ? a->ts < b->ts : a->seq < b->seq;
}

static void hold(struct timeline *tl, struct pending p)
{
	if (tl->heap_count == tl->heap_alloc) {
		tl->heap_alloc = tl->heap_alloc ? 2 * tl->heap_alloc : 64;
		tl->heap = xrealloc(tl->heap, tl->heap_alloc * sizeof(*tl->heap));
	}
	p.seq = tl->seq++;
	size_t i = tl->heap_count++;
	while (i && before(&p, &tl->heap[(i - 1) / 2])) {
		tl->heap[i] = tl->heap[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	tl->heap[i] = p;
}

static struct pending take(struct timeline *tl)
{
	struct pending top = tl->heap[0], last = tl->heap[--tl->heap_count];
	size_t i = 0;
	for (;;) {
		size_t child = 2 * i + 1;
		if (child >= tl->heap_count)
			break;
		if (child + 1 < tl->heap_count && before(&tl->heap[child + 1], &tl->heap[child]))
			child++;
		if (!before(&tl->heap[child], &last))
			break;
		tl->heap[i] = tl->heap[child];
		i = child;
	}
	if (tl->heap_count)
		tl->heap[i] = last;
	return top;
}

static int change_counter(struct timeline *tl, struct entry *c, int64_t ts, int64_t delta,
			  struct error *err)
{
	c->value += delta;
	if (c->value < 0) /* a free of memory allocated before recording began */
		c->value = 0;
	return tl->ops->counter(tl->ctx, &c->lane.track, ts, (double)c->value, err);
}

/* Everything held up to ts (inclusive: an end at ts comes before a begin at ts). */
static int release_until(struct timeline *tl, int64_t ts, int all, struct error *err)
{
	while (tl->heap_count && (all || tl->heap[0].ts <= ts)) {
		struct pending p = take(tl);
		int rc = p.lane ? tl->ops->slice_end(tl->ctx, &p.lane->track, p.ts, err)
				: change_counter(tl, p.counter, p.ts, p.delta, err);
		if (rc)
			return -1;
	}
	return 0;
}

/* ---- slices ----------------------------------------------------------------------------- */

/* The lane of the track on which [start, end] nests: the first whose innermost open
 * slice encloses it or has ended; a new overlap lane when none does. */
static int place(struct timeline *tl, struct entry *base, const struct event *ev,
		 struct lane **out, struct error *err)
{
	struct lane *lane = &base->lane;
	for (int n = 1;; n++) {
		while (lane->depth && lane->ends[lane->depth - 1] <= ev->start_ns)
			lane->depth--;
		if (!lane->depth || ev->end_ns <= lane->ends[lane->depth - 1])
			break;
		if (!lane->next) {
			struct entry *process = find(tl, ENTRY_PROCESS, base->process_id, 0);
			struct strbuf name = STRBUF_INIT;
			strbuf_addf(&name, "%s (overlap %d)", base->lane.name, n);
			lane->next = xcalloc(1, sizeof(*lane->next));
			int rc = child_track(tl, process, &base->lane.track, lane->next,
					     TRACK_QUEUE, 0, name.buf, err);
			strbuf_release(&name);
			if (rc)
				return -1;
		}
		lane = lane->next;
	}
	if (lane->depth == lane->alloc) {
		lane->alloc = lane->alloc ? 2 * lane->alloc : 8;
		lane->ends = xrealloc(lane->ends, lane->alloc * sizeof(*lane->ends));
	}
	lane->ends[lane->depth++] = ev->end_ns;
	*out = lane;
	return 0;
}

static int slice(struct timeline *tl, const struct event *ev, struct error *err)
{
	struct entry *base;
	struct lane *lane;
	if ((ev->kind == EVENT_SAMPLE ? samples_track(tl, ev, &base, err)
				      : slice_track(tl, ev, &base, err)) ||
	    place(tl, base, ev, &lane, err) ||
	    tl->ops->slice_begin(tl->ctx, &lane->track, ev, err))
		return -1;
	hold(tl, (struct pending){ .ts = ev->end_ns, .lane = lane });
	return 0;
}

static int copy_counter(struct timeline *tl, const struct event *ev, struct error *err)
{
	int64_t agent = ev->copy.dst_agent ? ev->copy.dst_agent : ev->copy.src_agent;
	struct entry *c;
	if (!ev->copy.bytes || counter_track(tl, ev, ENTRY_COPY_COUNTER, agent, &c, err))
		return ev->copy.bytes ? -1 : 0;
	hold(tl, (struct pending){ .ts = ev->end_ns, .counter = c, .delta = -ev->copy.bytes });
	return change_counter(tl, c, ev->start_ns, ev->copy.bytes, err);
}

/* Device memory only: host memory (pageable, pinned) is left out, as the memory analyses
 * leave it (analysis/memory.h). */
static int allocation_counter(struct timeline *tl, const struct event *ev, struct error *err)
{
	if (!strcmp(ev->allocation.memory_kind, "PAGEABLE") ||
	    !strcmp(ev->allocation.memory_kind, "PINNED"))
		return 0;
	int freed = !strcmp(ev->allocation.operation, "MEMORY_ALLOCATION_FREE");
	struct entry *c;
	if (counter_track(tl, ev, ENTRY_MEMORY_COUNTER, ev->allocation.agent, &c, err))
		return -1;
	return change_counter(tl, c, ev->start_ns,
			      freed ? -ev->allocation.bytes : ev->allocation.bytes, err);
}

static void remember_agent(struct timeline *tl, const struct event *ev)
{
	if (find(tl, ENTRY_AGENT, ev->process_id, ev->agent.index))
		return;
	struct entry *a = add(tl, ENTRY_AGENT, ev->process_id, ev->agent.index);
	struct strbuf label = STRBUF_INIT;
	strbuf_addf(&label, "%s %lld %s", ev->agent.type_name, (long long)ev->agent.index,
		    ev->name);
	a->label = strbuf_detach(&label);
}

int timeline_event(struct timeline *tl, const struct event *event, struct error *err)
{
	struct entry *process;
	if (event->kind == EVENT_PROCESS)
		return process_track(tl, event, &process, err);
	if (event->kind == EVENT_AGENT) {
		remember_agent(tl, event);
		return 0;
	}
	if (event->kind == EVENT_THREAD) { /* names a thread track made later */
		struct entry *t = find(tl, ENTRY_THREAD_NAME, event->process_id, event->tid);
		if (!t)
			t = add(tl, ENTRY_THREAD_NAME, event->process_id, event->tid);
		free(t->label);
		t->label = xstrdup(event->name);
		return 0;
	}
	struct event ev = *event;
	if (ev.end_ns < ev.start_ns) /* a record with a broken end: drawn as an instant */
		ev.end_ns = ev.start_ns;
	if (ev.start_ns < tl->last_start)
		return error_set(err, "events out of time order (one starting at %lld after one "
				 "starting at %lld): rows must be stored in start order, as "
				 "gpuprof stores them", (long long)ev.start_ns,
				 (long long)tl->last_start);
	tl->last_start = ev.start_ns;
	if (release_until(tl, ev.start_ns, 0, err))
		return -1;
	switch (ev.kind) {
	case EVENT_MEMORY_COPY:
		if (copy_counter(tl, &ev, err))
			return -1;
		return slice(tl, &ev, err);
	case EVENT_MEMORY_ALLOCATION:
		return allocation_counter(tl, &ev, err);
	case EVENT_METRIC:
		return metric(tl, &ev, err);
	default:
		return slice(tl, &ev, err);
	}
}

int timeline_finish(struct timeline *tl, struct error *err)
{
	return release_until(tl, 0, 1, err);
}

uint64_t timeline_flow_id(const struct event *e)
{
	if (!e->linked)
		return 0;
	/* below 2^52, so that JSON readers keep it exact */
	return ((uint64_t)e->process_id & 0xfffff) << 32 | ((uint64_t)e->correlation_id & 0xffffffff);
}

int timeline_is_device_work(const struct event *e)
{
	return e->kind == EVENT_KERNEL || e->kind == EVENT_MEMORY_COPY;
}

const char *timeline_slice_name(const struct event *e)
{
	return e->kind == EVENT_MEMORY_COPY ? domain_stats_copy_name(e) : e->name;
}

const char *timeline_category(const struct event *e)
{
	switch (e->kind) {
	case EVENT_KERNEL: return "KERNEL_DISPATCH";
	case EVENT_MEMORY_COPY: return "MEMORY_COPY";
	case EVENT_API_CALL: return e->api.domain;
	case EVENT_MARKER: return e->marker.category;
	case EVENT_SAMPLE: return "SAMPLE";
	default: return "OTHER";
	}
}

int timeline_args(const struct event *e, struct slice_arg args[TIMELINE_MAX_ARGS])
{
	int n = 0;
#define NUMBER(label, v) (args[n++] = (struct slice_arg){ .name = label, .value = (v) })
#define NONZERO(label, v) do { if (v) NUMBER(label, v); } while (0)
#define TEXT(label, t) (args[n++] = (struct slice_arg){ .name = label, .text = (t) })
	NONZERO("correlation_id", e->correlation_id);
	switch (e->kind) {
	case EVENT_KERNEL:
		NUMBER("agent", e->kernel.agent);
		NUMBER("queue", e->kernel.queue);
		NONZERO("stream", e->kernel.stream);
		NUMBER("dispatch_id", e->kernel.dispatch_id);
		NUMBER("grid_x", e->kernel.grid[0]);
		NUMBER("grid_y", e->kernel.grid[1]);
		NUMBER("grid_z", e->kernel.grid[2]);
		if (e->kernel.workgroup[0]) { /* 0: the runtime chose it, and does not say */
			NUMBER("workgroup_x", e->kernel.workgroup[0]);
			NUMBER("workgroup_y", e->kernel.workgroup[1]);
			NUMBER("workgroup_z", e->kernel.workgroup[2]);
		}
		NONZERO("registers", e->kernel.registers);
		NONZERO("lds_bytes", e->kernel.local_memory_bytes);
		NONZERO("scratch_bytes", e->kernel.private_memory_bytes);
		NONZERO("static_lds_bytes", e->kernel.static_local_memory_bytes);
		NONZERO("dynamic_lds_bytes", e->kernel.dynamic_local_memory_bytes);
		NONZERO("graph_id", e->kernel.graph);
		NONZERO("graph_node_id", e->kernel.graph_node);
		NONZERO("range_id", e->kernel.range_id);
		NONZERO("nccl_call_id", e->kernel.call_id);
		NUMBER("tid", e->tid);
		break;
	case EVENT_MEMORY_COPY:
		NUMBER("bytes", e->copy.bytes);
		if (*e->name)
			TEXT("function", e->name);
		NUMBER("src_agent", e->copy.src_agent);
		NUMBER("dst_agent", e->copy.dst_agent);
		NUMBER("queue", e->copy.queue);
		NONZERO("stream", e->copy.stream);
		if (strcmp(e->copy.src_memory_kind, "UNKNOWN"))
			TEXT("src_memory_kind", e->copy.src_memory_kind);
		if (strcmp(e->copy.dst_memory_kind, "UNKNOWN"))
			TEXT("dst_memory_kind", e->copy.dst_memory_kind);
		NUMBER("tid", e->tid);
		break;
	case EVENT_API_CALL:
		NONZERO("result", e->api.result);
		if (e->api.call_stack)
			TEXT("call_stack", e->api.call_stack);
		break;
	case EVENT_MARKER:
		NUMBER("range_id", e->marker.range_id);
		NONZERO("parent_id", e->marker.parent_id);
		if (*e->marker.domain)
			TEXT("domain", e->marker.domain);
		if (*e->marker.module)
			TEXT("module_path", e->marker.module);
		if (e->marker.end_tid != e->tid)
			NUMBER("end_tid", e->marker.end_tid);
		if (!e->marker.ended)
			NUMBER("unterminated", 1);
		break;
	case EVENT_SAMPLE:
		if (*e->sample.module)
			TEXT("module", e->sample.module);
		break;
	default:
		break;
	}
#undef NUMBER
#undef NONZERO
#undef TEXT
	return n;
}
