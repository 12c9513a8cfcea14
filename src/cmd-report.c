/* gpuprof report: one offline HTML file of one or more databases (writer/report.h). */
#include <stdio.h>
#include <stdlib.h>

#include "commands.h"
#include "util/error.h"
#include "util/options.h"
#include "writer/report.h"

static const char usage[] = "gpuprof report [options] DB... [-o FILE]";
static const char description[] =
	"Writes one self-contained HTML page of the databases, all inputs together: per\n"
	"device how busy it was along each process's run, gpuprof advise's findings with\n"
	"their evidence, the top kernels, memory copies, API calls and marker ranges, and\n"
	"where recorded the hot sampled CPU functions and the metric series. The page has no\n"
	"script and loads nothing from elsewhere: open it by double-click, mail it, attach\n"
	"it to a ticket. It holds aggregates, never rows, so a run of a million kernels\n"
	"gives a page of the same size. `gpuprof trace -f html` writes the same page per\n"
	"process (<prefix>_report.html).";

int cmd_report(int argc, char **argv)
{
	int help = -1;
	const char *path = "report.html";
	const struct option table[] = {
		{ OPTION_STRING, 'o', "output", &path, "FILE",
		  "the page to write (default: report.html; replaced when it exists)" },
		{ OPTION_BOOL, 'h', "help", &help, NULL, "show this help" },
		OPTION_END,
	};
	char **inputs;
	int count;
	if (command_parse_inputs("report", usage, description, table, &help, "database", argc,
				 argv, &inputs, &count))
		return 0;
	struct error err;
	int rc = report_write(inputs, count, path, &err);
	free(inputs);
	if (rc)
		die("report: %s", err.message);
	fprintf(stderr, "gpuprof: report: %s\n", path);
	return 0;
}
