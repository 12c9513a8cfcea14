/* Statistics of a whole recording by domain: kernels by name, transfers by
 * direction, allocations by operation, API calls by function for each API domain,
 * marker ranges by text, and one row per domain. The
 * csv writer (--stats) and the summary writer (--summary) both report them. */
#ifndef GPUPROF_ANALYSIS_DOMAIN_STATS_H
#define GPUPROF_ANALYSIS_DOMAIN_STATS_H

#include "analysis/stats.h"
#include "core/event.h"

#define DOMAIN_STATS_MAX_API 8

struct domain_stats {
	struct stats_table kernels; /* by kernel name */
	struct stats_table copies;  /* by direction, or MEMORY_FILL/MAP/UNMAP */
	struct stats_table allocations; /* by operation: MEMORY_ALLOCATION_ALLOCATE, _FREE */
	struct stats_table markers; /* marker ranges by text (marks, instants, are left out),
				     * nested: each with its self time */
	struct stats_table domains; /* KERNEL_DISPATCH, MEMORY_COPY and each API domain */
	struct {
		char *domain;           /* "OPENCL_API" */
		struct stats_table table;
	} apis[DOMAIN_STATS_MAX_API];
	int api_count;
	/* the ranges open on each thread, to charge a range's time to its parent's (events
	 * come in start order) */
	struct marker_thread *threads;
	size_t thread_count, last_thread;
};

void domain_stats_init(struct domain_stats *ds);
void domain_stats_release(struct domain_stats *ds);
void domain_stats_add(struct domain_stats *ds, const struct event *e);
/* Finishes every table (percentages, deviations, order). MARKER_API's domain total
 * is the markers' self time: a moment inside nested ranges counts once. */
void domain_stats_finish(struct domain_stats *ds);

/* The stats name of a transfer: its direction, or MEMORY_FILL, MEMORY_MAP,
 * MEMORY_UNMAP for the other operations. */
const char *domain_stats_copy_name(const struct event *e);

#endif
