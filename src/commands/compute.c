/* gpuprof compute: per-kernel hardware counters on NVIDIA GPUs, rocprof-compute's part
 * (DESIGN.md): the metric catalog (compute/catalog.h), its planning through CUPTI's
 * profiler host API, which needs no GPU (which metrics a chip has, how many passes a
 * selection or set takes), `profile -- COMMAND`, which runs the program under
 * `gpuprof trace --pmc` with the catalog's metrics and writes a workload directory from
 * the database, and `analyze` of workload directories (compute/analyze.h). */
#include <dirent.h>
#include <errno.h>
#include <libgen.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "commands/commands.h"
#include "commands/compute.h"
#include "compute/analyze.h"
#include "compute/catalog.h"
#include "compute/host.h"
#include "compute/workload.h"
#include "core/paths.h"
#include "util/error.h"
#include "util/install.h"
#include "util/options.h"
#include "util/strbuf.h"

static const char usage[] = "gpuprof compute profile [options] [-- COMMAND [ARGS...]]";
static const char description[] =
	"Per-kernel hardware counters on NVIDIA GPUs through CUPTI, organised like\n"
	"rocprof-compute's analysis blocks (2 Speed-of-Light, 3 memory chart, 4 roofline,\n"
	"7 launch and occupancy, 10 instruction mix, 11 compute pipeline, 12 shared memory,\n"
	"16 L1/TEX, 17 L2, 18 DRAM, 20 warp state, 22 schedulers; --set full is all of them,\n"
	"Nsight Compute's full set; 21, PC sampling, is a run of its own: --pc-sampling).\n"
	"--list-available-metrics prints the catalog: each\n"
	"metric's id, unit, whether the chip has what it needs and its expression, and the\n"
	"passes each block takes, from CUPTI's profiler host API, which needs no GPU (--chip\n"
	"names the chip to plan for). With a COMMAND, runs it under gpuprof trace --pmc with\n"
	"the metrics selected (CUPTI's range profiler: each kernel kept is replayed once per\n"
	"pass, and kernels run one at a time; --replay application runs the program once per\n"
	"group of metrics that takes one pass instead) and writes the workload directory that\n"
	"gpuprof compute analyze reads: pmc_perf.csv, sysinfo.csv, profiling_config.yaml,\n"
	"log.txt, the database under trace/ and, unless --no-roof, the GPU's roofline.csv and\n"
	"roofline.html (gpuprof roofline --backend cuda).";

/* Whether dir holds anything. */
static int directory_used(const char *dir)
{
	DIR *d = opendir(dir);
	if (!d)
		return 0;
	struct dirent *e;
	int used = 0;
	while (!used && (e = readdir(d)))
		used = strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	closedir(d);
	return used;
}

/* Removes what an earlier profile wrote in dir (its files and trace/'s databases). */
static void remove_workload(const char *dir)
{
	struct strbuf path = STRBUF_INIT;
	for (size_t i = 0; compute_workload_files[i]; i++) {
		strbuf_reset(&path);
		strbuf_addf(&path, "%s/%s", dir, compute_workload_files[i]);
		unlink(path.buf);
	}
	strbuf_reset(&path);
	strbuf_addf(&path, "%s/trace", dir);
	DIR *d = opendir(path.buf);
	struct dirent *e;
	while (d && (e = readdir(d))) {
		size_t n = strlen(e->d_name);
		if (n > 3 && !strcmp(e->d_name + n - 3, ".db")) {
			struct strbuf file = STRBUF_INIT;
			strbuf_addf(&file, "%s/%s", path.buf, e->d_name);
			unlink(file.buf);
			strbuf_release(&file);
		}
	}
	if (d)
		closedir(d);
	rmdir(path.buf);
	strbuf_release(&path);
}

/* The kernel filters of trace for -k and -d: substrings as one regular expression,
 * dispatches (1-based iterations, N or FROM:TO) as an iteration range. */
static int profile_filters(const struct profile_run *p, struct strbuf *include,
			   struct strbuf *iterations, struct error *err)
{
	for (int i = 0; i < p->kernels->count; i++) {
		strbuf_addstr(include, i ? "|" : "(");
		for (const char *c = p->kernels->items[i]; *c; c++) {
			if (strchr("\\^$.|?*+()[]{}", *c))
				strbuf_addch(include, '\\');
			strbuf_addch(include, *c);
		}
	}
	if (include->len)
		strbuf_addch(include, ')');
	for (int i = 0; i < p->dispatches->count; i++) {
		long long from, to;
		if (analyze_parse_dispatch(p->dispatches->items[i], &from, &to, err))
			return -1;
		strbuf_addf(iterations, "%s", i ? "," : "[");
		if (from == to)
			strbuf_addf(iterations, "%lld", from);
		else
			strbuf_addf(iterations, "[%lld-%lld]", from, to);
	}
	if (iterations->len)
		strbuf_addch(iterations, ']');
	return 0;
}

/* A YAML scalar, quoted. */
static void yaml_text(FILE *out, const char *text)
{
	fputc('"', out);
	for (const char *c = text; *c; c++) {
		if (*c == '"' || *c == '\\')
			fputc('\\', out);
		fputc(*c, out);
	}
	fputc('"', out);
}

static void write_config(const struct profile_run *p, const char *dir, const char *include,
			 const char *iterations, const char *selection)
{
	struct strbuf path = STRBUF_INIT;
	strbuf_addf(&path, "%s/profiling_config.yaml", dir);
	FILE *out = fopen(path.buf, "w");
	strbuf_release(&path);
	if (!out)
		return;
	fprintf(out, "# gpuprof compute profile: the options as resolved for this run\n"
		     "gpuprof_version: \"%s\"\nname: ", GPUPROF_VERSION);
	yaml_text(out, p->name);
	fprintf(out, "\nchip: %s\nreplay: %s\npasses: %zu\nruns: %ld\n", p->chip,
		p->groups ? "application" : p->multiplex ? "none" : "kernel", p->passes, p->runs);
	if (p->multiplex)
		fprintf(out, "iteration_multiplexing: %s\nmultiplex_groups: %ld\n", p->multiplex,
			p->multiplex_groups);
	if (p->pc_unit)
		fprintf(out, "pc_sampling_method: %s\npc_sampling_unit: %s\n"
			     "pc_sampling_interval: %s\n", p->pc_method, p->pc_unit, p->pc_interval);
	fprintf(out, "selection: ");
	yaml_text(out, selection);
	fprintf(out, "\nkernel_include_regex: ");
	yaml_text(out, include);
	fprintf(out, "\nkernel_iteration_range: ");
	yaml_text(out, iterations);
	fprintf(out, "\nmetrics:\n");
	for (size_t i = 0; i < p->metric_count; i++)
		fprintf(out, "  - %s\n", p->metrics[i]);
	if (p->groups) {
		fprintf(out, "run_metrics:\n");
		for (long r = 0; r < p->runs; r++) {
			struct strbuf run = STRBUF_INIT;
			compute_join_lines(p->groups[r].buf, ", ", &run);
			fprintf(out, "  - [%s]\n", run.buf);
			strbuf_release(&run);
		}
	}
	fprintf(out, "command:\n");
	for (char **c = p->command; *c; c++) {
		fprintf(out, "  - ");
		yaml_text(out, *c);
		fputc('\n', out);
	}
	fclose(out);
}

/* The workload's directory, from --output-directory or the default, made and checked
 * empty (or emptied of a workload under --overwrite); dies with the reason otherwise. */
static void workload_directory(const struct profile_run *p, struct strbuf *dir)
{
	struct error err;
	struct strbuf template = STRBUF_INIT;
	if (p->directory) {
		strbuf_addstr(&template, p->directory);
	} else {
		int rank, size;
		path_launcher_rank(&rank, &size);
		strbuf_addf(&template, "workloads/%s/%%gpumodel%%%s", p->name,
			    rank >= 0 ? "/%rank%" : "");
	}
	for (char *at; (at = strstr(template.buf, "%gpumodel%"));) {
		struct strbuf next = STRBUF_INIT;
		strbuf_add(&next, template.buf, (size_t)(at - template.buf));
		strbuf_addf(&next, "%s%s", p->chip, at + strlen("%gpumodel%"));
		strbuf_release(&template);
		template = next;
	}
	struct path_context ctx;
	path_context_current(&ctx);
	if (path_expand(template.buf, &ctx, dir, &err))
		die_with(EXIT_USAGE, "compute profile: --output-directory: %s", err.message);
	strbuf_release(&template);
	if (directory_used(dir->buf)) {
		if (!p->overwrite)
			die_with(EXIT_USAGE, "compute profile: '%s' is not empty: give --overwrite to "
					     "replace the workload there, or another -n or "
					     "--output-directory", dir->buf);
		remove_workload(dir->buf);
	}
	if (path_make_parents(dir->buf, 0, &err))
		die("compute profile: %s", err.message);
}

/* Iteration multiplexing: the kernels of the workload in dir measured too few times for
 * every group, said in one warning. */
static void warn_incomplete(const char *dir)
{
	struct workload w;
	struct error err;
	if (workload_read(dir, &w, &err)) {
		warn("compute profile: %s", err.message);
		return;
	}
	workload_warn_incomplete("compute profile", &w);
	workload_release(&w);
}

/* compute profile -- COMMAND: the directory chosen and checked, the program run under
 * trace --pmc, the workload written. Returns the program's exit status. */
static int profile_command(struct profile_run *p, const char *selection)
{
	struct error err;
	struct strbuf dir = STRBUF_INIT;
	workload_directory(p, &dir);
	struct strbuf include = STRBUF_INIT, iterations = STRBUF_INIT, trace_dir = STRBUF_INIT;
	if (profile_filters(p, &include, &iterations, &err))
		die_with(EXIT_USAGE, "compute profile: %s", err.message);
	strbuf_addf(&trace_dir, "%s/trace", dir.buf);
	write_config(p, dir.buf, include.buf, iterations.buf, selection);
	struct strbuf plan = STRBUF_INIT;
	if (p->groups)
		strbuf_addf(&plan, "%zu CUPTI metrics, %ld run%s of the program (application "
				   "replay: one pass each)", p->metric_count, p->runs,
			    p->runs == 1 ? "" : "s");
	else if (p->multiplex)
		strbuf_addf(&plan, "%zu CUPTI metrics in %ld group%s of one pass, one group per "
				   "dispatch of each kernel (iteration multiplexing by %s; a kernel "
				   "dispatched fewer than %ld times gets no metrics)",
			    p->metric_count, p->multiplex_groups, p->multiplex_groups == 1 ? "" : "s",
			    strcmp(p->multiplex, "kernel") ? "name and launch size" : "name",
			    p->multiplex_groups);
	else
		strbuf_addf(&plan, "%zu CUPTI metrics, %zu pass%s (kernel replay)",
			    p->metric_count, p->passes, p->passes == 1 ? "" : "es");
	if (!p->quiet)
		fprintf(stderr, "gpuprof: compute profile: %s on %s, into %s\n", plan.buf, p->chip,
			dir.buf);
	struct strbuf db = STRBUF_INIT, log = STRBUF_INIT;
	int code;
	size_t dispatches = 0;
	int failed = compute_collect(p, trace_dir.buf, include.buf, iterations.buf, &db, &code, &err) ||
		     compute_write_workload(dir.buf, db.buf, &dispatches, &err);
	size_t torch_rows = 0, inside = 0, all = 0;
	int torch_failed = !failed && p->torch
			   ? compute_write_torch(dir.buf, db.buf, &torch_rows, &inside, &all, &err)
			   : 0;
	if (torch_failed)
		warn("compute profile: no torch_trace/consolidated.csv: %s", err.message);
	else if (!failed && p->torch && !p->quiet)
		fprintf(stderr, "gpuprof: compute profile: %zu of %zu dispatches ran inside a "
				"PyTorch operator (torch_trace/consolidated.csv: %zu rows)\n", inside,
			all, torch_rows);
	size_t pc_rows = 0;
	int pc_failed = !failed && code == 0 && p->pc_unit ?
			compute_sample_pcs(p, dir.buf, trace_dir.buf, include.buf, &pc_rows) : 0;
	strbuf_addf(&log, "%s/log.txt", dir.buf);
	FILE *out = fopen(log.buf, "w");
	if (out) {
		fprintf(out, "gpuprof %s compute profile\nchip: %s\nmetrics: %s\n"
			     "program exit status: %d\n", GPUPROF_VERSION, p->chip, plan.buf, code);
		if (failed)
			fprintf(out, "no workload written: %s\n", err.message);
		else
			fprintf(out, "dispatches: %zu (pmc_perf.csv); database: %s\n", dispatches,
				db.buf);
		if (p->pc_unit && !failed)
			fprintf(out, pc_failed ? "PC sampling: failed (see the warnings)\n"
					       : "PC sampling: %zu rows (pc_sampling.csv)\n", pc_rows);
		fclose(out);
	}
	if (failed)
		warn("compute profile: %s", err.message);
	else if (p->multiplex)
		warn_incomplete(dir.buf);
	int roofline = !failed && p->roofline ? compute_run_roofline(dir.buf, p->quiet) : 0;
	if (roofline)
		warn("compute profile: no roofline.csv in %s: the roofline measurement failed (exit "
		     "status %d; gpuprof roofline --backend cuda -o %s measures it again)", dir.buf,
		     roofline, dir.buf);
	if (!failed && !p->quiet)
		fprintf(stderr, "gpuprof: compute profile: %zu dispatches in %s (gpuprof compute "
				"analyze -p %s)\n", dispatches, dir.buf, dir.buf);
	strbuf_release(&plan);
	strbuf_release(&db);
	strbuf_release(&log);
	strbuf_release(&include);
	strbuf_release(&iterations);
	strbuf_release(&trace_dir);
	strbuf_release(&dir);
	return code == 0 && (failed || pc_failed) ? EXIT_FAILED : code;
}

/* compute profile --bench-only: the GPU's roofline into a workload directory, no program
 * run. Returns 0, or EXIT_FAILED when the measurement failed. */
static int bench_only(struct profile_run *p)
{
	struct strbuf dir = STRBUF_INIT;
	workload_directory(p, &dir);
	int status = compute_run_roofline(dir.buf, p->quiet);
	if (status)
		warn("compute profile: --bench-only: the roofline measurement failed (exit status "
		     "%d)", status);
	else if (!p->quiet)
		fprintf(stderr, "gpuprof: compute profile: the roofline in %s (gpuprof compute "
				"analyze -p %s -b 4 places a workload's kernels on it)\n", dir.buf,
			dir.buf);
	strbuf_release(&dir);
	return status ? EXIT_FAILED : 0;
}

static int compute_profile(int argc, char **argv)
{
	int help = -1, list = -1, sets = -1, overwrite = -1, quiet = -1, no_roof = -1;
	int roof_only = -1, bench = -1, pc_sampling = -1, experimental = -1, retain = -1;
	int no_native = -1, torch_trace = -1;
	const char *chip = NULL, *set = NULL, *name = NULL, *directory = NULL;
	const char *pc_method = NULL, *pc_interval = NULL, *rocprof_format = NULL;
	const char *path = NULL, *subpath = NULL, *attach = NULL;
	const char *replay = "kernel", *multiplex = NULL;
	struct option_list blocks = { 0 }, kernels = { 0 }, dispatches = { 0 };
	const struct option table[] = {
		{ OPTION_LIST, 'b', "block", &blocks, "ID",
		  "blocks, tables or metrics to collect: 2, 7.1, 11.2.3, or a block's alias "
		  "(dram, l2, sol...); default: all" },
		{ OPTION_STRING, 0, "set", &set, "NAME",
		  "a metric set instead of -b (--list-sets lists them; rocprof-compute's names "
		  "stand for the nearest)" },
		{ OPTION_BOOL, 0, "list-sets", &sets, NULL,
		  "print the metric sets with the passes each takes on the chip" },
		{ OPTION_BOOL, 0, "list-available-metrics", &list, NULL,
		  "print the catalog (what -b selects): each metric, whether the chip has it, "
		  "and the passes of each block" },
		{ OPTION_STRING, 0, "chip", &chip, "NAME",
		  "plan for this chip (GH100, AD102, ...: gpuprof avail lists them) rather than "
		  "the GPU's (listings only)" },
		{ OPTION_LIST, 'k', "kernel", &kernels, "SUBSTRING",
		  "measure only kernels whose name holds one of these (others run unmeasured)" },
		{ OPTION_LIST, 'd', "dispatch", &dispatches, "N|FROM:TO",
		  "measure only these dispatches of each kernel kept, from 1: 1 3:5" },
		{ OPTION_ENUM, 0, "replay", &replay, "kernel|application",
		  "how passes are made: kernel (CUPTI replays each kernel, saving and restoring "
		  "its memory; the default) or application (the program is run once per group "
		  "of metrics that takes one pass, for kernels that cannot be replayed; the runs "
		  "must launch the same kernels in the same order)" },
		{ OPTION_ENUM, 0, "iteration-multiplexing", &multiplex,
		  "kernel|kernel_launch_params",
		  "no replay: the metrics in groups of one pass, the successive dispatches of a "
		  "kernel (by name, or by name and launch size) each collecting the next group; "
		  "analyze completes each dispatch with its kernel's means; a kernel dispatched "
		  "fewer times than there are groups gets no metrics (alone: "
		  "kernel_launch_params, as rocprof-compute)", "kernel_launch_params" },
		{ OPTION_STRING, 'n', "name", &name, "NAME",
		  "the workload's name (default: the command's file name)" },
		{ OPTION_STRING, 0, "output-directory", &directory, "DIR",
		  "where the workload goes (default: workloads/NAME/%gpumodel%, /%rank% added "
		  "under a parallel launcher); placeholders %hostname% %gpumodel% (the chip) "
		  "%rank% %env{NAME}%" },
		{ OPTION_BOOL, 0, "overwrite", &overwrite, NULL,
		  "replace the workload in a directory that is not empty" },
		{ OPTION_BOOL, 'q', "quiet", &quiet, NULL, "say nothing but errors and warnings" },
		{ OPTION_BOOL, 0, "no-roof", &no_roof, NULL,
		  "no roofline measurement (by default the GPU's ceilings are measured, or taken "
		  "from gpuprof roofline's cache, into the workload's roofline.csv)" },
		{ OPTION_BOOL, 0, "roof-only", &roof_only, NULL,
		  "only the roofline: block 4's counters and the GPU's ceilings" },
		{ OPTION_BOOL, 0, "torch-trace", &torch_trace, NULL,
		  "PyTorch's operator mapping: the program run under gpuprof trace --torch-trace, "
		  "each kernel and its counters attributed to the operator that launched it "
		  "(nn.Module.Net.forward/nn.Module.Linear.forward, module path Net.fc1), into "
		  "torch_trace/consolidated.csv (compute analyze --list-torch-operators, "
		  "--torch-operator)" },
		{ OPTION_BOOL, 0, "pc-sampling", &pc_sampling, NULL,
		  "block 21: one more run with PC sampling (gpuprof trace "
		  "--pc-sampling-beta-enabled), into pc_sampling.csv: each instruction's samples "
		  "and stall reasons (-b 21 asks for it too)" },
		{ OPTION_ENUM, 0, "pc-sampling-method", &pc_method, "stochastic|host_trap",
		  "stochastic (the default): interval in cycles; host_trap: in microseconds; both "
		  "use the GPU's hardware sampler" },
		{ OPTION_STRING, 0, "pc-sampling-interval", &pc_interval, "N",
		  "between two samples of an SM: a power of two of cycles from 32 (default "
		  "1048576), or microseconds with host_trap (default 512)" },
		{ OPTION_BOOL, 0, "bench-only", &bench, NULL,
		  "only the GPU's ceilings (gpuprof roofline) into a workload directory named by "
		  "-n (default: roofline): no program is run, no counters collected" },
		{ OPTION_SECTION, .help = "rocprof-compute's options, mapped" },
		{ OPTION_BOOL, 0, "experimental", &experimental, NULL,
		  "accepted: gpuprof's features need no gate" },
		{ OPTION_ENUM, 0, "format-rocprof-output", &rocprof_format, "csv|rocpd",
		  "the underlying tool's output: gpuprof writes pmc_perf.csv and keeps the "
		  "database (its rocpd) under trace/ either way" },
		{ OPTION_BOOL, 0, "retain-rocpd-output", &retain, NULL,
		  "keep the database: gpuprof always keeps it, under trace/" },
		{ OPTION_BOOL, 0, "no-native-tool", &no_native, NULL,
		  "rocprof-compute's other counter collection tool: gpuprof has one (CUPTI)" },
		{ OPTION_STRING, 'p', "path", &path, "DIR",
		  "deprecated, as in rocprof-compute: the workload goes to DIR/<gpu model> (use "
		  "--output-directory)" },
		{ OPTION_ENUM, 0, "subpath", &subpath, "gpu_model|node_name",
		  "deprecated with --path: DIR/<gpu model> (the default) or DIR/<host name>" },
		{ OPTION_STRING, 0, "attach-pid", &attach, "PID",
		  "refused: CUPTI starts with the program, gpuprof cannot attach to one running" },
		{ OPTION_BOOL, 'h', "help", &help, NULL, "show this help" },
		OPTION_END,
	};
	struct error err;
	int next;
	if (options_parse(table, argc, argv, &next, &err))
		die_with(EXIT_USAGE, "compute profile: %s", err.message);
	if (attach)
		die_with(EXIT_USAGE, "compute profile: --attach-pid %s: gpuprof cannot attach to a "
				     "running process (the CUDA driver loads CUPTI through its "
				     "injection hook as the program starts): run the program under "
				     "gpuprof compute profile -- COMMAND; of a running process, gpuprof "
				     "sys --pid %s samples the call stacks and metrics, and gpuprof dump "
				     "--pid %s shows where each thread is", attach, attach, attach);
	if (rocprof_format || retain == 1 || no_native == 1)
		fprintf(stderr, "gpuprof: compute profile: %s: gpuprof writes pmc_perf.csv and keeps "
				"the database under trace/ with its one counter collection (CUPTI); "
				"nothing changes\n", rocprof_format ? "--format-rocprof-output"
				: retain == 1 ? "--retain-rocpd-output" : "--no-native-tool");
	if (no_native == 1 && multiplex)
		die_with(EXIT_USAGE, "compute profile: --no-native-tool cannot go with "
				     "--iteration-multiplexing (as in rocprof-compute)");
	if (subpath && !path)
		die_with(EXIT_USAGE, "compute profile: --subpath names the directory under --path: "
				     "give --path (or use --output-directory)");
	struct strbuf path_directory = STRBUF_INIT;
	if (path) {
		if (directory)
			die_with(EXIT_USAGE, "compute profile: --path and --output-directory both "
					     "name the workload's directory: give --output-directory");
		warn("compute profile: --path is deprecated (as in rocprof-compute): the workload "
		     "goes to %s/%s; use --output-directory", path,
		     subpath && !strcmp(subpath, "node_name") ? "%hostname%" : "%gpumodel%");
		strbuf_addf(&path_directory, "%s/%s", path,
			    subpath && !strcmp(subpath, "node_name") ? "%hostname%" : "%gpumodel%");
		directory = path_directory.buf;
	}
	if (help == 1) {
		options_print_help(stdout, usage, description, table);
		return 0;
	}
	struct strbuf dir = STRBUF_INIT;
	struct catalog c;
	if (install_path("share/gpuprof/catalog", &dir, &err) || catalog_load(dir.buf, &c, &err))
		die("compute: %s", err.message);
	strbuf_release(&dir);
	/* block 21, PC sampling, is a run of its own: what -b names of it turns it on */
	for (int i = 0; i < blocks.count; i++)
		if (!strcmp(blocks.items[i], "21") || !strcmp(blocks.items[i], "21.1")) {
			pc_sampling = 1;
			blocks.items[i] = xstrdup("7.2"); /* and one cheap pass of counters (the
							   * parser's copy is freed with the rest) */
		}
	if (pc_sampling != 1 && (pc_method || pc_interval))
		die_with(EXIT_USAGE, "compute profile: --pc-sampling-method and -interval set how "
				     "block 21 samples: add --pc-sampling or -b 21");
	const char *pc_unit = NULL;
	if (pc_sampling == 1) {
		if (!pc_method)
			pc_method = "stochastic";
		pc_unit = !strcmp(pc_method, "host_trap") ? "time" : "cycles";
		if (!pc_interval)
			pc_interval = !strcmp(pc_method, "host_trap") ? "512" : "1048576";
		char *end;
		double v = strtod(pc_interval, &end);
		int power = v >= 32 && v <= 2147483648.0 && v == (double)(1ull << (int)log2(v));
		if (*end || !*pc_interval || !(v > 0) || (!strcmp(pc_unit, "cycles") && !power))
			die_with(EXIT_USAGE, "compute profile: --pc-sampling-interval %s: %s",
				 pc_interval, strcmp(pc_unit, "cycles") ? "not a positive number of "
				 "microseconds" : "not a power of two of cycles from 32 to 2147483648");
	}
	/* analyze's own tables (2.2, 4.3...) collect what they are made of */
	const int room = (int)(sizeof(blocks.items) / sizeof(blocks.items[0]));
	for (int i = 0, count = blocks.count; i < count; i++) {
		const char *reads = analyze_table_reads(blocks.items[i]);
		if (!reads)
			continue;
		char *copy = xstrdup(reads), *save = NULL;
		blocks.items[i] = NULL; /* the option parser's copy, freed with the others */
		for (char *one = strtok_r(copy, ",", &save); one; one = strtok_r(NULL, ",", &save))
			if (!blocks.items[i])
				blocks.items[i] = xstrdup(one);
			else if (blocks.count < room)
				blocks.items[blocks.count++] = xstrdup(one);
		free(copy);
		if (!blocks.items[i]) /* made of nothing collected (1.1, the system) */
			blocks.items[i] = xstrdup("7.2"); /* one cheap pass of counters */
	}
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
	struct strbuf note = STRBUF_INIT;
	if (chosen && catalog_set_note(chosen, set, &note))
		fprintf(stderr, "gpuprof: compute profile: --set %s\n", note.buf);
	strbuf_release(&note);
	for (size_t k = 0; chosen && k < chosen->select_count && blocks.count < room; k++)
		blocks.items[blocks.count++] = xstrdup(chosen->select[k]);
	if (roof_only == 1 && no_roof == 1)
		die_with(EXIT_USAGE, "compute profile: --roof-only and --no-roof cannot go together");
	if (roof_only == 1 && blocks.count)
		die_with(EXIT_USAGE, "compute profile: --roof-only collects block 4: it takes no -b "
				     "or --set");
	if (roof_only == 1)
		blocks.items[blocks.count++] = xstrdup("4");
	if (bench == 1 && (roof_only == 1 || no_roof == 1 || blocks.count || kernels.count ||
			   pc_sampling == 1 ||
			   dispatches.count || strcmp(replay, "kernel") || multiplex || sets == 1 ||
			   list == 1 || next < argc))
		die_with(EXIT_USAGE, "compute profile: --bench-only measures the GPU's ceilings "
				     "alone: it takes no COMMAND and no -b, --set, -k, -d, --replay, "
				     "--iteration-multiplexing, --roof-only, --no-roof, --pc-sampling or "
				     "listing");
	if (multiplex && strcmp(replay, "kernel"))
		die_with(EXIT_USAGE, "compute profile: --iteration-multiplexing replays nothing: it "
				     "cannot go with --replay %s", replay);
	int collecting = sets != 1 && list != 1 && next < argc;
	if ((collecting || bench == 1) && chip)
		die_with(EXIT_USAGE, "compute profile: --chip plans listings; a collection is on "
				     "this machine's GPU");
	struct host_api api;
	if (host_load(&api, &err))
		die("compute profile: %s", err.message);
	if ((collecting || bench == 1) && !(chip = api.device_chip(0)))
		die("compute profile: no NVIDIA GPU is usable here: counters need one (no driver, no "
		    "GPU, or one hidden by CUDA_VISIBLE_DEVICES); --chip plans a listing without");
	if (!chip && !(chip = api.device_chip(0)))
		die("compute profile: no NVIDIA GPU here to plan for: name a chip with --chip "
		    "(gpuprof avail lists those CUPTI knows)");
	const char *const *chips;
	size_t chip_count = 0;
	int known = 0;
	if (api.chips(&chips, &chip_count) == 0)
		for (size_t i = 0; i < chip_count && !known; i++)
			if (!strcasecmp(chips[i], chip)) { /* gh100 is GH100 */
				chip = chips[i];
				known = 1;
			}
	if (!known)
		die_with(EXIT_USAGE, "compute profile: --chip %s: CUPTI knows no such chip "
				     "(gpuprof avail lists them)", chip);
	int rc = 0;
	if (bench == 1) {
		struct profile_run run = {
			.name = name ? name : "roofline", .directory = directory, .chip = chip,
			.overwrite = overwrite == 1, .quiet = quiet == 1,
		};
		if (!*run.name || strchr(run.name, '/'))
			die_with(EXIT_USAGE, "compute profile: -n: '%s' is not a workload name",
				 run.name);
		rc = bench_only(&run);
	} else if (sets == 1) {
		rc = compute_list_sets(&c, &api, chip);
	} else if (list == 1) {
		rc = compute_list_metrics(&c, &blocks, &api, chip);
	} else if (next < argc) {
		/* the CUPTI metrics of the selection, each once */
		struct compute_plan p = { &api, chip, STRBUF_INIT, 0 };
		for (size_t b = 0; b < c.count; b++)
			compute_plan_block(&c.blocks[b], &blocks, &p);
		const char **names;
		size_t n = host_split_names(p.names.buf, &names), unique = 0;
		for (size_t i = 0; i < n; i++) {
			size_t j = 0;
			while (j < unique && strcmp(names[j], names[i]))
				j++;
			if (j == unique)
				names[unique++] = names[i];
		}
		if (!unique)
			die_with(EXIT_USAGE, "compute profile: what -b selects is all derived from "
					     "the kernel records: no counter to collect");
		struct profile_run run = {
			.name = name, .directory = directory, .kernels = &kernels,
			.dispatches = &dispatches, .overwrite = overwrite == 1, .quiet = quiet == 1,
			.roofline = no_roof != 1,
			.metrics = names, .metric_count = unique, .command = argv + next,
			.pc_unit = pc_unit, .pc_interval = pc_interval, .pc_method = pc_method,
			.torch = torch_trace == 1,
		};
		if (!run.name) {
			char *copy = xstrdup(argv[next]);
			run.name = xstrdup(basename(copy));
			free(copy);
		}
		if (!*run.name || strchr(run.name, '/'))
			die_with(EXIT_USAGE, "compute profile: -n: '%s' is not a workload name",
				 run.name);
		if (host_plan_device(&api, names, unique, &run.chip, &run.passes, &err))
			die("compute profile: %s", err.message);
		run.runs = 1;
		if (!strcmp(replay, "application") || multiplex) {
			struct strbuf wanted_names = STRBUF_INIT, why = STRBUF_INIT;
			for (size_t i = 0; i < unique; i++)
				strbuf_addf(&wanted_names, "%s\n", names[i]);
			struct strbuf *groups = NULL;
			long count = host_plan_groups(p.api, run.chip, wanted_names.buf, &groups, &why);
			if (count < 0)
				die_with(EXIT_USAGE, "compute profile: %s: %s (%s collects one pass): "
						     "leave it out with -b, or use --replay kernel",
					 multiplex ? "--iteration-multiplexing" : "--replay application",
					 why.buf, multiplex ? "a dispatch" : "a run");
			if (multiplex) {
				run.multiplex = multiplex;
				run.multiplex_groups = count;
				host_release_groups(groups, count);
			} else {
				run.groups = groups;
				run.runs = count;
			}
			strbuf_release(&wanted_names);
			strbuf_release(&why);
		}
		struct strbuf selection = STRBUF_INIT;
		for (int i = 0; i < blocks.count; i++)
			strbuf_addf(&selection, "%s%s", i ? " " : "", blocks.items[i]);
		rc = profile_command(&run, selection.len ? selection.buf : "all");
		if (run.groups)
			host_release_groups(run.groups, run.runs);
		strbuf_release(&selection);
		free(names);
		strbuf_release(&p.names);
	} else {
		die_with(EXIT_USAGE, "compute profile: nothing to do (usage: %s)", usage);
	}
	catalog_release(&c);
	host_unload(&api);
	options_release();
	return rc;
}

int cmd_compute(int argc, char **argv)
{
	/* rocprof-compute's gate of its experimental features, before the mode: gpuprof's
	 * features need none (profile and analyze take it too) */
	while (argc >= 2 && !strcmp(argv[1], "--experimental")) {
		argv[1] = argv[0];
		argc--;
		argv++;
	}
	if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		printf("usage: gpuprof compute profile [options] [-- COMMAND]\n"
		       "       %s\n\n%s\n\n%s\n\n"
		       "gpuprof compute profile --help and gpuprof compute analyze --help tell "
		       "their options.\n", compute_analyze_usage, description, compute_analyze_description);
		return argc < 2 ? EXIT_USAGE : 0;
	}
	if (!strcmp(argv[1], "profile"))
		return compute_profile(argc - 1, argv + 1);
	if (!strcmp(argv[1], "analyze"))
		return compute_analyze(argc - 1, argv + 1);
	die_with(EXIT_USAGE, "compute: unknown command '%s' (profile or analyze)", argv[1]);
}
