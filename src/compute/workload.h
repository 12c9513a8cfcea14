/* A workload directory of gpuprof compute (docs/OUTPUTS.md): what `compute profile`
 * writes and `compute analyze` reads.
 *   pmc_perf.csv  one row per dispatch: Dispatch_ID, GPU_ID, Grid_Size (threads),
 *                 Workgroup_Size (threads per block), LDS_Per_Workgroup (shared memory
 *                 bytes per block), Scratch_Per_Workitem (local memory bytes per
 *                 thread), Registers_Per_Thread, Kernel_Name, Start_Timestamp,
 *                 End_Timestamp (ns), then one column per CUPTI metric collected (empty:
 *                 not collected for that dispatch)
 *   sysinfo.csv   one row of the host's and the GPU's facts; its numeric columns are
 *                 the catalog's device.* values
 *   roofline.csv  (optional) the device's measured ceilings (roofline/roofline.h): the
 *                 catalog's roofline.* values
 * The readers take the text of a file, so that they are fuzzed as they are used. */
#ifndef GPUPROF_COMPUTE_WORKLOAD_H
#define GPUPROF_COMPUTE_WORKLOAD_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdio.h>

#include "roofline/roofline.h"
#include "util/error.h"

struct workload_dispatch {
	long long dispatch_id, gpu_id;
	char *kernel;
	double start, end;            /* ns */
	double grid_threads, block_threads, shared_per_block, scratch_per_thread, registers;
	double *values;               /* per metric column; NAN where empty */
};

struct workload {
	char *dir;
	char **columns;               /* the metric columns of pmc_perf.csv */
	size_t column_count;
	struct workload_dispatch *dispatches;
	size_t count;
	char **facts, **fact_values;  /* sysinfo.csv: column names and values */
	size_t fact_count;
	struct roofline *roofline;    /* roofline.csv; NULL when the directory has none */
	/* iteration multiplexing (profiling_config.yaml): each dispatch of a kernel collected
	 * one of `groups` groups of metrics, dispatches being of one kernel by name, or by
	 * name and launch size (grid, block, shared memory) */
	enum { MULTIPLEX_NONE, MULTIPLEX_KERNEL, MULTIPLEX_LAUNCH } multiplex;
	long groups;
	char **incomplete;            /* the kernels measured fewer times than groups */
	size_t incomplete_count;
};

/* Reads dir/pmc_perf.csv, dir/sysinfo.csv, and dir/roofline.csv and
 * dir/profiling_config.yaml where there are, or the same from a database with counters
 * (gpuprof trace --pmc) when dir is a file: 0, or -1 with err naming the file, the line
 * and the fault. Under iteration multiplexing, each dispatch's counters are completed
 * with the mean of its kernel's dispatches that collected the others (workload_multiplex).
 */
int workload_read(const char *dir, struct workload *w, struct error *err);
/* The text of pmc_perf.csv and of sysinfo.csv (name: for messages). */
int workload_parse_dispatches(const char *name, const char *text, size_t size,
			      struct workload *w, struct error *err);
int workload_parse_facts(const char *name, const char *text, size_t size, struct workload *w,
			 struct error *err);
void workload_release(struct workload *w);
/* The kernels of an iteration-multiplexed workload left without metrics, in one warning
 * on stderr headed by command. */
void workload_warn_incomplete(const char *command, const struct workload *w);

/* profiling_config.yaml's iteration_multiplexing and multiplex_groups into w (nothing
 * when they are absent): 0, or -1 with err for a value that is not one. */
int workload_parse_config(const char *name, const char *text, struct workload *w,
			  struct error *err);
/* Iteration multiplexing: a counter that a dispatch did not collect takes the mean of
 * the dispatches of the same kernel that did, so that a metric over counters of several
 * groups has a value per dispatch; a kernel measured fewer times than there are groups
 * has its counters emptied (no metrics rather than some from too few dispatches) and is
 * named in w->incomplete. Nothing without multiplexing. */
void workload_multiplex(struct workload *w);

/* Writes pmc_perf.csv from a database: a row per kernel (the process's dispatch id, the
 * device's CUDA ordinal), a column per counter name recorded, in the order first
 * recorded (empty where a kernel has no value). *rows: the dispatches written. */
int workload_write_dispatches(sqlite3 *db, FILE *out, size_t *rows, struct error *err);
/* Writes sysinfo.csv from the database's first GPU: its name, SMs, warp size, L2, DRAM
 * bandwidth and size, clock and compute capability, and the occupancy limits of that
 * compute capability (left out for one gpuprof does not know). */
int workload_write_facts(sqlite3 *db, FILE *out, struct error *err);

/* A fact of sysinfo.csv as text, NULL when absent. */
const char *workload_fact(const struct workload *w, const char *name);

/* The duration of a dispatch in ns, the one time base of every rate (the catalog's
 * launch.duration, -n per_second, the top kernels, the roofline): the GPU's own measure
 * of the kernel (CATALOG_DURATION, what Nsight Compute divides by) where it was
 * collected, else End_Timestamp - Start_Timestamp. 0, or -1 when it is not positive. */
int workload_duration(const struct workload *w, const struct workload_dispatch *d,
		      double *value);

/* The value of a catalog name for one dispatch: a metric column, launch.* (from the
 * row and the GPU's limits: the CUDA occupancy rules), device.* (sysinfo.csv) or
 * roofline.* (a ceiling of roofline.csv; none where it was not measured).
 * Returns 0, or -1 when it has none (N/A). Fits compute/expr.h's lookup, with a
 * struct workload_context as arg. */
struct workload_context {
	const struct workload *w;
	const struct workload_dispatch *d;
};
int workload_lookup(const char *name, double *value, void *context);

#endif
