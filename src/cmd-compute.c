/* gpuprof compute: per-kernel hardware counters on NVIDIA GPUs, rocprof-compute's part
 * (DESIGN.md): the metric catalog (compute/catalog.h), its planning through CUPTI's
 * profiler host API, which needs no GPU (which metrics a chip has, how many passes a
 * selection or set takes), `profile -- COMMAND`, which runs the program under
 * `gpuprof trace --pmc` with the catalog's metrics and writes a workload directory from
 * the database, and `analyze` of workload directories (compute/analyze.h). */
#include <dirent.h>
#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cmd-compute.h"
#include "commands.h"
#include "compute/analyze.h"
#include "compute/catalog.h"
#include "compute/host.h"
#include "compute/workload.h"
#include "core/paths.h"
#include "install.h"
#include "store/store.h"
#include "util/error.h"
#include "util/options.h"
#include "util/strbuf.h"

static const char usage[] = "gpuprof compute profile [options] [-- COMMAND [ARGS...]]";
static const char description[] =
	"Per-kernel hardware counters on NVIDIA GPUs through CUPTI, organised like\n"
	"rocprof-compute's analysis blocks (2 Speed-of-Light, 3 memory chart, 4 roofline,\n"
	"7 launch and occupancy, 10 instruction mix, 11 compute pipeline, 12 shared memory,\n"
	"16 L1/TEX, 17 L2, 18 DRAM, 20 warp state, 21 schedulers; --set full is all of them,\n"
	"Nsight Compute's full set). --list-available-metrics prints the catalog: each\n"
	"metric's id, unit, whether the chip has what it needs and its expression, and the\n"
	"passes each block takes, from CUPTI's profiler host API, which needs no GPU (--chip\n"
	"names the chip to plan for). With a COMMAND, runs it under gpuprof trace --pmc with\n"
	"the metrics selected (CUPTI's range profiler: each kernel kept is replayed once per\n"
	"pass, and kernels run one at a time; --replay application runs the program once per\n"
	"group of metrics that takes one pass instead) and writes the workload directory that\n"
	"gpuprof compute analyze reads: pmc_perf.csv, sysinfo.csv, profiling_config.yaml,\n"
	"log.txt, the database under trace/ and, unless --no-roof, the GPU's roofline.csv and\n"
	"roofline.html (gpuprof roofline --backend cuda).";

/* The lines of a newline-separated list (a group's metrics), joined by sep into out. */
static void join_lines(const char *list, const char *sep, struct strbuf *out)
{
	for (const char *c = list; *c; c++)
		if (*c != '\n')
			strbuf_addch(out, *c);
		else if (c[1])
			strbuf_addstr(out, sep);
}

/* What `compute profile -- COMMAND` was asked for. */
struct profile_run {
	const char *name, *directory, *chip;
	struct option_list *kernels, *dispatches;
	int overwrite, quiet, roofline; /* roofline: measure the GPU's into the workload */
	const char **metrics;
	size_t metric_count, passes;
	struct strbuf *groups; /* application replay: the metrics of each run; else NULL */
	long runs;             /* 1 with kernel replay */
	const char *multiplex; /* iteration multiplexing: kernel or kernel_launch_params */
	long multiplex_groups; /* its groups of one pass */
	char **command;
};

/* The files a workload directory holds; --overwrite removes these, and only these. */
static const char *const workload_files[] = { "pmc_perf.csv", "sysinfo.csv",
					      "profiling_config.yaml", "log.txt", "roofline.csv",
					      "roofline.html" };

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
	for (size_t i = 0; i < sizeof(workload_files) / sizeof(workload_files[0]); i++) {
		strbuf_reset(&path);
		strbuf_addf(&path, "%s/%s", dir, workload_files[i]);
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

/* Runs argv (argv[0] a path) and waits for it: its exit status, 128 + the signal that
 * ended it, or -1 when it could not start. */
static int run_child(const char *const *argv)
{
	fflush(NULL);
	pid_t child = fork();
	if (child == 0) {
		execv(argv[0], (char **)argv);
		_exit(127);
	}
	int status = 0;
	while (child > 0 && waitpid(child, &status, 0) < 0 && errno == EINTR)
		;
	if (child < 0)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* Runs `gpuprof trace --pmc` on the command for the metrics of run (newline-separated
 * in application replay; all of them otherwise); returns its exit status (the
 * program's), or -1 when it could not run. */
static int run_trace(const struct profile_run *p, long run, const char *trace_dir,
		     const char *include, const char *iterations)
{
	struct strbuf self = STRBUF_INIT, metrics = STRBUF_INIT;
	struct error err;
	if (install_path("bin/gpuprof", &self, &err)) {
		warn("compute profile: %s", err.message);
		return -1;
	}
	if (p->groups) {
		join_lines(p->groups[run].buf, ",", &metrics);
	} else {
		for (size_t i = 0; i < p->metric_count; i++)
			strbuf_addf(&metrics, "%s%s", i ? "," : "", p->metrics[i]);
	}
	const char *args[64];
	int n = 0;
	args[n++] = self.buf;
	args[n++] = "trace";
	args[n++] = "--pmc";
	args[n++] = metrics.buf;
	if (p->multiplex) {
		args[n++] = "--pmc-multiplex";
		args[n++] = p->multiplex;
	}
	if (*include) {
		args[n++] = "--kernel-include-regex";
		args[n++] = include;
	}
	if (*iterations) {
		args[n++] = "--kernel-iteration-range";
		args[n++] = iterations;
	}
	args[n++] = "-d";
	args[n++] = trace_dir;
	args[n++] = "-o";
	args[n++] = "%hostname%_%pid%";
	args[n++] = "-f";
	args[n++] = "sqlite";
	args[n++] = "--";
	size_t command_count = 0;
	while (p->command[command_count])
		command_count++;
	const char **argv = xcalloc((size_t)n + command_count + 1, sizeof(*argv));
	memcpy(argv, args, (size_t)n * sizeof(*argv));
	memcpy(argv + n, p->command, command_count * sizeof(*argv));
	int status = run_child(argv);
	free(argv);
	strbuf_release(&self);
	strbuf_release(&metrics);
	return status;
}

/* `gpuprof roofline` on CUDA device 0 (the GPU profiled) into the workload directory:
 * roofline.csv and roofline.html, measured or taken from the cache. 0, or the status it
 * failed with. */
static int run_roofline(const char *dir, int quiet)
{
	struct strbuf self = STRBUF_INIT;
	struct error err;
	if (install_path("bin/gpuprof", &self, &err)) {
		warn("compute profile: %s", err.message);
		return -1;
	}
	const char *argv[] = { self.buf, "roofline", "--backend", "cuda", "--device", "0", "-o",
			       dir, "-q", NULL };
	if (!quiet)
		fprintf(stderr, "gpuprof: compute profile: the roofline of CUDA device 0 (gpuprof "
				"roofline: measured once, then reused from its cache)\n");
	int status = run_child(argv);
	strbuf_release(&self);
	return status;
}

/* The databases trace wrote, joined into one when the program made several processes. */
static int workload_database(const char *trace_dir, struct strbuf *db, struct error *err)
{
	DIR *d = opendir(trace_dir);
	if (!d)
		return error_set(err, "'%s': %s", trace_dir, strerror(errno));
	char *inputs[256];
	int count = 0;
	struct dirent *e;
	while ((e = readdir(d)) && count < 256) {
		size_t n = strlen(e->d_name);
		if (n > 11 && !strcmp(e->d_name + n - 11, "_results.db")) {
			struct strbuf path = STRBUF_INIT;
			strbuf_addf(&path, "%s/%s", trace_dir, e->d_name);
			inputs[count++] = strbuf_detach(&path);
		}
	}
	closedir(d);
	int rc = 0;
	if (!count) {
		rc = error_set(err, "the program left no database in '%s' (it made no CUDA "
				    "work, or the trace failed: see above)", trace_dir);
	} else if (count == 1) {
		strbuf_addstr(db, inputs[0]);
	} else {
		struct strbuf warnings = STRBUF_INIT;
		strbuf_addf(db, "%s/all_results.db", trace_dir);
		rc = store_merge(inputs, count, NULL, 0, db->buf, &warnings, err);
		strbuf_release(&warnings);
	}
	for (int i = 0; i < count; i++)
		free(inputs[i]);
	return rc;
}

/* pmc_perf.csv and sysinfo.csv from the database, written whole or not at all. */
static int write_workload(const char *dir, const char *db_path, size_t *dispatches,
			  struct error *err)
{
	sqlite3 *db;
	if (store_open(db_path, &db, err))
		return -1;
	struct strbuf path = STRBUF_INIT;
	int rc = 0;
	for (int f = 0; rc == 0 && f < 2; f++) {
		strbuf_reset(&path);
		strbuf_addf(&path, "%s/%s.partial", dir, workload_files[f]);
		FILE *out = fopen(path.buf, "w");
		if (!out) {
			rc = error_set(err, "cannot create '%s': %s", path.buf, strerror(errno));
			break;
		}
		rc = f == 0 ? workload_write_dispatches(db, out, dispatches, err)
			    : workload_write_facts(db, out, err);
		if ((ferror(out) | fclose(out)) && rc == 0)
			rc = error_set(err, "cannot write '%s': %s", path.buf, strerror(errno));
		struct strbuf final = STRBUF_INIT;
		strbuf_addf(&final, "%s/%s", dir, workload_files[f]);
		if (rc == 0 && rename(path.buf, final.buf) < 0)
			rc = error_set(err, "cannot create '%s': %s", final.buf, strerror(errno));
		if (rc)
			unlink(path.buf);
		strbuf_release(&final);
	}
	strbuf_release(&path);
	sqlite3_close(db);
	return rc;
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
			join_lines(p->groups[r].buf, ", ", &run);
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

/* The program run under trace --pmc: once (kernel replay), or once per group of metrics
 * (application replay, each into trace/pass_N, their counters joined onto the first
 * run's kernels; a run that fails ends the replay, the later groups not collected).
 * The program's exit status into *status; the workload's database into db, or -1 with
 * err when there is none. */
static int collect(const struct profile_run *p, const char *trace_dir, const char *include,
		   const char *iterations, struct strbuf *db, int *status, struct error *err)
{
	if (!p->groups) {
		if ((*status = run_trace(p, 0, trace_dir, include, iterations)) < 0)
			die("compute profile: cannot run gpuprof trace");
		return workload_database(trace_dir, db, err);
	}
	char **runs = xcalloc((size_t)p->runs, sizeof(*runs));
	long done = 0;
	int failed = 0;
	*status = 0;
	while (done < p->runs && *status == 0 && !failed) {
		struct strbuf pass = STRBUF_INIT, one = STRBUF_INIT;
		strbuf_addf(&pass, "%s/pass_%ld", trace_dir, done + 1);
		if (!p->quiet)
			fprintf(stderr, "gpuprof: compute profile: run %ld of %ld\n", done + 1,
				p->runs);
		if ((*status = run_trace(p, done, pass.buf, include, iterations)) < 0)
			die("compute profile: cannot run gpuprof trace");
		failed = workload_database(pass.buf, &one, err);
		if (!failed)
			runs[done++] = strbuf_detach(&one);
		else if (done)
			warn("compute profile: %s", err->message);
		if ((*status || failed) && done < p->runs)
			warn("compute profile: run %ld of %ld %s: the metrics of the later runs "
			     "are not collected", done + failed, p->runs,
			     failed ? "left no database" : "failed");
		strbuf_release(&pass);
		strbuf_release(&one);
	}
	int rc = done ? 0 : -1;
	if (done) {
		struct strbuf warnings = STRBUF_INIT;
		strbuf_addf(db, "%s/all_results.db", trace_dir);
		rc = store_merge(runs, 1, runs + 1, (int)done - 1, db->buf, &warnings, err);
		for (const char *line = warnings.buf; *line; line = strchr(line, '\n') + 1)
			warn("compute profile: %.*s", (int)(strchr(line, '\n') - line), line);
		strbuf_release(&warnings);
	}
	for (long i = 0; i < done; i++)
		free(runs[i]);
	free(runs);
	return rc;
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
	int failed = collect(p, trace_dir.buf, include.buf, iterations.buf, &db, &code, &err) ||
		     write_workload(dir.buf, db.buf, &dispatches, &err);
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
		fclose(out);
	}
	if (failed)
		warn("compute profile: %s", err.message);
	else if (p->multiplex)
		warn_incomplete(dir.buf);
	int roofline = !failed && p->roofline ? run_roofline(dir.buf, p->quiet) : 0;
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
	return code == 0 && failed ? EXIT_FAILED : code;
}

/* compute profile --bench-only: the GPU's roofline into a workload directory, no program
 * run. Returns 0, or EXIT_FAILED when the measurement failed. */
static int bench_only(struct profile_run *p)
{
	struct strbuf dir = STRBUF_INIT;
	workload_directory(p, &dir);
	int status = run_roofline(dir.buf, p->quiet);
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
	int roof_only = -1, bench = -1;
	const char *chip = NULL, *set = NULL, *name = NULL, *directory = NULL;
	const char *replay = "kernel", *multiplex = NULL;
	struct option_list blocks = { 0 }, kernels = { 0 }, dispatches = { 0 };
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
		  "fewer times than there are groups gets no metrics" },
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
		{ OPTION_BOOL, 0, "bench-only", &bench, NULL,
		  "only the GPU's ceilings (gpuprof roofline) into a workload directory named by "
		  "-n (default: roofline): no program is run, no counters collected" },
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
			blocks.items[i] = xstrdup("7.1");
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
			   dispatches.count || strcmp(replay, "kernel") || multiplex || sets == 1 ||
			   list == 1 || next < argc))
		die_with(EXIT_USAGE, "compute profile: --bench-only measures the GPU's ceilings "
				     "alone: it takes no COMMAND and no -b, --set, -k, -d, --replay, "
				     "--iteration-multiplexing, --roof-only, --no-roof or listing");
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
