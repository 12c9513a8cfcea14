/* The PC samples of databases (gpuprof trace --pc-sampling-*, CUDA) as tables: each
 * kernel's samples beside its device time, the stall reasons, the hottest source lines
 * and instructions; or folded stacks (kernel;source line;stall reason) for flame graphs.
 *
 * A sample counts once: the vendor's "_not_issued" variant of a reason counts samples
 * that already count under the reason itself (a warp stalled and not issued), so it is
 * shown as a column of its reason, never added to the totals. */
#ifndef GPUPROF_ANALYSIS_PC_SAMPLES_H
#define GPUPROF_ANALYSIS_PC_SAMPLES_H

#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>

#include "util/error.h"
#include "util/strbuf.h"

/* The samples of every input, gathered into an in-memory database (rows per kernel,
 * instruction and reason: bounded by the code sampled, not by the run's length). */
struct pc_samples {
	sqlite3 *db;
	uint64_t samples;       /* kept by the filter, counted once each */
	uint64_t taken;         /* every sample the devices took, as they counted them */
	uint64_t dropped;       /* lost on the devices */
	uint64_t other;         /* in kernels not the program's */
	uint32_t period_min, period_max; /* log2 of cycles between samples (0: none) */
	int inputs_with_samples;
};

int pc_samples_init(struct pc_samples *p, struct error *err);
void pc_samples_release(struct pc_samples *p);

/* Adds the samples of the database at db whose kernel name contains `kernel` (NULL:
 * all). */
int pc_samples_gather(struct pc_samples *p, sqlite3 *db, const char *kernel,
		      struct error *err);

/* Keeps only the samples of kernels whose name contains one of kernels[] (count 0: all). */
int pc_samples_keep_kernels(struct pc_samples *p, const char *const *kernels, int count,
			    struct error *err);

/* pc_sampling.csv (a gpuprof compute workload): the samples of the database db, one row
 * per kernel, instruction and reason (Kernel_Name, Cubin_Crc, Pc_Offset, Source_File
 * (empty: no line information), Line, Stall_Reason (short: long_scoreboard), Not_Issued
 * (1: the vendor's not-issued subset of the reason's samples), Samples); *rows written. */
int pc_samples_write_csv(sqlite3 *db, FILE *out, size_t *rows, struct error *err);
/* Adds the rows of such a file (its text; name for messages): 0, or -1 with err naming
 * the line at fault. */
int pc_samples_read_csv(struct pc_samples *p, const char *name, const char *text, size_t size,
			struct error *err);

/* The tables (kernels, stall reasons, source lines, instructions) in a table format
 * (util/table.h), limit rows each (0: all). */
int pc_samples_tables(const struct pc_samples *p, FILE *out, int format, size_t limit,
		      struct error *err);

/* The instructions by samples (or, by_offset, in the order of each kernel's code), limit
 * rows (0: all), as one table of the given key and title. */
int pc_samples_instructions(const struct pc_samples *p, FILE *out, int format, const char *key,
			    const char *title, size_t limit, int by_offset, struct error *err);

/* One line per kernel, source line and stall reason: "kernel;file:line;reason N". */
int pc_samples_folded(const struct pc_samples *p, struct strbuf *out, struct error *err);

#endif
