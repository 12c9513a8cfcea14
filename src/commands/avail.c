/* gpuprof avail: what this installation can collect: its recording libraries and the
 * presets of `gpuprof trace --preset`. */
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "commands/commands.h"
#include "commands/input-file.h"
#include "compute/catalog.h"
#include "compute/host.h"
#include "core/record.h"
#include "core/sample-event.h"
#include "metrics/metrics.h"
#include "util/error.h"
#include "util/install.h"
#include "util/options.h"
#include "util/strbuf.h"

static const char usage[] = "gpuprof avail [--presets] [-G FILE]";
static const char description[] =
	"Lists what this gpuprof can collect: the recording libraries it was built with, the\n"
	"call-stack sampling and the metrics gpuprof sys can use on this machine (and why one\n"
	"cannot be), what gpuprof compute has (its metric catalog, the chips CUPTI's host API\n"
	"knows, the GPU here), and the presets of `gpuprof trace --preset NAME`, each with its\n"
	"description and the options it sets.";

/* One preset: its name, description and options as a command line. */
static int print_preset(const char *dir, const char *name, struct error *err)
{
	struct strbuf path = STRBUF_INIT, options = STRBUF_INIT;
	struct input_file in;
	strbuf_addf(&path, "%s/%s.yaml", dir, name);
	int rc = input_read(path.buf, &in, err);
	if (rc == 0) {
		const struct input_job *job = &in.jobs[0];
		for (size_t i = 0; i < job->count; i++) {
			const char *arg = job->settings[i].argument;
			size_t len = strlen(arg);
			/* "--x=true" reads "--x" */
			if (len > 5 && !strcmp(arg + len - 5, "=true"))
				strbuf_addf(&options, " %.*s", (int)(len - 5), arg);
			else
				strbuf_addf(&options, " %s", arg);
		}
		printf("  %-14s %s\n  %-14s options:%s\n", name,
		       job->description ? job->description : "", "", options.buf);
		input_release(&in);
	}
	strbuf_release(&path);
	strbuf_release(&options);
	return rc;
}

static void print_libraries(void)
{
	static const struct {
		const char *file, *what;
	} libraries[] = {
		{ "libgpuprof-opencl.so", "OpenCL: every OpenCL device (preloaded)" },
		{ "libgpuprof-cuda.so", "CUDA: NVIDIA GPUs through CUPTI (named to the driver); PC "
		  "sampling with stall reasons (--pc-sampling-beta-enabled, compute capability 7.0 "
		  "and later)" },
		{ "libgpuprof-nvtx.so", "NVTX ranges and marks (named to NVTX)" },
		{ "markers/libroctx64.so.4", "ROCTX ranges and marks (libroctx64, on the library path)" },
	};
	struct strbuf dir = STRBUF_INIT;
	struct error err;
	printf("recording libraries:\n");
	if (install_path("lib/gpuprof", &dir, &err) == 0) {
		for (size_t i = 0; i < sizeof(libraries) / sizeof(libraries[0]); i++) {
			struct strbuf path = STRBUF_INIT;
			strbuf_addf(&path, "%s/%s", dir.buf, libraries[i].file);
			FILE *f = fopen(path.buf, "re");
			printf("  %-3s %s\n", f ? "yes" : "no", libraries[i].what);
			if (f)
				fclose(f);
			strbuf_release(&path);
		}
	}
	strbuf_release(&dir);
	printf("\n");
}

/* The call-stack sampling sources, tried the way the recorder uses them. */
static void print_sampling(void)
{
	char paranoid[16] = "?";
	FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "re");
	if (f) {
		if (!fgets(paranoid, sizeof(paranoid), f))
			snprintf(paranoid, sizeof(paranoid), "?");
		paranoid[strcspn(paranoid, "\n")] = '\0';
		fclose(f);
	}
	printf("call-stack sampling (gpuprof sys, --sample):\n");
	struct perf_event_attr a;
	sample_event_attr(&a, 300, 1ull << 6 | 1ull << 7 | 1ull << 8 /* bp, sp, ip */,
			  SAMPLE_STACK_DEFAULT);
	a.disabled = 1;
	int fd = (int)syscall(SYS_perf_event_open, &a, 0, 0, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd >= 0) {
		printf("  yes CPU time: software perf event task-clock per CPU (perf_event_paranoid %s); "
		       "%d bytes of stack copied per sample, up to %d (--sampling-stack-size)\n",
		       paranoid, SAMPLE_STACK_DEFAULT, SAMPLE_STACK_MAX);
		close(fd);
	} else {
		printf("  no  CPU time: perf_event_open: %s (perf_event_paranoid %s: 3 or more refuses "
		       "users; so may a container's seccomp filter)\n", strerror(errno), paranoid);
	}
	char path[64], text[256];
	snprintf(path, sizeof(path), "/proc/self/task/%ld/syscall", (long)syscall(SYS_gettid));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, text, sizeof(text)) : -1;
	int failure = n < 0 ? errno : 0;
	if (fd >= 0)
		close(fd);
	long word = 42, copy = 0;
	struct iovec local = { &copy, sizeof(copy) }, remote = { &word, sizeof(word) };
	if (n <= 0)
		printf("  no  wall clock (--sampling-realtime): %s: %s\n", path,
		       failure ? strerror(failure) : "empty");
	else if (process_vm_readv(getpid(), &local, 1, &remote, 1, 0) != (ssize_t)sizeof(copy))
		printf("  no  wall clock (--sampling-realtime): process_vm_readv: %s\n",
		       strerror(errno));
	else
		printf("  yes wall clock (--sampling-realtime): threads off the CPU from "
		       "/proc/PID/task/TID/syscall\n");
	printf("  Python functions: CPython 3.11, 3.12 and 3.13 from their frames, read at every "
	       "tick; code a JIT compiler names in a perf map from that map\n");
#if defined(__x86_64__)
	printf("  yes launch call stacks (--launch-stacks): each kernel launch and copy's thread, "
	       "copied by the thread itself (OpenCL; CUDA through CUPTI's callback), with its Python "
	       "functions\n");
#else
	printf("  no  launch call stacks (--launch-stacks): x86-64 only\n");
#endif
	printf("  stacks are unwound after the run with elfutils' libdw %s\n\n", dwfl_version(NULL));
}

/* What gpuprof compute can do: the catalog, CUPTI's chips, and whether this machine's
 * GPU lets counters be collected. */
static void print_compute(void)
{
	printf("hardware counters (gpuprof compute):\n");
	struct error err;
	struct strbuf dir = STRBUF_INIT;
	struct catalog c;
	if (install_path("share/gpuprof/catalog", &dir, &err) || catalog_load(dir.buf, &c, &err)) {
		printf("  no  metric catalog: %s\n", err.message);
	} else {
		size_t metrics = 0;
		for (size_t b = 0; b < c.count; b++)
			for (size_t t = 0; t < c.blocks[b].count; t++)
				metrics += c.blocks[b].tables[t].count;
		printf("  yes metric catalog: %zu blocks, %zu metrics (%s)\n", c.count, metrics, dir.buf);
		catalog_release(&c);
	}
	strbuf_release(&dir);
	struct host_api api;
	const char *const *chips;
	size_t count = 0;
	if (host_load(&api, &err)) {
		printf("  no  %s\n\n", err.message);
		return;
	}
	if (api.chips(&chips, &count) == 0) {
		printf("  yes CUPTI's profiler host API: chips");
		for (size_t i = 0; i < count; i++)
			printf(" %s", chips[i]);
		printf("\n");
	}
	const char *chip = api.device_chip(0);
	if (chip)
		printf("  yes the GPU here: %s: counters are collected (trace --pmc, compute "
		       "profile -- COMMAND)\n\n", chip);
	else
		printf("  no  NVIDIA GPU here: no counters can be collected; gpuprof compute plans "
		       "for a chip named with --chip\n\n");
	host_unload(&api);
}

int cmd_avail(int argc, char **argv)
{
	int presets_only = -1, help = -1;
	const char *generate = NULL;
	const struct option table[] = {
		{ OPTION_BOOL, 0, "presets", &presets_only, NULL,
		  "only the presets of gpuprof trace --preset" },
		{ OPTION_STRING, 'G', "generate-config", &generate, "FILE",
		  "write a commented configuration of gpuprof sys's defaults to FILE (- for "
		  "stdout), to edit and pass back with -c FILE" },
		{ OPTION_BOOL, 'h', "help", &help, NULL, "show this help" },
		OPTION_END,
	};
	struct error err;
	int next;
	if (options_parse(table, argc, argv, &next, &err))
		die_with(EXIT_USAGE, "avail: %s", err.message);
	if (help == 1) {
		options_print_help(stdout, usage, description, table);
		return 0;
	}
	if (next < argc)
		die_with(EXIT_USAGE, "avail: unexpected argument '%s' (usage: %s)", argv[next], usage);
	if (generate) {
		struct strbuf text = STRBUF_INIT;
		trace_config_template(&text);
		int to_stdout = !strcmp(generate, "-");
		FILE *f = to_stdout ? stdout : fopen(generate, "we");
		int failed = !f || fwrite(text.buf, 1, text.len, f) != text.len;
		if (f && !to_stdout && fclose(f))
			failed = 1;
		strbuf_release(&text);
		if (failed)
			die("avail: cannot write '%s': %s", generate, strerror(errno));
		if (!to_stdout)
			fprintf(stderr, "gpuprof: wrote %s (gpuprof sys -c %s -- COMMAND)\n", generate,
				generate);
		return 0;
	}
	if (presets_only != 1) {
		print_libraries();
		print_sampling();
		print_compute();
		struct strbuf metrics = STRBUF_INIT;
		metrics_describe(&metrics);
		printf("metrics (gpuprof sys, --host-metrics, --device-metrics):\n");
		for (char *save = NULL, *line = strtok_r(metrics.buf, "\n", &save); line;
		     line = strtok_r(NULL, "\n", &save))
			printf("  %s\n", line);
		printf("\n");
		strbuf_release(&metrics);
	}
	struct strbuf dir = STRBUF_INIT, names = STRBUF_INIT;
	if (presets_directory(&dir, &err))
		die("avail: %s", err.message);
	presets_list(dir.buf, &names);
	printf("presets (gpuprof trace --preset NAME):\n");
	if (!names.len)
		printf("  none found in %s\n", dir.buf);
	int rc = 0;
	for (char *save = NULL, *name = strtok_r(names.buf, ", ", &save); name && rc == 0;
	     name = strtok_r(NULL, ", ", &save))
		rc = print_preset(dir.buf, name, &err);
	strbuf_release(&dir);
	strbuf_release(&names);
	if (rc)
		die("avail: %s", err.message);
	return 0;
}
