/* gpuprof summary: statistics over one or more databases: per-domain tables (kernels by
 * name, copies by direction, allocations, API calls by function, marker ranges), the
 * share of each domain, GPU time per marker range, how busy each device was and the gaps
 * it sat idle, and one row per process (host, pid, rank). */
#include <stdlib.h>

#include "commands/commands.h"
#include "util/error.h"
#include "util/options.h"
#include "writer/run-summary.h"

static const char usage[] = "gpuprof summary [options] DB...";
static const char description[] =
	"Prints statistics over gpuprof databases, all inputs together: kernels, memory\n"
	"copies, allocations and the API calls of each domain (calls, total, average,\n"
	"percentage of the table's total, min, max, standard deviation), the time of each\n"
	"domain, the GPU time of the kernels launched inside each marker range (by range\n"
	"name, nested ranges included), device busy time and idle gaps per device, and one\n"
	"row per process. A device is busy while a kernel or copy runs on it; its busy\n"
	"percentage is of its process's recorded duration; its idle gaps lie between its\n"
	"first and last activity. Each recording (a process) counts once: an input holding\n"
	"only recordings of an earlier one is left out, one sharing some is refused.";

int cmd_summary(int argc, char **argv)
{
	int help = -1;
	const char *format_name = "text", *units = "nsec";
	const struct option table[] = {
		{ OPTION_ENUM, 0, "format", &format_name, "text|csv|md|json",
		  "how the tables are printed (default: text)" },
		{ OPTION_ENUM, 'u', "units", &units, "sec|msec|usec|nsec",
		  "unit of the times (default: nsec)" },
		{ OPTION_BOOL, 'h', "help", &help, NULL, "show this help" },
		OPTION_END,
	};
	struct error err;
	char **inputs;
	int count;
	if (command_parse_inputs("summary", usage, description, table, &help, "database", argc, argv,
				 &inputs, &count))
		return 0;
	int rc = run_summary_print(inputs, count, format_name, units, &err);
	free(inputs);
	if (rc)
		die("summary: %s", err.message);
	return 0;
}
