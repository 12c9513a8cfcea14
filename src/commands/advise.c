/* gpuprof advise: findings that explain a recorded run: rules over its databases
 * (src/analysis/insight.h, one file per rule under src/analysis/rules/), each finding
 * with its cost in time, its evidence and what to change. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/insight.h"
#include "commands/commands.h"
#include "store/store.h"
#include "util/error.h"
#include "util/options.h"
#include "util/table.h"

static const char usage[] = "gpuprof advise [options] DB...";
static const char description[] =
	"Reads gpuprof databases and says what explains their time: each finding names the\n"
	"rule, the process and device, what it costs (time, and % of the process's recorded\n"
	"time), the evidence (time ranges, kernels, API calls, threads, sampled functions)\n"
	"and what to change. Findings are listed most costly first; costs of different rules\n"
	"may overlap (the same idle time seen by two rules). --list-rules lists the rules.";

int advise_print(char *const *inputs, int count, const char *format, FILE *out,
		 struct error *err)
{
	enum table_format kind = (enum table_format)table_parse_format(format);
	struct table *t = NULL;
	if (kind != TABLE_TEXT) {
		static const char *const columns[] = { "Input", "Rule", "PID", "Device", "Cost_ns",
						       "Cost_pct", "Finding", "Evidence", "Change",
						       "Cost_pct_of" };
		table_output_begin(out, kind);
		t = table_begin(out, kind, "findings", "Findings", 10, columns);
	}
	int rc = 0;
	size_t total = 0;
	for (int i = 0; rc == 0 && i < count; i++) {
		sqlite3 *db;
		if (store_open(inputs[i], &db, err)) {
			rc = -1;
			break;
		}
		struct findings found = { NULL, 0 };
		rc = insight_check(db, inputs[i], NULL, &found, err);
		sqlite3_close(db);
		if (rc) {
			findings_release(&found);
			break;
		}
		if (kind == TABLE_TEXT && count > 1)
			fprintf(out, "%s%s:\n", i ? "\n" : "", inputs[i]);
		for (size_t f = 0; f < found.count; f++) {
			const struct finding *x = &found.items[f];
			if (!t) {
				finding_print_text(out, x, f + 1);
				continue;
			}
			table_text(t, inputs[i]);
			table_text(t, x->rule);
			table_int(t, x->pid);
			if (x->device)
				table_text(t, x->device);
			else
				table_null(t);
			table_int(t, x->cost_ns);
			table_double(t, x->cost_pct, -1);
			table_text(t, x->what.buf);
			table_text(t, x->evidence.buf);
			table_text(t, x->advice.buf);
			table_text(t, finding_share_of(x));
		}
		if (kind == TABLE_TEXT && !found.count)
			fprintf(out, "no findings: none of the %zu rules saw a problem\n",
				insight_rule_count);
		total += found.count;
		findings_release(&found);
	}
	if (t) {
		if (table_end(t, err))
			rc = -1;
		table_output_end(out, kind);
	}
	if (rc == 0 && fflush(out))
		rc = error_set(err, "cannot write the findings");
	return rc;
}

/* The rules, a line each: the id, aligned, and what it looks for. */
static void list_rules(void)
{
	int width = 0;
	for (size_t r = 0; r < insight_rule_count; r++)
		if ((int)strlen(insight_rules[r].id) > width)
			width = (int)strlen(insight_rules[r].id);
	for (size_t r = 0; r < insight_run_rule_count; r++)
		if ((int)strlen(insight_run_rules[r].id) > width)
			width = (int)strlen(insight_run_rules[r].id);
	for (size_t r = 0; r < insight_rule_count; r++)
		printf("%-*s  %s\n", width, insight_rules[r].id, insight_rules[r].title);
	for (size_t r = 0; r < insight_run_rule_count; r++)
		printf("%-*s  %s\n", width, insight_run_rules[r].id, insight_run_rules[r].title);
}

int cmd_advise(int argc, char **argv)
{
	int help = -1, list = -1;
	const char *format = "text";
	const struct option table[] = {
		{ OPTION_ENUM, 0, "format", &format, "text|csv|md|json",
		  "how the findings are printed (default: text, a block per finding)" },
		{ OPTION_BOOL, 0, "list-rules", &list, NULL, "print the rules and exit" },
		{ OPTION_BOOL, 'h', "help", &help, NULL, "show this help" },
		OPTION_END,
	};
	struct error err;
	char **inputs = NULL;
	int count = 0;
	if (options_parse_mixed(table, argc, argv, &inputs, &count, &err))
		die_with(EXIT_USAGE, "advise: %s", err.message);
	if (help == 1 || list == 1) {
		if (help == 1)
			options_print_help(stdout, usage, description, table);
		else
			list_rules();
		free(inputs);
		return 0;
	}
	if (!count)
		die_with(EXIT_USAGE, "advise: no database given (usage: %s)", usage);
	int rc = advise_print(inputs, count, format, stdout, &err);
	free(inputs);
	if (rc)
		die("advise: %s", err.message);
	return 0;
}
