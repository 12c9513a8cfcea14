/* Statistics of a recording by domain (see domain-stats.h). */
#include "analysis/domain-stats.h"

#include <stdlib.h>
#include <string.h>

#include "util/strbuf.h"

void domain_stats_init(struct domain_stats *ds)
{
	memset(ds, 0, sizeof(*ds));
	stats_init(&ds->kernels);
	stats_init(&ds->copies);
	stats_init(&ds->allocations);
	stats_init(&ds->markers);
	stats_init(&ds->domains);
}

void domain_stats_release(struct domain_stats *ds)
{
	stats_release(&ds->kernels);
	stats_release(&ds->copies);
	stats_release(&ds->allocations);
	stats_release(&ds->markers);
	stats_release(&ds->domains);
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
			stats_add(&ds->domains, "MARKER_API", duration);
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
	stats_finish(&ds->kernels);
	stats_finish(&ds->copies);
	stats_finish(&ds->allocations);
	stats_finish(&ds->markers);
	stats_finish(&ds->domains);
	for (int i = 0; i < ds->api_count; i++)
		stats_finish(&ds->apis[i].table);
}
