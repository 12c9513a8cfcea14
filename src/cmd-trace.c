/* gpuprof trace: runs a program with the recording libraries in place (the OpenCL one
 * preloaded, the CUDA one named to the CUDA driver's injection hook), waits for it and
 * every process it starts, then turns each process's spool into outputs. The program's
 * exit status passes through: its exit code, or 128+N when it died of signal N. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "commands.h"
#include "compute/catalog.h"
#include "compute/host.h"
#include "core/kernel-filter.h"
#include "core/paths.h"
#include "core/recorder.h"
#include "input-file.h"
#include "install.h"
#include "metrics/metrics.h"
#include "output.h"
#include "util/error.h"
#include "util/options.h"
#include "util/strbuf.h"

static const char usage[] = "gpuprof trace [options] -- COMMAND [ARGS...]";
static const char sys_usage[] = "gpuprof sys [options] -- COMMAND [ARGS...]";
static const char sys_description[] =
	"Runs COMMAND as 'gpuprof trace --sys-trace' does (every API call, kernel, copy,\n"
	"allocation and marker), samples the call stacks of every thread on its CPU time\n"
	"(<prefix>_stacks.folded), and samples metrics over time: the machine (per-CPU\n"
	"utilization and frequency, memory), every process of COMMAND (CPU, memory, page\n"
	"faults, context switches, threads, I/O) and every NVIDIA GPU through NVML (power,\n"
	"energy, temperature, clocks, utilization, memory, PCIe). The options are gpuprof\n"
	"trace's; --no-sample, --no-host-metrics and --no-device-metrics turn a source off.";

/* The command being run: "trace" or "sys", for messages. */
static const char *command_name = "trace";
static const char description[] =
	"Runs COMMAND and records the GPU work it does: kernels, memory copies, allocations\n"
	"and API calls, on NVIDIA GPUs through CUPTI (any CUDA program, PyTorch included,\n"
	"without relinking) and on every OpenCL device (any vendor, and the CPU through\n"
	"PoCL). Each process COMMAND starts is recorded into files of its own, by default\n"
	"./<hostname>/<pid>_results.db and ./<hostname>/<pid>_<domain>_trace.csv.\n"
	"Recorded data reaches disk every 100 ms, so a program that crashes or is killed\n"
	"keeps everything up to its last flush (for CUDA: up to CUPTI's last delivery).";

static pid_t child_pid;

static void forward_signal(int sig)
{
	if (child_pid > 0)
		kill(child_pid, sig);
}

static volatile sig_atomic_t stop_waiting;

/* While the outputs are written (the program has ended): a first Ctrl-C or SIGTERM says
 * what is happening and lets it finish; a second stops at once, keeping every spool not
 * yet converted (and the .partial file being written). */
static char manifest_path[PATH_MAX];
static char metrics_paths[2][PATH_MAX + 8]; /* the metrics spools (metrics_start()) */
/* interrupts received: counted atomically, the signal may reach any of gpuprof's threads
 * (the database is written on one of its own) */
static int interruptions;

static void say(const char *text)
{
	ssize_t ignored = write(STDERR_FILENO, text, strlen(text));
	(void)ignored;
}

static void interrupt_output(int sig)
{
	if (__atomic_fetch_add(&interruptions, 1, __ATOMIC_SEQ_CST) == 0) {
		say("gpuprof: the program has ended; writing its outputs (interrupt again to stop "
		    "now and keep the spools for 'gpuprof convert')\n");
		return;
	}
	say("gpuprof: stopped: the spools not yet converted are kept; 'gpuprof convert "
	    "SPOOL' writes their outputs\n");
	unlink(manifest_path);
	unlink(metrics_paths[0]);
	unlink(metrics_paths[1]);
	_exit(128 + sig);
}

static void interrupt_wait(int sig)
{
	stop_waiting = 1;
}

/* A recording library, installed beside the command: <bin>/../lib/gpuprof/. Returns -1
 * (without an error message) when this build has none of that name. */
static int find_library(const char *name, struct strbuf *out, struct error *err)
{
	struct strbuf relative = STRBUF_INIT;
	strbuf_addf(&relative, "lib/gpuprof/%s", name);
	int rc = install_path(relative.buf, out, err);
	strbuf_release(&relative);
	if (rc)
		return rc;
	char resolved[PATH_MAX];
	if (!realpath(out->buf, resolved))
		return -1;
	strbuf_reset(out);
	strbuf_addstr(out, resolved);
	return 0;
}

struct trace_options {
	int kernel, memory_copy, memory_allocation, opencl, cuda_runtime, cuda_driver, marker;
	int runtime, sys, kernel_rename, selected_regions;
	const char *input, *preset, *config;
	const char *period_unit;
	struct option_list periods;
	const char *kernel_include, *kernel_exclude, *kernel_iterations;
	int stats, summary, truncate, mangled, keep_spool, help;
	const char *directory, *file, *units;
	struct option_list formats;
	unsigned long long buffer_size, buffer_limit;
	int host_metrics, device_metrics, sample, sampling_realtime, launch_stacks;
	const char *sampling_interval, *sampling_freq;
	struct option_list pmc, pmc_set;
	const char *pmc_multiplex; /* NULL, kernel or kernel_launch_params */
};

static void stop_metrics(struct metrics *sampler)
{
	struct error err;
	if (sampler && metrics_stop(sampler, &err))
		warn("metrics: %s (those sampled before are kept)", err.message);
}

/* Starts the target and waits for it and for every process it left behind. A failed
 * exec is reported through a close-on-exec pipe; its return is then -EXIT_NOT_FOUND
 * or -EXIT_CANNOT_RUN. */
static int run_target(char **argv, int *status, const struct metrics_options *metrics,
		      const char *metrics_base, struct error *err)
{
	int pipefd[2];
	if (pipe2(pipefd, O_CLOEXEC) < 0)
		return error_set(err, "cannot create a pipe: %s", strerror(errno));
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	fflush(NULL);
	pid_t parent = getpid();
	child_pid = fork();
	if (child_pid < 0)
		return error_set(err, "cannot fork: %s", strerror(errno));
	if (child_pid == 0) {
		close(pipefd[0]);
		/* gpuprof killed (SIGKILL from a scheduler's time limit) takes the program with
		 * it, as its SIGTERM and SIGHUP would: SIGTERM, so that it ends its own way */
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		if (getppid() != parent)
			_exit(128 + SIGTERM);
		execvp(argv[0], argv);
		int e = errno;
		ssize_t ignored = write(pipefd[1], &e, sizeof(e));
		(void)ignored;
		_exit(EXIT_NOT_FOUND);
	}
	close(pipefd[1]);
	/* metrics from the moment the program exists to the moment the last process ends */
	struct metrics *sampler = NULL;
	if (metrics->host || metrics->device) {
		struct error metrics_err;
		sampler = metrics_start(metrics, metrics_base, &metrics_err);
		if (!sampler)
			warn("metrics are not sampled: %s", metrics_err.message);
	}
	struct sigaction ignore = { .sa_handler = SIG_IGN }, forward = { .sa_handler = forward_signal };
	sigaction(SIGINT, &ignore, NULL);
	sigaction(SIGQUIT, &ignore, NULL);
	sigaction(SIGTERM, &forward, NULL);
	sigaction(SIGHUP, &forward, NULL);
	sigaction(SIGUSR1, &forward, NULL);
	sigaction(SIGUSR2, &forward, NULL);

	int exec_errno = 0;
	ssize_t n;
	while ((n = read(pipefd[0], &exec_errno, sizeof(exec_errno))) < 0 && errno == EINTR)
		;
	close(pipefd[0]);
	while (waitpid(child_pid, status, 0) < 0 && errno == EINTR)
		;
	if (n == (ssize_t)sizeof(exec_errno)) {
		stop_metrics(sampler);
		metrics_remove(metrics_base);
		error_set(err, "cannot run '%s': %s", argv[0], strerror(exec_errno));
		return exec_errno == ENOENT ? -EXIT_NOT_FOUND : -EXIT_CANNOT_RUN;
	}

	/* Processes the target left behind were adopted by us (subreaper): their spools
	 * are complete only once they exit. A second Ctrl-C stops the wait. */
	struct sigaction interrupt = { .sa_handler = interrupt_wait };
	sigaction(SIGINT, &interrupt, NULL);
	int announced = 0;
	for (;;) {
		int other;
		pid_t pid = waitpid(-1, &other, WNOHANG);
		if (pid > 0)
			continue;
		if (pid < 0 && errno == ECHILD)
			break;
		if (!announced++)
			fprintf(stderr, "gpuprof: waiting for the processes the target started to "
					"exit (Ctrl-C stops waiting)\n");
		pid = waitpid(-1, &other, 0);
		if (pid < 0 && errno == EINTR && stop_waiting)
			break;
	}
	sigaction(SIGINT, &ignore, NULL);
	stop_metrics(sampler);
	return 0;
}

/* The processes that recorded nothing of their own (a shell or a launcher that ran the
 * program, its helpers): no outputs, one line that lists them, their spools removed
 * unless kept. When no process recorded anything, the first still gets its outputs, so
 * that a run always has some. Returns the failures. */
static int convert_or_list_empty(const struct strbuf *spools, size_t count, int none_written,
				 const struct output_request *request, int keep_spool)
{
	if (!count)
		return 0;
	const char *at = spools->buf;
	int failures = 0;
	if (none_written) {
		struct strbuf prefix = STRBUF_INIT;
		size_t len = strlen(at);
		strbuf_add(&prefix, at, len > 6 && !strcmp(at + len - 6, ".spool") ? len - 6 : len);
		struct error err;
		if (output_from_spool(at, prefix.buf, request, keep_spool, &err)) {
			warn("%s (the spool '%s' is kept; 'gpuprof convert' retries)", err.message, at);
			failures++;
		}
		strbuf_release(&prefix);
		at += strlen(at) + 1;
		if (!--count)
			return failures;
	}
	struct strbuf list = STRBUF_INIT;
	size_t listed = 0;
	for (; at < spools->buf + spools->len; at += strlen(at) + 1, listed++) {
		if (listed < 20)
			strbuf_addf(&list, "%s%s", listed ? ", " : "", at);
		if (!keep_spool && unlink(at) < 0)
			warn("cannot remove '%s': %s", at, strerror(errno));
	}
	if (listed > 20)
		strbuf_addf(&list, " and %zu more", listed - 20);
	fprintf(stderr, "gpuprof: %zu process%s recorded nothing of %s own (no API call, device "
			"work, marker or call-stack sample): no outputs for %s: %s\n", count,
		count == 1 ? "" : "es", count == 1 ? "its" : "their", count == 1 ? "it" : "them",
		list.buf);
	strbuf_release(&list);
	return failures;
}

static int post_process(const char *manifest, const char *metrics_base,
			const char *directory, const struct output_request *request,
			int keep_spool)
{
	int metrics = metrics_recorded(metrics_base);
	FILE *f = fopen(manifest, "re");
	if (!f) {
		warn("cannot read the list of recorded processes '%s': %s", manifest, strerror(errno));
		return -1;
	}
	/* One spool path per entry, each ended by a NUL: a path may hold any other byte,
	 * a newline included. */
	char *line = NULL;
	size_t capacity = 0;
	ssize_t length;
	int failures = 0, processes = 0, written_count = 0;
	struct strbuf seen = STRBUF_INIT; /* the paths handled, each ended by a NUL */
	struct strbuf empty = STRBUF_INIT; /* the spools of processes that recorded nothing */
	size_t empty_count = 0;
	struct output_request skipping = *request;
	skipping.skip_empty = 1;
	while ((length = getdelim(&line, &capacity, '\0', f)) > 0) {
		if (line[length - 1] != '\0' || !line[0]) /* a cut last entry, or an empty one */
			continue;
		int duplicate = 0;
		for (size_t at = 0; at < seen.len && !duplicate; at += strlen(seen.buf + at) + 1)
			duplicate = !strcmp(seen.buf + at, line);
		if (duplicate)
			continue;
		strbuf_add(&seen, line, (size_t)length);
		processes++;
		struct strbuf prefix = STRBUF_INIT;
		size_t len = strlen(line);
		strbuf_add(&prefix, line, len > 6 && !strcmp(line + len - 6, ".spool") ? len - 6 : len);
		struct error err;
		if (metrics && metrics_append(metrics_base, line, &err))
			warn("metrics are left out of '%s': %s", line, err.message);
		int rc = output_from_spool(line, prefix.buf, &skipping, keep_spool, &err);
		if (rc < 0) {
			warn("%s (the spool '%s' is kept; 'gpuprof convert' retries)", err.message, line);
			failures++;
		} else if (rc == 1) {
			strbuf_add(&empty, line, (size_t)length);
			empty_count++;
		} else {
			written_count++;
		}
		strbuf_release(&prefix);
	}
	free(line);
	fclose(f);
	strbuf_release(&seen);
	if (!processes)
		warn("no process used OpenCL or CUDA: nothing was recorded");
	failures += convert_or_list_empty(&empty, empty_count, written_count == 0, request,
					  keep_spool);
	strbuf_release(&empty);
	struct strbuf written = STRBUF_INIT;
	struct error err;
	if (metrics && metrics_write_madengine(metrics_base, directory, &written, &err)) {
		warn("%s", err.message);
		failures++;
	}
	for (const char *at = written.buf; *at; at = strchr(at, '\n') + 1)
		fprintf(stderr, "gpuprof:   %.*s\n", (int)(strchr(at, '\n') - at), at);
	strbuf_release(&written);
	return failures ? -1 : 0;
}

static int prepare_manifest(struct strbuf *path, struct error *err)
{
	const char *tmp = getenv("TMPDIR");
	strbuf_addf(path, "%s/gpuprof-%d-XXXXXX", tmp && *tmp ? tmp : "/tmp", (int)getpid());
	int fd = mkstemp(path->buf);
	if (fd < 0)
		return error_set(err, "cannot create a temporary file in '%s': %s",
				 tmp && *tmp ? tmp : "/tmp", strerror(errno));
	close(fd);
	return 0;
}

/* Refuses, before the program starts, recording memory that cannot work: a thread's
 * buffer beyond the cap of all buffers, or a cap beyond the machine's memory. */
static void check_buffer_sizes(const struct trace_options *o)
{
	unsigned long long limit = o->buffer_limit ? o->buffer_limit : RECORDER_DEFAULT_BUFFER_LIMIT;
	long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
	unsigned long long memory = pages > 0 && page > 0 ? (unsigned long long)pages * page : 0;
	if (o->buffer_size > limit)
		die_with(EXIT_USAGE, "%s: --buffer-size %llu MiB is more than --buffer-limit %llu "
			 "MiB, the cap of every thread's buffers together: raise --buffer-limit "
			 "too", command_name, o->buffer_size >> 20, limit >> 20);
	if (memory && limit > memory)
		die_with(EXIT_USAGE, "%s: --buffer-limit %llu MiB is more than this machine's "
			 "memory (%llu MiB)", command_name, limit >> 20, memory >> 20);
}

/* Fails before the target starts when the outputs could not be written; *bad_name says
 * the output name itself is wrong (a bad placeholder). */
static int check_output_directory(const char *directory, const char *file, int *bad_name,
				  struct error *err)
{
	struct path_context ctx;
	path_context_current(&ctx);
	struct strbuf template = STRBUF_INIT, path = STRBUF_INIT;
	path_output_template(&template, directory, file);
	int rc = path_expand(template.buf, &ctx, &path, err);
	*bad_name = rc != 0;
	if (rc == 0) {
		char *slash = strrchr(path.buf, '/');
		if (slash)
			*slash = '\0';
		rc = path_check_writable(path.buf, err);
	}
	/* The output directory is made now, so that one that cannot be made (access() may
	 * say yes where mkdir() fails) stops gpuprof before the program runs unprofiled. A
	 * directory named after the process is left to each process. */
	if (rc == 0 && file[0] != '/' && !strstr(directory, "%p") && !strstr(directory, "%q{") &&
	    !strstr(directory, "%env{")) {
		strbuf_reset(&path);
		rc = path_expand(directory, &ctx, &path, err);
		if (rc == 0)
			rc = path_make_parents(path.buf, 0, err);
	}
	strbuf_release(&template);
	strbuf_release(&path);
	return rc;
}

/* Puts `dir` first on LD_LIBRARY_PATH. */
static void library_path_prepend(const char *dir)
{
	struct strbuf path = STRBUF_INIT;
	const char *old = getenv("LD_LIBRARY_PATH");
	strbuf_addstr(&path, dir);
	if (old && *old)
		strbuf_addf(&path, ":%s", old);
	setenv("LD_LIBRARY_PATH", path.buf, 1);
	strbuf_release(&path);
}

/* The marker libraries find the recorder through GPUPROF_RECORDER; programs that load
 * libroctx64 by name find ours first on LD_LIBRARY_PATH. */
static void make_markers_findable(void)
{
	struct strbuf path = STRBUF_INIT;
	struct error err;
	if (find_library("libgpuprof-recorder.so", &path, &err) == 0)
		setenv("GPUPROF_RECORDER", path.buf, 1);
	if (find_library("markers", &path, &err) == 0)
		library_path_prepend(path.buf);
	strbuf_release(&path);
}

/* --collection-period values ("START:DURATION:REPEAT", times in `unit`) as the
 * recorder reads them: nanosecond triples joined by ';'. */
static int parse_periods(const struct option_list *list, const char *unit, struct strbuf *out,
			 struct error *err)
{
	static const struct {
		const char *name;
		double ns;
	} units[] = { { "hour", 3600e9 }, { "min", 60e9 }, { "sec", 1e9 }, { "msec", 1e6 },
		      { "usec", 1e3 }, { "nsec", 1 } };
	double scale = 1e9;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (!strcmp(unit, units[i].name))
			scale = units[i].ns;
	for (int i = 0; i < list->count; i++) {
		const char *text = list->items[i];
		double start, duration;
		unsigned long long repeat;
		int used = -1;
		if (sscanf(text, "%lf:%lf:%llu%n", &start, &duration, &repeat, &used) != 3 ||
		    used != (int)strlen(text) || start < 0 || duration <= 0 || text[0] == '-' ||
		    strchr(strrchr(text, ':'), '-'))
			return error_set(err, "--collection-period: '%s' is not "
					 "START:DURATION:REPEAT (START >= 0, DURATION > 0, "
					 "REPEAT a whole number, 0 for ever)", text);
		strbuf_addf(out, "%s%.0f:%.0f:%llu", out->len ? ";" : "", start * scale,
			    duration * scale, repeat);
	}
	return 0;
}

static void set_env_number(const char *name, unsigned long long value)
{
	char text[32];
	snprintf(text, sizeof(text), "%llu", value);
	setenv(name, text, 1);
}

static const struct trace_options defaults = {
	.kernel = -1, .memory_copy = -1, .memory_allocation = -1, .opencl = -1,
	.cuda_runtime = -1, .cuda_driver = -1, .marker = -1, .runtime = -1, .sys = -1,
	.kernel_rename = -1, .selected_regions = -1, .stats = -1, .summary = -1,
	.truncate = -1, .mangled = -1, .keep_spool = -1, .help = -1,
	.period_unit = "sec", .directory = ".", .file = "%hostname%/%pid%", .units = "nsec",
	.host_metrics = -1, .device_metrics = -1, .sampling_interval = "50", .sample = -1,
	.sampling_freq = "300", .sampling_realtime = -1,
};

/* gpuprof sys: the same options, with everything --sys-trace records and the metrics on */
static struct trace_options sys_defaults(void)
{
	struct trace_options o = defaults;
	o.sys = 1;
	o.host_metrics = 1;
	o.device_metrics = 1;
	o.sample = 1;
	return o;
}

#define TABLE_SIZE 64

/* The option table of `gpuprof trace`, storing into o: for the command line, the
 * preset and each job of an input file alike. */
static void trace_table(struct trace_options *o, struct option table[TABLE_SIZE])
{
	const struct option entries[] = {
		{ OPTION_SECTION, .help = "what to trace" },
		{ OPTION_BOOL, 0, "kernel-trace", &o->kernel, NULL, "kernel executions" },
		{ OPTION_BOOL, 0, "memory-copy-trace", &o->memory_copy, NULL,
		  "memory copies, fills (memsets) and maps" },
		{ OPTION_BOOL, 0, "memory-allocation-trace", &o->memory_allocation, NULL,
		  "device memory allocations and frees (CUDA)" },
		{ OPTION_BOOL, 0, "opencl-trace", &o->opencl, NULL, "OpenCL API calls" },
		{ OPTION_BOOL, 0, "cuda-runtime-trace", &o->cuda_runtime, NULL,
		  "CUDA runtime API calls (cuda*) and synchronisations" },
		{ OPTION_BOOL, 0, "cuda-driver-trace", &o->cuda_driver, NULL,
		  "CUDA driver API calls (cu*) and synchronisations" },
		{ OPTION_BOOL, 0, "marker-trace", &o->marker, NULL,
		  "marker ranges and marks: gpuprof markers, ROCTX, NVTX (marker_api_trace.csv)" },
		{ OPTION_BOOL, 'r', "runtime-trace", &o->runtime, NULL,
		  "kernels, copies, allocations, markers, OpenCL and CUDA runtime API calls" },
		{ OPTION_BOOL, 's', "sys-trace", &o->sys, NULL,
		  "everything --runtime-trace does, and CUDA driver API calls" },
		{ OPTION_BOOL, 0, "launch-stacks", &o->launch_stacks, NULL,
		  "the call stack of every kernel launch and copy, taken on the launching thread "
		  "and unwound after the run as samples are: device time by the program's call "
		  "paths (gpuprof profile --kernels), the stack on each launch's API slice "
		  "(x86-64; with --kernel-trace or --memory-copy-trace; off unless given, in "
		  "gpuprof sys too)" },
		{ OPTION_LIST, 0, "pmc", &o->pmc, "METRIC...",
		  "hardware counters of every kernel kept by the kernel filters (CUDA; CUPTI "
		  "metric names, comma-separated: dram__bytes_read.sum,...): "
		  "counter_collection.csv, the counters view; each kernel is replayed once per "
		  "pass and launches are serialised" },
		{ OPTION_LIST, 0, "pmc-set", &o->pmc_set, "NAME...",
		  "the CUPTI metrics of these metric sets of gpuprof compute (gpuprof compute "
		  "profile --list-sets lists them), with those of --pmc" },
		{ OPTION_ENUM, 0, "pmc-multiplex", &o->pmc_multiplex, "kernel|kernel_launch_params",
		  "no replay: the metrics in groups of one pass each, one group per dispatch of "
		  "a kernel in turn (dispatches of the same name, or of the same name and launch "
		  "size); a kernel needs one dispatch per group to be measured whole" },
		{ OPTION_SECTION, .help = "sampling (on by default in gpuprof sys; --no-NAME turns "
					  "one off)" },
		{ OPTION_BOOL, 0, "sample", &o->sample, NULL,
		  "call stacks of every thread, sampled on their CPU time (software perf events, "
		  "unwound after the run from the unwind tables): <prefix>_stacks.folded, the "
		  "samples and stacks views" },
		{ OPTION_STRING, 0, "sampling-freq", &o->sampling_freq, "HZ",
		  "call-stack samples per second of a thread's CPU time (default: 300; up to "
		  "10000; with --sample)" },
		{ OPTION_BOOL, 0, "sampling-realtime", &o->sampling_realtime, NULL,
		  "wall-clock sampling: threads that wait (in clFinish, cudaDeviceSynchronize, a "
		  "lock, I/O) are sampled at the same frequency of real time, their stacks ending "
		  "in [off-CPU: CALL], and threads ready to run that wait for a CPU, in [waiting "
		  "for a CPU] (with --sample)" },
		{ OPTION_BOOL, 0, "host-metrics", &o->host_metrics, NULL,
		  "per-CPU utilization and frequency, memory used; CPU, memory, page faults, "
		  "context switches, threads and I/O of every traced process" },
		{ OPTION_BOOL, 0, "device-metrics", &o->device_metrics, NULL,
		  "per GPU through NVML: power, energy, temperature, clocks, utilization, memory, "
		  "PCIe, clock event reasons" },
		{ OPTION_STRING, 0, "sampling-interval", &o->sampling_interval, "MS",
		  "milliseconds between two samples of the metrics (default: 50)" },
		{ OPTION_SECTION, .help = "what to keep (periods and regions: kernels, copies, "
					  "allocations and API calls, markers are always kept; kernel "
					  "filters: kernels only)" },
		{ OPTION_BOOL, 0, "selected-regions", &o->selected_regions, NULL,
		  "collect only between resume and pause calls (roctxProfilerResume, "
		  "gpuprof_resume...): collection starts paused" },
		{ OPTION_LIST, 'P', "collection-period", &o->periods, "START:DURATION:REPEAT...",
		  "collect only in periods counted from the process start: wait START, collect "
		  "for DURATION, REPEAT times (0: for ever); several periods run one after "
		  "another" },
		{ OPTION_ENUM, 0, "collection-period-unit", &o->period_unit,
		  "hour|min|sec|msec|usec|nsec", "unit of the periods (default: sec)" },
		{ OPTION_STRING, 0, "kernel-include-regex", &o->kernel_include, "REGEX",
		  "keep only kernels whose name matches (POSIX extended, anywhere in the name)" },
		{ OPTION_STRING, 0, "kernel-exclude-regex", &o->kernel_exclude, "REGEX",
		  "leave out kernels whose name matches (after the include)" },
		{ OPTION_STRING, 0, "kernel-iteration-range", &o->kernel_iterations, "SET",
		  "keep only these dispatches of each kept kernel name, counted from 1 in launch "
		  "order: \"[1, 2, [5-8]]\"" },
		{ OPTION_SECTION, .help = "configuration" },
		{ OPTION_STRING, 'i', "input", &o->input, "FILE",
		  "run the program once per job of a JSON or YAML file, into DIR/pass_N "
		  "(keys: the long options, with _ or -)" },
		{ OPTION_STRING, 'c', "config", &o->config, "FILE",
		  "options from a YAML or JSON file (keys: the long options; gpuprof avail -G "
		  "FILE writes one to edit); the command line overrides it, it overrides the "
		  "preset" },
		{ OPTION_STRING, 0, "preset", &o->preset, "NAME",
		  "start from a preset's options; those given here add to or override them "
		  "(gpuprof avail --presets lists them)" },
		{ OPTION_SECTION, .help = "outputs" },
		{ OPTION_STRING, 'd', "output-directory", &o->directory, "DIR",
		  "where outputs go (default: the current directory)" },
		{ OPTION_STRING, 'o', "output-file", &o->file, "NAME",
		  "file name prefix under DIR (default: %hostname%/%pid%)" },
		{ OPTION_LIST, 'f', "output-format", &o->formats, "FORMAT...",
		  "csv, sqlite, json (Chrome trace events), pftrace (Perfetto), html (the report "
		  "of gpuprof report); default: csv sqlite", OUTPUT_FORMAT_WORDS },
		{ OPTION_BOOL, 0, "stats", &o->stats, NULL, "also write the *_stats.csv files" },
		{ OPTION_BOOL, 'S', "summary", &o->summary, NULL, "print summary tables on stderr" },
		{ OPTION_ENUM, 'u', "summary-units", &o->units, "sec|msec|usec|nsec",
		  "time unit of the summary tables (default: nsec)" },
		{ OPTION_BOOL, 'T', "truncate-kernels", &o->truncate, NULL,
		  "kernel names without namespaces, templates and parameters" },
		{ OPTION_BOOL, 'M', "mangled-kernels", &o->mangled, NULL,
		  "CUDA kernel names as the compiler wrote them (default: demangled)" },
		{ OPTION_BOOL, 0, "kernel-rename", &o->kernel_rename, NULL,
		  "kernels take the name of the innermost marker range open on the launching "
		  "thread (implies --marker-trace)" },
		{ OPTION_BOOL, 0, "keep-spool", &o->keep_spool, NULL,
		  "keep each process's raw spool after it was converted" },
		{ OPTION_SECTION, .help = "recording" },
		{ OPTION_SIZE, 0, "buffer-size", &o->buffer_size, "SIZE",
		  "buffer per recording thread (default: 2M)" },
		{ OPTION_SIZE, 0, "buffer-limit", &o->buffer_limit, "SIZE",
		  "memory for all buffers of a process; beyond it records are dropped and "
		  "counted (default: 256M)" },
		{ OPTION_BOOL, 'h', "help", &o->help, NULL, "show this help" },
		OPTION_END,
	};
	_Static_assert(sizeof(entries) / sizeof(entries[0]) <= TABLE_SIZE, "trace table size");
	memcpy(table, entries, sizeof(entries));
}

/* Options that only the command line sets. */
static const char *const command_line_only[] = { "input", "preset", "config", "help", NULL };

/* One run of the program as the options describe it, checked before any run begins. */
struct job {
	struct trace_options o;
	struct strbuf trace, periods;
	int defaulted;
	struct output_request request;
	struct kernel_filter filter;
	struct metrics_options metrics;
	struct strbuf pmc;    /* the --pmc metrics, comma-separated; with --pmc-multiplex,
			       * groups of one pass separated by ';' */
	unsigned sample_freq; /* 0: no call-stack sampling */
	int sample_realtime;  /* threads off the CPU sampled too */
	int launch_stacks;    /* each launch's call stack */
};

/* Puts the options the counters came from before err's message (those of a preset
 * named as the preset's, which the user did not type); returns -1. */
static int pmc_error(const struct trace_options *o, struct error *err)
{
	struct error inner = *err;
	const char *what = o->pmc.count && o->pmc_set.count ? "--pmc and --pmc-set"
			   : o->pmc.count ? "--pmc" : "--pmc-set";
	if (!o->preset)
		return error_set(err, "%s: %s", what, inner.message);
	struct strbuf names = STRBUF_INIT;
	for (int i = 0; i < o->pmc_set.count; i++)
		strbuf_addf(&names, "%s%s", names.len ? ", " : "pmc_set: ", o->pmc_set.items[i]);
	for (int i = 0; i < o->pmc.count; i++)
		strbuf_addf(&names, "%s%s", i ? ", " : names.len ? "; pmc: " : "pmc: ",
			    o->pmc.items[i]);
	error_set(err, "the counters of --preset %s (%s): %s", o->preset, names.buf,
		  inner.message);
	strbuf_release(&names);
	return -1;
}

/* Adds the CUPTI metrics a catalog metric reads to the list (newline-separated). */
static void add_set_metric(const struct catalog_metric *m, void *arg)
{
	catalog_cupti_names(m, arg);
}

/* The CUPTI metrics of the --pmc-set sets, appended to names (one per line, each once). */
static int set_metrics(const struct option_list *sets, struct strbuf *names,
		       struct error *err)
{
	struct strbuf dir = STRBUF_INIT;
	struct catalog c;
	int rc = install_path("share/gpuprof/catalog", &dir, err) ? -1
		 : catalog_load(dir.buf, &c, err);
	strbuf_release(&dir);
	if (rc) {
		struct error inner = *err;
		return error_set(err, "--pmc-set: %s", inner.message);
	}
	for (int i = 0; rc == 0 && i < sets->count; i++) {
		const struct catalog_set *s = catalog_set(&c, sets->items[i]);
		if (!s)
			rc = error_set(err, "--pmc-set: no metric set is called '%s' (gpuprof compute "
					    "profile --list-sets lists them)", sets->items[i]);
		for (size_t k = 0; s && k < s->select_count; k++)
			catalog_select(&c, s->select[k], add_set_metric, names);
	}
	catalog_release(&c);
	return rc;
}

/* --pmc and --pmc-set: the metrics checked against the GPU's chip, and the passes they
 * take said. */
static int plan_counters(struct job *j, struct error *err)
{
	struct strbuf list = STRBUF_INIT;
	for (int i = 0; i < j->o.pmc.count; i++) {
		const char *name = j->o.pmc.items[i];
		if (!*name || strchr(name, ' ') || strchr(name, '\n')) {
			strbuf_release(&list);
			return error_set(err, "--pmc: '%s' is not a metric name", name);
		}
		strbuf_addf(&list, "%s\n", name);
	}
	if (j->o.pmc_set.count && set_metrics(&j->o.pmc_set, &list, err)) {
		strbuf_release(&list);
		return -1;
	}
	/* each name once, in the order given */
	const char **names = xcalloc(list.len + 1, sizeof(*names));
	struct strbuf unique = STRBUF_INIT;
	size_t count = 0;
	for (char *save = NULL, *line = strtok_r(list.buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		size_t k = 0;
		while (k < count && strcmp(names[k], line))
			k++;
		if (k == count) {
			names[count++] = line;
			strbuf_addf(&unique, "%s\n", line);
		}
	}
	struct host_api api;
	const char *chip;
	size_t passes;
	int rc = -1;
	if (count == 0) {
		error_set(err, "the metric sets name no CUPTI metric (all derived from the kernel "
			       "records)");
	} else if (host_load(&api, err) == 0) {
		rc = host_plan_device(&api, names, count, &chip, &passes, err);
		struct strbuf *groups = NULL, why = STRBUF_INIT;
		long group_count = 1;
		if (rc == 0 && j->o.pmc_multiplex) {
			group_count = host_plan_groups(&api, chip, unique.buf, &groups, &why);
			if (group_count < 0)
				rc = error_set(err, "--pmc-multiplex: %s (a dispatch collects one pass)",
					       why.buf);
		}
		for (long g = 0; rc == 0 && g < group_count; g++) {
			const char *group = groups ? groups[g].buf : unique.buf;
			strbuf_addstr(&j->pmc, g ? ";" : "");
			for (const char *c = group; *c; c++)
				if (*c != '\n')
					strbuf_addch(&j->pmc, *c);
				else if (c[1])
					strbuf_addch(&j->pmc, ',');
		}
		if (rc == 0 && groups)
			fprintf(stderr, "gpuprof: --pmc: %zu metric%s in %ld group%s of one pass on %s, "
					"one group per dispatch of each kernel (--pmc-multiplex %s): "
					"a kernel is measured whole after %ld dispatches; kernels run "
					"one at a time while counters are collected\n", count,
				count == 1 ? "" : "s", group_count, group_count == 1 ? "" : "s",
				chip, j->o.pmc_multiplex, group_count);
		else if (rc == 0)
			fprintf(stderr, "gpuprof: --pmc: %zu metric%s, %zu pass%s on %s: each kernel "
					"kept runs %zu time%s (CUPTI's kernel replay), and kernels "
					"run one at a time while counters are collected\n", count,
				count == 1 ? "" : "s", passes, passes == 1 ? "" : "es", chip, passes,
				passes == 1 ? "" : "s");
		if (groups)
			host_release_groups(groups, group_count);
		strbuf_release(&why);
		host_unload(&api);
	}
	free(names);
	strbuf_release(&unique);
	strbuf_release(&list);
	return rc ? pmc_error(&j->o, err) : 0;
}

static int job_prepare(struct job *j, struct error *err)
{
	struct trace_options *o = &j->o;
	strbuf_init(&j->trace);
	strbuf_init(&j->periods);
	strbuf_init(&j->pmc);
	memset(&j->filter, 0, sizeof(j->filter));
	int counters = o->pmc.count || o->pmc_set.count;
	if (counters && o->kernel == 0)
		return error_set(err, "--pmc reads the counters of kernels: it cannot go with "
				 "--kernel-trace=false");
	if (counters && o->kernel == -1)
		o->kernel = 1;
	if (o->pmc_multiplex && !counters)
		return error_set(err, "--pmc-multiplex spreads the metrics of --pmc or --pmc-set "
				 "over dispatches: give them");
	if (o->marker == 0 && o->kernel_rename == 1)
		return error_set(err, "--kernel-rename needs the marker ranges: it cannot go with "
				 "--marker-trace=false");
	int runtime = o->sys == 1 || o->runtime == 1;
	struct {
		int *option, implied;
		const char *token;
	} parts[] = {
		{ &o->kernel, runtime, "kernel" },
		{ &o->memory_copy, runtime, "memory_copy" },
		{ &o->memory_allocation, runtime, "memory_allocation" },
		{ &o->opencl, runtime, "opencl_api" },
		{ &o->cuda_runtime, runtime, "cuda_api" },
		{ &o->cuda_driver, o->sys == 1, "cuda_driver_api" },
		{ &o->marker, runtime || o->kernel_rename == 1, "marker" },
	};
	int chosen = 0, given = o->sys != -1 || o->runtime != -1;
	for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); i++) {
		int on = *parts[i].option != -1 ? *parts[i].option : parts[i].implied;
		given |= *parts[i].option != -1;
		if (on) {
			strbuf_addf(&j->trace, "%s%s", chosen ? "," : "", parts[i].token);
			chosen++;
		}
	}
	j->defaulted = !chosen;
	if (j->defaulted && given)
		return error_set(err, "every tracing option given is turned off");
	if (j->defaulted)
		strbuf_addstr(&j->trace, "kernel");
	memset(&j->request, 0, sizeof(j->request));
	j->request.formats = FORMAT_CSV | FORMAT_SQLITE;
	if (o->formats.count && output_parse_formats(&o->formats, &j->request.formats, err))
		return -1;
	j->request.summary = o->summary == 1;
	j->request.options.stats = o->stats == 1;
	j->request.options.truncate_kernels = o->truncate == 1;
	j->request.options.rename_kernels = o->kernel_rename == 1;
	j->request.options.summary_units = o->units;
	if (o->selected_regions == 1 && o->periods.count)
		return error_set(err, "--selected-regions and --collection-period cannot go "
				 "together");
	if (parse_periods(&o->periods, o->period_unit, &j->periods, err) ||
	    kernel_filter_init(&j->filter, o->kernel_include, o->kernel_exclude,
			       o->kernel_iterations, err))
		return -1;
	j->request.kernel_filter = &j->filter;
	j->metrics.host = o->host_metrics == 1;
	j->metrics.device = o->device_metrics == 1;
	char *end;
	errno = 0;
	unsigned long interval = strtoul(o->sampling_interval, &end, 10);
	if (!*o->sampling_interval || *end || errno || o->sampling_interval[0] == '-' ||
	    interval < 1 || interval > 3600000)
		return error_set(err, "--sampling-interval: '%s' is not a whole number of "
				 "milliseconds from 1 to 3600000", o->sampling_interval);
	j->metrics.interval_ms = (unsigned)interval;
	unsigned long frequency = strtoul(o->sampling_freq, &end, 10);
	if (!*o->sampling_freq || *end || o->sampling_freq[0] == '-' || frequency < 1 ||
	    frequency > 10000)
		return error_set(err, "--sampling-freq: '%s' is not a whole number of samples per "
				 "second from 1 to 10000", o->sampling_freq);
	/* an option of a source that is off would do nothing: said, not ignored (a value
	 * given, even the default's, is another string than the default's) */
	const char *sampling = o->sampling_freq != defaults.sampling_freq ? "--sampling-freq"
			       : o->sampling_realtime == 1 ? "--sampling-realtime" : NULL;
	if (o->sample != 1 && sampling)
		return error_set(err, "%s sets how call stacks are sampled, and none are: add "
				 "--sample (gpuprof trace samples only when asked; gpuprof sys unless "
				 "--no-sample)", sampling);
	if (!j->metrics.host && !j->metrics.device &&
	    o->sampling_interval != defaults.sampling_interval)
		return error_set(err, "--sampling-interval sets how often metrics are sampled, and "
				 "none are: add --host-metrics or --device-metrics (gpuprof sys samples "
				 "both unless turned off)");
	j->launch_stacks = o->launch_stacks == 1;
	if (j->launch_stacks && !strstr(j->trace.buf, "kernel") && !strstr(j->trace.buf, "memory_copy"))
		return error_set(err, "--launch-stacks takes the call stacks of kernel launches and "
				 "copies, and neither is traced: add --kernel-trace or "
				 "--memory-copy-trace");
#if !defined(__x86_64__)
	if (j->launch_stacks)
		return error_set(err, "--launch-stacks reads x86-64 registers: not on this machine");
#endif
	j->sample_freq = o->sample == 1 ? (unsigned)frequency : 0;
	j->sample_realtime = j->sample_freq && o->sampling_realtime == 1;
	return counters ? plan_counters(j, err) : 0;
}

static void job_release(struct job *j)
{
	strbuf_release(&j->pmc);
	strbuf_release(&j->trace);
	strbuf_release(&j->periods);
	kernel_filter_release(&j->filter);
}

/* A sanitizer runtime this gpuprof was linked with (gcc's libasan.so or libtsan.so): a
 * sanitized build makes sanitized recording libraries, and those work in a program built
 * without the sanitizer only when its runtime is the first library loaded. */
static int find_sanitizer_runtime(struct dl_phdr_info *info, size_t size, void *data)
{
	const char *base = strrchr(info->dlpi_name, '/');
	base = base ? base + 1 : info->dlpi_name;
	if (strncmp(base, "libasan.so", 10) && strncmp(base, "libtsan.so", 10))
		return 0;
	strbuf_addstr(data, info->dlpi_name);
	return 1;
}

/* gpuprof's OpenCL library takes the place of the ICD loader (libOpenCL.so.1) and
 * forwards to the one the program would have found, named in GPUPROF_OPENCL_LOADER: the
 * loader this process finds under the user's environment. A gpuprof run inside a traced
 * program keeps the loader its parent found. */
static void find_opencl_loader(void)
{
	const char *named = getenv("GPUPROF_OPENCL_LOADER");
	if (named && *named)
		return;
	void *handle = dlopen("libOpenCL.so.1", RTLD_LAZY | RTLD_LOCAL);
	struct link_map *map = NULL;
	if (handle && !dlsym(handle, "gpuprof_opencl_interposer") &&
	    dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map && map->l_name[0]) {
		char *path = realpath(map->l_name, NULL);
		if (path)
			setenv("GPUPROF_OPENCL_LOADER", path, 1);
		free(path);
	}
	if (handle)
		dlclose(handle);
}

/* The recording libraries, named once for every run: the recorder preloaded (it sees
 * _exit() and exec()), the OpenCL one preloaded and findable as the ICD loader, the CUDA
 * one named to the driver, the marker libraries findable. */
static void place_libraries(void)
{
	struct strbuf opencl_library = STRBUF_INIT, cuda_library = STRBUF_INIT;
	struct strbuf preload = STRBUF_INIT, recorder_library = STRBUF_INIT;
	struct error err;
	int have_opencl = find_library("libgpuprof-opencl.so", &opencl_library, &err) == 0;
	int have_cuda = find_library("libgpuprof-cuda.so", &cuda_library, &err) == 0;
	if (!have_opencl && !have_cuda)
		die("%s: no recording library found beside gpuprof (in '%s'): it was built "
		    "without the OpenCL headers and without the CUDA toolkit", command_name,
		    opencl_library.buf);
	const char *old_preload = getenv("LD_PRELOAD");
	dl_iterate_phdr(find_sanitizer_runtime, &preload);
	if (find_library("libgpuprof-recorder.so", &recorder_library, &err) == 0)
		strbuf_addf(&preload, "%s%s", preload.len ? ":" : "", recorder_library.buf);
	if (have_opencl) {
		strbuf_addf(&preload, "%s%s", preload.len ? ":" : "", opencl_library.buf);
		find_opencl_loader();
		if (find_library("opencl", &opencl_library, &err) == 0)
			library_path_prepend(opencl_library.buf);
	}
	if (old_preload && *old_preload)
		strbuf_addf(&preload, ":%s", old_preload);
	setenv("LD_PRELOAD", preload.buf, 1);
	if (have_cuda) {
		/* The driver loads one injection library: one already named (Nsight Systems,
		 * Nsight Compute, compute-sanitizer) keeps its place. */
		const char *injection = getenv("CUDA_INJECTION64_PATH");
		if (injection && *injection && strcmp(injection, "none") &&
		    strcmp(injection, cuda_library.buf))
			warn("CUDA_INJECTION64_PATH already names '%s' (another CUDA tool): CUDA "
			     "work is not traced", injection);
		else
			setenv("CUDA_INJECTION64_PATH", cuda_library.buf, 1);
	}
	make_markers_findable();
	strbuf_release(&opencl_library);
	strbuf_release(&cuda_library);
	strbuf_release(&preload);
	strbuf_release(&recorder_library);
}

/* Runs the program once as j says, with outputs under `directory`. Returns the
 * program's status as gpuprof's exit code; dies when the program cannot start. */
static int job_run(struct job *j, const char *directory, char **command)
{
	const struct trace_options *o = &j->o;
	struct strbuf manifest = STRBUF_INIT;
	struct error err;
	check_buffer_sizes(o);
	int bad_name = 0;
	if (check_output_directory(directory, o->file, &bad_name, &err))
		die_with(bad_name ? EXIT_USAGE : EXIT_FAILURE, "%s: %s", command_name, err.message);
	if (prepare_manifest(&manifest, &err))
		die("%s: %s", command_name, err.message);
	if (j->defaulted)
		warn("no tracing option given: tracing kernels (see --runtime-trace, --sys-trace)");
	if (o->mangled == 1)
		setenv("GPUPROF_MANGLED_KERNELS", "1", 1);
	else
		unsetenv("GPUPROF_MANGLED_KERNELS");
	struct strbuf nvtx = STRBUF_INIT;
	if (find_library("libgpuprof-nvtx.so", &nvtx, &err) == 0) {
		/* NVTX loads one injection library; one already named (Nsight Systems) keeps
		 * it */
		const char *named = getenv("NVTX_INJECTION64_PATH");
		int ours = named && !strcmp(named, nvtx.buf);
		if (!strstr(j->trace.buf, "marker")) {
			if (ours)
				unsetenv("NVTX_INJECTION64_PATH");
		} else if (named && *named && !ours) {
			warn("NVTX_INJECTION64_PATH already names '%s' (another tool): NVTX ranges "
			     "are not recorded", named);
		} else {
			setenv("NVTX_INJECTION64_PATH", nvtx.buf, 1);
		}
	}
	strbuf_release(&nvtx);
	if (o->selected_regions == 1)
		setenv("GPUPROF_SELECTED_REGIONS", "1", 1);
	else
		unsetenv("GPUPROF_SELECTED_REGIONS");
	if (j->periods.len)
		setenv("GPUPROF_COLLECTION_PERIOD", j->periods.buf, 1);
	else
		unsetenv("GPUPROF_COLLECTION_PERIOD");
	setenv("GPUPROF_TRACE", j->trace.buf, 1);
	/* the counters are collected for the kernels the filters keep */
	const struct {
		const char *name, *value;
	} counter_env[] = {
		{ "GPUPROF_PMC", j->pmc.len ? j->pmc.buf : NULL },
		{ "GPUPROF_PMC_MULTIPLEX", j->pmc.len ? o->pmc_multiplex : NULL },
		{ "GPUPROF_KERNEL_INCLUDE_REGEX", j->pmc.len ? o->kernel_include : NULL },
		{ "GPUPROF_KERNEL_EXCLUDE_REGEX", j->pmc.len ? o->kernel_exclude : NULL },
		{ "GPUPROF_KERNEL_ITERATION_RANGE", j->pmc.len ? o->kernel_iterations : NULL },
	};
	for (size_t i = 0; i < sizeof(counter_env) / sizeof(counter_env[0]); i++)
		if (counter_env[i].value)
			setenv(counter_env[i].name, counter_env[i].value, 1);
		else
			unsetenv(counter_env[i].name);
	if (j->sample_freq)
		set_env_number("GPUPROF_SAMPLE_FREQ", j->sample_freq);
	else
		unsetenv("GPUPROF_SAMPLE_FREQ");
	if (j->sample_realtime)
		setenv("GPUPROF_SAMPLE_REALTIME", "1", 1);
	else
		unsetenv("GPUPROF_SAMPLE_REALTIME");
	if (j->launch_stacks)
		setenv("GPUPROF_LAUNCH_STACKS", "1", 1);
	else
		unsetenv("GPUPROF_LAUNCH_STACKS");
	/* CPython 3.12 and later name their functions in /tmp/perf-PID.map when asked to;
	 * a user's own setting is kept, and so is the map then */
	static int user_perf_support = -1;
	if (user_perf_support < 0)
		user_perf_support = getenv("PYTHONPERFSUPPORT") != NULL;
	if (!user_perf_support && j->sample_freq) {
		setenv("PYTHONPERFSUPPORT", "1", 1);
		setenv("GPUPROF_PERF_MAP_OWNED", "1", 1);
	} else {
		if (!user_perf_support)
			unsetenv("PYTHONPERFSUPPORT");
		unsetenv("GPUPROF_PERF_MAP_OWNED");
	}
	/* metrics join the spools: every process has one, whatever it uses */
	if (j->metrics.host || j->metrics.device)
		setenv("GPUPROF_RECORD_AT_START", "1", 1);
	else
		unsetenv("GPUPROF_RECORD_AT_START");
	/* absolute: the program may change directory before it writes its spool */
	struct strbuf absolute = STRBUF_INIT;
	char cwd[PATH_MAX];
	const char *relative = directory;
	while (relative[0] == '.' && relative[1] == '/')
		relative += 2;
	if (relative[0] != '/' && getcwd(cwd, sizeof(cwd)))
		strbuf_addstr(&absolute, cwd);
	if (strcmp(relative, ".") && *relative)
		strbuf_addf(&absolute, "%s%s", absolute.len ? "/" : "", relative);
	setenv("GPUPROF_OUTPUT_PATH", absolute.buf, 1);
	strbuf_release(&absolute);
	setenv("GPUPROF_OUTPUT_FILE", o->file, 1);
	setenv("GPUPROF_MANIFEST", manifest.buf, 1);
	set_env_number("GPUPROF_LAUNCH_TIME", (unsigned long long)time(NULL));
	if (o->buffer_size)
		set_env_number("GPUPROF_BUFFER_SIZE", o->buffer_size);
	else
		unsetenv("GPUPROF_BUFFER_SIZE");
	if (o->buffer_limit)
		set_env_number("GPUPROF_BUFFER_LIMIT", o->buffer_limit);
	else
		unsetenv("GPUPROF_BUFFER_LIMIT");

	int status = 0;
	struct strbuf metrics = STRBUF_INIT;
	strbuf_addf(&metrics, "%s.metrics", manifest.buf);
	int rc = run_target(command, &status, &j->metrics, metrics.buf, &err);
	if (rc < 0) {
		unlink(manifest.buf);
		die_with(rc < -1 ? -rc : EXIT_FAILED, "%s: %s", command_name, err.message);
	}
	snprintf(manifest_path, sizeof(manifest_path), "%s", manifest.buf);
	for (int gpu = 0; gpu < 2; gpu++) { /* for the interrupt handler, which cannot allocate */
		struct strbuf path = STRBUF_INIT;
		metrics_file(&path, metrics.buf, gpu);
		snprintf(metrics_paths[gpu], sizeof(metrics_paths[gpu]), "%s", path.buf);
		strbuf_release(&path);
	}
	struct sigaction interrupt = { .sa_handler = interrupt_output, .sa_flags = SA_RESTART };
	sigaction(SIGINT, &interrupt, NULL);
	sigaction(SIGTERM, &interrupt, NULL);
	sigaction(SIGHUP, &interrupt, NULL);
	int failed = post_process(manifest.buf, metrics.buf, directory, &j->request,
				  o->keep_spool == 1);
	unlink(manifest.buf);
	metrics_remove(metrics.buf);
	strbuf_release(&manifest);
	strbuf_release(&metrics);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	int code = WIFEXITED(status) ? WEXITSTATUS(status) : EXIT_FAILED;
	return code == 0 && failed ? EXIT_FAILED : code;
}

/* A preset file: <bin>/../share/gpuprof/presets/NAME.yaml. */
static int read_preset(const char *name, struct input_file *in, struct error *err)
{
	struct strbuf dir = STRBUF_INIT, path = STRBUF_INIT;
	int rc = presets_directory(&dir, err);
	if (rc == 0 && (!*name || strchr(name, '/'))) {
		rc = error_set(err, "unknown preset '%s'", name);
	} else if (rc == 0) {
		strbuf_addf(&path, "%s/%s.yaml", dir.buf, name);
		if (access(path.buf, R_OK) < 0) {
			struct strbuf names = STRBUF_INIT;
			presets_list(dir.buf, &names);
			rc = error_set(err, "unknown preset '%s' (available: %s)", name,
				       names.len ? names.buf : "none");
			strbuf_release(&names);
		} else {
			rc = input_read(path.buf, in, err);
			if (rc == 0 && in->count != 1) {
				input_release(in);
				rc = error_set(err, "%s: a preset is one job", path.buf);
			}
		}
	}
	strbuf_release(&dir);
	strbuf_release(&path);
	return rc;
}

/* gpuprof trace and gpuprof sys: the same options from different defaults. */
static int trace_main(int argc, char **argv, const struct trace_options *base,
		      const char *usage_text, const char *description_text)
{
	struct trace_options o = *base;
	struct option table[TABLE_SIZE];
	trace_table(&o, table);
	struct error err;
	int next;
	if (options_parse(table, argc, argv, &next, &err))
		die_with(EXIT_USAGE, "%s: %s", command_name, err.message);
	if (o.help == 1) {
		options_print_help(stdout, usage_text, description_text, table);
		printf("\nPlaceholders in -d and -o: %%pid%% %%ppid%% %%hostname%% %%rank%% %%size%% "
		       "%%nid%% %%env{NAME}%% %%q{NAME}\n%%launch_date%% %%launch_time%%. Boolean "
		       "options take =false to turn off a part of an\naggregate: --sys-trace "
		       "--opencl-trace=false.\n");
		return 0;
	}
	if (next >= argc)
		die_with(EXIT_USAGE, "%s: no command given (usage: %s)", command_name, usage_text);

	/* the preset first, then the configuration file, then the command line over both */
	struct input_file preset = { 0 }, config = { 0 }, input = { 0 };
	if (o.preset || o.config) {
		const char *name = o.preset, *path = o.config;
		if (name && read_preset(name, &preset, &err))
			die_with(EXIT_USAGE, "%s: --preset: %s", command_name, err.message);
		if (path && input_read(path, &config, &err))
			die_with(EXIT_USAGE, "%s: --config: %s", command_name, err.message);
		if (path && config.count != 1)
			die_with(EXIT_USAGE, "%s: --config: '%s' holds %zu jobs: a configuration file "
				 "is one (-i runs a list of jobs)", command_name, path, config.count);
		o = *base;
		if (name && input_apply(&preset, &preset.jobs[0], table, command_line_only, &err))
			die_with(EXIT_USAGE, "%s: --preset %s: %s", command_name, name, err.message);
		if (path && input_apply(&config, &config.jobs[0], table, command_line_only, &err))
			die_with(EXIT_USAGE, "%s: --config: %s", command_name, err.message);
		if (options_parse(table, argc, argv, &next, &err))
			die_with(EXIT_USAGE, "%s: %s", command_name, err.message);
	}
	/* then each job of the input file over both; every job is checked before any runs */
	size_t job_count = 1;
	if (o.input) {
		if (input_read(o.input, &input, &err))
			die_with(EXIT_USAGE, "%s: %s", command_name, err.message);
		job_count = input.count;
	}
	struct job *jobs = xcalloc(job_count, sizeof(*jobs));
	for (size_t i = 0; i < job_count; i++) {
		jobs[i].o = o;
		if (o.input) {
			struct option job_table[TABLE_SIZE];
			trace_table(&jobs[i].o, job_table);
			if (input_apply(&input, &input.jobs[i], job_table, command_line_only, &err))
				die_with(EXIT_USAGE, "%s: %s", command_name, err.message);
		}
		if (job_prepare(&jobs[i], &err)) {
			if (o.input)
				die_with(EXIT_USAGE, "%s: %s, job %zu: %s", command_name, o.input, i + 1,
					 err.message);
			die_with(EXIT_USAGE, "%s: %s", command_name, err.message);
		}
	}

	place_libraries();
	int code = 0;
	for (size_t i = 0; i < job_count && code == 0; i++) {
		struct strbuf directory = STRBUF_INIT;
		strbuf_addstr(&directory, jobs[i].o.directory);
		if (o.input) {
			strbuf_addf(&directory, "/pass_%zu", i + 1);
			if (job_count > 1)
				fprintf(stderr, "gpuprof: job %zu of %zu, into %s\n", i + 1, job_count,
					directory.buf);
		}
		code = job_run(&jobs[i], directory.buf, argv + next);
		strbuf_release(&directory);
	}
	for (size_t i = 0; i < job_count; i++)
		job_release(&jobs[i]);
	free(jobs);
	input_release(&input);
	input_release(&preset);
	input_release(&config);
	return code;
}

int cmd_trace(int argc, char **argv)
{
	return trace_main(argc, argv, &defaults, usage, description);
}

int cmd_sys(int argc, char **argv)
{
	struct trace_options base = sys_defaults();
	command_name = "sys";
	return trace_main(argc, argv, &base, sys_usage, sys_description);
}

void trace_config_template(struct strbuf *out)
{
	struct trace_options o = sys_defaults();
	struct option table[TABLE_SIZE];
	trace_table(&o, table);
	strbuf_addstr(out,
		"# gpuprof configuration: pass it back with `gpuprof sys -c FILE -- COMMAND` (or\n"
		"# gpuprof trace -c FILE). Keys are the long options of gpuprof trace and gpuprof\n"
		"# sys, with - or _. What is set here overrides a --preset; the command line\n"
		"# overrides both. The keys set are gpuprof sys's defaults; uncomment the others\n"
		"# to use them.\n");
	for (const struct option *t = table; t->long_name || t->help; t++) {
		if (t->type == OPTION_SECTION) {
			strbuf_addf(out, "\n# ---- %s\n", t->help);
			continue;
		}
		int refused = 0;
		for (const char *const *r = command_line_only; *r; r++)
			refused |= !strcmp(*r, t->long_name);
		if (refused)
			continue;
		strbuf_addf(out, "# %s\n", t->help);
		switch (t->type) {
		case OPTION_BOOL: {
			int on = *(int *)t->value == 1;
			strbuf_addf(out, "%s%s: %s\n", on ? "" : "# ", t->long_name,
				    on ? "true" : "false");
			break;
		}
		case OPTION_STRING:
		case OPTION_ENUM: {
			const char *v = *(const char **)t->value;
			int set = v && (!strcmp(t->long_name, "sampling-interval") ||
					!strcmp(t->long_name, "sampling-freq"));
			strbuf_addf(out, "%s%s: %s\n", set ? "" : "# ", t->long_name,
				    v ? v : t->arg_name);
			break;
		}
		case OPTION_LIST:
			strbuf_addf(out, "# %s: [%s]\n", t->long_name, t->arg_name);
			break;
		case OPTION_SIZE:
			strbuf_addf(out, "# %s: %s\n", t->long_name, t->arg_name);
			break;
		case OPTION_SECTION:
			break;
		}
	}
}

