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
#include "roofline/roofline.h"
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
	/* the roofline (block 4): the data type of the work (roofline_data_type; NULL:
	 * FP32), the memory levels (their bandwidth ceilings set; none set: every level), a
	 * point per dispatch instead of per kernel */
	const char *data_type;
	int levels[ROOF_COUNT];
	int per_dispatch;
	/* PC sampling (table 21.1): rows shown (0: all), by the order of the code rather than
	 * by samples */
	int pc_rows, pc_by_offset;
};

/* Whether analyze shows something for a -b selection: a block, table or metric of the
 * catalog, an alias, or a table analyze makes itself (0.1 top kernels, 1.1 system, 2.2
 * bottleneck, 4.3 roofline, 21.1 PC sampling). */
int analyze_known_selection(const struct catalog *c, const char *selection);

/* The catalog selections (comma-separated; "" for none) that one of analyze's own tables
 * is made of, so that compute profile -b collects them; NULL for another id. */
const char *analyze_table_reads(const char *id);

/* 0 when -k and -d keep a dispatch of every workload; -1 with err naming the first
 * workload they leave empty. */
int analyze_check_kept(const struct analyze_request *r, struct error *err);

/* Checks a dispatch selection ("3", "3:5"): 0, or -1 with err. */
int analyze_parse_dispatch(const char *text, long long *from, long long *to, struct error *err);

/* Prints every table of the request. Block 4 ends with the roofline of the first
 * workload's top kernels (or dispatches): for each memory level, the arithmetic
 * intensity of the data type's work, its rate, the ceiling at that intensity from the
 * workload's roofline.csv, the rate in % of it, and whether the kernel is below the
 * knee (memory-bound) or at or above it (compute-bound). The work of a type is the sum
 * of the catalog's counts set against its vector and its matrix ceilings; it is set
 * against the matrix ceiling when it has matrix work, else the vector one. */
int analyze_print(const struct analyze_request *r, struct error *err);

/* Prints how metric `id` is computed for the first workload: its expression (and peak),
 * for each dispatch kept (the first 20) its inputs and its value, and the mean of those
 * values, which is the tables' Avg. */
int analyze_explain(const struct analyze_request *r, const char *id, struct error *err);

/* The same points as a self-contained HTML plot (roofline/roofline.h) written to path,
 * with the ceilings of the data type and of the levels shown. */
int analyze_roofline_plot(const struct analyze_request *r, const char *path, struct error *err);
/* The same figure without its page, into out (gpuprof report). */
void analyze_roofline_figure(const struct analyze_request *r, FILE *out);

/* The kernels of each workload with their dispatches (--list-stats). */
int analyze_list_stats(const struct analyze_request *r, struct error *err);

#endif
