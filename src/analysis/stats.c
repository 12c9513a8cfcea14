/* Duration statistics by name (see stats.h). */
#include "analysis/stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/hash.h"
#include "util/sort.h"
#include "util/strbuf.h"

void stats_init(struct stats_table *t)
{
	memset(t, 0, sizeof(*t));
}

void stats_release(struct stats_table *t)
{
	for (size_t i = 0; i < t->count; i++)
		free(t->rows[i].name);
	free(t->rows);
	free(t->slots);
	stats_init(t);
}

/* slots hold row index + 1; 0 is empty. */
static void reindex(struct stats_table *t)
{
	size_t count = t->slot_count ? t->slot_count * 2 : 64;
	free(t->slots);
	t->slots = xcalloc(count, sizeof(*t->slots));
	t->slot_count = count;
	for (size_t i = 0; i < t->count; i++) {
		size_t j = hash_string(t->rows[i].name) & (count - 1);
		while (t->slots[j])
			j = (j + 1) & (count - 1);
		t->slots[j] = i + 1;
	}
}

void stats_add(struct stats_table *t, const char *name, uint64_t duration_ns)
{
	if ((t->count + 1) * 2 > t->slot_count)
		reindex(t);
	size_t j = hash_string(name) & (t->slot_count - 1);
	struct stats_row *row = NULL;
	for (; t->slots[j]; j = (j + 1) & (t->slot_count - 1)) {
		if (!strcmp(t->rows[t->slots[j] - 1].name, name)) {
			row = &t->rows[t->slots[j] - 1];
			break;
		}
	}
	if (!row) {
		if (t->count == t->alloc) {
			t->alloc = t->alloc ? t->alloc * 2 : 32;
			t->rows = xrealloc(t->rows, t->alloc * sizeof(*t->rows));
		}
		row = &t->rows[t->count++];
		memset(row, 0, sizeof(*row));
		row->name = xstrdup(name);
		row->min_ns = UINT64_MAX;
		t->slots[j] = t->count;
	}
	row->calls++;
	row->total_ns += duration_ns;
	if (duration_ns < row->min_ns)
		row->min_ns = duration_ns;
	if (duration_ns > row->max_ns)
		row->max_ns = duration_ns;
	double delta = (double)duration_ns - row->mean_ns;
	row->mean_ns += delta / (double)row->calls;
	row->m2 += delta * ((double)duration_ns - row->mean_ns);
	t->total_ns += duration_ns;
}

static int by_total_desc(const void *a, const void *b)
{
	const struct stats_row *x = a, *y = b;
	if (x->total_ns != y->total_ns)
		return x->total_ns < y->total_ns ? 1 : -1;
	return strcmp(x->name, y->name);
}

void stats_add_self(struct stats_table *t, const char *name, uint64_t self_ns)
{
	struct stats_row *row = (struct stats_row *)stats_find(t, name);
	if (row) {
		row->self_ns += self_ns;
		t->self_ns += self_ns;
	}
}

void stats_finish(struct stats_table *t)
{
	for (size_t i = 0; i < t->count; i++) {
		struct stats_row *r = &t->rows[i];
		if (t->nested)
			r->percentage = t->self_ns ? 100.0 * (double)r->self_ns / (double)t->self_ns : 0;
		else
			r->percentage = t->total_ns ? 100.0 * (double)r->total_ns /
							      (double)t->total_ns : 0;
		r->stddev_ns = r->calls ? sqrt(r->m2 / (double)r->calls) : 0;
	}
	if (t->count)
		sort_array(t->rows, t->count, sizeof(*t->rows), by_total_desc);
	free(t->slots);
	t->slots = NULL;
	t->slot_count = 0;
}

const struct stats_row *stats_find(const struct stats_table *t, const char *name)
{
	if (!t->slot_count)
		return NULL;
	for (size_t j = hash_string(name) & (t->slot_count - 1); t->slots[j];
	     j = (j + 1) & (t->slot_count - 1))
		if (!strcmp(t->rows[t->slots[j] - 1].name, name))
			return &t->rows[t->slots[j] - 1];
	return NULL;
}

/* The continued fraction of I_x(a, b), by the modified Lentz method: converges quickly
 * for x < (a + 1) / (a + b + 2). */
static double beta_fraction(double x, double a, double b)
{
	const double tiny = 1e-300;
	double c = 1, d = 1 - (a + b) * x / (a + 1);
	d = 1 / (fabs(d) < tiny ? tiny : d);
	double f = d;
	for (int m = 1; m <= 300; m++) {
		/* the even then the odd term of the fraction */
		double even = m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m));
		double odd = -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1));
		for (int k = 0; k < 2; k++) {
			double term = k ? odd : even;
			d = 1 + term * d;
			c = 1 + term / c;
			d = 1 / (fabs(d) < tiny ? tiny : d);
			c = fabs(c) < tiny ? tiny : c;
			f *= c * d;
		}
		if (fabs(c * d - 1) < 1e-15)
			break;
	}
	return f;
}

double stats_incomplete_beta(double x, double a, double b)
{
	if (x <= 0)
		return 0;
	if (x >= 1)
		return 1;
	double front = exp(lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) + b * log1p(-x));
	if (x < (a + 1) / (a + b + 2))
		return front * beta_fraction(x, a, b) / a;
	return 1 - front * beta_fraction(1 - x, b, a) / b;
}

double stats_student_p(double t, double df)
{
	return stats_incomplete_beta(df / (df + t * t), df / 2, 0.5);
}

