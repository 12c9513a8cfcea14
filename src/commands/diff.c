/* gpuprof diff: recorded runs compared, kernel by kernel name and marker range by range
 * name: calls, total, mean and a statistic of the durations (the one compared), the
 * change, and whether it is significant: against the variation between runs when each
 * side has several, within the runs (their consecutive batches) and above a floor when
 * each side has one; --threshold makes a slower one fail a CI job. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/stats.h"
#include "commands/commands.h"
#include "store/store.h"
#include "util/error.h"
#include "util/options.h"
#include "util/sort.h"
#include "util/table.h"

static const char usage[] =
	"gpuprof diff [options] A.db B.db, or A1.db A2.db... -- B1.db B2.db...";
static const char description[] =
	"Compares run B with run A (the baseline), kernels by name and marker ranges by\n"
	"name: calls, total and mean time in each, the duration compared (--statistic), its\n"
	"change in % and in time, and whether the change is significant. Kernels and ranges\n"
	"that only one side has are listed as new or vanished. Rows are sorted by the\n"
	"change of their total time, largest first. With --threshold, exits 3 when a kernel\n"
	"or range is significantly slower by more than that %.\n"
	"\n"
	"Repeated runs (A1 A2... -- B1 B2..., '--' between the two sides; options may\n"
	"stand on either side) are what a regression gate needs: each run's duration of a\n"
	"kernel or range (by default its low decile, p10) is one observation, and Welch's\n"
	"t-test on the runs' values rejects equal values at --alpha (default 0.01), for\n"
	"changes over --noise (default 5 %). The runs themselves measure what the same\n"
	"program does from one run to the next. The low decile, because a loaded machine\n"
	"only ever adds time to a kernel: the fast dispatches of a run are its own time,\n"
	"the slow ones the machine's. Calls and totals are per run (averaged over the\n"
	"side's runs). Where one side has a single run, the test asks whether it lies\n"
	"outside the other side's runs (Student's t of a prediction from them).\n"
	"\n"
	"One run a side: run-to-run noise is unknown. Each run's durations are cut into\n"
	"10 batches in time order and Welch's t-test compares the batches' values (default\n"
	"the mean: a run's low decile follows the load it happened to meet, its mean the\n"
	"loads of the whole run), which says only that the two runs differ; so no change is\n"
	"called significant under --noise, 50 % by default with one run a side: between\n"
	"single runs of an unchanged program on a loaded machine a kernel's mean moved by\n"
	"less than 40 % in 19 pairs of 20, and by up to 99 % (docs/PERFORMANCE.md). On a\n"
	"quiet, dedicated GPU lower it, or give three or more runs a side.\n"
	"\n"
	"A and B that share no kernel or range name are not runs of the same program: the\n"
	"comparison stops there with exit status 1.";

/* The defaults of --statistic and --noise (%), with repeated runs and with one run a
 * side (the description says why they differ). */
#define STATISTIC_RUNS "p10"
#define STATISTIC_ONE_RUN "mean"
#define NOISE_RUNS "5"
#define NOISE_ONE_RUN "50"

/* Consecutive batches a run's durations of one name are cut into, with one run a side. */
#define BATCHES 10

enum statistic { STAT_MEAN, STAT_MEDIAN, STAT_P10, STAT_MIN };
static const char *const statistic_names[] = { "mean", "median", "p10", "min" };

/* What one run has of one kernel or range name. */
struct entry {
	uint64_t calls, total_ns;
	double mean_ns;
	double value_ns;        /* the statistic of its durations */
	double batch[BATCHES];  /* the statistic of each batch of consecutive durations */
	int batches;            /* 0: too few durations (under 4) */
};

/* One run: its names (a stats_table used as an index, rows in the order added) and an
 * entry for each row. */
struct run {
	struct stats_table names[2]; /* kernels, ranges */
	struct entry *entries[2];
};

static int by_double(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;
	return (a > b) - (a < b);
}

/* The statistic of n durations, which are sorted first (in place) where it needs it. */
static double statistic_of(double *v, size_t n, enum statistic s)
{
	if (s == STAT_MEAN) {
		double sum = 0;
		for (size_t i = 0; i < n; i++)
			sum += v[i];
		return sum / (double)n;
	}
	sort_array(v, n, sizeof(*v), by_double);
	if (s == STAT_MIN)
		return v[0];
	/* the quantile with linear interpolation between the closest ranks */
	double h = (double)(n - 1) * (s == STAT_MEDIAN ? 0.5 : 0.1);
	size_t low = (size_t)h;
	return low + 1 < n ? v[low] + (h - (double)low) * (v[low + 1] - v[low]) : v[low];
}

/* The entry of one name from its durations in time order (reordered here). */
static void summarise(double *v, size_t n, enum statistic s, struct entry *e)
{
	memset(e, 0, sizeof(*e));
	e->calls = n;
	double sum = 0;
	for (size_t i = 0; i < n; i++)
		sum += v[i];
	e->total_ns = (uint64_t)sum;
	e->mean_ns = sum / (double)n;
	if (n >= 4) {
		e->batches = n / 2 < BATCHES ? (int)(n / 2) : BATCHES;
		for (int b = 0; b < e->batches; b++) {
			size_t from = (size_t)b * n / (size_t)e->batches;
			size_t to = (size_t)(b + 1) * n / (size_t)e->batches;
			e->batch[b] = statistic_of(v + from, to - from, s);
		}
	}
	e->value_ns = statistic_of(v, n, s);
}

static int read_run(const char *path, enum statistic statistic, struct run *r,
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

static const struct entry *run_find(const struct run *r, int ranges, const char *name)
{
	const struct stats_row *row = stats_find(&r->names[ranges], name);
	return row ? &r->entries[ranges][row - r->names[ranges].rows] : NULL;
}

/* One side of the comparison: its runs. */
struct side {
	struct run *runs;
	int count;
};

/* What one side has of a kernel or range: its runs' figures. */
struct figures {
	int runs;          /* of the side's runs, those that have it */
	double calls;      /* per run of the side (a run without it counts 0) */
	double total_ns;   /* likewise */
	double mean_ns;    /* the mean of the runs' means */
	double value_ns;   /* the mean of the runs' statistics: what is compared */
	double m2;         /* of the runs' statistics about value_ns */
	const struct entry *only; /* the run's entry when one run has it */
};

/* One row of the comparison. */
struct change {
	const char *kind, *name;
	struct figures a, b;  /* runs == 0: not on that side */
	double total_diff;    /* ns per run, B - A */
	double change_pct;    /* of value_ns; NAN: not on both sides, or A's is 0 */
	double p;             /* NAN: not testable */
	int significant, slower;
};

struct options {
	double alpha, noise, threshold; /* threshold < 0: none */
	enum statistic statistic;
	int one_run;                    /* one run a side */
};

static void gather(const struct side *side, int ranges, const char *name, struct figures *f)
{
	memset(f, 0, sizeof(*f));
	double mean_sum = 0;
	for (int i = 0; i < side->count; i++) {
		const struct entry *e = run_find(&side->runs[i], ranges, name);
		if (!e)
			continue;
		f->runs++;
		f->calls += (double)e->calls;
		f->total_ns += (double)e->total_ns;
		mean_sum += e->mean_ns;
		/* Welford's update over the runs' statistics */
		double delta = e->value_ns - f->value_ns;
		f->value_ns += delta / f->runs;
		f->m2 += delta * (e->value_ns - f->value_ns);
		f->only = f->runs == 1 ? e : NULL;
	}
	if (f->runs)
		f->mean_ns = mean_sum / f->runs;
	if (side->count) {
		f->calls /= side->count;
		f->total_ns /= side->count;
	}
}

/* Welch's t-test on the batches of one run against those of another. */
static double batches_p(const struct entry *a, const struct entry *b)
{
	if (a->batches < 2 || b->batches < 2)
		return NAN;
	double mean[2] = { 0, 0 }, m2[2] = { 0, 0 };
	const struct entry *e[2] = { a, b };
	for (int s = 0; s < 2; s++)
		for (int i = 0; i < e[s]->batches; i++) {
			double delta = e[s]->batch[i] - mean[s];
			mean[s] += delta / (i + 1);
			m2[s] += delta * (e[s]->batch[i] - mean[s]);
		}
	return stats_welch_p(a->batches, mean[0], m2[0], b->batches, mean[1], m2[1]);
}

static void test(struct change *c, const struct options *o)
{
	const struct figures *a = &c->a, *b = &c->b;
	if (a->value_ns > 0)
		c->change_pct = 100.0 * (b->value_ns - a->value_ns) / a->value_ns;
	if (a->runs >= 2 && b->runs >= 2)
		c->p = stats_welch_p(a->runs, a->value_ns, a->m2, b->runs, b->value_ns, b->m2);
	else if (a->runs >= 2)
		c->p = stats_prediction_p(a->runs, a->value_ns, a->m2, b->value_ns);
	else if (b->runs >= 2)
		c->p = stats_prediction_p(b->runs, b->value_ns, b->m2, a->value_ns);
	else /* one run each: within those runs only */
		c->p = batches_p(a->only, b->only);
	double change = isnan(c->change_pct) ? 0 : c->change_pct;
	c->significant = !isnan(c->p) && c->p < o->alpha && fabs(change) > o->noise;
	c->slower = c->significant && o->threshold >= 0 && change > o->threshold;
}

static void compare(const char *kind, int ranges, const struct side sides[2],
		    const struct options *o, struct change **out, size_t *count, size_t *alloc)
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
				struct change *c = &(*out)[(*count)++];
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

static int by_total_change(const void *x, const void *y)
{
	const struct change *a = x, *b = y;
	double da = fabs(a->total_diff), db = fabs(b->total_diff);
	if (da != db)
		return da < db ? 1 : -1;
	if (strcmp(a->kind, b->kind))
		return strcmp(a->kind, b->kind);
	return strcmp(a->name, b->name);
}

/* A count or total per run: an integer where it is one (one run, or the same in each). */
static void cell_per_run(struct table *t, const struct figures *f, double v, int decimals)
{
	if (!f->runs)
		table_null(t);
	else if (v == floor(v) && fabs(v) < 9e15)
		table_int(t, (int64_t)v);
	else
		table_double(t, v, decimals);
}

static void cell_double(struct table *t, int defined, double v, int decimals)
{
	if (defined)
		table_double(t, v, decimals);
	else
		table_null(t);
}

static int print(const struct change *rows, size_t count, const struct side sides[2],
		 const struct options *o, enum table_format format, struct error *err)
{
	static const char *const columns[] = {
		"Kind", "Name", "A_Runs", "A_Calls", "A_Total_ns", "A_Mean_ns", "A_Compared_ns",
		"B_Runs", "B_Calls", "B_Total_ns", "B_Mean_ns", "B_Compared_ns", "Change_pct",
		"Diff_ns", "P_Value", "Significant", "Status",
	};
	int decimals = format == TABLE_TEXT || format == TABLE_MD ? 1 : -1;
	char title[512];
	const char *statistic = statistic_names[o->statistic];
	if (o->one_run)
		snprintf(title, sizeof(title),
			 "B against A (the baseline), one run each, compared by the %s duration: "
			 "run-to-run noise is unknown, so no change under %g %% is called "
			 "significant (--noise; repeated runs, A1 A2... -- B1 B2..., are tested "
			 "against it)", statistic, o->noise);
	else
		snprintf(title, sizeof(title),
			 "B (%d run%s) against A (%d run%s, the baseline), compared by each run's "
			 "%s duration: significance from the variation between runs, changes over "
			 "%g %%", sides[1].count, sides[1].count == 1 ? "" : "s", sides[0].count,
			 sides[0].count == 1 ? "" : "s", statistic, o->noise);
	table_output_begin(stdout, format);
	struct table *t = table_begin(stdout, format, "diff", title, 17, columns);
	for (size_t i = 0; i < count; i++) {
		const struct change *c = &rows[i];
		int both = c->a.runs && c->b.runs;
		table_text(t, c->kind);
		table_text(t, c->name);
		const struct figures *f[2] = { &c->a, &c->b };
		for (int s = 0; s < 2; s++) {
			table_int(t, f[s]->runs);
			cell_per_run(t, f[s], f[s]->calls, decimals);
			cell_per_run(t, f[s], f[s]->total_ns, decimals);
			cell_double(t, f[s]->runs, f[s]->mean_ns, decimals);
			cell_double(t, f[s]->runs, f[s]->value_ns, decimals);
		}
		cell_double(t, !isnan(c->change_pct), c->change_pct, format == TABLE_TEXT ? 2 : -1);
		cell_double(t, both, c->b.value_ns - c->a.value_ns, decimals);
		cell_double(t, !isnan(c->p), c->p, format == TABLE_TEXT ? 4 : -1);
		table_text(t, !both ? "" : isnan(c->p) ? "untested" : c->significant ? "yes" : "no");
		table_text(t, !c->a.runs ? "new" : !c->b.runs ? "vanished"
			   : !c->significant ? "same"
			   : c->b.value_ns > c->a.value_ns ? "slower" : "faster");
	}
	int rc = table_end(t, err);
	table_output_end(stdout, format);
	if (rc == 0 && fflush(stdout))
		rc = error_set(err, "cannot write the comparison");
	return rc;
}

static void parse_number(const char *option, const char *text, double low, double high,
			 double *out)
{
	char *end;
	double v = strtod(text, &end);
	if (end == text || *end || !(v >= low && v <= high))
		die_with(EXIT_USAGE, "diff: %s %s: a number from %g to %g is expected", option, text,
			 low, high);
	*out = v;
}

/* The runs of one side: read, or the command ends with the reason. */
static void read_side(char **paths, int count, enum statistic statistic, struct side *side)
{
	struct error err;
	side->count = count;
	side->runs = xcalloc((size_t)count, sizeof(*side->runs));
	for (int i = 0; i < count; i++)
		if (read_run(paths[i], statistic, &side->runs[i], &err))
			die("diff: %s", err.message);
}

static void release_side(struct side *side)
{
	for (int i = 0; i < side->count; i++)
		for (int k = 0; k < 2; k++) {
			stats_release(&side->runs[i].names[k]);
			free(side->runs[i].entries[k]);
		}
	free(side->runs);
}

int cmd_diff(int argc, char **argv)
{
	int help = -1;
	const char *format = "text", *threshold = NULL, *alpha = "0.01", *noise = NULL;
	const char *statistic = NULL;
	const struct option table[] = {
		{ OPTION_ENUM, 0, "format", &format, "text|csv|md|json",
		  "how the comparison is printed (default: text)" },
		{ OPTION_STRING, 0, "threshold", &threshold, "PCT",
		  "exit 3 when a kernel or range is significantly slower by more than PCT %" },
		{ OPTION_ENUM, 0, "statistic", &statistic, "mean|median|p10|min",
		  "the duration compared, of each run (default " STATISTIC_RUNS " with repeated "
		  "runs, " STATISTIC_ONE_RUN " with one run a side)" },
		{ OPTION_STRING, 0, "alpha", &alpha, "P",
		  "the significance level of the t-tests (default 0.01)" },
		{ OPTION_STRING, 0, "noise", &noise, "PCT",
		  "changes up to PCT % are not significant (default " NOISE_RUNS " with repeated "
		  "runs, " NOISE_ONE_RUN " with one run a side)" },
		{ OPTION_BOOL, 'h', "help", &help, NULL, "show this help" },
		OPTION_END,
	};
	/* the sides: before and after the first "--", each parsed for options */
	int split = argc;
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--")) {
			split = i;
			break;
		}
	char **inputs, **b_inputs = NULL;
	int count, b_count = 0;
	if (command_parse_inputs("diff", usage, description, table, &help, "database", split, argv,
				 &inputs, &count))
		return 0;
	if (split < argc) {
		argv[split] = argv[0]; /* the second side's argv[0], which the parser skips */
		struct error err;
		if (options_parse_mixed(table, argc - split, argv + split, &b_inputs, &b_count, &err))
			die_with(EXIT_USAGE, "diff: %s", err.message);
		if (help == 1) {
			options_print_help(stdout, usage, description, table);
			free(inputs);
			free(b_inputs);
			return 0;
		}
		if (!b_count)
			die_with(EXIT_USAGE, "diff: no database of B after '--' (usage: %s)", usage);
	} else if (count != 2) {
		die_with(EXIT_USAGE, "diff: two databases are compared, %d given (with repeated runs, "
				     "'--' between A's and B's; usage: %s)", count, usage);
	} else {
		b_inputs = xcalloc(1, sizeof(*b_inputs));
		b_inputs[0] = inputs[1];
		b_count = count = 1;
	}
	struct options o = { 0, 0, -1, STAT_MEAN, count == 1 && b_count == 1 };
	parse_number("--alpha", alpha, 1e-12, 0.5, &o.alpha);
	parse_number("--noise", noise ? noise : o.one_run ? NOISE_ONE_RUN : NOISE_RUNS, 0, 1e6,
		     &o.noise);
	if (threshold)
		parse_number("--threshold", threshold, 0, 1e6, &o.threshold);
	if (!statistic)
		statistic = o.one_run ? STATISTIC_ONE_RUN : STATISTIC_RUNS;
	for (int i = 0; i < 4; i++)
		if (!strcmp(statistic, statistic_names[i]))
			o.statistic = (enum statistic)i;
	struct side sides[2];
	read_side(inputs, count, o.statistic, &sides[0]);
	read_side(b_inputs, b_count, o.statistic, &sides[1]);
	struct change *rows = NULL;
	size_t rows_count = 0, rows_alloc = 0;
	compare("kernel", 0, sides, &o, &rows, &rows_count, &rows_alloc);
	compare("range", 1, sides, &o, &rows, &rows_count, &rows_alloc);
	size_t shared = 0;
	for (size_t i = 0; i < rows_count; i++)
		shared += rows[i].a.runs && rows[i].b.runs;
	if (!shared)
		die(rows_count ? "diff: A and B share no kernel or range name: they are not runs of "
				 "the same program"
			       : "diff: neither A nor B has a kernel or a marker range to compare");
	sort_array(rows, rows_count, sizeof(*rows), by_total_change);
	struct error err;
	int rc = print(rows, rows_count, sides, &o, (enum table_format)table_parse_format(format),
		       &err);
	int regressed = 0;
	for (size_t i = 0; i < rows_count; i++)
		regressed += rows[i].slower;
	free(rows);
	release_side(&sides[0]);
	release_side(&sides[1]);
	free(inputs);
	free(b_inputs);
	if (rc)
		die("diff: %s", err.message);
	if (regressed) {
		fprintf(stderr, "gpuprof: diff: %d kernel%s or range%s significantly slower by more "
				"than %g %%\n", regressed, regressed == 1 ? "" : "s",
			regressed == 1 ? "" : "s", o.threshold);
		return 3;
	}
	return 0;
}
