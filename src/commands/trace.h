/* What the files of gpuprof trace (and sys) share: trace.c (the command and its
 * options), trace-job.c (the jobs they make), trace-run.c (the runs and their outputs),
 * trace-counters.c (the hardware counters of --pmc and --pmc-set planned against the
 * GPU's chip). */
#ifndef GPUPROF_COMMANDS_TRACE_H
#define GPUPROF_COMMANDS_TRACE_H

#include "core/kernel-filter.h"
#include "metrics/metrics.h"
#include "commands/output.h"
#include "util/error.h"
#include "util/options.h"
#include "util/strbuf.h"

/* The options of trace and sys, as parsed. */
struct trace_options {
	int kernel, memory_copy, memory_allocation, opencl, cuda_runtime, cuda_driver, marker;
	int runtime, sys, kernel_rename, selected_regions, torch_trace, mpi, nccl;
	const char *input, *preset, *config;
	const char *period_unit;
	struct option_list periods;
	const char *kernel_include, *kernel_exclude, *kernel_iterations;
	const char *nvtx_include, *nvtx_exclude; /* NVTX domains, comma-separated */
	const char *nvtx_capture; /* NAME, NAME@DOMAIN or NAME@* */
	const char *cuda_graph_trace; /* NULL, "graph" or "node" */
	int stats, summary, truncate, mangled, keep_spool, help;
	const char *directory, *file, *units;
	struct option_list formats;
	unsigned long long buffer_size, buffer_limit; /* bytes; TRACE_BUFFER_UNSET: the
						       * recorder's defaults */
	int host_metrics, device_metrics, sample, sampling_realtime, gil, launch_stacks;
	const char *sampling_interval, *sampling_freq, *sampling_stack, *launch_stack;
	const char *attach_pid, *duration; /* gpuprof sys --pid, --duration */
	struct option_list pmc, pmc_set;
	const char *pmc_multiplex; /* NULL, kernel or kernel_launch_params */
	int pc_sampling;           /* --pc-sampling-beta-enabled */
	/* the seeds' names (rocprofv3, rocprof, rocprofv2, rocprof-sys-run/-sample): mapped
	 * onto the options above in job_prepare(), said once */
	int hip, hsa, roctx, sys_trace_file, sys_profile, version;
	const char *plugin, *sys_include;
	const char *pc_method, *pc_unit, *pc_interval;
};

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
	int sample_gil;       /* only the samples of the thread holding Python's GIL */
	unsigned sample_stack; /* bytes of stack copied per sample */
	unsigned launch_stacks; /* bytes of stack copied per launch; 0: no launch stacks */
	char pc_sampling[48]; /* GPUPROF_PC_SAMPLING ("period=N", "time=US"); "" when off */
};

/* gpuprof trace's defaults (trace.c): an option whose value is still the default's
 * string (the same pointer) was not given. */
extern const struct trace_options trace_defaults;

/* The options turned into a job (trace-job.c): the seeds' options mapped, every value
 * read and checked, an option that cannot apply refused, the counters planned. 0, or -1
 * with err set; trace_job_release() either way. */
int trace_job_prepare(struct job *j, struct error *err);
void trace_job_release(struct job *j);

/* "trace" or "sys": the command being run, for messages. */
extern const char *trace_command_name;

/* Sets LD_PRELOAD and the library paths for the recording libraries (once). */
void trace_place_libraries(void);

/* A recording library, installed beside the command: <bin>/../lib/gpuprof/. Returns -1
 * (without an error message) when this build has none of that name. */
int trace_find_library(const char *name, struct strbuf *out, struct error *err);

/* trace-mpi.c: whether the program can be started, as execvp() looks for it: a name with
 * a '/' as it is, any other along $PATH; its path in *found (when not NULL), errno as
 * exec would set it when not. */
int trace_find_program(const char *program, struct strbuf *found);
/* Adds the MPI interposer of the program's MPI implementation to LD_PRELOAD (on), or
 * takes it off (not on: a job without --mpi-trace after one with it). */
void trace_place_mpi(int on, const char *program);
/* Likewise the NCCL/RCCL interposer (--nccl-trace). */
void trace_place_nccl(int on);
/* Runs one job: the program under the recording libraries, then its outputs into
 * directory. Returns the program's exit status (or gpuprof's when it failed first). */
int trace_job_run(struct job *j, const char *directory, char **command);

/* --pmc and --pmc-set: the metrics checked against the GPU's chip into j->pmc (with
 * --pmc-multiplex, in groups of one pass), and the passes they take said on stderr. 0,
 * or -1 with err naming the options they came from. */
int trace_plan_counters(struct job *j, struct error *err);

#define TRACE_BUFFER_UNSET (~0ull)
/* The least buffer a recording thread may have: a page (a record larger than the
 * buffer is dropped and counted) */
#define TRACE_BUFFER_MIN 4096ull

/* Turns the spools a manifest lists (paths ended by NULs) into outputs, with the metrics
 * spooled under metrics_base appended: 0, or -1 when one failed (said). */
int trace_post_process(const char *manifest, const char *metrics_base, const char *directory,
		       const struct output_request *request, int keep_spool);

/* gpuprof sys --pid (attach.c): samples the running process pid_text (and what it starts
 * meanwhile) for duration_text seconds (NULL: until it ends or Ctrl-C) into the outputs
 * of job j; returns the exit status. */
int attach_run(struct job *j, const char *directory, const char *pid_text,
	       const char *duration_text);

#endif
