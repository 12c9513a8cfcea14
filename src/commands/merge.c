/* gpuprof merge: one database from the databases of many processes or ranks. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands/commands.h"
#include "store/store.h"
#include "util/error.h"
#include "util/options.h"
#include "util/strbuf.h"

static const char usage[] = "gpuprof merge [options] DB... -o MERGED_DB";
static const char description[] =
	"Joins gpuprof databases (one per process or rank) into one. Every row keeps its\n"
	"process: host, pid and rank stay in the processes view. Times are moved onto one\n"
	"timeline: processes of one host keep their shared clock; those of other hosts are\n"
	"placed by the real time each recorded at its start, so their alignment is as good as\n"
	"the hosts' clock synchronisation (NTP, PTP). The shift applied to each process is in\n"
	"gpuprof_metadata (process.<id>.time_shift). A recording (a process: host, pid and\n"
	"start time) met again, in the same database given twice or in a merged database and\n"
	"one of its sources, is merged once, with a warning. The output is replaced if it\n"
	"exists.\n"
	"\n"
	"--replay joins counters measured in other runs of the same program (an application\n"
	"replay: the program run once per group of --pmc metrics, as gpuprof compute profile\n"
	"--replay application does): of a replay only the counters are taken, each onto the\n"
	"kernel of the inputs with the same name and device launched as many times before it.\n"
	"A kernel launched a different number of times in a replay is named in a warning.";

int cmd_merge(int argc, char **argv)
{
	int help = -1;
	const char *output = NULL;
	struct option_list replays = { 0 };
	const struct option table[] = {
		{ OPTION_STRING, 'o', "output", &output, "FILE", "the merged database (required)" },
		{ OPTION_LIST, 0, "replay", &replays, "DB...",
		  "a database of another run of the same program: its counters joined onto the "
		  "inputs' kernels" },
		{ OPTION_BOOL, 'h', "help", &help, NULL, "show this help" },
		OPTION_END,
	};
	struct error err;
	char **inputs;
	int count;
	if (command_parse_inputs("merge", usage, description, table, &help, "database", argc, argv,
				 &inputs, &count))
		return 0;
	if (!output)
		die_with(EXIT_USAGE, "merge: -o is required (usage: %s)", usage);
	struct strbuf warnings = STRBUF_INIT;
	int left_out = 0;
	int rc = store_merge(inputs, count, (char *const *)replays.items, replays.count, output,
			     &warnings, &left_out, &err);
	free(inputs);
	for (const char *line = warnings.buf; *line; line = strchr(line, '\n') + 1)
		fprintf(stderr, "gpuprof: merge: %.*s\n", (int)(strchr(line, '\n') - line), line);
	strbuf_release(&warnings);
	if (rc)
		die("merge: %s", err.message);
	int merged = count - left_out;
	fprintf(stderr, "gpuprof: merged %d database%s into %s", merged, merged == 1 ? "" : "s",
		output);
	if (left_out)
		fprintf(stderr, " (%d more left out: %s recordings were all merged already)",
			left_out, left_out == 1 ? "its" : "their");
	if (replays.count)
		fprintf(stderr, " with the counters of %d replay%s", replays.count,
			replays.count == 1 ? "" : "s");
	fputc('\n', stderr);
	return 0;
}
