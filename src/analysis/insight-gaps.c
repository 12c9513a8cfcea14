/* What the host was doing while a device sat idle (insight_describe_gaps): a second pass
 * over the device's work that walks its gaps in order of time beside a cursor on each
 * thread's top-level calls and one on the process's samples, so that nothing of the
 * run is held but the calls that reach past the gap at hand. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/insight-internal.h"
#include "util/hash.h"
#include "util/sort.h"

/* Time or samples by (name, thread): names are interned, so a name is its pointer. An
 * open-addressing index over a growing array. */
struct tally {
	const char *name;
	int64_t tid, ns, count;
	size_t order;                 /* the gap it was first met in, or its place met */
};

struct tallies {
	struct tally *items;
	size_t count;
	size_t *slots, size;          /* index + 1; 0: empty */
};

static void tally_add(struct tallies *t, const char *name, int64_t tid, int64_t ns,
		      size_t order)
{
	if (2 * (t->count + 1) > t->size) {
		t->size = t->size ? 2 * t->size : 64;
		free(t->slots);
		t->slots = xcalloc(t->size, sizeof(*t->slots));
		for (size_t i = 0; i < t->count; i++) {
			size_t j = hash_int((uintptr_t)t->items[i].name ^ hash_int((uint64_t)t->items[i].tid)) &
				   (t->size - 1);
			while (t->slots[j])
				j = (j + 1) & (t->size - 1);
			t->slots[j] = i + 1;
		}
	}
	size_t j = hash_int((uintptr_t)name ^ hash_int((uint64_t)tid)) & (t->size - 1);
	for (; t->slots[j]; j = (j + 1) & (t->size - 1)) {
		struct tally *x = &t->items[t->slots[j] - 1];
		if (x->name == name && x->tid == tid) {
			x->ns += ns;
			x->count++;
			return;
		}
	}
	t->items = xrealloc(t->items, (t->count + 1) * sizeof(*t->items));
	t->items[t->count++] = (struct tally){ name, tid, ns, 1, order };
	t->slots[j] = t->count;
}

/* The most first; at one value, calls by thread, then the gap they were first met in. */
static int by_ns_thread(const void *a, const void *b)
{
	const struct tally *x = a, *y = b;
	if (x->ns != y->ns)
		return (x->ns < y->ns) - (x->ns > y->ns);
	if (x->tid != y->tid)
		return (x->tid > y->tid) - (x->tid < y->tid);
	return (x->order > y->order) - (x->order < y->order);
}

/* The most first; at one value, in the order met. */
static int by_ns(const void *a, const void *b)
{
	const struct tally *x = a, *y = b;
	if (x->ns != y->ns)
		return (x->ns < y->ns) - (x->ns > y->ns);
	return (x->order > y->order) - (x->order < y->order);
}

/* A thread's top-level calls in order, read as the gaps need them: the calls read that
 * end after the last gap (they may reach into the next), and the one read ahead. */
struct cursor {
	int64_t tid;
	struct record_reader reader;
	struct held {
		int64_t start, end;
		const char *name;
	} *held, ahead;
	size_t held_count;
	int has_ahead, done;
};

static int read_call(struct insight_engine *e, struct cursor *c)
{
	if (c->has_ahead)
		return 1;
	if (c->done)
		return 0;
	const void *read;
	int got = record_reader_next(&c->reader, &read, e->err);
	if (got <= 0) {
		if (got < 0)
			e->failed = 1;
		c->done = 1;
		return 0;
	}
	const struct insight_call_record *r = read;
	c->ahead = (struct held){ r->start, r->end, insight_name(e, r->has_name, r->name_id) };
	return c->has_ahead = 1;
}

/* Time of [start, end) inside the thread's calls, the name of the call that covered
 * most of it. Held calls that ended before the gap began are dropped from the front;
 * a call read that ends inside the gap is not held (no later gap reaches it). */
static void cover(const struct held *h, int64_t start, int64_t end, int64_t *total,
		  int64_t *longest, const char **name)
{
	int64_t a = h->start > start ? h->start : start;
	int64_t b = h->end < end ? h->end : end;
	if (b > a) {
		*total += b - a;
		if (b - a > *longest)
			*longest = b - a, *name = h->name;
	}
}

static int64_t covered(struct insight_engine *e, struct cursor *c, int64_t start, int64_t end,
		       const char **name)
{
	size_t drop = 0;
	while (drop < c->held_count && c->held[drop].end <= start)
		drop++;
	if (drop) {
		memmove(c->held, c->held + drop, (c->held_count - drop) * sizeof(*c->held));
		c->held_count -= drop;
	}
	int64_t total = 0, longest = 0;
	for (size_t i = 0; i < c->held_count; i++)
		cover(&c->held[i], start, end, &total, &longest, name);
	while (read_call(e, c) && c->ahead.start < end) {
		c->has_ahead = 0;
		cover(&c->ahead, start, end, &total, &longest, name);
		if (c->ahead.end > end) { /* reaches past the gap */
			c->held = xrealloc(c->held, (c->held_count + 1) * sizeof(*c->held));
			c->held[c->held_count++] = c->ahead;
		}
	}
	return total;
}

struct describe {
	struct insight_engine *e;
	const struct insight_process *p;
	int64_t from, to;
	struct cursor *threads;
	size_t thread_count;
	sqlite3_stmt *samples;
	int sample_ahead, samples_done;
	int64_t idle, outside;
	size_t gap;
	struct tallies calls, functions;
};

static void describe_gap(void *arg, const struct insight_device *d,
			 const struct insight_interval *b, const struct insight_activity *next)
{
	(void)d;
	struct describe *x = arg;
	if (!next || b->end < x->from || next->start > x->to)
		return;
	int64_t start = b->end, end = next->start;
	x->idle += end - start;
	/* per thread, the time of the gap spent in calls (named by the call that covered
	 * most of it); "outside": what the thread in calls the longest during the gap spent
	 * out of them (exact with one launching thread) */
	int64_t in_any = 0;
	for (size_t t = 0; t < x->thread_count; t++) {
		const char *name = NULL;
		int64_t ns = covered(x->e, &x->threads[t], start, end, &name);
		if (ns > 0) {
			tally_add(&x->calls, name, x->threads[t].tid, ns, x->gap);
			if (ns > in_any)
				in_any = ns;
		}
	}
	x->outside += end - start - in_any;
	while (x->samples && !x->samples_done) {
		if (!x->sample_ahead) {
			int step = sqlite3_step(x->samples);
			if (step != SQLITE_ROW) {
				if (step != SQLITE_DONE)
					insight_fail(x->e);
				x->samples_done = 1;
				break;
			}
			x->sample_ahead = 1;
		}
		int64_t time = sqlite3_column_int64(x->samples, 1);
		if (time >= end)
			break;
		x->sample_ahead = 0;
		if (time >= start)
			tally_add(&x->functions, insight_intern(x->e, sqlite3_column_text(x->samples, 2)),
				  sqlite3_column_int64(x->samples, 0), 1, x->functions.count);
	}
	x->gap++;
}

static void open_cursors(struct describe *x)
{
	struct insight_engine *e = x->e;
	const struct insight_extra *extra = &e->extra[x->p - e->processes];
	x->threads = xcalloc(extra->thread_count ? extra->thread_count : 1, sizeof(*x->threads));
	x->thread_count = extra->thread_count;
	for (size_t t = 0; t < x->thread_count; t++) {
		struct cursor *c = &x->threads[t];
		c->tid = extra->threads[t].tid;
		record_reader_begin(&c->reader, &e->calls, sizeof(struct insight_call_record),
				    extra->threads[t].first, extra->threads[t].end, 64 << 10);
	}
	if (x->p->has_samples) {
		x->samples = insight_prepare(e, "SELECT s.tid, s.time, f.function FROM gpuprof_sample s "
					     "LEFT JOIN gpuprof_stack k ON k.process_id = s.process_id "
					     "AND k.stack_id = s.stack_id LEFT JOIN gpuprof_frame f ON "
					     "f.process_id = k.process_id AND f.frame_id = k.frame_id "
					     "WHERE s.process_id = ? ORDER BY s.time, s.id");
		if (x->samples)
			sqlite3_bind_int64(x->samples, 1, x->p->id);
	}
}

static void close_cursors(struct describe *x)
{
	for (size_t t = 0; t < x->thread_count; t++) {
		record_reader_end(&x->threads[t].reader);
		free(x->threads[t].held);
	}
	free(x->threads);
	sqlite3_finalize(x->samples);
}

void insight_describe_gaps(const struct insight_process *p, const struct insight_device *d,
			   int64_t from, int64_t to, struct strbuf *out)
{
	struct describe x = { .e = p->engine, .p = p, .from = from, .to = to };
	open_cursors(&x);
	insight_replay(p, d, NULL, describe_gap, &x);
	close_cursors(&x);
	if (x.idle <= 0 || x.e->failed) {
		free(x.calls.items), free(x.calls.slots);
		free(x.functions.items), free(x.functions.slots);
		return;
	}
	sort_array(x.calls.items, x.calls.count, sizeof(*x.calls.items), by_ns_thread);
	sort_array(x.functions.items, x.functions.count, sizeof(*x.functions.items), by_ns);
	for (size_t i = 0; i < x.calls.count && i < 3; i++) {
		const struct tally *c = &x.calls.items[i];
		strbuf_addf(out, "while idle, thread %" PRId64 " was in %s: ", c->tid, c->name);
		insight_duration(out, c->ns);
		strbuf_addf(out, " (%.1f %% of the idle time, in %" PRId64 " gap%s)\n",
			    100.0 * (double)c->ns / (double)x.idle, c->count, c->count == 1 ? "" : "s");
	}
	if (p->has_calls && x.outside > 0) {
		strbuf_addstr(out, "while idle, in no API call (the host's own code): ");
		insight_duration(out, x.outside);
		strbuf_addf(out, " (%.1f %%)\n", 100.0 * (double)x.outside / (double)x.idle);
	}
	int64_t sampled = 0;
	for (size_t i = 0; i < x.functions.count; i++)
		sampled += x.functions.items[i].ns;
	for (size_t i = 0; i < x.functions.count && i < 3; i++) {
		const struct tally *f = &x.functions.items[i];
		strbuf_addf(out, "sampled while idle: thread %" PRId64 " in %s (%" PRId64 " of %" PRId64
			    " samples)\n", f->tid, *f->name ? f->name : "an unknown function", f->ns,
			    sampled);
	}
	free(x.calls.items), free(x.calls.slots);
	free(x.functions.items), free(x.functions.slots);
}
