/* gpuprof diff: two recorded runs compared, kernel by kernel name and marker range by
 * range name: calls, total and mean time of each, the change, and whether it is
 * significant (Welch's t-test on the per-dispatch durations, and larger than the noise
 * of a profile); --threshold makes a slower one fail a CI job. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/stats.h"
#include "commands.h"
#include "store/store.h"
#include "util/error.h"
#include "util/options.h"
#include "util/sort.h"
#include "util/table.h"

static const char usage[] = "gpuprof diff [options] A.db B.db";
static const char description[] =
	"Compares run B with run A (the baseline), kernels by name and marker ranges by\n"
	"name: calls, total and mean time in each, the change of the mean in % and in time,\n"
	"and whether the change is significant: Welch's t-test on the per-dispatch (or\n"
	"per-range) durations rejects equal means at --alpha (default 0.01), and the means\n"
	"differ by more than --noise % (default 5: what two profiles of the same program\n"
	"differ by on a quiet machine). Welch's test, because the two runs' variances differ\n"
	"(another load, another machine) and a kernel's mean over many dispatches is close\n"
	"to normal. Kernels and ranges that only one run has are listed as new or vanished.\n"
	"Rows are sorted by the change of their total time, largest first. With --threshold,\n"
	"exits 3 when a kernel or range is significantly slower by more than that %.";

/* A run's durations: kernels and marker ranges by name. */
struct run_stats {
	struct stats_table kernels, ranges;
};

static int read_run(const char *path, struct run_stats *r, struct error *err)
{
	sqlite3 *db;
	stats_init(&r->kernels);
	stats_init(&r->ranges);
	if (store_open(path, &db, err))
		return -1;
	static const char *const queries[] = {
		"SELECT s.string, k.end - k.start FROM gpuprof_kernel k "
		"JOIN gpuprof_string s ON s.id = k.name_id WHERE k.end >= k.start",
		"SELECT s.string, m.end - m.start FROM gpuprof_marker m "
		"JOIN gpuprof_string s ON s.id = m.name_id "
		"WHERE m.kind IN (1, 2) AND m.ended = 1 AND m.end >= m.start",
	};
	int rc = 0;
	for (int q = 0; rc == 0 && q < 2; q++) {
		if (q == 1 && !store_has_table(db, "gpuprof_marker"))
			break;
		sqlite3_stmt *s;
		if (store_prepare(db, queries[q], &s, err)) {
			rc = -1;
			break;
		}
		int step;
		while ((step = sqlite3_step(s)) == SQLITE_ROW) {
			const unsigned char *name = sqlite3_column_text(s, 0);
			stats_add(q ? &r->ranges : &r->kernels, name ? (const char *)name : "",
				  (uint64_t)sqlite3_column_int64(s, 1));
		}
		if (step != SQLITE_DONE)
			rc = error_set(err, "cannot read '%s': %s", path, sqlite3_errmsg(db));
		sqlite3_finalize(s);
	}
	sqlite3_close(db);
	return rc;
}

/* One row of the comparison. */
struct change {
	const char *kind, *name;
	const struct stats_row *a, *b; /* NULL: not in that run */
	double total_diff;             /* ns, B - A */
	double p;                      /* NAN: not testable */
	int significant, slower;
};

struct options {
	double alpha, noise, threshold; /* threshold < 0: none */
};

static void compare(const char *kind, const struct stats_table *a, const struct stats_table *b,
		    const struct options *o, struct change **out, size_t *count)
{
	for (int side = 0; side < 2; side++) {
		const struct stats_table *t = side ? b : a;
		for (size_t i = 0; i < t->count; i++) {
			const struct stats_row *row = &t->rows[i];
			const struct stats_row *other = stats_find(side ? a : b, row->name);
			if (side && other)
				continue; /* done from A's side */
			*out = xrealloc(*out, (*count + 1) * sizeof(**out));
			struct change *c = &(*out)[(*count)++];
			memset(c, 0, sizeof(*c));
			c->kind = kind;
			c->name = row->name;
			c->a = side ? NULL : row;
			c->b = side ? row : other;
			c->total_diff = (c->b ? (double)c->b->total_ns : 0) -
					(c->a ? (double)c->a->total_ns : 0);
			c->p = NAN;
			if (!c->a || !c->b)
				continue;
			c->p = stats_welch_p((double)c->a->calls, c->a->mean_ns, c->a->m2,
					     (double)c->b->calls, c->b->mean_ns, c->b->m2);
			double change = c->a->mean_ns > 0
					? 100.0 * (c->b->mean_ns - c->a->mean_ns) / c->a->mean_ns : 0;
			c->significant = !isnan(c->p) && c->p < o->alpha && fabs(change) > o->noise;
			c->slower = c->significant && o->threshold >= 0 && change > o->threshold;
		}
	}
}

static int by_total_change(const void *x, const void *y)
{
	const struct change *a = x, *b = y;
	double da = fabs(a->total_diff), db = fabs(b->total_diff);
	if (da != db)
		return da < db ? 1 : -1;
	return strcmp(a->name, b->name);
}

static void cell_int(struct table *t, const struct stats_row *r, uint64_t v)
{
	if (r)
		table_int(t, (int64_t)v);
	else
		table_null(t);
}

static void cell_double(struct table *t, int defined, double v, int decimals)
{
	if (defined)
		table_double(t, v, decimals);
	else
		table_null(t);
}

static int print(const struct change *rows, size_t count, enum table_format format,
		 struct error *err)
{
	static const char *const columns[] = {
		"Kind", "Name", "A_Calls", "A_Total_ns", "A_Mean_ns", "B_Calls", "B_Total_ns",
		"B_Mean_ns", "Change_pct", "Diff_Mean_ns", "P_Value", "Significant", "Status",
	};
	int decimals = format == TABLE_TEXT || format == TABLE_MD ? 1 : -1;
	table_output_begin(stdout, format);
	struct table *t = table_begin(stdout, format, "diff",
				      "B against A (the baseline): kernels and marker ranges", 13,
				      columns);
	for (size_t i = 0; i < count; i++) {
		const struct change *c = &rows[i];
		table_text(t, c->kind);
		table_text(t, c->name);
		cell_int(t, c->a, c->a ? c->a->calls : 0);
		cell_int(t, c->a, c->a ? c->a->total_ns : 0);
		cell_double(t, c->a != NULL, c->a ? c->a->mean_ns : 0, decimals);
		cell_int(t, c->b, c->b ? c->b->calls : 0);
		cell_int(t, c->b, c->b ? c->b->total_ns : 0);
		cell_double(t, c->b != NULL, c->b ? c->b->mean_ns : 0, decimals);
		int both = c->a && c->b;
		double change = both && c->a->mean_ns > 0
				? 100.0 * (c->b->mean_ns - c->a->mean_ns) / c->a->mean_ns : NAN;
		cell_double(t, both && !isnan(change), change, format == TABLE_TEXT ? 2 : -1);
		cell_double(t, both, both ? c->b->mean_ns - c->a->mean_ns : 0, decimals);
		if (isnan(c->p))
			table_null(t);
		else
			table_double(t, c->p, format == TABLE_TEXT ? 4 : -1);
		table_text(t, !both ? "" : isnan(c->p) ? "untested" : c->significant ? "yes" : "no");
		table_text(t, !c->a ? "new" : !c->b ? "vanished"
			   : !c->significant ? "same" : c->b->mean_ns > c->a->mean_ns ? "slower" : "faster");
	}
	int rc = table_end(t, err);
	table_output_end(stdout, format);
	if (rc == 0 && fflush(stdout))
		rc = error_set(err, "cannot write the comparison");
	return rc;
}

static int parse_number(const char *option, const char *text, double low, double high,
			double *out)
{
	char *end;
	double v = strtod(text, &end);
	if (end == text || *end || !(v >= low && v <= high))
		die_with(EXIT_USAGE, "diff: %s %s: a number from %g to %g is expected", option, text,
			 low, high);
	*out = v;
	return 0;
}

int cmd_diff(int argc, char **argv)
{
	int help = -1;
	const char *format = "text", *threshold = NULL, *alpha = "0.01", *noise = "5";
	const struct option table[] = {
		{ OPTION_ENUM, 0, "format", &format, "text|csv|md|json",
		  "how the comparison is printed (default: text)" },
		{ OPTION_STRING, 0, "threshold", &threshold, "PCT",
		  "exit 3 when a kernel or range is significantly slower by more than PCT % "
		  "(its mean)" },
		{ OPTION_STRING, 0, "alpha", &alpha, "P",
		  "the significance level of Welch's test (default 0.01)" },
		{ OPTION_STRING, 0, "noise", &noise, "PCT",
		  "changes of the mean up to PCT % are not significant (default 5)" },
		{ OPTION_BOOL, 'h', "help", &help, NULL, "show this help" },
		OPTION_END,
	};
	char **inputs;
	int count;
	if (command_parse_inputs("diff", usage, description, table, &help, "database", argc, argv,
				 &inputs, &count))
		return 0;
	if (count != 2)
		die_with(EXIT_USAGE, "diff: two databases are compared, %d given (usage: %s)", count,
			 usage);
	struct options o = { 0, 0, -1 };
	parse_number("--alpha", alpha, 1e-12, 0.5, &o.alpha);
	parse_number("--noise", noise, 0, 1e6, &o.noise);
	if (threshold)
		parse_number("--threshold", threshold, 0, 1e6, &o.threshold);
	struct run_stats runs[2];
	struct error err;
	for (int i = 0; i < 2; i++)
		if (read_run(inputs[i], &runs[i], &err))
			die("diff: %s", err.message);
	struct change *rows = NULL;
	size_t rows_count = 0;
	compare("kernel", &runs[0].kernels, &runs[1].kernels, &o, &rows, &rows_count);
	compare("range", &runs[0].ranges, &runs[1].ranges, &o, &rows, &rows_count);
	sort_array(rows, rows_count, sizeof(*rows), by_total_change);
	int rc = print(rows, rows_count, (enum table_format)table_parse_format(format), &err);
	int regressed = 0;
	for (size_t i = 0; i < rows_count; i++)
		regressed += rows[i].slower;
	free(rows);
	for (int i = 0; i < 2; i++) {
		stats_release(&runs[i].kernels);
		stats_release(&runs[i].ranges);
	}
	free(inputs);
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
