/* gpuprof compute: per-kernel hardware counters on NVIDIA GPUs, rocprof-compute's part
 * (DESIGN.md). This version has the metric catalog (compute/catalog.h), its planning
 * through CUPTI's profiler host API, which needs no GPU (which metrics a chip has, how
 * many passes a selection or set takes), and `analyze` of workload directories
 * (compute/analyze.h); collecting the counters of a program is still to come. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "compute/analyze.h"
#include "compute/catalog.h"
#include "compute/host.h"
#include "install.h"
#include "util/error.h"
#include "util/options.h"
#include "util/strbuf.h"

static const char usage[] = "gpuprof compute profile [options] [-- COMMAND [ARGS...]]";
static const char description[] =
	"Per-kernel hardware counters on NVIDIA GPUs through CUPTI, organised like\n"
	"rocprof-compute's analysis blocks (2 Speed-of-Light, 7 launch and occupancy, 10\n"
	"instruction mix, 11 compute pipeline, 12 shared memory, 16 L1/TEX, 17 L2, 18 DRAM,\n"
	"20 warp state). --list-available-metrics prints the catalog: each metric's id,\n"
	"unit, whether the chip has what it needs and its expression, and the passes each\n"
	"block takes, from CUPTI's profiler host API, which needs no GPU (--chip names the\n"
	"chip to plan for). Collecting the counters of a program (CUPTI's range profiler) is\n"
	"not in this version yet.";

struct plan {
	struct host_api *api;
	const char *chip;
	struct strbuf names;   /* the CUPTI metrics of what is selected, one per line */
	int metrics;
};

/* The CUPTI names of a newline-separated list, as an array into out (pointing into text,
 * whose newlines become NULs); returns how many. */
static size_t split_names(char *text, const char ***out)
{
	size_t n = 0;
	for (char *c = text; *c; c++)
		n += *c == '\n';
	const char **names = xcalloc(n ? n : 1, sizeof(*names));
	size_t i = 0;
	for (char *save = NULL, *line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save))
		names[i++] = line;
	*out = names;
	return i;
}

/* The passes `list` (newline-separated) takes on the chip; -1 when one is refused (its
 * name into refused, when given). */
static long passes_of(const struct plan *p, const char *list, struct strbuf *refused)
{
	char *copy = xstrdup(list);
	const char **names;
	size_t n = split_names(copy, &names), passes = 0, bad = 0;
	long rc = 0;
	if (n && p->api->passes(p->chip, names, n, &passes, &bad)) {
		rc = -1;
		if (refused && bad < n)
			strbuf_addstr(refused, names[bad]);
	}
	free(names);
	free(copy);
	return rc ? -1 : (long)passes;
}

/* Adds a metric to the plan: its CUPTI metrics, and one to the count. */
static void plan_add(const struct catalog_metric *m, void *arg)
{
	struct plan *p = arg;
	catalog_cupti_names(m, &p->names);
	p->metrics++;
}

static void print_metric(const struct catalog_metric *m, void *arg)
{
	struct plan *p = arg;
	struct strbuf names = STRBUF_INIT, refused = STRBUF_INIT;
	catalog_cupti_names(m, &names);
	const char *support = "derived";
	if (names.len)
		support = passes_of(p, names.buf, &refused) < 0 ? "no" : "yes";
	printf("    %-8s %-40s %-18s %-7s %s%s%s%s\n", m->id, m->name, m->unit, support,
	       m->expr_text, refused.len ? "  (" : "", refused.buf, refused.len ? " missing)" : "");
	plan_add(m, p);
	strbuf_release(&names);
	strbuf_release(&refused);
}

/* "N CUPTI metrics, P passes" of what p collected, or why not. */
static void describe_passes(const struct plan *p, struct strbuf *out)
{
	size_t cupti = 0;
	for (const char *c = p->names.buf; *c; c++)
		cupti += *c == '\n';
	if (!cupti) {
		strbuf_addstr(out, "no CUPTI metric (all derived)");
		return;
	}
	struct strbuf refused = STRBUF_INIT;
	long passes = passes_of(p, p->names.buf, &refused);
	if (passes < 0)
		strbuf_addf(out, "%zu CUPTI metrics; %s has no %s", cupti, p->chip, refused.buf);
	else
		strbuf_addf(out, "%zu CUPTI metrics, %ld pass%s", cupti, passes,
			    passes == 1 ? "" : "es");
	strbuf_release(&refused);
}

/* Whether the -b selections name metric m (all of them when there is none). */
static int wanted(const struct catalog_block *b, const struct catalog_table *t,
		  const struct catalog_metric *m, const struct option_list *blocks)
{
	int yes = !blocks->count;
	for (int i = 0; i < blocks->count && !yes; i++)
		yes = catalog_matches(b, t, m, blocks->items[i]);
	return yes;
}

/* The catalog, or what -b selects of it: each block with the passes its selected
 * metrics take, then each metric; last, the passes of the whole selection. */
static int list_metrics(const struct catalog *c, const struct option_list *blocks,
			struct host_api *api, const char *chip)
{
	struct plan total = { api, chip, STRBUF_INIT, 0 };
	printf("gpuprof compute: the metric catalog on %s (CUPTI's profiler host API)\n", chip);
	printf("    %-8s %-40s %-18s %-7s %s\n", "id", "metric", "unit", "on chip", "expression");
	for (size_t b = 0; b < c->count; b++) {
		const struct catalog_block *block = &c->blocks[b];
		struct plan p = { api, chip, STRBUF_INIT, 0 };
		for (size_t t = 0; t < block->count; t++)
			for (size_t m = 0; m < block->tables[t].count; m++)
				if (wanted(block, &block->tables[t], &block->tables[t].metrics[m], blocks))
					plan_add(&block->tables[t].metrics[m], &p);
		if (!p.metrics) {
			strbuf_release(&p.names);
			continue;
		}
		struct strbuf passes = STRBUF_INIT;
		describe_passes(&p, &passes);
		printf("%-3d %s (", block->id, block->title);
		for (size_t a = 0; a < block->alias_count; a++)
			printf("%s%s", a ? ", " : "", block->aliases[a]);
		printf("): %s\n", passes.buf);
		strbuf_release(&passes);
		strbuf_release(&p.names);
		for (size_t t = 0; t < block->count; t++) {
			const struct catalog_table *table = &block->tables[t];
			int shown = 0;
			for (size_t m = 0; m < table->count; m++) {
				if (!wanted(block, table, &table->metrics[m], blocks))
					continue;
				if (!shown++)
					printf("  %-6s %s\n", table->id, table->title);
				print_metric(&table->metrics[m], &total);
			}
		}
	}
	struct strbuf passes = STRBUF_INIT;
	describe_passes(&total, &passes);
	printf("selected: %d metrics, %s\n", total.metrics, passes.buf);
	strbuf_release(&passes);
	strbuf_release(&total.names);
	return 0;
}

/* Each metric set with the passes it takes on the chip. */
static int list_sets(const struct catalog *c, struct host_api *api, const char *chip)
{
	printf("gpuprof compute: metric sets on %s (--set NAME)\n", chip);
	for (size_t i = 0; i < c->set_count; i++) {
		const struct catalog_set *s = &c->sets[i];
		struct plan p = { api, chip, STRBUF_INIT, 0 };
		for (size_t k = 0; k < s->select_count; k++)
			catalog_select(c, s->select[k], plan_add, &p);
		struct strbuf passes = STRBUF_INIT;
		describe_passes(&p, &passes);
		printf("%-15s %d metrics, %s: %s\n", s->name, p.metrics, passes.buf, s->description);
		strbuf_release(&passes);
		strbuf_release(&p.names);
	}
	return 0;
}

static int compute_profile(int argc, char **argv)
{
	int help = -1, list = -1, sets = -1;
	const char *chip = NULL, *set = NULL;
	struct option_list blocks = { 0 };
	const struct option table[] = {
		{ OPTION_LIST, 'b', "block", &blocks, "ID",
		  "blocks, tables or metrics to collect: 2, 7.1, 11.2.3, or a block's alias "
		  "(dram, l2, sol...); default: all" },
		{ OPTION_STRING, 0, "set", &set, "NAME",
		  "a metric set instead of -b (--list-sets lists them)" },
		{ OPTION_BOOL, 0, "list-sets", &sets, NULL,
		  "print the metric sets with the passes each takes on the chip" },
		{ OPTION_BOOL, 0, "list-available-metrics", &list, NULL,
		  "print the catalog (what -b selects): each metric, whether the chip has it, "
		  "and the passes of each block" },
		{ OPTION_STRING, 0, "chip", &chip, "NAME",
		  "plan for this chip (GH100, AD102, ...: gpuprof avail lists them) rather than "
		  "the GPU's" },
		{ OPTION_BOOL, 'h', "help", &help, NULL, "show this help" },
		OPTION_END,
	};
	struct error err;
	int next;
	if (options_parse(table, argc, argv, &next, &err))
		die_with(EXIT_USAGE, "compute profile: %s", err.message);
	if (help == 1) {
		options_print_help(stdout, usage, description, table);
		return 0;
	}
	struct strbuf dir = STRBUF_INIT;
	struct catalog c;
	if (install_path("share/gpuprof/catalog", &dir, &err) || catalog_load(dir.buf, &c, &err))
		die("compute: %s", err.message);
	strbuf_release(&dir);
	for (int i = 0; i < blocks.count; i++)
		if (catalog_select(&c, blocks.items[i], NULL, NULL) < 0)
			die_with(EXIT_USAGE, "compute profile: -b %s: no block, table or metric has "
					     "this id or alias (--list-available-metrics lists them)",
				 blocks.items[i]);
	if (set && blocks.count)
		die_with(EXIT_USAGE, "compute profile: --set and -b both select metrics: give one");
	const struct catalog_set *chosen = set ? catalog_set(&c, set) : NULL;
	if (set && !chosen)
		die_with(EXIT_USAGE, "compute profile: --set %s: no such set (--list-sets lists them)",
			 set);
	for (size_t k = 0; chosen && k < chosen->select_count && blocks.count < 32; k++)
		blocks.items[blocks.count++] = xstrdup(chosen->select[k]);
	struct host_api api;
	if (host_load(&api, &err))
		die("compute profile: %s", err.message);
	if (!chip && !(chip = api.device_chip(0)))
		die("compute profile: no NVIDIA GPU here to plan for: name a chip with --chip "
		    "(gpuprof avail lists those CUPTI knows)");
	const char *const *chips;
	size_t chip_count = 0;
	int known = 0;
	if (api.chips(&chips, &chip_count) == 0)
		for (size_t i = 0; i < chip_count; i++)
			known |= !strcmp(chips[i], chip);
	if (!known)
		die_with(EXIT_USAGE, "compute profile: --chip %s: CUPTI knows no such chip "
				     "(gpuprof avail lists them)", chip);
	int rc = 0;
	if (sets == 1)
		rc = list_sets(&c, &api, chip);
	else if (list == 1)
		rc = list_metrics(&c, &blocks, &api, chip);
	else if (next < argc)
		die("compute profile: collecting counters (CUPTI's range profiler) is not in this "
		    "version yet; --list-available-metrics plans them");
	else
		die_with(EXIT_USAGE, "compute profile: nothing to do (usage: %s)", usage);
	catalog_release(&c);
	host_unload(&api);
	options_release();
	return rc;
}

static const char analyze_usage[] = "gpuprof compute analyze -p DIR [-p DIR...] [options]";
static const char analyze_description[] =
	"Evaluates the catalog's metrics over the dispatches of workload directories (what\n"
	"gpuprof compute profile writes: pmc_perf.csv, sysinfo.csv) and prints them as tables\n"
	"per block: 0 the top kernels, 1 system info, then each table of the catalog with each\n"
	"metric's average, minimum and maximum over the dispatches kept, its unit, peak and %\n"
	"of peak, and under block 2 the bottleneck of each kernel. With two or more -p, the\n"
	"first is the baseline and every other's average comes with its change in % and its\n"
	"difference. A value that cannot be had (a counter not collected, a division by zero)\n"
	"is N/A.";

static int compute_analyze(int argc, char **argv)
{
	int help = -1, list_metrics_only = -1, list_stats = -1;
	const char *normal = "per_kernel", *time_unit = "ns", *format = "stdout", *explain = NULL;
	const char *max_text = "10";
	struct option_list paths = { 0 }, blocks = { 0 }, kernels = { 0 }, dispatches = { 0 };
	const struct option table[] = {
		{ OPTION_LIST, 'p', "path", &paths, "DIR",
		  "a workload directory; the first given is the baseline of a comparison" },
		{ OPTION_LIST, 'b', "block", &blocks, "ID",
		  "blocks, tables or metrics to show: 0, 2, 7.1, 11.2.3, or an alias (dram...)" },
		{ OPTION_LIST, 'k', "kernel", &kernels, "SUBSTRING",
		  "only the dispatches of kernels whose name holds one of these" },
		{ OPTION_LIST, 'd', "dispatch", &dispatches, "N|FROM:TO",
		  "only these dispatches (their Dispatch_ID, from 1)" },
		{ OPTION_ENUM, 'n', "normal-unit", &normal, "per_kernel|per_second|per_cycle|per_warp",
		  "counts (bytes, instructions, sectors...) as they are, or per second, cycle or warp" },
		{ OPTION_ENUM, 't', "time-unit", &time_unit, "s|ms|us|ns",
		  "the unit of the top kernels' times (default: ns)" },
		{ OPTION_STRING, 0, "max-stat-num", &max_text, "N",
		  "kernels in the top-kernels and bottleneck tables (default: 10)" },
		{ OPTION_STRING, 'g', "metric", &explain, "ID",
		  "how a metric is computed: its expression, its inputs and the result" },
		{ OPTION_BOOL, 0, "list-metrics", &list_metrics_only, NULL,
		  "list the catalog's metrics and exit" },
		{ OPTION_BOOL, 0, "list-stats", &list_stats, NULL,
		  "list each workload's kernels and their dispatches, and exit" },
		{ OPTION_ENUM, 0, "output-format", &format, "stdout|csv|md|json",
		  "how to print the tables (default: stdout, aligned text)" },
		{ OPTION_BOOL, 'h', "help", &help, NULL, "show this help" },
		OPTION_END,
	};
	struct error err;
	int next;
	if (options_parse(table, argc, argv, &next, &err))
		die_with(EXIT_USAGE, "compute analyze: %s", err.message);
	if (help == 1) {
		options_print_help(stdout, analyze_usage, analyze_description, table);
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
	for (int i = 0; i < blocks.count; i++)
		if (strcmp(blocks.items[i], "0") && strcmp(blocks.items[i], "1") &&
		    catalog_select(&c, blocks.items[i], NULL, NULL) < 0)
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
		.out = stdout,
	};
	r.workloads = xcalloc((size_t)paths.count, sizeof(*r.workloads));
	for (int i = 0; i < paths.count; i++)
		if (workload_read(paths.items[i], &r.workloads[i], &err))
			die("compute analyze: %s", err.message);
	int rc = explain ? analyze_explain(&r, explain, &err)
		 : list_stats == 1 ? analyze_list_stats(&r, &err) : analyze_print(&r, &err);
	if (rc)
		die_with(explain ? EXIT_USAGE : 1, "compute analyze: %s", err.message);
	for (int i = 0; i < paths.count; i++)
		workload_release(&r.workloads[i]);
	free(r.workloads);
	catalog_release(&c);
	options_release();
	return 0;
}

int cmd_compute(int argc, char **argv)
{
	if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		printf("usage: gpuprof compute profile [options] [-- COMMAND]\n"
		       "       %s\n\n%s\n\n%s\n\n"
		       "gpuprof compute profile --help and gpuprof compute analyze --help tell "
		       "their options.\n", analyze_usage, description, analyze_description);
		return argc < 2 ? EXIT_USAGE : 0;
	}
	if (!strcmp(argv[1], "profile"))
		return compute_profile(argc - 1, argv + 1);
	if (!strcmp(argv[1], "analyze"))
		return compute_analyze(argc - 1, argv + 1);
	die_with(EXIT_USAGE, "compute: unknown command '%s' (profile or analyze)", argv[1]);
}
