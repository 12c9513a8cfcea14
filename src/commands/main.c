/* gpuprof: the command table and dispatch. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands/commands.h"
#include "util/error.h"
#include "util/options.h"

const struct command commands[] = {
	{ "trace", cmd_trace, "run a program and record its kernels, copies and API calls" },
	{ "sys", cmd_sys, "trace a program with metrics of the machine, its processes and GPUs "
			  "over time" },
	{ "profile", cmd_profile, "call-stack samples: flat profile, call tree, folded stacks, "
				  "filtered" },
	{ "compute", cmd_compute, "per-kernel hardware counters on NVIDIA GPUs: the metric "
				  "catalog, collection into workloads, their analysis" },
	{ "roofline", cmd_roofline, "measure the memory bandwidths and arithmetic throughputs a "
				    "device reaches: roofline.csv and its plot" },
	{ "dump", cmd_dump, "every thread's call stack in running processes, now, and what each "
			    "is blocked in" },
	{ "convert", cmd_convert,
	  "turn recorded spools or databases into outputs (csv, sqlite, json, pftrace, html, "
	  "otf2)" },
	{ "summary", cmd_summary, "statistics of databases: domains, devices busy and idle, ranks, "
				  "findings" },
	{ "advise", cmd_advise, "findings that explain a run: idle devices, waits after launches, "
				"small or pageable copies..., each with its cost and what to change" },
	{ "report", cmd_report, "one offline HTML page of a run: devices along time, findings, "
				"top kernels, copies, API calls, ranges, CPU functions, metrics" },
	{ "diff", cmd_diff, "compare runs (one or several a side) kernel by kernel and range by range, with a "
			    "significance test; --threshold fails a CI job on a regression" },
	{ "query", cmd_query, "run SQL over the views of one or more databases" },
	{ "merge", cmd_merge, "join the databases of many processes or ranks into one" },
	{ "avail", cmd_avail, "what this gpuprof can collect: recording libraries, sampling, "
			      "metrics, hardware counters, presets" },
	{ "help", cmd_help, "show help for gpuprof or one of its commands" },
	{ "version", cmd_version, "print the version of gpuprof" },
	{ NULL, NULL, NULL },
};

const struct command *command_find(const char *name)
{
	for (const struct command *c = commands; c->name; c++)
		if (!strcmp(c->name, name))
			return c;
	return NULL;
}

const char *command_suggest(const char *name)
{
	const char *best = NULL;
	int best_distance = 99;
	for (const struct command *c = commands; c->name; c++) {
		int d = options_edit_distance(name, c->name);
		if (d < best_distance) {
			best_distance = d;
			best = c->name;
		}
	}
	return best_distance <= (int)strlen(name) / 3 + 1 ? best : NULL;
}

void commands_print_usage(FILE *out)
{
	fprintf(out, "usage: gpuprof <command> [options] [arguments]\n\n"
		     "gpuprof records what GPU programs do (kernels, memory copies, API calls) and\n"
		     "writes an SQLite database and rocprofv3-compatible CSV files per process,\n"
		     "and timelines for Perfetto and chrome://tracing.\n"
		     "This version records CUDA programs (PyTorch included) on NVIDIA GPUs through\n"
		     "CUPTI, OpenCL programs on any OpenCL device, and the MPI, NCCL and\n"
		     "torch.distributed calls of distributed runs.\n\ncommands:\n");
	for (const struct command *c = commands; c->name; c++)
		fprintf(out, "  %-10s %s\n", c->name, c->summary);
	fprintf(out, "\n'gpuprof help <command>' or 'gpuprof <command> -h' shows a command's "
		     "options;\n'man gpuprof-<command>' the full manual.\n");
}

/* SIGXFSZ's disposition as gpuprof was started with it (commands.h). */
static struct sigaction file_size_signal;

void commands_restore_signals(void)
{
	sigaction(SIGXFSZ, &file_size_signal, NULL);
}

int main(int argc, char **argv)
{
	struct sigaction ignore = { .sa_handler = SIG_IGN };
	sigaction(SIGXFSZ, &ignore, &file_size_signal);
	if (argc < 2) {
		commands_print_usage(stderr);
		return EXIT_USAGE;
	}
	const char *name = argv[1];
	if (!strcmp(name, "--help") || !strcmp(name, "-h"))
		name = "help";
	else if (!strcmp(name, "--version") || !strcmp(name, "-v"))
		name = "version";
	const struct command *c = command_find(name);
	if (!c) {
		const char *suggestion = command_suggest(name);
		if (suggestion)
			die_with(EXIT_USAGE, "'%s' is not a gpuprof command; did you mean '%s'?", name,
				 suggestion);
		die_with(EXIT_USAGE, "'%s' is not a gpuprof command; see 'gpuprof --help'", name);
	}
	int code = c->run(argc - 1, argv + 1);
	options_release();
	return code;
}
