/* gpuprof compute analyze: the catalog's metrics evaluated over workload directories,
 * printed as tables per block (rocprof-compute's analyze). One workload: each metric's
 * average, minimum and maximum over the dispatches kept, its unit, peak and % of peak.
 * Several: the first is the baseline, each other's average with its change in % and
 * its difference. */
#ifndef GPUPROF_COMPUTE_ANALYZE_H
#define GPUPROF_COMPUTE_ANALYZE_H

#include <stdio.h>

#include "compute/catalog.h"
#include "compute/workload.h"
#include "util/table.h"

enum normal_unit { PER_KERNEL, PER_SECOND, PER_CYCLE, PER_WARP };

struct analyze_request {
	const struct catalog *catalog;
	struct workload *workloads;
	int count;
	const char *const *blocks;    /* selections (catalog_select); none: every block */
	int block_count;
	const char *const *kernels;   /* substrings of kernel names; none: every kernel */
	int kernel_count;
	const char *const *dispatches; /* "3" or "3:5" (Dispatch_ID, 1-based); none: all */
	int dispatch_count;
	enum normal_unit normal;
	double time_scale;            /* ns per unit of time shown */
	const char *time_unit;
	int max_kernels;              /* rows of the top kernels */
	enum table_format format;
	FILE *out;
};

/* Checks a dispatch selection ("3", "3:5"): 0, or -1 with err. */
int analyze_parse_dispatch(const char *text, long long *from, long long *to, struct error *err);

/* Prints every table of the request. */
int analyze_print(const struct analyze_request *r, struct error *err);

/* Prints how metric `id` is computed for the first workload: its expression, each input
 * with its average over the dispatches kept, and the result. */
int analyze_explain(const struct analyze_request *r, const char *id, struct error *err);

/* The kernels of each workload with their dispatches (--list-stats). */
int analyze_list_stats(const struct analyze_request *r, struct error *err);

#endif
