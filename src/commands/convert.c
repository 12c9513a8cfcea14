/* gpuprof convert: turns spools (left by `gpuprof trace --keep-spool`, by a run that
 * was not started through gpuprof, or by one whose post-processing failed) and
 * databases into outputs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands/commands.h"
#include "commands/output.h"
#include "core/kernel-filter.h"
#include "core/paths.h"
#include "core/spool.h"
#include "util/error.h"
#include "util/options.h"
#include "util/strbuf.h"

static const char usage[] = "gpuprof convert [options] SPOOL_OR_DB...";
static const char description[] =
	"Writes the outputs of recorded spools (<pid>.spool) or databases (<pid>_results.db):\n"
	"the same files `gpuprof trace` writes, named after each input. Inputs that fail are\n"
	"reported and the others are still converted. Spools are kept.";

/* "dir/1234.spool" and "dir/1234_results.db" both give "<directory or dir>/1234". */
static void output_prefix(const char *input, const char *directory, struct strbuf *prefix)
{
	const char *base = strrchr(input, '/');
	base = base ? base + 1 : input;
	size_t len = strlen(base);
	static const char *suffixes[] = { ".spool", "_results.db", ".db", NULL };
	for (int i = 0; suffixes[i]; i++) {
		size_t n = strlen(suffixes[i]);
		if (len > n && !strcmp(base + len - n, suffixes[i])) {
			len -= n;
			break;
		}
	}
	strbuf_reset(prefix);
	if (directory)
		strbuf_addf(prefix, "%s/", directory);
	else if (base != input)
		strbuf_add(prefix, input, (size_t)(base - input));
	strbuf_add(prefix, base, len);
}

int cmd_convert(int argc, char **argv)
{
	int stats = -1, summary = -1, truncate = -1, rename = -1, help = -1;
	const char *directory = NULL, *units = "nsec";
	const char *include = NULL, *exclude = NULL, *iterations = NULL;
	const char *from = NULL, *to = NULL;
	struct option_list formats = { 0 };
	const struct option table[] = {
		{ OPTION_LIST, 'f', "output-format", &formats, "FORMAT...",
		  "csv, sqlite, json (Chrome trace events), pftrace (Perfetto), html (the report "
		  "of gpuprof report), otf2 (an OTF2 archive in NAME_otf2/: Vampir, Scalasca, "
		  "otf2-print); default: csv sqlite", OUTPUT_FORMAT_WORDS },
		{ OPTION_STRING, 'd', "output-directory", &directory, "DIR",
		  "where outputs go (default: beside each input)" },
		{ OPTION_BOOL, 0, "stats", &stats, NULL, "also write the *_stats.csv files" },
		{ OPTION_BOOL, 'S', "summary", &summary, NULL, "print summary tables on stderr" },
		{ OPTION_ENUM, 'u', "summary-units", &units, "sec|msec|usec|nsec",
		  "time unit of the summary tables (default: nsec)" },
		{ OPTION_BOOL, 'T', "truncate-kernels", &truncate, NULL,
		  "kernel names without namespaces, templates and parameters" },
		{ OPTION_BOOL, 0, "kernel-rename", &rename, NULL,
		  "kernels take the name of the innermost marker range they were launched in "
		  "(spools only)" },
		{ OPTION_STRING, 0, "kernel-include-regex", &include, "REGEX",
		  "keep only kernels whose name matches (spools only)" },
		{ OPTION_STRING, 0, "kernel-exclude-regex", &exclude, "REGEX",
		  "leave out kernels whose name matches (after the include; spools only)" },
		{ OPTION_STRING, 0, "kernel-iteration-range", &iterations, "SET",
		  "keep only these dispatches of each kept kernel name, from 1 (spools only)" },
		{ OPTION_STRING, 0, "from", &from, "SECONDS",
		  "only what ran at this time of its process or later (seconds from the process's "
		  "start): a window of a run too large to open whole; CSV, JSON, pftrace and the "
		  "summary (the database and the report keep the whole run)" },
		{ OPTION_STRING, 0, "to", &to, "SECONDS",
		  "only what began by this time of its process (seconds from its start)" },
		{ OPTION_BOOL, 'h', "help", &help, NULL, "show this help" },
		OPTION_END,
	};
	struct error err;
	char **inputs;
	int input_count;
	if (command_parse_inputs("convert", usage, description, table, &help, "input", argc, argv,
				 &inputs, &input_count))
		return 0;
	struct output_request request = { .formats = FORMAT_CSV | FORMAT_SQLITE };
	if (formats.count && output_parse_formats(&formats, &request.formats, &err))
		die_with(EXIT_USAGE, "convert: %s", err.message);
	request.summary = summary == 1;
	request.options.stats = stats == 1;
	request.options.truncate_kernels = truncate == 1;
	request.options.rename_kernels = rename == 1;
	request.options.summary_units = units;
	double window[2] = { 0, 0 };
	const char *window_text[2] = { from, to };
	for (int i = 0; i < 2; i++) {
		char *end;
		if (!window_text[i])
			continue;
		window[i] = strtod(window_text[i], &end);
		if (!*window_text[i] || *end || !(window[i] >= 0) || window[i] > 1e9)
			die_with(EXIT_USAGE, "convert: --%s: '%s' is not a number of seconds from the "
					     "process's start", i ? "to" : "from", window_text[i]);
	}
	if (to && window[1] <= window[0])
		die_with(EXIT_USAGE, "convert: --to %s is not after --from %s: the window is empty",
			 to, from ? from : "0");
	request.options.window_from_ns = (int64_t)(window[0] * 1e9 + 0.5);
	request.options.window_to_ns = (int64_t)(window[1] * 1e9 + 0.5); /* 0: no end */
	if (to && request.options.window_to_ns < 1)
		request.options.window_to_ns = 1;
	if ((from || to) && (request.formats & (FORMAT_SQLITE | FORMAT_HTML | FORMAT_OTF2)))
		fprintf(stderr, "gpuprof: convert: the window applies to CSV, JSON, pftrace and the "
				"summary; the database, the report and OTF2 keep the whole run\n");
	struct kernel_filter filter;
	if (kernel_filter_init(&filter, include, exclude, iterations, &err))
		die_with(EXIT_USAGE, "convert: %s", err.message);
	request.kernel_filter = &filter;
	if (directory && path_make_parents(directory, 0, &err))
		die("convert: %s", err.message);

	int failures = 0;
	struct strbuf prefix = STRBUF_INIT;
	for (int i = 0; i < input_count; i++) {
		output_prefix(inputs[i], directory, &prefix);
		int spool = spool_is_spool(inputs[i]);
		int rc = spool ? output_from_spool(inputs[i], prefix.buf, &request, 1, &err)
			 : kernel_filter_active(&filter) || rename == 1
				 ? error_set(&err, "'%s' is a database: the kernel filters and "
						   "--kernel-rename apply to spools (a database keeps the "
						   "names and kernels it was made with)", inputs[i])
				 : output_from_database(inputs[i], prefix.buf, &request, &err);
		if (rc) {
			warn("convert: %s", err.message);
			failures++;
		}
	}
	strbuf_release(&prefix);
	kernel_filter_release(&filter);
	free(inputs);
	return failures ? EXIT_FAILED : 0;
}
