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

#include "analysis/diff.h"
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
	"change in % and in time, the interval of the change (each end a bound at --alpha),\n"
	"and whether the change is significant. Kernels and ranges that only one side has\n"
	"are listed as new or vanished. Rows are sorted by the change of their total time,\n"
	"largest first. With --threshold, exits 3 when a kernel or range is significantly\n"
	"slower by more than that %.\n"
	"\n"
	"Repeated runs (A1 A2... -- B1 B2..., '--' between the two sides; options may\n"
	"stand on either side) are what a regression gate needs. Each run's duration of a\n"
	"kernel or range is one observation: by default (auto) its low decile (p10) or its\n"
	"median, whichever varies less between the runs of both sides (a loaded machine\n"
	"moves the low tail of one kernel and the middle of another; each is tested at\n"
	"--alpha / 2). The logarithms of the runs' values are compared with Student's t,\n"
	"their variance pooled (the same program on both sides), or, where one side has a\n"
	"single run, as a prediction from the other side's runs. A change is significant\n"
	"when its interval at --alpha (default 0.01) lies beyond --noise (default 5 %):\n"
	"P_Value is of that, not of no change at all, so the spread of an unchanged\n"
	"program's runs is not called a change. A_Compared_ns and B_Compared_ns are the\n"
	"geometric means of the runs' values; Calls and totals are per run. What the runs\n"
	"can detect: with N runs a side whose values spread by s (the standard deviation of\n"
	"their logarithms, about the relative spread), a change must exceed the noise by\n"
	"some t x s x sqrt(2/N) to be called, t the point of Student's t with 2N - 2\n"
	"degrees of freedom whose upper tail is --alpha / 2 (auto; --alpha with a\n"
	"statistic given): at s = 10 %, 2 runs a side call changes over some 200 %, 3 runs\n"
	"over 60 to 80 %, 5 runs over 35 to 50 %; at s = 1 %, 3 runs call 15 %. A kernel\n"
	"twice as slow is called with 3 runs a side where its runs spread by under 12 %.\n"
	"\n"
	"One run a side: run-to-run noise is unknown. Each run's durations are cut into\n"
	"10 batches in time order and the logarithms of the batches' values (default the\n"
	"mean: a run's low decile follows the load it happened to meet, its mean the loads\n"
	"of the whole run) are compared with Welch's t (P_Value of no change at all, the\n"
	"interval two-sided at --alpha), which says only that the two runs differ; so no\n"
	"change is called significant under --noise, 50 % by default with one run a side:\n"
	"between single runs of an unchanged program on a loaded machine a kernel's mean\n"
	"moved by less than 40 % in 19 pairs of 20, and by up to 99 %\n"
	"(docs/PERFORMANCE-READING.md). On a quiet, dedicated GPU lower it, or give three\n"
	"or more runs a side.\n"
	"\n"
	"A and B that share no kernel or range name are not runs of the same program: the\n"
	"comparison stops there with exit status 1.";

/* The defaults of --statistic and --noise (%), with repeated runs and with one run a
 * side (the description says why they differ). */
#define STATISTIC_RUNS "auto"
#define STATISTIC_ONE_RUN "mean"
#define NOISE_RUNS "5"
#define NOISE_ONE_RUN "50"

/* A count or total per run: an integer where it is one (one run, or the same in each). */
static void cell_per_run(struct table *t, const struct diff_figures *f, double v, int decimals)
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

static int print(const struct diff_change *rows, size_t count, const struct diff_side sides[2],
		 const struct diff_options *o, enum table_format format, struct error *err)
{
	static const char *const columns[] = {
		"Kind", "Name", "A_Runs", "A_Calls", "A_Total_ns", "A_Mean_ns", "A_Compared_ns",
		"B_Runs", "B_Calls", "B_Total_ns", "B_Mean_ns", "B_Compared_ns", "Change_pct",
		"Diff_ns", "P_Value", "Significant", "Status", "Low_pct", "High_pct", "Statistic",
	};
	int decimals = format == TABLE_TEXT || format == TABLE_MD ? 1 : -1;
	char title[512];
	const char *statistic = o->statistic == DIFF_AUTO ? "p10 or median"
				: diff_statistic_names[o->statistic];
	if (o->one_run)
		snprintf(title, sizeof(title),
			 "B against A (the baseline), one run each, compared by the %s duration: "
			 "run-to-run noise is unknown, so no change under %g %% is called "
			 "significant (--noise; repeated runs, A1 A2... -- B1 B2..., are tested "
			 "against it)", statistic, o->noise);
	else
		snprintf(title, sizeof(title),
			 "B (%d run%s) against A (%d run%s, the baseline), compared by each run's "
			 "%s duration: significant when the interval of the change, from the "
			 "variation between runs, lies beyond %g %%", sides[1].count, sides[1].count == 1 ? "" : "s", sides[0].count,
			 sides[0].count == 1 ? "" : "s", statistic, o->noise);
	table_output_begin(stdout, format);
	struct table *t = table_begin(stdout, format, "diff", title, 20, columns);
	for (size_t i = 0; i < count; i++) {
		const struct diff_change *c = &rows[i];
		int both = c->a.runs && c->b.runs;
		table_text(t, c->kind);
		table_text(t, c->name);
		const struct diff_figures *f[2] = { &c->a, &c->b };
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
		cell_double(t, !isnan(c->low_pct), c->low_pct, format == TABLE_TEXT ? 2 : -1);
		cell_double(t, !isnan(c->high_pct), c->high_pct, format == TABLE_TEXT ? 2 : -1);
		if (both)
			table_text(t, diff_statistic_names[c->compared]);
		else
			table_null(t);
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
static void read_side(char **paths, int count, enum diff_statistic statistic, struct diff_side *side)
{
	struct error err;
	side->count = count;
	side->runs = xcalloc((size_t)count, sizeof(*side->runs));
	for (int i = 0; i < count; i++)
		if (diff_read_run(paths[i], statistic, &side->runs[i], &err))
			die("diff: %s", err.message);
}

static void release_side(struct diff_side *side)
{
	for (int i = 0; i < side->count; i++)
		diff_run_release(&side->runs[i]);
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
		{ OPTION_ENUM, 0, "statistic", &statistic, "mean|median|p10|min|auto",
		  "the duration compared, of each run (default " STATISTIC_RUNS " with repeated "
		  "runs: p10 or median, whichever varies less; " STATISTIC_ONE_RUN " with one run "
		  "a side)" },
		{ OPTION_STRING, 0, "alpha", &alpha, "P",
		  "the significance level of the t-tests: each end of a change's interval a "
		  "one-sided bound at it (default 0.01)" },
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
	struct diff_options o = { 0, 0, -1, DIFF_MEAN, count == 1 && b_count == 1 };
	parse_number("--alpha", alpha, 1e-12, 0.5, &o.alpha);
	parse_number("--noise", noise ? noise : o.one_run ? NOISE_ONE_RUN : NOISE_RUNS, 0, 1e6,
		     &o.noise);
	if (threshold)
		parse_number("--threshold", threshold, 0, 1e6, &o.threshold);
	if (!statistic)
		statistic = o.one_run ? STATISTIC_ONE_RUN : STATISTIC_RUNS;
	if (o.one_run && !strcmp(statistic, "auto"))
		die_with(EXIT_USAGE, "diff: --statistic auto chooses between the runs of each side, "
				     "and each side has one: give mean, median, p10 or min");
	for (int i = 0; i < DIFF_STATISTICS; i++)
		if (!strcmp(statistic, diff_statistic_names[i]))
			o.statistic = (enum diff_statistic)i;
	struct diff_side sides[2];
	read_side(inputs, count, o.statistic, &sides[0]);
	read_side(b_inputs, b_count, o.statistic, &sides[1]);
	struct diff_change *rows = NULL;
	size_t rows_count = 0, rows_alloc = 0;
	diff_compare("kernel", 0, sides, &o, &rows, &rows_count, &rows_alloc);
	diff_compare("range", 1, sides, &o, &rows, &rows_count, &rows_alloc);
	size_t shared = 0;
	for (size_t i = 0; i < rows_count; i++)
		shared += rows[i].a.runs && rows[i].b.runs;
	if (!shared)
		die(rows_count ? "diff: A and B share no kernel or range name: they are not runs of "
				 "the same program"
			       : "diff: neither A nor B has a kernel or a marker range to compare");
	sort_array(rows, rows_count, sizeof(*rows), diff_by_total_change);
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
