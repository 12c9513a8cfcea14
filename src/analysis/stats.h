/* Duration statistics by name: calls, total, average, percentage, min, max and
 * population standard deviation (Welford's method), as in rocprofv3's *_stats.csv. */
#ifndef GPUPROF_ANALYSIS_STATS_H
#define GPUPROF_ANALYSIS_STATS_H

#include <stddef.h>
#include <stdint.h>

struct stats_row {
	char *name;
	uint64_t calls;
	uint64_t total_ns;
	uint64_t min_ns, max_ns;
	double mean_ns;
	double m2;          /* sum of squared deviations from the mean, ns^2 */
	uint64_t self_ns;   /* nested ranges: the time inside none of its own ranges
			     * (stats_add_self()); 0 in a table of other things */
	double percentage;  /* of the table's total (of its self time in a nested table),
			     * set by stats_finish() */
	double stddev_ns;   /* set by stats_finish() */
};

struct stats_table {
	struct stats_row *rows;
	size_t count, alloc;
	size_t *slots;      /* open-addressing index into rows, by name */
	size_t slot_count;
	uint64_t total_ns;
	/* ranges that nest (markers): stats_add_self() gives each its self time, and the
	 * percentages are of the self time, which counts each moment once */
	int nested;
	uint64_t self_ns;
};

void stats_init(struct stats_table *t);
void stats_release(struct stats_table *t);
void stats_add(struct stats_table *t, const char *name, uint64_t duration_ns);
/* Adds self time to the row of name (made by stats_add() before). */
void stats_add_self(struct stats_table *t, const char *name, uint64_t self_ns);
/* Computes percentages and deviations and sorts by total time, largest first. */
void stats_finish(struct stats_table *t);
/* The row of a name, NULL when none; before stats_finish() only (it drops the index). */
const struct stats_row *stats_find(const struct stats_table *t, const char *name);

/* The two-sided tail of Student's t with df degrees of freedom: P(|T| > |t|). */
double stats_student_p(double t, double df);
/* The regularised incomplete beta function I_x(a, b), for the test's Student t tail. */
double stats_incomplete_beta(double x, double a, double b);

#endif
