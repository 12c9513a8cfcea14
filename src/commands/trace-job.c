/* gpuprof trace (and sys): the options as parsed turned into a job, checked before any
 * run begins: the seeds' options mapped, the periods, filters, formats, metrics and
 * sampling settings read, the counters planned (trace-counters.c). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands/trace.h"
#include "core/kernel-filter.h"
#include "core/record.h"
#include "util/error.h"
#include "util/strbuf.h"

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

/* Says once on stderr what a seed's option was taken as. */
static void said_once(int *said, const char *text)
{
	if (!*said)
		fprintf(stderr, "gpuprof: %s\n", text);
	*said = 1;
}

/* An output format added to those of -f. */
static void add_format(struct trace_options *o, const char *format)
{
	if (o->formats.count < (int)(sizeof(o->formats.items) / sizeof(o->formats.items[0])))
		o->formats.items[o->formats.count++] = (char *)format;
}

/* The options of rocprofv3, rocprof, rocprofv2 and rocprof-sys-run/-sample that have a
 * meaning here, turned into gpuprof's (an option given as well keeps its value). */
static int map_seed_options(struct trace_options *o, struct error *err)
{
	static int said[4];
	if (o->hip == 1) {
		said_once(&said[0], "--hip-trace: HIP is AMD's runtime API; traced here as the CUDA "
				    "runtime and OpenCL API calls (--cuda-runtime-trace "
				    "--opencl-trace)");
		if (o->cuda_runtime == -1)
			o->cuda_runtime = 1;
		if (o->opencl == -1)
			o->opencl = 1;
	}
	if (o->hsa == 1) {
		said_once(&said[1], "--hsa-trace: HSA is the layer below HIP; traced here as the "
				    "CUDA driver API calls (--cuda-driver-trace)");
		if (o->cuda_driver == -1)
			o->cuda_driver = 1;
	}
	if (o->roctx == 1 && o->marker == -1)
		o->marker = 1; /* the same thing under ROCm's name: nothing to say */
	const char *format = o->plugin && !strcmp(o->plugin, "perfetto") ? "pftrace"
			     : o->plugin ? "csv" : NULL;
	if (format) {
		said_once(&said[2], !strcmp(format, "pftrace")
			  ? "--plugin perfetto: --output-format pftrace"
			  : "--plugin file: --output-format csv");
		add_format(o, format);
	}
	if (o->sys_trace_file == 1) {
		said_once(&said[3], "--trace (rocprof-sys-run): a Perfetto trace, --output-format "
				    "pftrace");
		add_format(o, "pftrace");
	}
	if (o->sys_profile == 1 && o->sample == -1)
		o->sample = 1;
	if (o->sys_include && strcmp(o->sys_include, "all"))
		return error_set(err, "--include %s: gpuprof sys records every source it has "
				 "(-I all); turn one off with --no-sample, --no-host-metrics or "
				 "--no-device-metrics, and choose what is traced with the trace options",
				 o->sys_include);
	return 0;
}

/* A number of bytes of stack to copy (K for KiB), from 8 to SAMPLE_STACK_MAX (64K taken
 * as it), into *bytes in whole words: 0, or -1 with the option named. */
static int parse_stack_bytes(const char *text, const char *option, unsigned *bytes,
			     struct error *err)
{
	char *end;
	unsigned long long n = strtoull(text, &end, 10);
	if (end != text && (*end == 'K' || *end == 'k') && !end[1]) {
		n *= 1024;
		end++;
	}
	if (!*text || *end || text[0] == '-' || n < 8 || n > 65536)
		return error_set(err, "%s: '%s' is not a number of bytes from 8 to %d (64K is "
				 "taken as %d, the most one stack record holds: whole words)",
				 option, text, SAMPLE_STACK_MAX, SAMPLE_STACK_MAX);
	*bytes = n > SAMPLE_STACK_MAX ? SAMPLE_STACK_MAX : (unsigned)(n & ~7ull);
	return 0;
}

/* The PC sampling options as the CUDA backend reads them (GPUPROF_PC_SAMPLING). */
static int parse_pc_sampling(const struct trace_options *o, struct job *j, int counters,
			     struct error *err)
{
	j->pc_sampling[0] = '\0';
	int details = o->pc_method || o->pc_unit || o->pc_interval;
	if (o->pc_sampling == 0 && details)
		return error_set(err, "--pc-sampling-method, -unit and -interval set how the "
				 "program counter is sampled, and it is not: drop "
				 "--pc-sampling-beta-enabled=false");
	if (o->pc_sampling != 1 && !details)
		return 0;
	if (o->pc_sampling != 1)
		return error_set(err, "PC sampling is asked for with --pc-sampling-beta-enabled "
				 "(as rocprofv3 does): add it to --pc-sampling-method, -unit and "
				 "-interval");
	if (counters)
		return error_set(err, "--pc-sampling-beta-enabled and --pmc/--pmc-set cannot go "
				 "together: counters replay and serialise kernels, which changes what "
				 "the samples show; run them as two runs");
	if (!o->pc_interval != !o->pc_unit)
		return error_set(err, "--pc-sampling-interval and --pc-sampling-unit go together: "
				 "give both (or neither, for CUPTI's default period)");
	if (o->pc_method && !strcmp(o->pc_method, "host_trap"))
		fprintf(stderr, "gpuprof: --pc-sampling-method host_trap: NVIDIA GPUs sample with "
				"their own hardware sampler (as stochastic): it is used\n");
	if (!o->pc_interval) {
		snprintf(j->pc_sampling, sizeof(j->pc_sampling), "period=0");
		return 0;
	}
	if (!strcmp(o->pc_unit, "instructions"))
		return error_set(err, "--pc-sampling-unit instructions: NVIDIA's sampler counts "
				 "cycles, not instructions; use cycles or time");
	char *end;
	errno = 0;
	double value = strtod(o->pc_interval, &end);
	if (!*o->pc_interval || *end || errno || !(value > 0))
		return error_set(err, "--pc-sampling-interval: '%s' is not a positive number",
				 o->pc_interval);
	if (!strcmp(o->pc_unit, "time")) {
		snprintf(j->pc_sampling, sizeof(j->pc_sampling), "time=%.17g", value);
		return 0;
	}
	unsigned exponent = 0;
	while (exponent < 63 && (double)(1ull << exponent) < value)
		exponent++;
	if (value != (double)(1ull << exponent) || exponent < 5 || exponent > 31) {
		char nearest[48];
		if (exponent <= 5)
			snprintf(nearest, sizeof(nearest), "32 at the least");
		else if (exponent > 31)
			snprintf(nearest, sizeof(nearest), "2147483648 at the most");
		else
			snprintf(nearest, sizeof(nearest), "%llu or %llu?", 1ull << (exponent - 1),
				 1ull << exponent);
		return error_set(err, "--pc-sampling-interval %s cycles: NVIDIA's sampler takes a "
				 "power of two from 32 to 2147483648 cycles (%s)", o->pc_interval,
				 nearest);
	}
	snprintf(j->pc_sampling, sizeof(j->pc_sampling), "period=%u", exponent);
	return 0;
}

int trace_job_prepare(struct job *j, struct error *err)
{
	struct trace_options *o = &j->o;
	strbuf_init(&j->trace);
	strbuf_init(&j->periods);
	strbuf_init(&j->pmc);
	memset(&j->filter, 0, sizeof(j->filter));
	if (map_seed_options(o, err))
		return -1;
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
	if (o->marker == 0 && o->torch_trace == 1)
		return error_set(err, "--torch-trace records PyTorch's operators as marker ranges: "
				 "it cannot go with --marker-trace=false");
	int runtime = o->sys > 0 || o->runtime == 1;
	struct {
		int *option, implied;
		const char *token;
	} parts[] = {
		{ &o->kernel, runtime, "kernel" },
		{ &o->memory_copy, runtime, "memory_copy" },
		{ &o->memory_allocation, runtime, "memory_allocation" },
		{ &o->opencl, runtime, "opencl_api" },
		{ &o->cuda_runtime, runtime, "cuda_api" },
		{ &o->cuda_driver, o->sys > 0, "cuda_driver_api" },
		{ &o->marker, runtime || o->kernel_rename == 1 || o->torch_trace == 1, "marker" },
		{ &o->mpi, 0, "mpi" },
		{ &o->nccl, 0, "nccl" },
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
	if (o->nvtx_include && o->nvtx_exclude)
		return error_set(err, "--nvtx-domain-include and --nvtx-domain-exclude cannot go "
				 "together");
	if ((o->nvtx_include || o->nvtx_exclude) && !strstr(j->trace.buf, "marker"))
		return error_set(err, "%s chooses the NVTX domains whose markers are recorded, "
				 "and markers are not: add --marker-trace", o->nvtx_include ?
				 "--nvtx-domain-include" : "--nvtx-domain-exclude");
	if ((o->nvtx_include && !*o->nvtx_include) || (o->nvtx_exclude && !*o->nvtx_exclude))
		return error_set(err, "%s: no domain named", o->nvtx_include ?
				 "--nvtx-domain-include" : "--nvtx-domain-exclude");
	if (o->selected_regions == 1 && o->periods.count)
		return error_set(err, "--selected-regions and --collection-period cannot go "
				 "together");
	if (o->nvtx_capture) {
		const char *at = strrchr(o->nvtx_capture, '@');
		if (at == o->nvtx_capture || !*o->nvtx_capture || (at && !at[1]))
			return error_set(err, "--nvtx-capture: '%s' is not NAME, NAME@DOMAIN or "
					 "NAME@*", o->nvtx_capture);
		if (o->periods.count || o->selected_regions == 1)
			return error_set(err, "--nvtx-capture and %s cannot go together: both "
					 "start and stop collection", o->periods.count ?
					 "--collection-period" : "--selected-regions");
		if (!strstr(j->trace.buf, "marker"))
			return error_set(err, "--nvtx-capture follows marker ranges, and markers are "
					 "not traced: add --marker-trace");
		if (o->nvtx_include || o->nvtx_exclude)
			return error_set(err, "--nvtx-capture cannot go with %s: the capture range "
					 "must be seen whatever its domain", o->nvtx_include ?
					 "--nvtx-domain-include" : "--nvtx-domain-exclude");
	}
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
	const char *sampling = o->sampling_freq != trace_defaults.sampling_freq ? "--sampling-freq"
			       : o->sampling_realtime == 1 ? "--sampling-realtime"
			       : o->gil == 1 ? "--gil"
			       : o->sampling_stack ? "--sampling-stack-size" : NULL;
	if (o->sample != 1 && sampling)
		return error_set(err, "%s sets how call stacks are sampled, and none are: add "
				 "--sample (gpuprof trace samples only when asked; gpuprof sys unless "
				 "--no-sample)", sampling);
	if (!j->metrics.host && !j->metrics.device &&
	    o->sampling_interval != trace_defaults.sampling_interval)
		return error_set(err, "--sampling-interval sets how often metrics are sampled, and "
				 "none are: add --host-metrics or --device-metrics (gpuprof sys samples "
				 "both unless turned off)");
	j->launch_stacks = o->launch_stacks == 1 ? SAMPLE_STACK_BYTES : 0;
	if (o->launch_stack && !j->launch_stacks)
		return error_set(err, "--launch-stack-size sets how much of each launch's stack is "
				 "copied, and none is: add --launch-stacks");
	if (o->launch_stack &&
	    parse_stack_bytes(o->launch_stack, "--launch-stack-size", &j->launch_stacks, err))
		return -1;
	if (o->cuda_graph_trace && !strstr(j->trace.buf, "kernel"))
		return error_set(err, "--cuda-graph-trace sets how the kernels of CUDA graphs are "
				 "traced, and kernels are not: add --kernel-trace");
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
	j->sample_gil = j->sample_freq && o->gil == 1;
	j->sample_stack = SAMPLE_STACK_DEFAULT;
	if (o->sampling_stack &&
	    parse_stack_bytes(o->sampling_stack, "--sampling-stack-size", &j->sample_stack, err))
		return -1;
	if (parse_pc_sampling(o, j, counters, err))
		return -1;
	return counters ? trace_plan_counters(j, err) : 0;
}

void trace_job_release(struct job *j)
{
	strbuf_release(&j->pmc);
	strbuf_release(&j->trace);
	strbuf_release(&j->periods);
	kernel_filter_release(&j->filter);
}
