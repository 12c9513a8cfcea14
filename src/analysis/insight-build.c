/* The run laid out for the findings (insight_build, see insight-internal.h), in three
 * passes over the database and five external sorts:
 *   1. the API calls by process, thread and start (gpuprof's sort): the top-level ones
 *      written to the calls' file, every call's correlation id sorted beside the index
 *      of its top-level call;
 *   2. the kernels, and the memory commands, as recorded (their devices met in that
 *      order, the kernels' first), each sorted by correlation id on a connection and a
 *      thread of their own while the calls are read (1), then merged with the links:
 *      each gets its call's index;
 *   3. sorted by that index and merged with the calls' file in order: each call learns
 *      whether it launched a kernel or made a blocking copy, each launch whether its
 *      thread waited for it before launching again (the first later launch or wait of
 *      its thread decides), and each item what it needs of its call; then sorted by
 *      process, device and start into the items' file. */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/insight-internal.h"
#include "store/store.h"
#include "store/store-job.h"


/* An external sort's error: err is set already. */
static int sort_failed(struct insight_engine *e)
{
	e->failed = 1;
	return -1;
}

static int64_t clamp_time(int64_t t)
{
	const int64_t max = (int64_t)1 << 62;
	return t < 0 ? 0 : t > max ? max : t;
}

/* A process's index by its id; UINT32_MAX for none (a record of no known process). */
static uint32_t process_index(struct insight_engine *e, int64_t id, uint32_t *last)
{
	if (*last < e->process_count && e->processes[*last].id == id)
		return *last;
	for (size_t i = 0; i < e->process_count; i++)
		if (e->processes[i].id == id)
			return *last = (uint32_t)i;
	return UINT32_MAX;
}

static void read_processes(struct insight_engine *e)
{
	sqlite3_stmt *s = insight_prepare(e, "SELECT id, pid, hostname, start, end FROM "
					  "gpuprof_process ORDER BY id");
	while (s && sqlite3_step(s) == SQLITE_ROW) {
		e->processes = xrealloc(e->processes, (e->process_count + 1) * sizeof(*e->processes));
		e->extra = xrealloc(e->extra, (e->process_count + 1) * sizeof(*e->extra));
		struct insight_process *p = &e->processes[e->process_count];
		memset(p, 0, sizeof(*p));
		memset(&e->extra[e->process_count], 0, sizeof(*e->extra));
		e->process_count++;
		p->id = sqlite3_column_int64(s, 0);
		p->pid = sqlite3_column_int64(s, 1);
		const unsigned char *host = sqlite3_column_text(s, 2);
		p->host = xstrdup(host ? (const char *)host : "");
		p->start = clamp_time(sqlite3_column_int64(s, 3));
		p->end = clamp_time(sqlite3_column_int64(s, 4));
		if (p->end < p->start)
			p->end = p->start;
		p->engine = e;
	}
	sqlite3_finalize(s);
}

/* ---- 1. calls -------------------------------------------------------------------------------- */

struct link {
	int64_t correlation_id;
	uint64_t call;
	uint32_t process;
};

static int by_correlation(const void *a, const void *b, void *arg)
{
	(void)arg;
	const struct link *x = a, *y = b;
	if (x->process != y->process)
		return x->process < y->process ? -1 : 1;
	if (x->correlation_id != y->correlation_id)
		return x->correlation_id < y->correlation_id ? -1 : 1;
	return (x->call > y->call) - (x->call < y->call);
}

/* An API call as read, to be put in order by gpuprof's own sort (SQLite's ORDER BY of
 * a whole table holds memory by the number of its sorted runs). */
struct call_row {
	int64_t process_id, tid, start, end, correlation_id, name_id, id;
	int64_t has_name;
};

/* Enclosing calls come before the calls they made (by start, the longer first). */
static int by_thread_then_start(const void *a, const void *b, void *arg)
{
	(void)arg;
	const struct call_row *x = a, *y = b;
	if (x->process_id != y->process_id)
		return x->process_id < y->process_id ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->end != y->end)
		return x->end > y->end ? -1 : 1;
	return (x->id > y->id) - (x->id < y->id);
}

/* The API calls in that order: a call inside the last top-level call of its thread is
 * made by it. */
static void read_calls(struct insight_engine *e, struct extsort *links)
{
	sqlite3_stmt *s = insight_prepare(e, "SELECT c.process_id, c.tid, c.start, c.end, "
					  "c.correlation_id, c.function_id, c.id FROM "
					  "gpuprof_api_call c WHERE " INSIGHT_VALID_TIMES("c"));
	struct extsort *sorted = extsort_begin(sizeof(struct call_row), e->memory,
					       by_thread_then_start, NULL);
	int step = SQLITE_DONE;
	while (s && !e->failed && (step = sqlite3_step(s)) == SQLITE_ROW) {
		struct call_row r = {
			sqlite3_column_int64(s, 0), sqlite3_column_int64(s, 1),
			sqlite3_column_int64(s, 2), sqlite3_column_int64(s, 3),
			sqlite3_column_int64(s, 4), sqlite3_column_int64(s, 5),
			sqlite3_column_int64(s, 6), sqlite3_column_type(s, 5) != SQLITE_NULL,
		};
		if (extsort_add(sorted, &r, e->err))
			sort_failed(e);
	}
	if (s && !e->failed && step != SQLITE_DONE)
		insight_fail(e);
	sqlite3_finalize(s);
	if (!s || e->failed || extsort_sorted(sorted, e->err) || tempfile_open(&e->calls, e->err)) {
		extsort_free(sorted);
		e->failed = 1;
		return;
	}
	struct record_writer w;
	record_writer_begin(&w, &e->calls, sizeof(struct insight_call_record), 1 << 20);
	struct insight_call_record top = { .process = UINT32_MAX };
	uint64_t count = 0;
	uint32_t last = 0;
	const void *next;
	int got = 0;
	while (!e->failed && (got = extsort_next(sorted, &next, e->err)) > 0) {
		const struct call_row *r = next;
		uint32_t pi = process_index(e, r->process_id, &last);
		if (pi == UINT32_MAX)
			continue;
		struct insight_process *p = &e->processes[pi];
		struct insight_extra *x = &e->extra[pi];
		p->has_calls = 1;
		if (!(top.process == pi && top.tid == r->tid && r->start >= top.start &&
		      r->end <= top.end)) {
			top = (struct insight_call_record){
				.tid = r->tid, .start = r->start, .end = r->end, .name_id = r->name_id,
				.process = pi, .has_name = (uint8_t)r->has_name,
				.wait = (uint8_t)insight_is_wait(insight_name(e, (int)r->has_name,
									      r->name_id)),
			};
			if (record_writer_add(&w, &top, e->err)) {
				e->failed = 1;
				break;
			}
			if (!x->thread_count || x->threads[x->thread_count - 1].tid != r->tid) {
				x->threads = xrealloc(x->threads, (x->thread_count + 1) * sizeof(*x->threads));
				x->threads[x->thread_count++] = (struct insight_thread){ r->tid, count,
											 count };
			}
			if (x->first_call == x->end_call)
				x->first_call = count;
			x->end_call = ++count;
			x->threads[x->thread_count - 1].end = count;
		}
		struct link l = { r->correlation_id, count - 1, pi };
		if (r->correlation_id && extsort_add(links, &l, e->err))
			sort_failed(e);
	}
	if (got < 0)
		sort_failed(e);
	extsort_free(sorted);
	if (record_writer_end(&w, e->err))
		e->failed = 1;
}

/* ---- 2. items, linked to their calls ---------------------------------------------------------- */

static int by_item_correlation(const void *a, const void *b, void *arg)
{
	(void)arg;
	const struct insight_item_record *x = a, *y = b;
	if (x->process != y->process)
		return x->process < y->process ? -1 : 1;
	if (x->correlation_id != y->correlation_id)
		return x->correlation_id < y->correlation_id ? -1 : 1;
	if (x->source != y->source)
		return x->source < y->source ? -1 : 1;
	return (x->source_id > y->source_id) - (x->source_id < y->source_id);
}

static struct insight_device *device_of(struct insight_engine *e, uint32_t pi, int64_t agent)
{
	struct insight_process *p = &e->processes[pi];
	for (size_t i = p->device_count; i-- > 0;)
		if (p->devices[i].agent == agent)
			return &p->devices[i];
	p->devices = xrealloc(p->devices, (p->device_count + 1) * sizeof(*p->devices));
	struct insight_device *d = &p->devices[p->device_count];
	memset(d, 0, sizeof(*d));
	d->index = p->device_count++;
	d->agent = agent;
	d->kernels_from = INT64_MAX; /* no kernel yet */
	d->kernels_to = INT64_MIN;
	return d;
}

/* The speed-of-light value of a kernel: its last row of the counter named. */
#define COUNTER(name) "(SELECT c.value FROM gpuprof_counter c WHERE k.correlation_id != 0 " \
		      "AND c.process_id = k.process_id AND c.correlation_id = k.correlation_id " \
		      "AND c.value IS NOT NULL AND c.name_id IN (SELECT id FROM gpuprof_string " \
		      "WHERE string = '" name "') ORDER BY c.id DESC LIMIT 1)"

/* What one source of items (kernels, or memory commands) gathers apart from the other,
 * each on a connection of its own: its items, sorted by correlation, and the devices
 * they ran on in the order met, which become the processes' devices once both are read
 * (the kernels' first: their order is the devices' order). */
struct items_part {
	int source;                   /* 0: gpuprof_kernel, 1: gpuprof_memory_copy */
	struct extsort *items;
	struct part_device {
		uint32_t process;
		int64_t agent, kernels_from, kernels_to;
	} *devices;
	size_t device_count;
	int64_t *ends;                /* per process: its records' last end */
};

static struct part_device *part_device_of(struct items_part *part, uint32_t pi, int64_t agent)
{
	for (size_t i = part->device_count; i-- > 0;)
		if (part->devices[i].process == pi && part->devices[i].agent == agent)
			return &part->devices[i];
	part->devices = xrealloc(part->devices, (part->device_count + 1) * sizeof(*part->devices));
	struct part_device *d = &part->devices[part->device_count++];
	*d = (struct part_device){ pi, agent, INT64_MAX, INT64_MIN };
	return d;
}

/* The part's devices and ends taken into the processes. */
static void items_part_apply(struct insight_engine *e, const struct items_part *part)
{
	for (size_t i = 0; i < part->device_count; i++) {
		const struct part_device *pd = &part->devices[i];
		struct insight_device *d = device_of(e, pd->process, pd->agent);
		d->kernels_from = pd->kernels_from < d->kernels_from ? pd->kernels_from : d->kernels_from;
		d->kernels_to = pd->kernels_to > d->kernels_to ? pd->kernels_to : d->kernels_to;
	}
	for (size_t i = 0; part->ends && i < e->process_count; i++)
		if (part->ends[i] > e->processes[i].end) /* a process that never ended cleanly:
							    its bounds are its records' */
			e->processes[i].end = part->ends[i];
}

static void items_part_release(struct items_part *part)
{
	extsort_free(part->items);
	free(part->devices);
	free(part->ends);
}

/* Kernels, or memory commands, as recorded: each onto its device (a kernel's agent; a
 * memory command's queue's agent, else the device end of its direction). */
static void read_items(struct insight_engine *e, struct items_part *part)
{
	const char *kernels = store_has_table(e->db, "gpuprof_counter")
		? "SELECT k.process_id, IFNULL(k.agent_index, 0), k.queue_index, k.name_id, 0, "
		  "k.start, k.end, k.tid, 0, 0, 0, 0, k.id, k.correlation_id, "
		  COUNTER("sm__throughput.avg.pct_of_peak_sustained_elapsed") ", "
		  COUNTER("gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed")
		  " FROM gpuprof_kernel k WHERE " INSIGHT_VALID_TIMES("k")
		: "SELECT k.process_id, IFNULL(k.agent_index, 0), k.queue_index, k.name_id, 0, "
		  "k.start, k.end, k.tid, 0, 0, 0, 0, k.id, k.correlation_id, NULL, NULL "
		  "FROM gpuprof_kernel k WHERE " INSIGHT_VALID_TIMES("k");
	const char *copies =
		"SELECT k.process_id, IFNULL(COALESCE(q.agent_index, CASE k.direction WHEN 2 THEN "
		"k.src_agent_index ELSE k.dst_agent_index END), 0), k.queue_index, k.function_id, "
		"CASE IFNULL(k.operation, 0) WHEN 0 THEN 0 WHEN 1 THEN 1 ELSE 2 END, k.start, "
		"k.end, k.tid, k.bytes, k.direction, k.src_memory_kind, k.dst_memory_kind, k.id, "
		"k.correlation_id, NULL, NULL FROM gpuprof_memory_copy k LEFT JOIN gpuprof_queue q "
		"ON q.process_id = k.process_id AND q.queue_index = k.queue_index WHERE "
		INSIGHT_VALID_TIMES("k");
	uint32_t last = 0;
	int source = part->source;
	part->ends = xcalloc(e->process_count ? e->process_count : 1, sizeof(*part->ends));
	for (size_t i = 0; i < e->process_count; i++)
		part->ends[i] = INT64_MIN;
	{
		sqlite3_stmt *s = insight_prepare(e, source ? copies : kernels);
		int step = SQLITE_DONE;
		while (s && !e->failed && (step = sqlite3_step(s)) == SQLITE_ROW) {
			uint32_t pi = process_index(e, sqlite3_column_int64(s, 0), &last);
			if (pi == UINT32_MAX)
				continue;
			struct insight_item_record r = {
				.process = pi, .agent = sqlite3_column_int64(s, 1),
				.has_queue = sqlite3_column_type(s, 2) != SQLITE_NULL,
				.queue = sqlite3_column_int64(s, 2),
				.has_name = sqlite3_column_type(s, 3) != SQLITE_NULL,
				.name_id = sqlite3_column_int64(s, 3),
				.kind = (uint8_t)sqlite3_column_int(s, 4),
				.start = sqlite3_column_int64(s, 5), .end = sqlite3_column_int64(s, 6),
				.tid = sqlite3_column_int64(s, 7), .bytes = sqlite3_column_int64(s, 8),
				.direction = sqlite3_column_int(s, 9), .src_kind = sqlite3_column_int(s, 10),
				.dst_kind = sqlite3_column_int(s, 11), .source = (uint8_t)source,
				.source_id = sqlite3_column_int64(s, 12),
				.correlation_id = sqlite3_column_int64(s, 13),
				.sm = sqlite3_column_type(s, 14) == SQLITE_NULL ? NAN
									  : sqlite3_column_double(s, 14),
				.memory = sqlite3_column_type(s, 15) == SQLITE_NULL
					  ? NAN : sqlite3_column_double(s, 15),
				.call = INSIGHT_NONE,
			};
			struct part_device *d = part_device_of(part, pi, r.agent);
			if (r.kind == INSIGHT_KERNEL) {
				d->kernels_from = r.start < d->kernels_from ? r.start : d->kernels_from;
				d->kernels_to = r.end > d->kernels_to ? r.end : d->kernels_to;
			}
			if (r.end > part->ends[pi])
				part->ends[pi] = r.end;
			if (extsort_add(part->items, &r, e->err))
				sort_failed(e);
		}
		if (!e->failed && step != SQLITE_DONE)
			insight_fail(e);
		sqlite3_finalize(s);
	}
}

static int by_call(const void *a, const void *b, void *arg)
{
	(void)arg;
	const struct insight_item_record *x = a, *y = b;
	if (x->call != y->call)
		return x->call < y->call ? -1 : 1;
	return by_item_correlation(a, b, arg);
}

/* The kernels and the memory commands, each sorted by correlation, read as one list in
 * that order. */
struct two_sorted {
	struct extsort *sorts[2];
	const void *heads[2];
	int has[2];                   /* 1: a head; 0: at the end; -1: an error */
	struct insight_item_record taken; /* the record handed out, its head moved on */
};

static int two_sorted_begin(struct two_sorted *t, struct extsort *a, struct extsort *b,
			    struct error *err)
{
	t->sorts[0] = a, t->sorts[1] = b;
	for (int k = 0; k < 2; k++) {
		if (extsort_sorted(t->sorts[k], err))
			return -1;
		t->has[k] = extsort_next(t->sorts[k], &t->heads[k], err);
		if (t->has[k] < 0)
			return -1;
	}
	return 0;
}

/* As extsort_next; *record valid until the next call. */
static int two_sorted_next(struct two_sorted *t, const void **record, struct error *err)
{
	int k = !t->has[0] ? 1 : !t->has[1] ? 0
		: by_item_correlation(t->heads[1], t->heads[0], NULL) < 0;
	if (!t->has[k])
		return 0;
	t->taken = *(const struct insight_item_record *)t->heads[k];
	*record = &t->taken;
	t->has[k] = extsort_next(t->sorts[k], &t->heads[k], err);
	return t->has[k] < 0 ? -1 : 1;
}

/* The items in order of correlation id beside the links in the same order: an item
 * gets the top-level call of the last call with its id. */
static void link_items(struct insight_engine *e, struct extsort *links, struct two_sorted *items,
		       struct extsort *out)
{
	if (e->failed || extsort_sorted(links, e->err)) {
		sort_failed(e);
		return;
	}
	const void *l = NULL, *i;
	int has_link = extsort_next(links, &l, e->err);
	uint32_t key_process = UINT32_MAX;
	int64_t key = 0;
	uint64_t call = INSIGHT_NONE;
	int got;
	while (has_link >= 0 && (got = two_sorted_next(items, &i, e->err)) > 0) {
		struct insight_item_record r = *(const struct insight_item_record *)i;
		if (r.correlation_id && (r.process != key_process || r.correlation_id != key)) {
			key_process = r.process, key = r.correlation_id, call = INSIGHT_NONE;
			while (has_link > 0) {
				const struct link *x = l;
				if (x->process > r.process ||
				    (x->process == r.process && x->correlation_id > r.correlation_id))
					break;
				if (x->process == r.process && x->correlation_id == r.correlation_id)
					call = x->call; /* the last of them wins */
				has_link = extsort_next(links, &l, e->err);
			}
		}
		r.call = r.correlation_id ? call : INSIGHT_NONE;
		if (extsort_add(out, &r, e->err)) {
			got = -1;
			break;
		}
	}
	if (has_link < 0 || got < 0)
		sort_failed(e);
}

/* ---- 3. the calls' flags, the items' calls --------------------------------------------------- */

static int by_device(const void *a, const void *b, void *arg)
{
	(void)arg;
	const struct insight_item_record *x = a, *y = b;
	if (x->process != y->process)
		return x->process < y->process ? -1 : 1;
	if (x->agent != y->agent)
		return x->agent < y->agent ? -1 : 1;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->source != y->source)
		return x->source < y->source ? -1 : 1;
	return (x->source_id > y->source_id) - (x->source_id < y->source_id);
}

/* The items of one call, and of the launch whose waited flag is not known yet. */
struct group {
	struct insight_item_record *items;
	size_t count;
};

static void group_add(struct group *g, const struct insight_item_record *r)
{
	g->items = xrealloc(g->items, (g->count + 1) * sizeof(*g->items));
	g->items[g->count++] = *r;
}

struct flagging {
	struct insight_engine *e;
	struct extsort *out;
	struct record_updater *calls; /* the calls' file, their flags set as they are known */
	struct insight_call_record pending; /* the last launch, waited or not: not yet known */
	uint64_t pending_index;       /* INSIGHT_NONE: none */
	struct group held;            /* its items */
};

/* A call's items, given its flags, to the last sort. */
static void emit(struct flagging *f, const struct insight_call_record *c, struct group *g)
{
	for (size_t i = 0; i < g->count && !f->e->failed; i++) {
		struct insight_item_record *r = &g->items[i];
		r->call_tid = c->tid, r->call_start = c->start, r->call_end = c->end;
		r->launch = c->launch, r->blocking = c->blocking, r->waited = c->waited;
		if (extsort_add(f->out, r, f->e->err))
			sort_failed(f->e);
	}
	g->count = 0;
}

/* The pending launch known to be waited for, or not. */
static void resolve(struct flagging *f, int waited)
{
	if (f->pending_index == INSIGHT_NONE)
		return;
	if (waited) {
		f->pending.waited = 1;
		if (!f->e->failed &&
		    record_updater_set(f->calls, f->pending_index, &f->pending, f->e->err))
			f->e->failed = 1;
	}
	emit(f, &f->pending, &f->held);
	f->pending_index = INSIGHT_NONE;
}

static void flag_calls(struct insight_engine *e, struct extsort *items, struct extsort *out)
{
	if (e->failed || extsort_sorted(items, e->err)) {
		sort_failed(e);
		return;
	}
	uint64_t calls = e->calls.size / sizeof(struct insight_call_record);
	struct record_updater updater;
	record_updater_begin(&updater, &e->calls, sizeof(struct insight_call_record), calls,
			     1 << 20);
	struct flagging f = { .e = e, .out = out, .calls = &updater,
			      .pending_index = INSIGHT_NONE };
	struct group group = { NULL, 0 };
	const void *i = NULL;
	int has_item = extsort_next(items, &i, e->err);
	for (uint64_t k = 0; k < calls && has_item >= 0 && !e->failed; k++) {
		const void *read;
		if (record_updater_next(&updater, &read, e->err) <= 0) {
			e->failed = 1;
			break;
		}
		struct insight_call_record c = *(const struct insight_call_record *)read;
		while (has_item > 0 && ((const struct insight_item_record *)i)->call == k) {
			const struct insight_item_record *r = i;
			c.launch |= r->kind == INSIGHT_KERNEL;
			c.blocking |= r->kind == INSIGHT_COPY && c.end >= r->end;
			group_add(&group, r);
			has_item = extsort_next(items, &i, e->err);
		}
		if (c.launch || c.blocking) {
			if (record_updater_set(&updater, k, &c, e->err)) {
				e->failed = 1;
				break;
			}
		}
		if (f.pending_index != INSIGHT_NONE &&
		    (f.pending.process != c.process || f.pending.tid != c.tid))
			resolve(&f, 0);
		if (c.launch) {
			resolve(&f, 0);
			f.pending = c;
			f.pending_index = k;
			struct group swap = f.held;
			f.held = group;
			group = swap;
			group.count = 0;
		} else {
			if (c.blocking || c.wait)
				resolve(&f, 1);
			emit(&f, &c, &group);
		}
	}
	resolve(&f, 0);
	if (record_updater_end(&updater, e->err))
		e->failed = 1;
	/* items enqueued by no call known */
	while (has_item > 0 && !e->failed) {
		if (extsort_add(out, i, e->err))
			sort_failed(e);
		has_item = extsort_next(items, &i, e->err);
	}
	if (has_item < 0)
		sort_failed(e);
	free(group.items);
	free(f.held.items);
}

/* The items in their final order into the items' file, each device's range noted. */
static void lay_out(struct insight_engine *e, struct extsort *items)
{
	if (e->failed || extsort_sorted(items, e->err) || tempfile_open(&e->items, e->err)) {
		sort_failed(e);
		return;
	}
	for (size_t i = 0; i < e->process_count; i++) {
		size_t n = e->processes[i].device_count ? e->processes[i].device_count : 1;
		e->extra[i].device_first = xcalloc(n, sizeof(uint64_t));
		e->extra[i].device_end = xcalloc(n, sizeof(uint64_t));
	}
	struct record_writer w;
	record_writer_begin(&w, &e->items, sizeof(struct insight_item_record), 1 << 20);
	const void *i;
	uint64_t at = 0;
	const struct insight_device *d = NULL;
	uint32_t process = UINT32_MAX;
	int got;
	while ((got = extsort_next(items, &i, e->err)) > 0) {
		const struct insight_item_record *r = i;
		if (!d || r->process != process || r->agent != d->agent) {
			process = r->process;
			d = device_of(e, process, r->agent);
			e->extra[process].device_first[d->index] = at;
		}
		e->extra[process].device_end[d->index] = ++at;
		if (record_writer_add(&w, r, e->err)) {
			got = -1;
			break;
		}
	}
	if (record_writer_end(&w, e->err) || got < 0)
		sort_failed(e);
}

/* ---- devices' labels, samples --------------------------------------------------------------- */

void insight_agent_label(struct strbuf *out, int type, int64_t agent, const char *name)
{
	static const char *const agent_types[] = { "agent", "CPU", "GPU", "accelerator" };
	strbuf_addf(out, "%s %" PRId64 " (%s)", agent_types[type >= 1 && type <= 3 ? type : 0],
		    agent, name ? name : "");
}

static void label_devices(struct insight_engine *e)
{
	for (size_t i = 0; i < e->process_count; i++)
		for (size_t d = 0; d < e->processes[i].device_count; d++) {
			struct strbuf label = STRBUF_INIT;
			strbuf_addf(&label, "device %" PRId64, e->processes[i].devices[d].agent);
			e->processes[i].devices[d].label = strbuf_detach(&label);
		}
	sqlite3_stmt *s = insight_prepare(e, "SELECT a.process_id, a.agent_index, a.type, "
					  "s.string FROM gpuprof_agent a LEFT JOIN gpuprof_string s "
					  "ON s.id = a.name_id");
	uint32_t last = 0;
	while (s && sqlite3_step(s) == SQLITE_ROW) {
		uint32_t pi = process_index(e, sqlite3_column_int64(s, 0), &last);
		if (pi == UINT32_MAX)
			continue;
		struct insight_process *p = &e->processes[pi];
		int64_t agent = sqlite3_column_int64(s, 1);
		for (size_t d = 0; d < p->device_count; d++) {
			if (p->devices[d].agent != agent)
				continue;
			struct strbuf label = STRBUF_INIT;
			insight_agent_label(&label, sqlite3_column_int(s, 2), agent,
					    (const char *)sqlite3_column_text(s, 3));
			free(p->devices[d].label);
			p->devices[d].label = strbuf_detach(&label);
		}
	}
	sqlite3_finalize(s);
	if (!store_has_table(e->db, "gpuprof_sample"))
		return;
	s = insight_prepare(e, "SELECT DISTINCT process_id FROM gpuprof_sample");
	while (s && sqlite3_step(s) == SQLITE_ROW) {
		uint32_t pi = process_index(e, sqlite3_column_int64(s, 0), &last);
		if (pi != UINT32_MAX)
			e->processes[pi].has_samples = 1;
	}
	sqlite3_finalize(s);
}

/* ---- the whole ------------------------------------------------------------------------------- */

/* A source of items read over a connection of its own (store-job.h) while the calls are
 * read: the passes share nothing but the processes, which they only read. The job has
 * a copy of the engine made before the calls are read (its names and files unused). */
struct items_job {
	struct insight_engine e;
	struct items_part *part;
};

static int items_job_run(sqlite3 *db, void *arg, struct error *err)
{
	struct items_job *j = arg;
	j->e.db = db;
	j->e.err = err;
	read_items(&j->e, j->part);
	return j->e.failed ? -1 : 0;
}

void insight_build(struct insight_engine *e)
{
	e->memory = extsort_memory();
	e->calls.fd = e->items.fd = -1;
	read_processes(e);
	struct extsort *links = extsort_begin(sizeof(struct link), e->memory, by_correlation, NULL);
	struct items_part parts[2];
	for (int k = 0; k < 2; k++)
		parts[k] = (struct items_part){
			.source = k,
			.items = extsort_begin(sizeof(struct insight_item_record), e->memory,
					       by_item_correlation, NULL) };
	struct extsort *by_calls = extsort_begin(sizeof(struct insight_item_record), e->memory,
						 by_call, NULL);
	struct extsort *by_devices = extsort_begin(sizeof(struct insight_item_record), e->memory,
						   by_device, NULL);
	/* the calls here, the kernels and the memory commands each on a thread of their own */
	struct items_job jobs[2];
	struct store_job threads[2];
	for (int k = 0; k < 2; k++) {
		jobs[k] = (struct items_job){ *e, &parts[k] };
		jobs[k].e.string = NULL;
		store_job_start(&threads[k], e->db, items_job_run, &jobs[k]);
	}
	if (!e->failed)
		read_calls(e, links);
	for (int k = 0; k < 2; k++) {
		struct error job_err;
		if (store_job_finish(&threads[k], &job_err) && !e->failed) {
			*e->err = job_err;
			e->failed = 1;
		}
	}
	for (int k = 0; k < 2 && !e->failed; k++)
		items_part_apply(e, &parts[k]);
	struct two_sorted items;
	if (!e->failed && two_sorted_begin(&items, parts[0].items, parts[1].items, e->err))
		sort_failed(e);
	link_items(e, links, &items, by_calls);
	extsort_free(links);
	for (int k = 0; k < 2; k++)
		items_part_release(&parts[k]);
	flag_calls(e, by_calls, by_devices);
	extsort_free(by_calls);
	lay_out(e, by_devices);
	extsort_free(by_devices);
	if (!e->failed)
		label_devices(e);
}
