/* gpuprof roofline: the empirical roofline of a device, measured by microbenchmarks
 * (a helper program per backend speaks the line protocol described in
 * inject/opencl/roofline.c), cached per device, written as roofline.csv and plotted. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "commands/commands.h"
#include "core/paths.h"
#include "roofline/roofline.h"
#include "util/error.h"
#include "util/install.h"
#include "util/options.h"
#include "util/progress.h"
#include "util/strbuf.h"

static const char usage[] =
	"gpuprof roofline [--backend cuda|opencl] [--device N] [--quick] [-d DIR]";
static const char description[] =
	"Measures what a device really reaches, memory level by memory level and data type\n"
	"by data type: device memory (copy, and read only), a working set that fits the\n"
	"second-level cache and one that fits the first (their sizes from the device, or for\n"
	"a CPU from the CPU), local memory, and FP64, FP32, FP16 (with cl_khr_fp16) and INT32\n"
	"multiply-adds, on any OpenCL device (a GPU, or the CPU through PoCL); on an NVIDIA GPU\n"
	"in CUDA, device memory, L2, L1 and shared memory, FP64, FP32 and FP16 (half2)\n"
	"multiply-adds, and the tensor cores on FP64, TF32, FP16, BF16, FP8 and INT8 inputs\n"
	"(Hopper's warpgroup wgmma, warp-level mma.sync on other GPUs and for FP64). Each\n"
	"ceiling is timed by the device over many experiments (100; 10 with --quick) and\n"
	"given as its mean with a 95 % confidence interval of that mean: the spread of the\n"
	"experiments of one run, not of runs apart (on a shared or loaded machine another\n"
	"run's mean may fall outside it; --rerun measures again). Writes DIR/roofline.csv\n"
	"(rocprof-compute's columns: <ceiling>, <ceiling>Low, <ceiling>High, in GB/s and\n"
	"GFLOP/s; empty where the device cannot be measured) and DIR/roofline.html, the plot\n"
	"of the ceilings.\n"
	"Results are cached per device (in $XDG_CACHE_HOME/gpuprof/roofline) and reused by\n"
	"later runs that ask for no more experiments; a lock keeps two runs on one node (two\n"
	"ranks) from measuring at once.";

/* One device as the helper lists it. */
struct device_info {
	const char *backend; /* cuda, opencl */
	int index;
	char name[256], type[16], platform[256], driver[128];
	unsigned compute_units, clock_mhz, float_width;
	unsigned long long global_bytes, llc_bytes, l2_bytes, l1_bytes, local_bytes;
};

/* Splits a line at tabs in place; returns the number of fields. */
static int split_tabs(char *line, char **fields, int room)
{
	int n = 0;
	line[strcspn(line, "\n")] = 0;
	for (char *save = NULL, *f = strtok_r(line, "\t", &save); f && n < room;
	     f = strtok_r(NULL, "\t", &save))
		fields[n++] = f;
	return n;
}

static int parse_device(char **f, int n, struct device_info *d)
{
	if (n != 14 || strcmp(f[0], "device"))
		return -1;
	d->index = atoi(f[1]);
	snprintf(d->name, sizeof(d->name), "%s", f[2]);
	snprintf(d->type, sizeof(d->type), "%s", f[3]);
	snprintf(d->platform, sizeof(d->platform), "%s", f[4]);
	snprintf(d->driver, sizeof(d->driver), "%s", f[5]);
	d->compute_units = (unsigned)strtoul(f[6], NULL, 10);
	d->clock_mhz = (unsigned)strtoul(f[7], NULL, 10);
	d->global_bytes = strtoull(f[8], NULL, 10);
	d->llc_bytes = strtoull(f[9], NULL, 10);
	d->l2_bytes = strtoull(f[10], NULL, 10);
	d->l1_bytes = strtoull(f[11], NULL, 10);
	d->local_bytes = strtoull(f[12], NULL, 10);
	d->float_width = (unsigned)strtoul(f[13], NULL, 10);
	return 0;
}

static const char *backend_name(const char *backend)
{
	return !strcmp(backend, "cuda") ? "CUDA" : "OpenCL";
}

/* The helper program of a backend, or an empty path when it is not installed. */
static void helper_path(const char *backend, struct strbuf *path)
{
	struct error err;
	struct strbuf name = STRBUF_INIT;
	strbuf_addf(&name, "lib/gpuprof/gpuprof-roofline-%s", backend);
	if (install_path(name.buf, path, &err) || access(path->buf, X_OK) < 0)
		strbuf_reset(path);
	strbuf_release(&name);
}

/* Runs the helper with args; its stdout into a stream read by the caller (*child set). */
static FILE *run_helper(const char *backend, const char *const *args, pid_t *child)
{
	struct strbuf path = STRBUF_INIT;
	helper_path(backend, &path);
	if (!path.len)
		die("roofline: the %s microbenchmarks are not installed (gpuprof was built "
		    "without %s: scripts/install-deps.sh installs what it needs)",
		    backend_name(backend), !strcmp(backend, "cuda") ? "the CUDA toolkit" : "OpenCL");
	int fds[2];
	if (pipe(fds) < 0)
		die("roofline: cannot make a pipe: %s", strerror(errno));
	const char *argv[16] = { path.buf };
	for (int i = 0; args[i] && i < 14; i++)
		argv[i + 1] = args[i];
	fflush(NULL);
	*child = fork();
	if (*child < 0)
		die("roofline: cannot start the benchmarks: %s", strerror(errno));
	if (*child == 0) {
		dup2(fds[1], 1);
		close(fds[0]);
		close(fds[1]);
		execv(argv[0], (char **)argv);
		fprintf(stderr, "gpuprof: roofline: cannot run '%s': %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	close(fds[1]);
	strbuf_release(&path);
	FILE *out = fdopen(fds[0], "r");
	if (!out)
		die("roofline: %s", strerror(errno));
	return out;
}

/* Waits for the helper; its exit status, 128 + the signal that ended it. */
static int wait_helper(pid_t child)
{
	int status = 0;
	while (waitpid(child, &status, 0) < 0 && errno == EINTR)
		;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* The devices the helper finds; returns how many (into *out, freed by the caller), or
 * -1 when it failed (it said why on stderr). */
static int list_devices(const char *backend, struct device_info **out)
{
	pid_t child;
	const char *args[] = { "--list", NULL };
	FILE *in = run_helper(backend, args, &child);
	char line[2048], *f[16];
	int count = 0;
	*out = NULL;
	while (fgets(line, sizeof(line), in)) {
		struct device_info d;
		if (parse_device(f, split_tabs(line, f, 16), &d) == 0) {
			d.backend = backend;
			*out = xrealloc(*out, (size_t)(count + 1) * sizeof(**out));
			(*out)[count++] = d;
		}
	}
	fclose(in);
	if (wait_helper(child)) {
		free(*out);
		*out = NULL;
		return -1;
	}
	return count;
}

/* The cache file of a device (and its lock, with ".lock"), or an empty path when there
 * is no cache directory: $XDG_CACHE_HOME/gpuprof/roofline, else ~/.cache/...; the name
 * holds the host, the backend, the device's index, name and driver. */
static void cache_path(const struct device_info *d, struct strbuf *path)
{
	const char *base = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
	if (base && *base)
		strbuf_addf(path, "%s/gpuprof/roofline", base);
	else if (home && *home)
		strbuf_addf(path, "%s/.cache/gpuprof/roofline", home);
	else
		return;
	char host[256] = "host";
	gethostname(host, sizeof(host) - 1);
	struct strbuf key = STRBUF_INIT;
	strbuf_addf(&key, "%s-%s-%d-%s-%s", host, d->backend, d->index, d->name, d->driver);
	strbuf_addch(path, '/');
	for (const char *c = key.buf; *c; c++) /* a file name: letters, digits, - . _ */
		strbuf_addch(path, (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
				   (*c >= '0' && *c <= '9') || *c == '-' || *c == '.' ? *c : '_');
	strbuf_addstr(path, ".csv");
	strbuf_release(&key);
}

/* A cached result usable for this request: same device, at least as many experiments. */
static int cached(const char *path, const struct device_info *d, int experiments,
		  struct roofline *r)
{
	struct error err;
	if (!*path || access(path, R_OK) < 0)
		return 0;
	if (roofline_read_csv(path, r, &err)) {
		warn("roofline: the cache is damaged, measuring again: %s", err.message);
		return 0;
	}
	return !strcmp(r->device_name, d->name) && !strcmp(r->backend, d->backend) &&
	       r->device == d->index && r->experiments >= experiments;
}

/* roofline.csv written whole (beside its name, then renamed) or not at all. */
static int write_csv(const char *path, const struct roofline *r, struct error *err)
{
	struct strbuf partial = STRBUF_INIT;
	strbuf_addf(&partial, "%s.partial", path);
	FILE *out = fopen(partial.buf, "w");
	int rc = 0;
	if (!out) {
		rc = error_set(err, "cannot create '%s': %s", partial.buf, strerror(errno));
	} else {
		roofline_write_csv(out, r);
		if (ferror(out) | fclose(out))
			rc = error_set(err, "cannot write '%s': %s", partial.buf, strerror(errno));
		else if (rename(partial.buf, path) < 0)
			rc = error_set(err, "cannot create '%s': %s", path, strerror(errno));
		if (rc)
			unlink(partial.buf);
	}
	strbuf_release(&partial);
	return rc;
}

/* Runs the benchmarks of a device into r. */
static void measure(const struct device_info *d, int experiments, int quiet,
		    struct roofline *r)
{
	memset(r, 0, sizeof(*r));
	r->device = d->index;
	snprintf(r->device_name, sizeof(r->device_name), "%s", d->name);
	snprintf(r->backend, sizeof(r->backend), "%s", d->backend);
	r->experiments = experiments;
	char index[16], count[16];
	snprintf(index, sizeof(index), "%d", d->index);
	snprintf(count, sizeof(count), "%d", experiments);
	const char *args[] = { "--device", index, "--experiments", count, NULL };
	if (!quiet)
		fprintf(stderr, "gpuprof: roofline: measuring %s device %d, %s (%s, %s), %d "
				"experiments per ceiling\n", backend_name(d->backend), d->index,
			d->name, d->type, d->platform, experiments);
	pid_t child;
	FILE *in = run_helper(d->backend, args, &child);
	progress_begin();
	struct progress_task *task = NULL;
	char line[2048], *f[16];
	int done = 0, ceiling;
	while (fgets(line, sizeof(line), in)) {
		int n = split_tabs(line, f, 16);
		if (n == 2 && !strcmp(f[0], "plan")) {
			task = progress_task_begin("roofline", (uint64_t)atoi(f[1]));
		} else if (n == 5 && !strcmp(f[0], "result") &&
			   (ceiling = roofline_find(f[1])) >= 0) {
			struct roofline_value *v = &r->values[ceiling];
			/* the helper gives per second; the file, per 1e9 per second */
			v->mean = strtod(f[2], NULL) / 1e9;
			/* a rate is not negative: a wide interval is cut at 0 */
			v->low = fmax(0, strtod(f[3], NULL) / 1e9);
			v->high = strtod(f[4], NULL) / 1e9;
			v->measured = isfinite(v->mean) && v->mean > 0;
			progress_set(task, (uint64_t)++done);
		} else if (n == 3 && !strcmp(f[0], "skip")) {
			if (!quiet)
				progress_message("gpuprof: roofline: %s not measured: %s\n", f[1], f[2]);
			progress_set(task, (uint64_t)++done);
		}
	}
	fclose(in);
	progress_task_end(task);
	progress_end();
	int status = wait_helper(child);
	if (status)
		die("roofline: the benchmarks on device %d failed (exit status %d; see above)",
		    d->index, status);
}

/* " made 3 h 12 min ago (2026-11-27 04:00)": when the cached measurement was made, from
 * its file's time; nothing when that cannot be read. */
static void cache_age(const char *path, struct strbuf *out)
{
	struct stat st;
	time_t now = time(NULL);
	if (stat(path, &st) < 0 || now < st.st_mtime)
		return;
	long long minutes = (long long)(now - st.st_mtime) / 60;
	char when[32];
	struct tm local;
	if (!localtime_r(&st.st_mtime, &local) ||
	    !strftime(when, sizeof(when), "%Y-%m-%d %H:%M", &local))
		when[0] = '\0';
	if (minutes < 60)
		strbuf_addf(out, " made %lld min ago (%s)", minutes, when);
	else if (minutes < 48 * 60)
		strbuf_addf(out, " made %lld h %lld min ago (%s)", minutes / 60, minutes % 60, when);
	else
		strbuf_addf(out, " made %lld days ago (%s)", minutes / (24 * 60), when);
}

static void print_table(const struct roofline *r)
{
	/* the interval is of this run's mean over its experiments: another run, under
	 * another load, may give a mean outside it */
	printf("%-14s %14s %31s  %s\n", "ceiling", "mean", "95% CI of this run's mean", "unit");
	for (int c = 0; c < ROOF_COUNT; c++) {
		const struct roofline_value *v = &r->values[c];
		if (!v->measured)
			continue;
		printf("%-14s %14.2f %14.2f .. %-14.2f  %s\n", roofline_column(c), v->mean, v->low,
		       v->high, roofline_unit(c));
	}
}

int cmd_roofline(int argc, char **argv)
{
	int help = -1, quick = -1, rerun = -1, list = -1, quiet = -1;
	const char *device_text = "0", *experiments_text = NULL, *directory = ".";
	const char *backend = NULL;
	const struct option table[] = {
		{ OPTION_ENUM, 0, "backend", &backend, "cuda|opencl",
		  "which devices: NVIDIA GPUs in CUDA, or OpenCL devices (default: CUDA when a "
		  "CUDA device is here, else OpenCL)" },
		{ OPTION_STRING, 0, "device", &device_text, "N",
		  "the device: a CUDA ordinal, or an OpenCL device counted over every platform "
		  "from 0 (--list-devices; default 0)" },
		{ OPTION_BOOL, 0, "quick", &quick, NULL, "10 experiments per ceiling, not 100" },
		{ OPTION_STRING, 0, "experiments", &experiments_text, "N",
		  "experiments per ceiling, from 2 (default 100)" },
		{ OPTION_STRING, 'd', "output-directory", &directory, "DIR",
		  "where roofline.csv and roofline.html go (default: the current directory)" },
		{ OPTION_STRING, 'o', NULL, &directory, "DIR",
		  "the same as -d (the spelling of earlier versions)" },
		{ OPTION_BOOL, 0, "rerun", &rerun, NULL, "measure again rather than reuse the cache" },
		{ OPTION_BOOL, 0, "list-devices", &list, NULL, "list the backend's devices and exit" },
		{ OPTION_BOOL, 'q', "quiet", &quiet, NULL, "no table, no progress" },
		{ OPTION_BOOL, 'h', "help", &help, NULL, "show this help" },
		OPTION_END,
	};
	struct error err;
	int next;
	if (options_parse(table, argc, argv, &next, &err))
		die_with(EXIT_USAGE, "roofline: %s", err.message);
	if (help == 1) {
		options_print_help(stdout, usage, description, table);
		return 0;
	}
	if (next < argc)
		die_with(EXIT_USAGE, "roofline: '%s': no argument is taken (usage: %s)", argv[next],
			 usage);
	char *end;
	long device = strtol(device_text, &end, 10);
	if (!*device_text || *end || device < 0 || device > 1000)
		die_with(EXIT_USAGE, "roofline: --device: '%s' is not a device number", device_text);
	long experiments = quick == 1 ? 10 : 100;
	if (experiments_text) {
		experiments = strtol(experiments_text, &end, 10);
		if (!*experiments_text || *end || experiments < 2 || experiments > 100000)
			die_with(EXIT_USAGE, "roofline: --experiments: '%s' is not a whole number "
					     "from 2 to 100000", experiments_text);
	}
	struct device_info *devices = NULL;
	int count = -1, tried_cuda = 0;
	if (!backend) { /* CUDA when its helper finds a device, quietly; else OpenCL */
		struct strbuf cuda = STRBUF_INIT;
		helper_path("cuda", &cuda);
		if ((tried_cuda = cuda.len != 0)) {
			int saved = dup(2), null = open("/dev/null", O_WRONLY | O_CLOEXEC);
			if (saved >= 0 && null >= 0)
				dup2(null, 2);
			count = list_devices("cuda", &devices);
			if (saved >= 0 && null >= 0)
				dup2(saved, 2);
			if (saved >= 0)
				close(saved);
			if (null >= 0)
				close(null);
		}
		strbuf_release(&cuda);
		backend = count > 0 ? "cuda" : "opencl";
		if (count <= 0) {
			free(devices);
			count = -1;
		}
	}
	if (count < 0 && (count = list_devices(backend, &devices)) < 0)
		die("roofline: the %s devices could not be listed (see above)", backend_name(backend));
	if (list == 1) {
		for (int i = 0; i < count; i++)
			printf("%d  %s (%s, %s, driver %s): %u compute units, %u MHz\n", devices[i].index,
			       devices[i].name, devices[i].type, devices[i].platform,
			       devices[i].driver, devices[i].compute_units, devices[i].clock_mhz);
		if (!count)
			printf("no %s device\n", backend_name(backend));
		free(devices);
		return 0;
	}
	if (!count && tried_cuda)
		die("roofline: no CUDA or OpenCL device is usable here (no NVIDIA GPU, and no "
		    "OpenCL driver: PoCL runs OpenCL on the CPU)");
	if (!count)
		die("roofline: no %s device is usable here (%s)", backend_name(backend),
		    !strcmp(backend, "cuda") ? "no driver, no GPU, or one hidden by "
					       "CUDA_VISIBLE_DEVICES"
					     : "no OpenCL driver is installed: PoCL runs OpenCL on the "
					       "CPU");
	if (device >= count)
		die_with(EXIT_USAGE, "roofline: --device %ld: %d %s device%s here "
				     "(--list-devices lists them)", device, count,
			 backend_name(backend), count == 1 ? "" : "s");
	const struct device_info *d = &devices[device];

	struct strbuf csv = STRBUF_INIT, html = STRBUF_INIT, cache = STRBUF_INIT;
	strbuf_addf(&csv, "%s/roofline.csv", directory);
	strbuf_addf(&html, "%s/roofline.html", directory);
	if (path_make_parents(csv.buf, 1, &err))
		die("roofline: %s", err.message);
	cache_path(d, &cache);
	struct roofline r;
	int lock = -1, reused = 0;
	if (cache.len) {
		struct strbuf lock_path = STRBUF_INIT;
		strbuf_addf(&lock_path, "%s.lock", cache.buf);
		if (path_make_parents(lock_path.buf, 1, &err) == 0)
			lock = open(lock_path.buf, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
		if (lock >= 0 && flock(lock, LOCK_EX | LOCK_NB) < 0) {
			if (quiet != 1)
				fprintf(stderr, "gpuprof: roofline: waiting for another gpuprof "
						"roofline on this device (%s)\n", lock_path.buf);
			while (flock(lock, LOCK_EX) < 0 && errno == EINTR)
				;
		}
		if (lock < 0)
			warn("roofline: no cache: cannot open '%s': %s", lock_path.buf,
			     strerror(errno));
		strbuf_release(&lock_path);
	}
	if (lock >= 0 && rerun != 1)
		reused = cached(cache.buf, d, (int)experiments, &r);
	struct strbuf inverted = STRBUF_INIT;
	if (!reused) {
		measure(d, (int)experiments, quiet == 1, &r);
		if (roofline_check_order(&r, &inverted))
			warn("roofline: %s (--rerun measures again)", inverted.buf);
		if (lock >= 0 && write_csv(cache.buf, &r, &err))
			warn("roofline: the result is not cached: %s", err.message);
	} else {
		if (quiet != 1) {
			struct strbuf age = STRBUF_INIT;
			cache_age(cache.buf, &age);
			fprintf(stderr, "gpuprof: roofline: reusing the measurement of %s (%d "
					"experiments per ceiling)%s cached in %s (--rerun measures "
					"again)\n", r.device_name, r.experiments, age.buf, cache.buf);
			strbuf_release(&age);
		}
		if (roofline_check_order(&r, &inverted))
			warn("roofline: %s (--rerun measures again)", inverted.buf);
	}
	strbuf_release(&inverted);
	if (lock >= 0)
		close(lock);
	if (write_csv(csv.buf, &r, &err))
		die("roofline: %s", err.message);
	FILE *out = fopen(html.buf, "w");
	if (!out)
		die("roofline: cannot create '%s': %s", html.buf, strerror(errno));
	struct strbuf title = STRBUF_INIT;
	strbuf_addf(&title, "Empirical roofline of %s", r.device_name);
	roofline_plot_html(out, &r, NULL, NULL, 0, title.buf,
			   "No kernel is placed on this plot: kernels need hardware counters (the "
			   "FLOPs and the bytes of each memory level), which gpuprof reads on "
			   "NVIDIA GPUs (gpuprof compute profile), not on OpenCL devices; gpuprof "
			   "compute analyze --roofline-plot places a workload's kernels on its "
			   "ceilings.");
	if (ferror(out) | fclose(out))
		die("roofline: cannot write '%s'", html.buf);
	if (quiet != 1) {
		print_table(&r);
		fprintf(stderr, "gpuprof: roofline: %s, %s\n", csv.buf, html.buf);
	}
	strbuf_release(&title);
	strbuf_release(&csv);
	strbuf_release(&html);
	strbuf_release(&cache);
	free(devices);
	options_release();
	return 0;
}
