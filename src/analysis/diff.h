/* Recorded runs compared, kernel by kernel name and marker range by range name (gpuprof
 * diff, which prints the rows): each run's durations of a name summed up by a statistic,
 * the sides' runs gathered, and the change tested on the logarithms of the runs' values
 * against the variation between runs (Student's t of the two sides pooled, or of a
 * prediction from the runs of one side), or with one run a side between the consecutive
 * batches of each run; a change is significant when its interval at --alpha lies beyond
 * the noise band (its p-value is of that, not of "no change at all"). */
#ifndef GPUPROF_ANALYSIS_DIFF_H
#define GPUPROF_ANALYSIS_DIFF_H

#include <stddef.h>
#include <stdint.h>

#include "analysis/stats.h"
#include "util/error.h"

/* Consecutive batches a run's durations of one name are cut into, with one run a side. */
#define DIFF_BATCHES 10

/* DIFF_AUTO: with repeated runs, each row by whichever of p10 and the median varies less
 * between the runs of both sides (on the logarithms; chosen without looking at the
 * change, and each tested at alpha / 2). */
enum diff_statistic { DIFF_MEAN, DIFF_MEDIAN, DIFF_P10, DIFF_MIN, DIFF_AUTO };
#define DIFF_STATISTICS 5
extern const char *const diff_statistic_names[]; /* by enum diff_statistic */

/* What one run has of one kernel or range name. */
struct diff_entry {
	uint64_t calls, total_ns;
	double mean_ns;
	double value_ns;            /* the statistic of its durations (DIFF_AUTO: p10) */
	double median_ns;           /* DIFF_AUTO's other candidate */
	double batch[DIFF_BATCHES]; /* the statistic of each batch of consecutive durations */
	int batches;                /* 0: too few durations (under 4) */
};

/* One run: its names (a stats_table used as an index, rows in the order added) and an
 * entry for each row. */
struct diff_run {
	struct stats_table names[2]; /* kernels, ranges */
	struct diff_entry *entries[2];
};

/* One side of the comparison: its runs. */
struct diff_side {
	struct diff_run *runs;
	int count;
};

/* What one side has of a kernel or range: its runs' figures. */
struct diff_figures {
	int runs;          /* of the side's runs, those that have it */
	double calls;      /* per run of the side (a run without it counts 0) */
	double total_ns;   /* likewise */
	double mean_ns;    /* the mean of the runs' means */
	double value_ns;   /* what is compared: the geometric mean of the runs' statistics */
	/* over the runs, of the logarithms of each candidate statistic (value_ns's, and
	 * DIFF_AUTO's median): their mean and sum of squared deviations */
	double log_mean[2], log_m2[2];
	const struct diff_entry *only; /* the run's entry when one run has it */
};

/* One row of the comparison. */
struct diff_change {
	const char *kind, *name;
	struct diff_figures a, b; /* runs == 0: not on that side */
	double total_diff;        /* ns per run, B - A */
	double change_pct;        /* of value_ns; NAN: not on both sides, or A's is 0 */
	double p;                 /* of a change beyond the noise band; NAN: not testable */
	double low_pct, high_pct; /* its interval at alpha (two-sided); NAN: none */
	enum diff_statistic compared; /* the statistic of value_ns */
	int significant, slower;
};

/* How changes are judged. */
struct diff_options {
	double alpha, noise, threshold; /* noise and threshold in %; threshold < 0: none */
	enum diff_statistic statistic;
	int one_run;                    /* one run a side */
};

/* One run read from its database: each kernel and range name's durations summed up by
 * `statistic`. 0, or -1 with err set. */
int diff_read_run(const char *path, enum diff_statistic statistic, struct diff_run *r,
		  struct error *err);
void diff_run_release(struct diff_run *r);

/* Appends to *out (count rows of alloc) a row for every name of `kind` (ranges: 0 for
 * kernels, 1 for marker ranges) that either side has, with its figures and its test. */
void diff_compare(const char *kind, int ranges, const struct diff_side sides[2],
		  const struct diff_options *o, struct diff_change **out, size_t *count,
		  size_t *alloc);

/* Rows by the change of their total time, largest first (for sort_array()). */
int diff_by_total_change(const void *x, const void *y);

#endif
