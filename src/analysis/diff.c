/* Recorded runs compared (see diff.h). */
#include "analysis/diff.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "store/store.h"
#include "util/sort.h"

const char *const diff_statistic_names[DIFF_STATISTICS] = { "mean", "median", "p10", "min",
							    "auto" };

static int by_double(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;
	return (a > b) - (a < b);
}

/* The statistic of n durations, which are sorted first (in place) where it needs it. */
static double statistic_of(double *v, size_t n, enum diff_statistic s)
{
	if (s == DIFF_MEAN) {
		double sum = 0;
		for (size_t i = 0; i < n; i++)
			sum += v[i];
		return sum / (double)n;
	}
	sort_array(v, n, sizeof(*v), by_double);
	if (s == DIFF_MIN)
		return v[0];
	/* the quantile with linear interpolation between the closest ranks */
	double h = (double)(n - 1) * (s == DIFF_MEDIAN ? 0.5 : 0.1);
	size_t low = (size_t)h;
	return low + 1 < n ? v[low] + (h - (double)low) * (v[low + 1] - v[low]) : v[low];
}

/* The entry of one name from its durations in time order (reordered here). */
static void summarise(double *v, size_t n, enum diff_statistic s, struct diff_entry *e)
{
	memset(e, 0, sizeof(*e));
	e->calls = n;
	double sum = 0;
	for (size_t i = 0; i < n; i++)
		sum += v[i];
	e->total_ns = (uint64_t)sum;
	e->mean_ns = sum / (double)n;
	if (n >= 4) {
		e->batches = n / 2 < DIFF_BATCHES ? (int)(n / 2) : DIFF_BATCHES;
		for (int b = 0; b < e->batches; b++) {
			size_t from = (size_t)b * n / (size_t)e->batches;
			size_t to = (size_t)(b + 1) * n / (size_t)e->batches;
			e->batch[b] = statistic_of(v + from, to - from, s == DIFF_AUTO ? DIFF_P10 : s);
		}
	}
	if (s == DIFF_AUTO) {
		e->value_ns = statistic_of(v, n, DIFF_P10);
		e->median_ns = statistic_of(v, n, DIFF_MEDIAN);
	} else {
		e->value_ns = statistic_of(v, n, s);
	}
}

int diff_read_run(const char *path, enum diff_statistic statistic, struct diff_run *r,
		    struct error *err)
{
	sqlite3 *db;
	memset(r, 0, sizeof(*r));
	stats_init(&r->names[0]);
	stats_init(&r->names[1]);
	if (store_open(path, &db, err))
		return -1;
	/* by name, each name's durations in time order */
	static const char *const queries[] = {
		"SELECT s.string, k.end - k.start FROM gpuprof_kernel k "
		"JOIN gpuprof_string s ON s.id = k.name_id WHERE k.end >= k.start "
		"ORDER BY s.string, k.start, k.id",
		"SELECT s.string, m.end - m.start FROM gpuprof_marker m "
		"JOIN gpuprof_string s ON s.id = m.name_id "
		"WHERE m.kind IN (1, 2) AND m.ended = 1 AND m.end >= m.start "
		"ORDER BY s.string, m.start, m.id",
	};
	double *v = NULL;
	size_t n = 0, alloc = 0, entries_alloc = 0;
	char *name = NULL;
	int rc = 0;
	for (int q = 0; rc == 0 && q < 2; q++) {
		if (q == 1 && !store_has_table(db, "gpuprof_marker"))
			break;
		sqlite3_stmt *s;
		if (store_prepare(db, queries[q], &s, err)) {
			rc = -1;
			break;
		}
		entries_alloc = 0;
		for (int step;;) {
			step = sqlite3_step(s);
			const char *text = step == SQLITE_ROW ? (const char *)sqlite3_column_text(s, 0) : NULL;
			if (step == SQLITE_ROW && !text)
				text = "";
			if (name && (!text || strcmp(text, name))) { /* the last name's durations */
				struct stats_table *t = &r->names[q];
				stats_add(t, name, 0);
				if (t->count > entries_alloc) {
					entries_alloc = entries_alloc ? 2 * entries_alloc : 64;
					r->entries[q] = xrealloc(r->entries[q],
								 entries_alloc * sizeof(*r->entries[q]));
				}
				summarise(v, n, statistic, &r->entries[q][t->count - 1]);
				free(name);
				name = NULL;
				n = 0;
			}
			if (step != SQLITE_ROW) {
				if (step != SQLITE_DONE)
					rc = error_set(err, "cannot read '%s': %s", path, sqlite3_errmsg(db));
				break;
			}
			if (!name)
				name = xstrdup(text);
			if (n == alloc) {
				alloc = alloc ? 2 * alloc : 1024;
				v = xrealloc(v, alloc * sizeof(*v));
			}
			v[n++] = (double)sqlite3_column_int64(s, 1);
		}
		sqlite3_finalize(s);
	}
	free(v);
	free(name);
	sqlite3_close(db);
	return rc;
}

static const struct diff_entry *run_find(const struct diff_run *r, int ranges, const char *name)
{
	const struct stats_row *row = stats_find(&r->names[ranges], name);
	return row ? &r->entries[ranges][row - r->names[ranges].rows] : NULL;
}





/* The logarithm of a duration (one of 0 ns, which a timer's resolution can give, as 1 ns). */
static double log_ns(double ns)
{
	return log(ns > 1 ? ns : 1);
}

/* Welford's update of the mean and the sum of squared deviations by the n-th value x. */
static void welford_add(double *mean, double *m2, int n, double x)
{
	double delta = x - *mean;
	*mean += delta / n;
	*m2 += delta * (x - *mean);
}

static void gather(const struct diff_side *side, int ranges, const char *name, struct diff_figures *f)
{
	memset(f, 0, sizeof(*f));
	double mean_sum = 0;
	for (int i = 0; i < side->count; i++) {
		const struct diff_entry *e = run_find(&side->runs[i], ranges, name);
		if (!e)
			continue;
		f->runs++;
		f->calls += (double)e->calls;
		f->total_ns += (double)e->total_ns;
		mean_sum += e->mean_ns;
		/* over the logarithms of the runs' statistics */
		welford_add(&f->log_mean[0], &f->log_m2[0], f->runs, log_ns(e->value_ns));
		welford_add(&f->log_mean[1], &f->log_m2[1], f->runs, log_ns(e->median_ns));
		f->only = f->runs == 1 ? e : NULL;
	}
	if (f->runs) {
		f->mean_ns = mean_sum / f->runs;
		f->value_ns = f->runs == 1 ? f->only->value_ns : exp(f->log_mean[0]);
	}
	if (side->count) {
		f->calls /= side->count;
		f->total_ns /= side->count;
	}
}

/* The upper tail of Student's t with df degrees of freedom: P(T > t). */
static double t_upper(double t, double df)
{
	double two_sided = stats_student_p(t, df);
	return t >= 0 ? two_sided / 2 : 1 - two_sided / 2;
}

/* The quantile of Student's t with df degrees of freedom whose upper tail is q. */
static double t_quantile(double q, double df)
{
	double low = 0, high = 1;
	while (t_upper(high, df) > q && high < 1e9)
		high *= 2;
	for (int i = 0; i < 100; i++) {
		double mid = (low + high) / 2;
		if (t_upper(mid, df) > q)
			low = mid;
		else
			high = mid;
	}
	return (low + high) / 2;
}

/* The change d (a difference of logarithms, B - A) with standard error se on df degrees
 * of freedom, at alpha / k (k statistics to choose from): its interval, each end a
 * one-sided bound at alpha / k; it is significant when the interval lies beyond the band
 * (log1p(noise)), which its p-value says, and slower when the interval's low end lies
 * above the gate (log1p(max(noise, threshold))). */
static void judge(struct diff_change *c, double d, double se, double df, int k,
		  const struct diff_options *o)
{
	double band = log1p(o->noise / 100);
	double gate = log1p((o->threshold > o->noise ? o->threshold : o->noise) / 100);
	if (se > 0 && df > 0) {
		double p = k * t_upper((fabs(d) - band) / se, df);
		c->p = p < 1 ? p : 1;
		double t = t_quantile(o->alpha / k, df);
		c->low_pct = 100 * expm1(d - t * se);
		c->high_pct = 100 * expm1(d + t * se);
		c->slower = o->threshold >= 0 && d - t * se > gate;
	} else { /* the runs of each side agree exactly: the change is what it is */
		c->p = fabs(d) > band ? 0 : 1;
		c->low_pct = c->high_pct = 100 * expm1(d);
		c->slower = o->threshold >= 0 && d > gate;
	}
	c->significant = c->p < o->alpha;
}

/* The mean and sum of squared deviations of the logarithms of a run's batches. */
static void log_batches(const struct diff_entry *e, double *mean, double *m2)
{
	*mean = *m2 = 0;
	for (int i = 0; i < e->batches; i++)
		welford_add(mean, m2, i + 1, log_ns(e->batch[i]));
}

static void test(struct diff_change *c, const struct diff_options *o)
{
	const struct diff_figures *a = &c->a, *b = &c->b;
	c->compared = o->statistic == DIFF_AUTO ? DIFF_P10 : o->statistic;
	c->low_pct = c->high_pct = NAN;
	if (a->runs < 2 && b->runs < 2) { /* one run each: within those runs only */
		if (a->value_ns > 0)
			c->change_pct = 100.0 * (b->value_ns - a->value_ns) / a->value_ns;
		if (a->only->batches < 2 || b->only->batches < 2)
			return;
		double mean[2], m2[2], n[2] = { a->only->batches, b->only->batches };
		log_batches(a->only, &mean[0], &m2[0]);
		log_batches(b->only, &mean[1], &m2[1]);
		/* Welch's standard error and degrees of freedom on the batches */
		double v[2] = { m2[0] / (n[0] - 1) / n[0], m2[1] / (n[1] - 1) / n[1] };
		double se = sqrt(v[0] + v[1]);
		double df = se > 0 ? (v[0] + v[1]) * (v[0] + v[1]) /
				     (v[0] * v[0] / (n[0] - 1) + v[1] * v[1] / (n[1] - 1)) : 0;
		/* the runs differ (Welch's p of no change at all) and by more than the floor,
		 * which stands for the run-to-run noise the batches cannot show */
		double d = log_ns(b->value_ns) - log_ns(a->value_ns);
		c->p = se > 0 ? stats_student_p(d / se, df) : d == 0;
		double t = se > 0 ? t_quantile(o->alpha / 2, df) : 0;
		c->low_pct = 100 * expm1(d - t * se);
		c->high_pct = 100 * expm1(d + t * se);
		double change = isnan(c->change_pct) ? 0 : c->change_pct;
		c->significant = c->p < o->alpha && fabs(change) > o->noise;
		c->slower = c->significant && o->threshold >= 0 && change > o->threshold;
		return;
	}
	/* the candidate that varies less between the runs (its sum over both sides) */
	int k = o->statistic == DIFF_AUTO ? 2 : 1, best = 0;
	if (k == 2 && a->log_m2[1] + b->log_m2[1] < a->log_m2[0] + b->log_m2[0])
		best = 1;
	if (best)
		c->compared = DIFF_MEDIAN;
	double d = b->log_mean[best] - a->log_mean[best], se, df;
	if (a->runs >= 2 && b->runs >= 2) { /* pooled: the same program on both sides */
		df = a->runs + b->runs - 2;
		se = sqrt((a->log_m2[best] + b->log_m2[best]) / df * (1.0 / a->runs + 1.0 / b->runs));
	} else { /* a prediction from the side with runs */
		const struct diff_figures *many = a->runs >= 2 ? a : b;
		df = many->runs - 1;
		se = sqrt(many->log_m2[best] / df * (1 + 1.0 / many->runs));
	}
	c->a.value_ns = exp(a->log_mean[best]);
	c->b.value_ns = exp(b->log_mean[best]);
	c->change_pct = 100 * expm1(d);
	judge(c, d, se, df, k, o);
}

void diff_compare(const char *kind, int ranges, const struct diff_side sides[2],
		    const struct diff_options *o, struct diff_change **out, size_t *count, size_t *alloc)
{
	struct stats_table seen; /* the names compared so far */
	stats_init(&seen);
	for (int s = 0; s < 2; s++)
		for (int r = 0; r < sides[s].count; r++) {
			const struct stats_table *t = &sides[s].runs[r].names[ranges];
			for (size_t i = 0; i < t->count; i++) {
				const char *name = t->rows[i].name;
				if (stats_find(&seen, name))
					continue;
				stats_add(&seen, name, 0);
				if (*count == *alloc) {
					*alloc = *alloc ? 2 * *alloc : 64;
					*out = xrealloc(*out, *alloc * sizeof(**out));
				}
				struct diff_change *c = &(*out)[(*count)++];
				memset(c, 0, sizeof(*c));
				c->kind = kind;
				c->name = name;
				gather(&sides[0], ranges, name, &c->a);
				gather(&sides[1], ranges, name, &c->b);
				c->total_diff = c->b.total_ns - c->a.total_ns;
				c->p = c->change_pct = NAN;
				if (c->a.runs && c->b.runs)
					test(c, o);
			}
		}
	stats_release(&seen);
}

int diff_by_total_change(const void *x, const void *y)
{
	const struct diff_change *a = x, *b = y;
	double da = fabs(a->total_diff), db = fabs(b->total_diff);
	if (da != db)
		return da < db ? 1 : -1;
	if (strcmp(a->kind, b->kind))
		return strcmp(a->kind, b->kind);
	return strcmp(a->name, b->name);
}

void diff_run_release(struct diff_run *r)
{
	for (int k = 0; k < 2; k++) {
		stats_release(&r->names[k]);
		free(r->entries[k]);
	}
}
