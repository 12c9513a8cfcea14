/* gpuprof trace (and sys): runs a program with the recording libraries in place (the
 * OpenCL one preloaded, the CUDA one named to the CUDA driver's injection hook), waits for
 * it and every process it starts, then turns each process's spool into outputs. The
 * program's exit status passes through: its exit code, or 128+N when it died of signal
 * N. This file: the options (with presets, -c and -i files); trace-job.c turns them
 * into jobs, trace-run.c runs them, trace-counters.c plans their counters. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commands/commands.h"
#include "commands/input-file.h"
#include "commands/output.h"
#include "commands/trace.h"
#include "core/kernel-filter.h"
#include "core/record.h"
#include "metrics/metrics.h"
#include "util/error.h"
#include "util/install.h"
#include "util/options.h"
#include "util/strbuf.h"

static const char usage[] = "gpuprof trace [options] -- COMMAND [ARGS...]";
static const char sys_usage[] = "gpuprof sys [options] -- COMMAND [ARGS...]\n"
				 "       gpuprof sys --pid PID [--duration SECONDS] [options]";
static const char sys_description[] =
	"Runs COMMAND as 'gpuprof trace --sys-trace' does (every API call, kernel, copy,\n"
	"allocation and marker), samples the call stacks of every thread on its CPU time\n"
	"(<prefix>_stacks.folded), and samples metrics over time: the machine (per-CPU\n"
	"utilization and frequency, memory), every process of COMMAND (CPU, memory, page\n"
	"faults, context switches, threads, I/O) and every NVIDIA GPU through NVML (power,\n"
	"energy, temperature, clocks, utilization, memory, PCIe). The options are gpuprof\n"
	"trace's; --no-sample, --no-host-metrics and --no-device-metrics turn a source off.\n"
	"With --pid, a process already running is sampled from outside (call stacks, with\n"
	"--sampling-realtime its waiting threads too, and metrics; not its GPU API calls)\n"
	"and goes on as it was whenever gpuprof ends; an option that shapes what a program\n"
	"started under gpuprof records is refused with it.";

/* The command being run: "trace" or "sys", for messages. */
const char *trace_command_name = "trace";
static const char description[] =
	"Runs COMMAND and records the GPU work it does: kernels, memory copies, allocations\n"
	"and API calls, on NVIDIA GPUs through CUPTI (any CUDA program, PyTorch included,\n"
	"without relinking) and on every OpenCL device (any vendor, and the CPU through\n"
	"PoCL). Each process COMMAND starts is recorded into files of its own, by default\n"
	"./<hostname>/<pid>_results.db and ./<hostname>/<pid>_<domain>_trace.csv.\n"
	"Recorded data reaches disk every 100 ms, so a program that crashes or is killed\n"
	"keeps everything up to its last flush (for CUDA: up to CUPTI's last delivery).";

/* gpuprof trace: unset (-1, NULL) but for what has a default */
const struct trace_options trace_defaults = {
	.kernel = -1, .memory_copy = -1, .memory_allocation = -1, .opencl = -1,
	.cuda_runtime = -1, .cuda_driver = -1, .marker = -1, .runtime = -1, .sys = -1,
	.kernel_rename = -1, .selected_regions = -1, .stats = -1, .summary = -1, .mpi = -1,
	.nccl = -1,
	.truncate = -1, .mangled = -1, .keep_spool = -1, .help = -1,
	.period_unit = "sec", .directory = ".", .file = "%hostname%/%pid%", .units = "nsec",
	.host_metrics = -1, .device_metrics = -1, .sampling_interval = "50", .sample = -1,
	.sampling_freq = "300", .sampling_realtime = -1, .gil = -1, .pc_sampling = -1,
	.buffer_size = TRACE_BUFFER_UNSET, .buffer_limit = TRACE_BUFFER_UNSET,
};

/* gpuprof sys: the same options, with everything --sys-trace records and the metrics on */
static struct trace_options sys_defaults(void)
{
	struct trace_options o = trace_defaults;
	o.sys = 2; /* on, but not given: --pid refuses a --sys-trace given */
	o.host_metrics = 1;
	o.device_metrics = 1;
	o.sample = 1;
	return o;
}

#define TABLE_SIZE 76

/* The option table of `gpuprof trace`, storing into o: for the command line, the
 * preset and each job of an input file alike. */
static void trace_table(struct trace_options *o, struct option table[TABLE_SIZE])
{
	const struct option entries[] = {
		{ OPTION_SECTION, .help = "what to trace" },
		{ OPTION_BOOL, 0, "kernel-trace", &o->kernel, NULL, "kernel executions" },
		{ OPTION_ENUM, 0, "cuda-graph-trace", &o->cuda_graph_trace, "graph|node",
		  "a CUDA graph's launch as one span (graph: a kernel named \"[CUDA graph N]\") "
		  "or each of its kernels (node, the default; each placed where it was captured), "
		  "as nsys names it; with --kernel-trace" },
		{ OPTION_BOOL, 0, "memory-copy-trace", &o->memory_copy, NULL,
		  "memory copies, fills (memsets) and maps" },
		{ OPTION_BOOL, 0, "memory-allocation-trace", &o->memory_allocation, NULL,
		  "device memory allocations and frees: OpenCL's buffers, images and pipes "
		  "(freed when the last reference goes; an image made from a buffer is the "
		  "buffer's memory, a CL_MEM_USE_HOST_PTR buffer host memory) and SVM (freed at "
		  "clSVMFree or clEnqueueSVMFree), CUDA's; each allocation with its call stack "
		  "(x86-64); the MEMORY tables of gpuprof summary" },
		{ OPTION_BOOL, 0, "opencl-trace", &o->opencl, NULL, "OpenCL API calls" },
		{ OPTION_BOOL, 0, "cuda-runtime-trace", &o->cuda_runtime, NULL,
		  "CUDA runtime API calls (cuda*) and synchronisations" },
		{ OPTION_BOOL, 0, "cuda-driver-trace", &o->cuda_driver, NULL,
		  "CUDA driver API calls (cu*) and synchronisations" },
		{ OPTION_BOOL, 0, "marker-trace", &o->marker, NULL,
		  "marker ranges and marks: gpuprof markers, ROCTX, NVTX (marker_api_trace.csv)" },
		{ OPTION_BOOL, 0, "torch-trace", &o->torch_trace, NULL,
		  "PyTorch's operators as marker ranges named by their hierarchy, a module by its "
		  "class (nn.Module.Net.forward/nn.Module.Linear.forward), with its module path "
		  "beside (Net.fc1), each kernel attributed to the innermost: Python programs "
		  "that import torch (implies --marker-trace)" },
		{ OPTION_BOOL, 0, "mpi-trace", &o->mpi, NULL,
		  "every MPI call (Open MPI, MPICH) through MPI's profiling interface: peers, "
		  "tags, bytes, collectives numbered alike on every rank, and each rank's clock "
		  "offset to rank 0 (mpi_api_trace.csv; docs/MPI.md). Give it to every rank" },
		{ OPTION_BOOL, 0, "nccl-trace", &o->nccl, NULL,
		  "every call of NCCL's (RCCL's) communication functions: collectives, sends and "
		  "receives with their bytes, root or peer, communicator and its sequence, groups "
		  "(nccl_api_trace.csv; docs/MPI.md); with --kernel-trace, the kernels each "
		  "launched (summary's COMMUNICATION CALLS: device time, bandwidths)" },
		{ OPTION_BOOL, 0, "rccl-trace", &o->nccl, NULL, "the same, as rocprofv3 names it" },
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
		{ OPTION_STRING, 0, "launch-stack-size", &o->launch_stack, "BYTES",
		  "bytes of the launching thread's stack copied per launch (default: 7936; up to "
		  "65344; K for KiB): a launch deeper than this (PyTorch's through cuDNN or "
		  "cuBLAS) loses its outermost frames, the Python ones, under one [truncated] "
		  "root; each launch copies this much at most (with --launch-stacks)" },
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
		{ OPTION_SECTION, .help = "the names of rocprofv3, rocprof and rocprofv2, and of "
					  "rocprof-sys-run and -sample, mapped (said once)" },
		{ OPTION_BOOL, 0, "hip-trace", &o->hip, NULL,
		  "HIP, AMD's runtime API: here the CUDA runtime and OpenCL API calls "
		  "(--cuda-runtime-trace --opencl-trace)" },
		{ OPTION_BOOL, 0, "hsa-trace", &o->hsa, NULL,
		  "HSA, the layer below HIP: here the CUDA driver API calls (--cuda-driver-trace)" },
		{ OPTION_BOOL, 0, "roctx-trace", &o->roctx, NULL, "ROCTX ranges: --marker-trace" },
		{ OPTION_ENUM, 0, "plugin", &o->plugin, "perfetto|file",
		  "rocprofv2's output plugins: perfetto is --output-format pftrace, file csv" },
		{ OPTION_BOOL, 0, "trace", &o->sys_trace_file, NULL,
		  "rocprof-sys-run's Perfetto trace: --output-format pftrace" },
		{ OPTION_BOOL, 0, "profile", &o->sys_profile, NULL,
		  "rocprof-sys-run's call-stack profile: --sample (the folded stacks)" },
		{ OPTION_STRING, 'I', "include", &o->sys_include, "all",
		  "rocprof-sys-sample's data sources: all (what gpuprof sys records; one source is "
		  "turned off with --no-sample, --no-host-metrics, --no-device-metrics)" },
		{ OPTION_BOOL, 0, "version", &o->version, NULL, "print gpuprof's version and exit" },
		{ OPTION_SECTION, .help = "PC sampling (CUDA, compute capability 7.0 and later; "
					  "rocprofv3's options)" },
		{ OPTION_BOOL, 0, "pc-sampling-beta-enabled", &o->pc_sampling, NULL,
		  "sample the program counter of the warps on every SM, with why each warp "
		  "stalled: samples by kernel, source line and instruction (gpuprof profile "
		  "--gpu, the pc_samples view); kernels stay concurrent" },
		{ OPTION_ENUM, 0, "pc-sampling-method", &o->pc_method, "stochastic|host_trap",
		  "stochastic: the GPU's own sampler, the one NVIDIA GPUs have (host_trap, "
		  "AMD's software sampling, is served by it too, said once)" },
		{ OPTION_ENUM, 0, "pc-sampling-unit", &o->pc_unit, "cycles|time|instructions",
		  "unit of --pc-sampling-interval: cycles (a power of two from 32 to 2^31) or time "
		  "(microseconds, the nearest power of two of cycles at the device's clock); "
		  "NVIDIA's sampler counts no instructions" },
		{ OPTION_STRING, 0, "pc-sampling-interval", &o->pc_interval, "N",
		  "between two samples of an SM (default: CUPTI's for the device)" },
		{ OPTION_SECTION, .help = "sampling (on by default in gpuprof sys; --no-NAME turns "
					  "one off)" },
		{ OPTION_BOOL, 0, "sample", &o->sample, NULL,
		  "call stacks of every thread, sampled on their CPU time (software perf events, "
		  "unwound after the run from the unwind tables): <prefix>_stacks.folded, the "
		  "samples and stacks views" },
		{ OPTION_STRING, 0, "sampling-freq", &o->sampling_freq, "HZ",
		  "call-stack samples per second of a thread's CPU time (default: 300; up to "
		  "10000; with --sample)" },
		{ OPTION_STRING, 0, "sampling-stack-size", &o->sampling_stack, "BYTES",
		  "bytes of each sampled thread's stack copied for its unwinding (default: 16384; "
		  "up to 65344, the kernel's most; K for KiB): deeper stacks lose their outermost "
		  "frames, under one [truncated] root; each sample reserves this much of the "
		  "kernel's buffer (with --sample)" },
		{ OPTION_BOOL, 0, "sampling-realtime", &o->sampling_realtime, NULL,
		  "wall-clock sampling: threads that wait (in clFinish, cudaDeviceSynchronize, a "
		  "lock, I/O) are sampled at the same frequency of real time, their stacks ending "
		  "in [off-CPU: CALL], and threads ready to run that wait for a CPU, in [waiting "
		  "for a CPU] (with --sample)" },
		{ OPTION_BOOL, 0, "gil", &o->gil, NULL,
		  "Python programs: only the samples of the thread that holds the GIL (read at "
		  "each tick; py-spy's --gil); with --sampling-realtime, a thread that waits "
		  "holding it too (with --sample)" },
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
		  "gpuprof_resume..., and CUDA's cudaProfilerStart/Stop: "
		  "torch.cuda.profiler.start/stop): collection starts paused" },
		{ OPTION_STRING, 0, "nvtx-capture", &o->nvtx_capture, "NAME[@DOMAIN]",
		  "collect only while a marker range of this name is open, on any thread (nsys's "
		  "--capture-range=nvtx --nvtx-capture): NAME in the default domain, "
		  "NAME@DOMAIN in that one (torch: PyTorch's), NAME@* in any; with "
		  "--marker-trace" },
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
		{ OPTION_STRING, 0, "nvtx-domain-include", &o->nvtx_include, "NAMES",
		  "record only the NVTX ranges and marks of these domains (comma-separated; "
		  "default: the default domain; \\, a comma in a name), as nsys names it" },
		{ OPTION_STRING, 0, "nvtx-domain-exclude", &o->nvtx_exclude, "NAMES",
		  "leave out the NVTX ranges and marks of these domains" },
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
		  "of gpuprof report), otf2 (an OTF2 archive in NAME_otf2/: Vampir, Scalasca, "
		  "otf2-print); default: csv sqlite", OUTPUT_FORMAT_WORDS },
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
		{ OPTION_SECTION, .help = "a running process (gpuprof sys)" },
		{ OPTION_STRING, 0, "pid", &o->attach_pid, "PID",
		  "sample process PID, already running, instead of running a command: its "
		  "threads' call stacks (native and Python) and metrics, and those of the "
		  "processes it started and of the threads and processes it starts meanwhile, into "
		  "the outputs above; nothing of gpuprof enters it, and it goes on as it was "
		  "whenever gpuprof ends" },
		{ OPTION_STRING, 0, "duration", &o->duration, "SECONDS",
		  "with --pid: sample for this long (default: until the process ends or Ctrl-C)" },
		{ OPTION_SECTION, .help = "recording" },
		{ OPTION_SIZE, 0, "buffer-size", &o->buffer_size, "SIZE",
		  "buffer per recording thread (default: 2M; at least 4096)" },
		{ OPTION_SIZE, 0, "buffer-limit", &o->buffer_limit, "SIZE",
		  "memory for all buffers of a process, at least one thread's buffer; beyond "
		  "it records are dropped and counted (default: 256M)" },
		{ OPTION_BOOL, 'h', "help", &o->help, NULL, "show this help" },
		OPTION_END,
	};
	_Static_assert(sizeof(entries) / sizeof(entries[0]) <= TABLE_SIZE, "trace table size");
	memcpy(table, entries, sizeof(entries));
}

/* Options that only the command line sets. */
static const char *const command_line_only[] = { "input", "preset", "config", "help", "version",
						  "pid", "duration", NULL };

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
/* gpuprof sys --pid PID [--duration S]: the options checked for what sampling a running
 * process can do, then attach.c. */
static int attach_main(const struct trace_options *o, int given, char **command)
{
	if (!o->attach_pid)
		die_with(EXIT_USAGE, "%s: --duration is how long --pid samples a running process: "
			 "give --pid PID", trace_command_name);
	if (strcmp(trace_command_name, "sys"))
		die_with(EXIT_USAGE, "trace: --pid: a running process's GPU API calls cannot be "
			 "traced (the recording libraries load when a program starts); gpuprof sys "
			 "--pid %s samples its call stacks and metrics", o->attach_pid);
	if (given > 0)
		die_with(EXIT_USAGE, "sys: --pid samples a process already running: no command "
			 "is run with it ('%s' given)", command[0]);
	if (o->input || o->preset || o->config)
		die_with(EXIT_USAGE, "sys: --pid takes its options from the command line (not "
			 "-i/--input, --preset or -c/--config)");
	const struct {
		int on;
		const char *name;
	} started_only[] = {
		{ o->kernel == 1, "--kernel-trace" }, { o->memory_copy == 1, "--memory-copy-trace" },
		{ o->memory_allocation == 1, "--memory-allocation-trace" },
		{ o->opencl == 1, "--opencl-trace" }, { o->cuda_runtime == 1, "--cuda-runtime-trace" },
		{ o->cuda_driver == 1, "--cuda-driver-trace" }, { o->marker == 1, "--marker-trace" },
		{ o->runtime == 1, "--runtime-trace" }, { o->mpi == 1, "--mpi-trace" },
		{ o->nccl == 1, "--nccl-trace (--rccl-trace)" }, { o->torch_trace == 1, "--torch-trace" },
		{ o->launch_stacks == 1, "--launch-stacks" }, { o->pmc.count > 0, "--pmc" },
		{ o->pc_sampling == 1, "--pc-sampling-beta-enabled" },
		{ o->sys == 1, "--sys-trace" },
		{ o->hip == 1, "--hip-trace" }, { o->hsa == 1, "--hsa-trace" },
		{ o->roctx == 1, "--roctx-trace" }, { o->pmc_set.count > 0, "--pmc-set" },
	};
	for (size_t i = 0; i < sizeof(started_only) / sizeof(started_only[0]); i++)
		if (started_only[i].on)
			die_with(EXIT_USAGE, "sys: %s records from inside a program started under "
				 "gpuprof: --pid samples a running process's call stacks and metrics "
				 "only", started_only[i].name);
	/* what shapes the recording inside a program started under gpuprof (its GPU work,
	 * its markers, its recorder's buffers and periods): nothing to apply it to */
	const struct {
		int on;
		const char *name;
	} recorder_only[] = {
		{ o->launch_stack != NULL, "--launch-stack-size" },
		{ o->pmc_multiplex != NULL, "--pmc-multiplex" },
		{ o->pc_method != NULL, "--pc-sampling-method" },
		{ o->pc_unit != NULL, "--pc-sampling-unit" },
		{ o->pc_interval != NULL, "--pc-sampling-interval" },
		{ o->selected_regions == 1, "--selected-regions" },
		{ o->nvtx_capture != NULL, "--nvtx-capture" },
		{ o->cuda_graph_trace != NULL, "--cuda-graph-trace" },
		{ o->periods.count > 0, "--collection-period" },
		{ o->period_unit != trace_defaults.period_unit, "--collection-period-unit" },
		{ o->kernel_include != NULL, "--kernel-include-regex" },
		{ o->kernel_exclude != NULL, "--kernel-exclude-regex" },
		{ o->kernel_iterations != NULL, "--kernel-iteration-range" },
		{ o->nvtx_include != NULL, "--nvtx-domain-include" },
		{ o->nvtx_exclude != NULL, "--nvtx-domain-exclude" },
		{ o->truncate == 1, "--truncate-kernels" }, { o->mangled == 1, "--mangled-kernels" },
		{ o->kernel_rename == 1, "--kernel-rename" },
		{ o->buffer_size != TRACE_BUFFER_UNSET, "--buffer-size" },
		{ o->buffer_limit != TRACE_BUFFER_UNSET, "--buffer-limit" },
	};
	for (size_t i = 0; i < sizeof(recorder_only) / sizeof(recorder_only[0]); i++)
		if (recorder_only[i].on)
			die_with(EXIT_USAGE, "sys: %s shapes what a program started under gpuprof "
				 "records (its GPU work, markers, buffers or periods): --pid samples a "
				 "running process's call stacks and metrics, which it does not apply "
				 "to", recorder_only[i].name);
	struct job j = { .o = *o };
	j.o.sys = -1; /* nothing is traced: the default --sys-trace is sys's for a command */
	struct error err;
	if (trace_job_prepare(&j, &err))
		die_with(EXIT_USAGE, "sys: %s", err.message);
	int code = attach_run(&j, j.o.directory, o->attach_pid, o->duration);
	trace_job_release(&j);
	return code;
}

static int trace_main(int argc, char **argv, const struct trace_options *base,
		      const char *usage_text, const char *description_text)
{
	struct trace_options o = *base;
	struct option table[TABLE_SIZE];
	trace_table(&o, table);
	struct error err;
	int next;
	if (options_parse(table, argc, argv, &next, &err))
		die_with(EXIT_USAGE, "%s: %s", trace_command_name, err.message);
	if (o.version == 1) {
		printf("gpuprof %s\n", GPUPROF_VERSION);
		return 0;
	}
	if (o.help == 1) {
		options_print_help(stdout, usage_text, description_text, table);
		printf("\nPlaceholders in -d and -o: %%pid%% %%ppid%% %%hostname%% %%rank%% %%size%% "
		       "%%nid%% %%env{NAME}%% %%q{NAME}\n%%launch_date%% %%launch_time%%. Boolean "
		       "options take =false to turn off a part of an\naggregate: --sys-trace "
		       "--opencl-trace=false.\n");
		return 0;
	}
	if (o.attach_pid || o.duration)
		return attach_main(&o, argc - next, argv + next);
	if (next >= argc)
		die_with(EXIT_USAGE, "%s: no command given (usage: %s)", trace_command_name, usage_text);

	/* the preset first, then the configuration file, then the command line over both */
	struct input_file preset = { 0 }, config = { 0 }, input = { 0 };
	if (o.preset || o.config) {
		const char *name = o.preset, *path = o.config;
		if (name && read_preset(name, &preset, &err))
			die_with(EXIT_USAGE, "%s: --preset: %s", trace_command_name, err.message);
		if (path && input_read(path, &config, &err))
			die_with(EXIT_USAGE, "%s: --config: %s", trace_command_name, err.message);
		if (path && config.count != 1)
			die_with(EXIT_USAGE, "%s: --config: '%s' holds %zu jobs: a configuration file "
				 "is one (-i runs a list of jobs)", trace_command_name, path, config.count);
		o = *base;
		if (name && input_apply(&preset, &preset.jobs[0], table, command_line_only, &err))
			die_with(EXIT_USAGE, "%s: --preset %s: %s", trace_command_name, name, err.message);
		if (path && input_apply(&config, &config.jobs[0], table, command_line_only, &err))
			die_with(EXIT_USAGE, "%s: --config: %s", trace_command_name, err.message);
		if (options_parse(table, argc, argv, &next, &err))
			die_with(EXIT_USAGE, "%s: %s", trace_command_name, err.message);
	}
	/* then each job of the input file over both; every job is checked before any runs */
	size_t job_count = 1;
	if (o.input) {
		if (input_read(o.input, &input, &err))
			die_with(EXIT_USAGE, "%s: %s", trace_command_name, err.message);
		job_count = input.count;
	}
	struct job *jobs = xcalloc(job_count, sizeof(*jobs));
	for (size_t i = 0; i < job_count; i++) {
		jobs[i].o = o;
		if (o.input) {
			struct option job_table[TABLE_SIZE];
			trace_table(&jobs[i].o, job_table);
			if (input_apply(&input, &input.jobs[i], job_table, command_line_only, &err))
				die_with(EXIT_USAGE, "%s: %s", trace_command_name, err.message);
		}
		if (trace_job_prepare(&jobs[i], &err)) {
			if (o.input)
				die_with(EXIT_USAGE, "%s: %s, job %zu: %s", trace_command_name, o.input, i + 1,
					 err.message);
			die_with(EXIT_USAGE, "%s: %s", trace_command_name, err.message);
		}
	}

	trace_place_libraries();
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
		code = trace_job_run(&jobs[i], directory.buf, argv + next);
		strbuf_release(&directory);
	}
	for (size_t i = 0; i < job_count; i++)
		trace_job_release(&jobs[i]);
	free(jobs);
	input_release(&input);
	input_release(&preset);
	input_release(&config);
	return code;
}

int cmd_trace(int argc, char **argv)
{
	return trace_main(argc, argv, &trace_defaults, usage, description);
}

int cmd_sys(int argc, char **argv)
{
	struct trace_options base = sys_defaults();
	trace_command_name = "sys";
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
			int on = *(int *)t->value > 0;
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

