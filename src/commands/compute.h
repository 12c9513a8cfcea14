/* What the files of gpuprof compute share: compute.c (profile), compute-run.c
 * (its runs), compute-plan.c (planning and listings), compute-analyze.c
 * (analyze). */
#ifndef GPUPROF_COMMANDS_COMPUTE_H
#define GPUPROF_COMMANDS_COMPUTE_H

#include "compute/catalog.h"
#include "compute/host.h"
#include "util/options.h"
#include "util/strbuf.h"

/* A selection of the catalog planned on a chip. */
struct compute_plan {
	struct host_api *api;
	const char *chip;
	struct strbuf names;   /* the CUPTI metrics of what is selected, one per line */
	int metrics;
};

/* Adds a metric to the plan (a catalog_select callback): its CUPTI metrics, and one to
 * the count. */
void compute_plan_add(const struct catalog_metric *m, void *arg);
/* Adds to p the metrics of block b that the -b selections name (all without any). */
void compute_plan_block(const struct catalog_block *b, const struct option_list *blocks,
			struct compute_plan *p);

/* --list-available-metrics: the catalog, or what -b selects of it, each block with the
 * passes its metrics take on chip, each metric with whether the chip has it, and the
 * passes of the whole selection. */
int compute_list_metrics(const struct catalog *c, const struct option_list *blocks,
			 struct host_api *api, const char *chip);
/* --list-sets: each metric set with its metrics and the passes and runs it takes. */
int compute_list_sets(const struct catalog *c, struct host_api *api, const char *chip);

/* gpuprof compute analyze (compute-analyze.c): argv[0] is "analyze". */
int compute_analyze(int argc, char **argv);
extern const char compute_analyze_usage[], compute_analyze_description[];

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
	/* PC sampling (block 21): one more run of the program under gpuprof trace with
	 * these options (--pc-sampling-unit and -interval), NULL when not asked for */
	const char *pc_unit, *pc_interval, *pc_method;
	int torch; /* --torch-trace: the program's PyTorch operators as ranges */
};

/* The files a workload directory holds (NULL-terminated); --overwrite removes these,
 * and only these. */
extern const char *const compute_workload_files[];

/* The lines of a newline-separated list (a group's metrics), joined by sep into out. */
void compute_join_lines(const char *list, const char *sep, struct strbuf *out);

/* compute-run.c. The program run under trace --pmc: once (kernel replay), or once
 * per group of metrics (application replay, into trace/pass_N, their counters joined
 * onto the first run's kernels). The program's exit status into *status; the workload's
 * database into db, or -1 with err when there is none. */
int compute_collect(const struct profile_run *p, const char *trace_dir, const char *include,
		    const char *iterations, struct strbuf *db, int *status, struct error *err);
/* torch_trace/consolidated.csv from the database (compute profile --torch-trace): *rows
 * of it, and *inside of the *dispatches kernels ran inside an operator. 0, or -1. */
int compute_write_torch(const char *dir, const char *db_path, size_t *rows, size_t *inside,
			size_t *dispatches, struct error *err);
/* pmc_perf.csv and sysinfo.csv from the database, written whole or not at all. */
int compute_write_workload(const char *dir, const char *db_path, size_t *dispatches,
			   struct error *err);
/* Block 21: the program run once more under PC sampling, its samples into
 * dir/pc_sampling.csv (*rows of it). 0, or 1 when it failed (said). */
int compute_sample_pcs(const struct profile_run *p, const char *dir, const char *trace_dir,
		       const char *include, size_t *rows);
/* gpuprof roofline on CUDA device 0 into the workload directory: 0, or the status it
 * failed with. */
int compute_run_roofline(const char *dir, int quiet);

#endif
