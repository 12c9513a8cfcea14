/* What the files of gpuprof compute analyze share: analyze.c (the tables, the request)
 * calls analyze-roofline.c and analyze-pc.c (their tables); all three use
 * analyze-kernels.c (the dispatches kept, the kernels by time, the cells). */
#ifndef GPUPROF_COMPUTE_ANALYZE_INTERNAL_H
#define GPUPROF_COMPUTE_ANALYZE_INTERNAL_H

#include "compute/analyze.h"

/* Whether the request's -k and -d keep dispatch d. */
int analyze_dispatch_kept(const struct analyze_request *r, const struct workload_dispatch *d);

/* A kernel's dispatches kept, their count and their durations (workload_duration). */
struct kernel_time {
	const char *name;
	double sum, min, max;
	int count;
};

/* The kernels of the dispatches kept of w by total time, into *out (malloc()ed); returns
 * how many. */
size_t analyze_kernel_times(const struct analyze_request *r, const struct workload *w,
			    struct kernel_time **out);

/* A number of a table: every digit for scripts, two decimals for people; empty (N/A)
 * when not defined or not finite. */
void analyze_cell(const struct analyze_request *r, struct table *t, double v, int defined);
/* The decimals analyze_cell gives a number: 2, or -1 (every digit). */
int analyze_decimals(const struct analyze_request *r);

/* Table 4.3: the roofline of the first workload's top kernels. */
int analyze_print_roofline(const struct analyze_request *r, struct error *err);

/* Table 21.1: the first workload's PC samples by instruction, when it has some (asked:
 * -b named the table, and its absence is said). */
int analyze_print_pc_sampling(const struct analyze_request *r, int asked, struct error *err);

#endif
