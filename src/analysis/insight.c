/* Findings over a recorded run (see insight.h): the rules' table, the passes of a
 * process through them over the run laid out by insight-build.c, the findings, and the
 * helpers the rules share (insight_is_wait() is insight-engine.c's). */
#include "analysis/insight.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/insight-internal.h"
#include "analysis/memory.h"
#include "analysis/mpi-ranks.h"
#include "store/store.h"
#include "util/sort.h"

/* ---- the rules: one file each under rules/, one line here ----------------------------- */

#define RULE(name) \
	void *rule_##name##_begin(const struct insight_process *p); \
	void rule_##name##_finish(void *state, const struct insight_process *p, \
				  struct findings *out);
RULE(device_idle)
RULE(sync_per_launch)
RULE(launch_bound)
RULE(small_copies)
RULE(pageable_copies)
RULE(copy_kernel_serial)
RULE(one_queue)
RULE(latency_bound)
RULE(exposed_communication)
#undef RULE
void rule_sync_per_launch_call(void *state, const struct insight_process *p,
			       const struct insight_call *c);
void rule_device_idle_busy(void *state, const struct insight_process *p,
			   const struct insight_device *d, const struct insight_interval *b,
			   const struct insight_activity *next);
void rule_sync_per_launch_item(void *state, const struct insight_process *p,
			       const struct insight_device *d, const struct insight_activity *a);
void rule_sync_per_launch_busy(void *state, const struct insight_process *p,
			       const struct insight_device *d, const struct insight_interval *b,
			       const struct insight_activity *next);
void rule_launch_bound_item(void *state, const struct insight_process *p,
			    const struct insight_device *d, const struct insight_activity *a);
void rule_launch_bound_busy(void *state, const struct insight_process *p,
			    const struct insight_device *d, const struct insight_interval *b,
			    const struct insight_activity *next);
void rule_small_copies_item(void *state, const struct insight_process *p,
			    const struct insight_device *d, const struct insight_activity *a);
void rule_pageable_copies_item(void *state, const struct insight_process *p,
			       const struct insight_device *d, const struct insight_activity *a);
void rule_copy_kernel_serial_item(void *state, const struct insight_process *p,
				  const struct insight_device *d, const struct insight_activity *a);
void rule_one_queue_item(void *state, const struct insight_process *p,
			 const struct insight_device *d, const struct insight_activity *a);
void rule_latency_bound_item(void *state, const struct insight_process *p,
			     const struct insight_device *d, const struct insight_activity *a);
void rule_exposed_communication_item(void *state, const struct insight_process *p,
				     const struct insight_device *d,
				     const struct insight_activity *a);

const struct insight_rule insight_rules[] = {
	{ "device-idle", "the device sat idle between its work", rule_device_idle_begin, NULL,
	  NULL, rule_device_idle_busy, rule_device_idle_finish },
	{ "sync-per-launch", "the host waited for the device after every launch",
	  rule_sync_per_launch_begin, rule_sync_per_launch_call, rule_sync_per_launch_item,
	  rule_sync_per_launch_busy, rule_sync_per_launch_finish },
	{ "launch-bound", "kernels shorter than the time it takes to launch them",
	  rule_launch_bound_begin, NULL, rule_launch_bound_item, rule_launch_bound_busy,
	  rule_launch_bound_finish },
	{ "small-copies", "many small copies", rule_small_copies_begin, NULL,
	  rule_small_copies_item, NULL, rule_small_copies_finish },
	{ "pageable-copies", "copies from or to pageable host memory",
	  rule_pageable_copies_begin, NULL, rule_pageable_copies_item, NULL,
	  rule_pageable_copies_finish },
	{ "copy-kernel-serial", "copies and kernels serialised on one queue",
	  rule_copy_kernel_serial_begin, NULL, rule_copy_kernel_serial_item, NULL,
	  rule_copy_kernel_serial_finish },
	{ "one-queue", "several threads' work serialised on one queue", rule_one_queue_begin,
	  NULL, rule_one_queue_item, NULL, rule_one_queue_finish },
	{ "latency-bound", "kernels whose SMs and memory both stay far below their peak "
			   "(speed-of-light counters)", rule_latency_bound_begin, NULL,
	  rule_latency_bound_item, NULL, rule_latency_bound_finish },
	{ "exposed-communication", "communication kernels (NCCL's) running alone, not "
				   "overlapped with compute", rule_exposed_communication_begin,
	  NULL, rule_exposed_communication_item, NULL, rule_exposed_communication_finish },
};
const size_t insight_rule_count = sizeof(insight_rules) / sizeof(insight_rules[0]);

const struct insight_rule_name insight_run_rules[] = {
	{ "memory-churn", "device memory allocated and freed again within 1 ms, over and over" },
	{ "memory-leak", "device memory never freed by the end" },
	{ "memory-peak-site", "a memory peak of half the device's memory or more, mostly one site's" },
	{ "mpi-imbalance", "one MPI rank that the others wait for" },
};
const size_t insight_run_rule_count = sizeof(insight_run_rules) / sizeof(insight_run_rules[0]);

/* ---- streaming ------------------------------------------------------------------------------- */

static size_t queue_index(struct insight_device *d, int64_t queue)
{
	if (queue < 0)
		return SIZE_MAX;
	for (size_t q = 0; q < d->queue_count; q++) /* a device has few: a linear search */
		if (d->queues[q] == queue)
			return q;
	d->queues = xrealloc(d->queues, (d->queue_count + 1) * sizeof(*d->queues));
	d->queues[d->queue_count] = queue;
	return d->queue_count++;
}

void insight_stream_device(struct insight_engine *e, const struct insight_process *p,
			   const struct insight_device *device, insight_item_fn item,
			   insight_busy_fn busy, void *arg)
{
	struct insight_device *d = (struct insight_device *)device;
	const struct insight_extra *x = &e->extra[p - e->processes];
	if (e->failed)
		return;
	struct record_reader reader;
	record_reader_begin(&reader, &e->items, sizeof(struct insight_item_record),
			    x->device_first[d->index], x->device_end[d->index], 1 << 20);
	int open = 0, got;
	int64_t busy_ns = 0, idle_ns = 0;
	d->before_open = INT64_MIN;
	const void *read;
	while ((got = record_reader_next(&reader, &read, e->err)) > 0) {
		const struct insight_item_record *r = read;
		struct insight_call call;
		struct insight_activity a = {
			.start = r->start, .end = r->end, .queue = r->has_queue ? r->queue : -1,
			.tid = r->tid, .bytes = r->bytes, .name = insight_name(e, r->has_name, r->name_id),
			.kind = (enum insight_kind)r->kind, .direction = r->direction,
			.src_memory_kind = r->src_kind, .dst_memory_kind = r->dst_kind,
			.sm_pct = r->sm, .memory_pct = r->memory,
		};
		if (r->call != INSIGHT_NONE) {
			call = (struct insight_call){
				.tid = r->call_tid, .start = r->call_start, .end = r->call_end,
				.launch = r->launch, .blocking = r->blocking, .waited = r->waited,
			};
			a.call = &call;
		}
		a.queue_index = queue_index(d, a.queue);
		if (open && a.start <= d->open.end) {
			if (a.end > d->open.end)
				d->open.end = a.end;
		} else {
			if (open) {
				if (busy)
					busy(arg, d, &d->open, &a);
				busy_ns += d->open.end - d->open.start;
				idle_ns += a.start - d->open.end;
				d->before_open = d->open.end;
			}
			d->open = (struct insight_interval){ a.start, a.end };
			open = 1;
		}
		if (item)
			item(arg, d, &a);
	}
	record_reader_end(&reader);
	if (got < 0) {
		e->failed = 1;
		return;
	}
	if (open) {
		if (busy)
			busy(arg, d, &d->open, NULL);
		busy_ns += d->open.end - d->open.start;
	}
	d->busy_ns = busy_ns;
	d->idle_ns = idle_ns;
}

void insight_replay(const struct insight_process *p, const struct insight_device *d,
		    insight_item_fn item, insight_busy_fn busy, void *arg)
{
	insight_stream_device(p->engine, p, d, item, busy, arg);
}

/* The first pass: every rule's hooks and the observer's. */
struct pass {
	const struct insight_process *p;
	void **states;
	const struct insight_observer *observer;
};

static void pass_item(void *arg, const struct insight_device *d, const struct insight_activity *a)
{
	struct pass *x = arg;
	for (size_t r = 0; r < insight_rule_count; r++)
		if (insight_rules[r].item)
			insight_rules[r].item(x->states[r], x->p, d, a);
}

static void pass_busy(void *arg, const struct insight_device *d, const struct insight_interval *b,
		      const struct insight_activity *next)
{
	struct pass *x = arg;
	for (size_t r = 0; r < insight_rule_count; r++)
		if (insight_rules[r].busy)
			insight_rules[r].busy(x->states[r], x->p, d, b, next);
	if (x->observer && x->observer->busy)
		x->observer->busy(x->observer->arg, x->p, d, b);
}

/* The process's top-level calls, by thread then start, to the rules that want them. */
static void stream_calls(struct insight_engine *e, const struct insight_process *p, void **states)
{
	const struct insight_extra *x = &e->extra[p - e->processes];
	if (e->failed)
		return;
	struct record_reader reader;
	record_reader_begin(&reader, &e->calls, sizeof(struct insight_call_record), x->first_call,
			    x->end_call, 1 << 20);
	const void *read;
	int got;
	while ((got = record_reader_next(&reader, &read, e->err)) > 0) {
		const struct insight_call_record *r = read;
		struct insight_call c = {
			.tid = r->tid, .start = r->start, .end = r->end,
			.name = insight_name(e, r->has_name, r->name_id),
			.launch = r->launch, .blocking = r->blocking, .waited = r->waited,
		};
		for (size_t i = 0; i < insight_rule_count; i++)
			if (insight_rules[i].call)
				insight_rules[i].call(states[i], p, &c);
	}
	record_reader_end(&reader);
	if (got < 0)
		e->failed = 1;
}

static void check_process(struct insight_engine *e, struct insight_process *p,
			  const struct insight_observer *observer, struct findings *out)
{
	void **states = xcalloc(insight_rule_count, sizeof(*states));
	for (size_t r = 0; r < insight_rule_count; r++)
		states[r] = insight_rules[r].begin(p);
	if (observer && observer->process)
		observer->process(observer->arg, p);
	stream_calls(e, p, states);
	struct pass pass = { p, states, observer };
	for (size_t i = 0; i < p->device_count; i++) {
		if (observer && observer->device)
			observer->device(observer->arg, p, &p->devices[i]);
		insight_stream_device(e, p, &p->devices[i], pass_item, pass_busy, &pass);
		if (observer && observer->device_end)
			observer->device_end(observer->arg, p, &p->devices[i]);
	}
	for (size_t r = 0; r < insight_rule_count; r++)
		insight_rules[r].finish(states[r], p, out); /* frees the state, even after an error */
	free(states);
}

/* ---- findings --------------------------------------------------------------------------- */

struct finding *finding_add(struct findings *out, const char *rule,
			    const struct insight_process *p, const struct insight_device *d,
			    int64_t cost_ns)
{
	out->items = xrealloc(out->items, (out->count + 1) * sizeof(*out->items));
	struct finding *f = &out->items[out->count++];
	memset(f, 0, sizeof(*f));
	f->rule = rule;
	f->pid = p->pid;
	f->device = d ? xstrdup(d->label) : NULL;
	f->cost_ns = cost_ns;
	f->cost_pct = p->end > p->start ? 100.0 * (double)cost_ns / (double)(p->end - p->start) : 0;
	if (d && d->kernels_from < d->kernels_to) {
		f->from_ns = d->kernels_from;
		f->to_ns = d->kernels_to;
	}
	strbuf_init(&f->what);
	strbuf_init(&f->evidence);
	strbuf_init(&f->advice);
	return f;
}

/* Most costly first; at one cost, in the order the rules found them. */
static int by_cost(const void *a, const void *b)
{
	const struct finding *x = a, *y = b;
	if (x->cost_ns != y->cost_ns)
		return (x->cost_ns < y->cost_ns) - (x->cost_ns > y->cost_ns);
	return (x->order > y->order) - (x->order < y->order);
}

static void release_engine(struct insight_engine *e)
{
	sqlite3_finalize(e->string);
	free(e->ids.slots);
	for (size_t i = 0; i < e->process_count; i++) {
		struct insight_process *p = &e->processes[i];
		for (size_t d = 0; d < p->device_count; d++) {
			free(p->devices[d].label);
			free(p->devices[d].queues);
		}
		free(p->devices);
		free(p->host);
		free(e->extra[i].threads);
		free(e->extra[i].device_first);
		free(e->extra[i].device_end);
	}
	free(e->processes);
	free(e->extra);
	for (size_t i = 0; i < e->names.size; i++)
		free(e->names.slots[i]);
	free(e->names.slots);
	tempfile_close(&e->calls);
	tempfile_close(&e->items);
}

int insight_check(sqlite3 *db, const char *path, const struct insight_observer *observer,
		  struct findings *out, struct error *err)
{
	return insight_check_ranks(db, path, observer, out, NULL, err);
}

int insight_check_ranks(sqlite3 *db, const char *path, const struct insight_observer *observer,
			struct findings *out, struct mpi_ranks *kept, struct error *err)
{
	struct insight_engine e = { .db = db, .path = path, .err = err };
	insight_build(&e);
	size_t first = out->count;
	for (size_t i = 0; !e.failed && i < e.process_count; i++)
		check_process(&e, &e.processes[i], observer, out);
	/* device memory: each process's devices */
	struct memory_report memory = { 0 };
	if (!e.failed && memory_gather(db, 0, 0, &memory, err) == 0) {
		for (size_t i = 0; i < memory.count; i++)
			for (size_t k = 0; k < e.process_count; k++)
				if (e.processes[k].id == memory.devices[i].process_id)
					memory_findings(&e.processes[k], &memory.devices[i], out);
	} else {
		e.failed = 1;
	}
	memory_release(&memory);
	/* across the ranks of an MPI run: who holds the others back */
	struct mpi_ranks ranks;
	if (!e.failed && mpi_ranks_analyze(db, &ranks, err) == 0) {
		mpi_ranks_findings(&ranks, out);
		if (kept)
			*kept = ranks;
		else
			mpi_ranks_release(&ranks);
	} else {
		e.failed = 1;
	}
	for (size_t i = first; i < out->count; i++)
		out->items[i].order = i;
	if (out->count > first)
		sort_array(out->items + first, out->count - first, sizeof(*out->items), by_cost);
	release_engine(&e);
	return e.failed ? -1 : 0;
}

void findings_release(struct findings *f)
{
	for (size_t i = 0; i < f->count; i++) {
		free(f->items[i].device);
		strbuf_release(&f->items[i].what);
		strbuf_release(&f->items[i].evidence);
		strbuf_release(&f->items[i].advice);
	}
	free(f->items);
	memset(f, 0, sizeof(*f));
}

/* ---- helpers for the rules ---------------------------------------------------------------- */

/* One finding as a block for people. */
void finding_print_text(FILE *out, const struct finding *f, size_t index)
{
	struct strbuf cost = STRBUF_INIT;
	insight_duration(&cost, f->cost_ns);
	fprintf(out, "%zu. [%s] pid %" PRId64 "%s%s: %s (%.1f %% of %s)\n",
		index, f->rule, f->pid, f->device ? ", " : "", f->device ? f->device : "", cost.buf,
		f->cost_pct, finding_share_of(f));
	fprintf(out, "   %s\n", f->what.buf);
	for (const char *line = f->evidence.buf; *line;) {
		size_t n = strcspn(line, "\n");
		fprintf(out, "   - %.*s\n", (int)n, line);
		line += n + (line[n] == '\n');
	}
	fprintf(out, "   change: %s\n", f->advice.buf);
	strbuf_release(&cost);
}

const char *finding_share_of(const struct finding *f)
{
	return f->share_of ? f->share_of : "the process's time";
}

void insight_duration(struct strbuf *out, int64_t ns)
{
	if (ns >= 1000000000 || ns <= -1000000000)
		strbuf_addf(out, "%.3f s", (double)ns / 1e9);
	else if (ns >= 1000000 || ns <= -1000000)
		strbuf_addf(out, "%.3f ms", (double)ns / 1e6);
	else if (ns >= 1000 || ns <= -1000)
		strbuf_addf(out, "%.3f us", (double)ns / 1e3);
	else
		strbuf_addf(out, "%" PRId64 " ns", ns);
}

struct insight_median {
	struct insight_engine *e;
	struct extsort *values;
};

static int by_value(const void *a, const void *b, void *arg)
{
	(void)arg;
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

struct insight_median *insight_median_begin(const struct insight_process *p)
{
	struct insight_median *m = xcalloc(1, sizeof(*m));
	m->e = p->engine;
	m->values = extsort_begin(sizeof(int64_t), m->e->memory, by_value, NULL);
	return m;
}

void insight_median_add(struct insight_median *m, int64_t value)
{
	if (!m->e->failed && extsort_add(m->values, &value, m->e->err))
		m->e->failed = 1;
}

int64_t insight_median_end(struct insight_median *m)
{
	uint64_t n = extsort_count(m->values), place = 0;
	int64_t before = 0, median = 0;
	const void *v;
	if (n && !m->e->failed && extsort_sorted(m->values, m->e->err) == 0) {
		/* the middle value, or the mean of the two middle ones (each halved first) */
		int got;
		while ((got = extsort_next(m->values, &v, m->e->err)) > 0 && place < n / 2) {
			before = *(const int64_t *)v;
			place++;
		}
		if (got < 0)
			m->e->failed = 1;
		else
			median = n % 2 ? *(const int64_t *)v : before / 2 + *(const int64_t *)v / 2;
	} else if (n) {
		m->e->failed = 1;
	}
	extsort_free(m->values);
	free(m);
	return median;
}
