/* gpuprof compute analyze: the command line of compute/analyze.h (workload directories
 * in, tables per block out). gpuprof compute profile is compute.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands/commands.h"
#include "commands/compute.h"
#include "compute/analyze.h"
#include "compute/catalog.h"
#include "compute/torch-ops.h"
#include "compute/workload.h"
#include "util/error.h"
#include "util/install.h"
#include "util/options.h"
#include "util/strbuf.h"

const char compute_analyze_usage[] = "gpuprof compute analyze -p DIR [-p DIR...] [options]";
const char compute_analyze_description[] =
	"Evaluates the catalog's metrics over the dispatches of workload directories (what\n"
	"gpuprof compute profile writes: pmc_perf.csv, sysinfo.csv) and prints them as tables\n"
	"per block: 0 the top kernels, 1 system info, then each table of the catalog with each\n"
	"metric's average, minimum and maximum over the dispatches kept, its unit, peak and %\n"
	"of peak, and under block 2 the bottleneck of each kernel (2.2). With two or more -p, the\n"
	"first is the baseline and every other's average comes with its change in % and its\n"
	"difference. A value that cannot be had (a counter not collected, a division by zero)\n"
	"is N/A. Every rate divides by one duration: gpu__time_duration.sum where collected,\n"
	"else End - Start. Text and Markdown show large values with an SI prefix (TB/s).\n"
	"\n"
	"Block 4 ends with the roofline of the first workload's top kernels (4.3): for each memory\n"
	"level, the arithmetic intensity of the data type's work, its rate, the ceiling at that\n"
	"intensity (from the workload's roofline.csv), the rate in % of it, and whether the\n"
	"kernel is memory- or compute-bound; --roofline-plot draws the same points.\n"
	"\n"
	"Block 21 is PC sampling (compute profile --pc-sampling): the first workload's\n"
	"instructions by samples, with their source line and most frequent stall reason\n"
	"(21.1); -k applies, -d cannot (a kernel's launches are sampled together).";

int compute_analyze(int argc, char **argv)
{
	int help = -1, list_metrics_only = -1, list_stats = -1, experimental = -1;
	const char *normal = "per_kernel", *time_unit = "ns", *format = "stdout", *explain = NULL;
	const char *max_text = "10", *data_type = "FP32", *sort = "kernels", *plot = NULL;
	const char *pc_sort = "count", *pc_rows_text = "20", *torch_operator = NULL;
	int list_torch = -1;
	struct option_list paths = { 0 }, blocks = { 0 }, kernels = { 0 }, dispatches = { 0 };
	struct option_list levels = { 0 };
	const struct option table[] = {
		{ OPTION_LIST, 'p', "path", &paths, "DIR",
		  "a workload directory; the first given is the baseline of a comparison" },
		{ OPTION_LIST, 'b', "block", &blocks, "ID",
		  "blocks, tables or metrics to show: 0, 2, 7.1, 11.2.3, an alias (dram...), or "
		  "analyze's own tables 0.1, 1.1, 2.2 (bottleneck), 4.3 (roofline), 21 or 21.1 "
		  "(PC sampling)" },
		{ OPTION_LIST, 'k', "kernel", &kernels, "SUBSTRING",
		  "only the dispatches of kernels whose name holds one of these" },
		{ OPTION_LIST, 'd', "dispatch", &dispatches, "N|FROM:TO",
		  "only these dispatches (their Dispatch_ID, from 1)" },
		{ OPTION_ENUM, 'n', "normal-unit", &normal, "per_kernel|per_second|per_cycle|per_warp",
		  "counts (bytes, instructions, sectors...) as they are, or per second, cycle or warp" },
		{ OPTION_ENUM, 't', "time-unit", &time_unit, "s|ms|us|ns",
		  "the unit of the top kernels' times (default: ns)" },
		{ OPTION_STRING, 0, "max-stat-num", &max_text, "N",
		  "kernels in the top-kernels, bottleneck and roofline tables (default: 10)" },
		{ OPTION_STRING, 'g', "metric", &explain, "ID",
		  "how a metric is computed: its expression, each dispatch's inputs and value, "
		  "and their mean (the tables' Avg)" },
		{ OPTION_BOOL, 0, "list-metrics", &list_metrics_only, NULL,
		  "list the catalog's metrics and exit" },
		{ OPTION_BOOL, 0, "list-stats", &list_stats, NULL,
		  "list each workload's kernels and their dispatches, and exit" },
		{ OPTION_ENUM, 0, "output-format", &format, "stdout|csv|md|json",
		  "how to print the tables (default: stdout, aligned text)" },
		{ OPTION_STRING, 'R', "roofline-data-type", &data_type,
		  "FP64|FP32|FP16|BF16|FP8|I8|I32",
		  "the roofline's data type: its work and its ceilings (default: FP32)" },
		{ OPTION_LIST, 'm', "mem-level", &levels, "HBM|L2|L1|vL1D|LDS",
		  "the roofline's memory levels (default: every one)", "HBM|L2|L1|vL1D|LDS" },
		{ OPTION_ENUM, 0, "sort", &sort, "kernels|dispatches",
		  "roofline points: the top kernels (their dispatches together) or the longest "
		  "dispatches (default: kernels)" },
		{ OPTION_STRING, 0, "roofline-plot", &plot, "FILE",
		  "also write the first workload's roofline as a self-contained HTML file" },
		{ OPTION_ENUM, 0, "pc-sampling-sorting-type", &pc_sort, "count|offset",
		  "table 21.1, PC sampling: instructions by samples (count, the default) or in the "
		  "order of each kernel's code (offset)" },
		{ OPTION_STRING, 0, "pc-sampling-rows", &pc_rows_text, "N",
		  "rows of table 21.1 (default: 20; 0: all)" },
		{ OPTION_BOOL, 0, "list-torch-operators", &list_torch, NULL,
		  "the first workload's PyTorch operators (compute profile --torch-trace): each "
		  "one's dispatches, kernel time and counters, and exit" },
		{ OPTION_STRING, 0, "torch-operator", &torch_operator, "NAME",
		  "the counters of the first workload's operators NAME selects (all, *, **; a "
		  "glob of the last levels as rocprof-compute's: '*/nn.Module.Linear.forward'; "
		  "the hierarchy whole, a prefix, or from one of its levels on; a module path: "
		  "Net.fc1), summed over their dispatches, and exit" },
		{ OPTION_BOOL, 0, "experimental", &experimental, NULL,
		  "accepted, as rocprof-compute's: gpuprof's features need no gate" },
		{ OPTION_BOOL, 'h', "help", &help, NULL, "show this help" },
		OPTION_END,
	};
	struct error err;
	int next;
	if (options_parse(table, argc, argv, &next, &err))
		die_with(EXIT_USAGE, "compute analyze: %s", err.message);
	if (help == 1) {
		options_print_help(stdout, compute_analyze_usage, compute_analyze_description, table);
		return 0;
	}
	if (next < argc)
		die_with(EXIT_USAGE, "compute analyze: unexpected argument '%s' (workloads are given "
				     "with -p)", argv[next]);
	struct strbuf dir = STRBUF_INIT;
	struct catalog c;
	if (install_path("share/gpuprof/catalog", &dir, &err) || catalog_load(dir.buf, &c, &err))
		die("compute: %s", err.message);
	strbuf_release(&dir);
	if (list_metrics_only == 1) {
		for (size_t b = 0; b < c.count; b++) {
			printf("%d %s\n", c.blocks[b].id, c.blocks[b].title);
			for (size_t t = 0; t < c.blocks[b].count; t++) {
				printf("  %s %s\n", c.blocks[b].tables[t].id, c.blocks[b].tables[t].title);
				for (size_t i = 0; i < c.blocks[b].tables[t].count; i++)
					printf("    %s %s (%s)\n", c.blocks[b].tables[t].metrics[i].id,
					       c.blocks[b].tables[t].metrics[i].name,
					       c.blocks[b].tables[t].metrics[i].unit);
			}
		}
		catalog_release(&c);
		return 0;
	}
	if (!paths.count)
		die_with(EXIT_USAGE, "compute analyze: no workload given (-p DIR)");
	if (list_torch == 1 || torch_operator) {
		if (list_torch == 1 && torch_operator)
			die_with(EXIT_USAGE, "compute analyze: --list-torch-operators lists them all: "
					     "it cannot go with --torch-operator");
		catalog_release(&c);
		enum table_format kind = !strcmp(format, "stdout") ? TABLE_TEXT
								   : table_parse_format(format);
		if (torch_ops_print(paths.items[0], torch_operator, kind, stdout, &err))
			die("compute analyze: %s", err.message);
		return 0;
	}
	for (int i = 0; i < blocks.count; i++)
		if (!analyze_known_selection(&c, blocks.items[i]))
			die_with(EXIT_USAGE, "compute analyze: -b %s: no block, table or metric has "
					     "this id or alias (--list-metrics lists them)",
				 blocks.items[i]);
	for (int i = 0; i < dispatches.count; i++) {
		long long from, to;
		if (analyze_parse_dispatch(dispatches.items[i], &from, &to, &err))
			die_with(EXIT_USAGE, "compute analyze: %s", err.message);
	}
	char *end;
	long max = strtol(max_text, &end, 10);
	if (*end || !*max_text || max < 1)
		die_with(EXIT_USAGE, "compute analyze: --max-stat-num: '%s' is not a number from 1",
			 max_text);
	long pc_rows = strtol(pc_rows_text, &end, 10);
	if (*end || !*pc_rows_text || pc_rows < 0 || pc_rows > 1000000000)
		die_with(EXIT_USAGE, "compute analyze: --pc-sampling-rows: '%s' is not a number of "
				     "rows", pc_rows_text);
	int vector, matrix;
	if (roofline_data_type(data_type, &vector, &matrix))
		die_with(EXIT_USAGE, "compute analyze: -R %s: not a data type (FP64, FP32, FP16, "
				     "BF16, FP8, I8, I32)", data_type);
	struct analyze_request r = {
		.catalog = &c, .count = paths.count,
		.blocks = (const char *const *)blocks.items, .block_count = blocks.count,
		.kernels = (const char *const *)kernels.items, .kernel_count = kernels.count,
		.dispatches = (const char *const *)dispatches.items,
		.dispatch_count = dispatches.count,
		.normal = !strcmp(normal, "per_second") ? PER_SECOND
			  : !strcmp(normal, "per_cycle") ? PER_CYCLE
			  : !strcmp(normal, "per_warp") ? PER_WARP : PER_KERNEL,
		.time_scale = !strcmp(time_unit, "s") ? 1e9 : !strcmp(time_unit, "ms") ? 1e6
			      : !strcmp(time_unit, "us") ? 1e3 : 1,
		.time_unit = time_unit, .max_kernels = (int)max,
		.format = !strcmp(format, "stdout") ? TABLE_TEXT : table_parse_format(format),
		.out = stdout, .data_type = data_type, .per_dispatch = !strcmp(sort, "dispatches"),
		.pc_rows = (int)pc_rows, .pc_by_offset = !strcmp(pc_sort, "offset"),
	};
	for (int i = 0; i < levels.count; i++) {
		int level = roofline_level(levels.items[i]);
		if (level < 0)
			die_with(EXIT_USAGE, "compute analyze: -m %s: not a memory level (HBM, L2, "
					     "L1 or vL1D, LDS)", levels.items[i]);
		r.levels[level] = 1;
	}
	r.workloads = xcalloc((size_t)paths.count, sizeof(*r.workloads));
	for (int i = 0; i < paths.count; i++) {
		if (workload_read(paths.items[i], &r.workloads[i], &err))
			die("compute analyze: %s", err.message);
		workload_warn_incomplete("compute analyze", &r.workloads[i]);
		struct strbuf inverted = STRBUF_INIT;
		if (r.workloads[i].roofline && roofline_check_order(r.workloads[i].roofline, &inverted))
			warn("compute analyze: %s/roofline.csv: %s", paths.items[i], inverted.buf);
		strbuf_release(&inverted);
	}
	if (analyze_check_kept(&r, &err))
		die("compute analyze: %s", err.message);
	int rc = explain ? analyze_explain(&r, explain, &err)
		 : list_stats == 1 ? analyze_list_stats(&r, &err) : analyze_print(&r, &err);
	if (rc == 0 && plot && !explain && list_stats != 1)
		rc = analyze_roofline_plot(&r, plot, &err);
	if (rc)
		die_with(explain ? EXIT_USAGE : 1, "compute analyze: %s", err.message);
	for (int i = 0; i < paths.count; i++)
		workload_release(&r.workloads[i]);
	free(r.workloads);
	catalog_release(&c);
	options_release();
	return 0;
}
