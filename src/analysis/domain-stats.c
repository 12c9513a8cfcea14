/* Statistics of a recording by domain (see domain-stats.h). */
#include "analysis/domain-stats.h"

#include <stdlib.h>
#include <string.h>

#include "core/record.h"
#include "util/strbuf.h"

/* A range open on a thread: its end, and the time of the ranges directly inside it. */
struct open_range {
	char *name;
	int64_t end_ns;
	uint64_t children_ns, duration_ns;
};

struct marker_thread {
	int64_t process_id, tid;
	struct open_range *open;
	size_t count, alloc;
};

void domain_stats_init(struct domain_stats *ds)
{
	memset(ds, 0, sizeof(*ds));
	stats_init(&ds->kernels);
	stats_init(&ds->copies);
	stats_init(&ds->allocations);
	stats_init(&ds->markers);
	ds->markers.nested = 1;
	stats_init(&ds->domains);
}

/* The innermost open range of a thread has ended: its self time is counted. */
static void close_range(struct domain_stats *ds, struct marker_thread *t)
{
	struct open_range *r = &t->open[--t->count];
	uint64_t self = r->duration_ns > r->children_ns ? r->duration_ns - r->children_ns : 0;
	stats_add_self(&ds->markers, r->name, self);
	stats_add(&ds->domains, "MARKER_API", self);
	free(r->name);
}

static void add_range(struct domain_stats *ds, const struct event *e, uint64_t duration)
{
	struct marker_thread *t = NULL;
	if (ds->last_thread < ds->thread_count && /* most ranges follow one of their thread */
	    ds->threads[ds->last_thread].process_id == e->process_id &&
	    ds->threads[ds->last_thread].tid == e->tid)
		t = &ds->threads[ds->last_thread];
	for (size_t i = ds->thread_count; i-- > 0 && !t;)
		if (ds->threads[i].process_id == e->process_id && ds->threads[i].tid == e->tid) {
			t = &ds->threads[i];
			ds->last_thread = i;
		}
	if (!t) {
		ds->threads = xrealloc(ds->threads, (ds->thread_count + 1) * sizeof(*ds->threads));
		ds->last_thread = ds->thread_count;
		t = &ds->threads[ds->thread_count++];
		*t = (struct marker_thread){ e->process_id, e->tid, NULL, 0, 0 };
	}
	while (t->count && t->open[t->count - 1].end_ns <= e->start_ns)
		close_range(ds, t);
	/* inside the innermost open range: its child (a range that overlaps it without
	 * lying inside, as start/stop ranges may, is nobody's child) */
	if (t->count && e->end_ns <= t->open[t->count - 1].end_ns)
		t->open[t->count - 1].children_ns += duration;
	if (t->count == t->alloc) {
		t->alloc = t->alloc ? 2 * t->alloc : 16;
		t->open = xrealloc(t->open, t->alloc * sizeof(*t->open));
	}
	t->open[t->count++] = (struct open_range){ xstrdup(e->name), e->end_ns, 0, duration };
}

void domain_stats_release(struct domain_stats *ds)
{
	stats_release(&ds->kernels);
	stats_release(&ds->copies);
	stats_release(&ds->allocations);
	stats_release(&ds->markers);
	stats_release(&ds->domains);
	for (size_t i = 0; i < ds->thread_count; i++) {
		for (size_t r = 0; r < ds->threads[i].count; r++)
			free(ds->threads[i].open[r].name);
		free(ds->threads[i].open);
	}
	free(ds->threads);
	ds->threads = NULL;
	ds->thread_count = 0;
	for (int i = 0; i < ds->api_count; i++) {
		free(ds->apis[i].domain);
		stats_release(&ds->apis[i].table);
	}
	ds->api_count = 0;
}

const char *domain_stats_copy_name(const struct event *e)
{
	static const char *const names[][2] = {
		{ "FILL", "MEMORY_FILL" }, { "MAP", "MEMORY_MAP" }, { "UNMAP", "MEMORY_UNMAP" },
		{ "MIGRATE", "MEMORY_MIGRATE" }, { "FREE", "MEMORY_FREE" },
		{ "MARKER", "QUEUE_MARKER" }, { "BARRIER", "QUEUE_BARRIER" },
	};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(e->copy.operation, names[i][0]))
			return names[i][1];
	return e->copy.direction;
}

static struct stats_table *api_table(struct domain_stats *ds, const char *domain)
{
	for (int i = 0; i < ds->api_count; i++)
		if (!strcmp(ds->apis[i].domain, domain))
			return &ds->apis[i].table;
	if (ds->api_count == DOMAIN_STATS_MAX_API)
		return NULL;
	ds->apis[ds->api_count].domain = xstrdup(domain);
	stats_init(&ds->apis[ds->api_count].table);
	return &ds->apis[ds->api_count++].table;
}

void domain_stats_add(struct domain_stats *ds, const struct event *e)
{
	uint64_t duration = duration_ns(e->start_ns, e->end_ns);
	switch (e->kind) {
	case EVENT_KERNEL:
		stats_add(&ds->kernels, e->name, duration);
		stats_add(&ds->domains, "KERNEL_DISPATCH", duration);
		break;
	case EVENT_MEMORY_COPY:
		stats_add(&ds->copies, domain_stats_copy_name(e), duration);
		stats_add(&ds->domains, "MEMORY_COPY", duration);
		break;
	case EVENT_MEMORY_ALLOCATION:
		stats_add(&ds->allocations, e->allocation.operation, duration);
		stats_add(&ds->domains, "MEMORY_ALLOCATION", duration);
		break;
	case EVENT_API_CALL: {
		struct stats_table *t = api_table(ds, e->api.domain);
		if (t)
			stats_add(t, e->name, duration);
		stats_add(&ds->domains, e->api.domain, duration);
		break;
	}
	case EVENT_MARKER:
		if (e->marker.kind != MARKER_MARK) {
			stats_add(&ds->markers, e->name, duration);
			add_range(ds, e, duration);
		}
		break;
	case EVENT_PROCESS:
	case EVENT_AGENT:
	case EVENT_THREAD:
	case EVENT_METRIC:
	case EVENT_SAMPLE:
		break;
	}
}

void domain_stats_finish(struct domain_stats *ds)
{
	for (size_t i = 0; i < ds->thread_count; i++)
		while (ds->threads[i].count)
			close_range(ds, &ds->threads[i]);
	stats_finish(&ds->kernels);
	stats_finish(&ds->copies);
	stats_finish(&ds->allocations);
	stats_finish(&ds->markers);
	stats_finish(&ds->domains);
	for (int i = 0; i < ds->api_count; i++)
		stats_finish(&ds->apis[i].table);
}
