/* The sampled stacks of a database as slices for the timelines (export-slices.c), which
 * export_database() merges by start with the rows of the tables. */
#ifndef GPUPROF_WRITER_EXPORT_SLICES_H
#define GPUPROF_WRITER_EXPORT_SLICES_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

#include "analysis/unwind.h"
#include "util/error.h"

/* The sampled stacks of a database as slices for the timelines: each process's frames,
 * stack tree and samples loaded, then its slices built (analysis/unwind.h). */
struct export_slices {
	struct sample_stacks *stacks; /* one per process with samples */
	int64_t *process_ids;
	size_t process_count;
	struct {
		struct sample_slice slice;
		size_t process; /* index into stacks */
	} *items;
	size_t count;
};

/* Loads every process's frames, stack tree and samples and builds its slices, all in
 * start order (outer frames first): 0, or -1 with err set. A database without samples
 * (schema 3.0 included) gives none. */
int export_slices_load(sqlite3 *db, struct export_slices *out, struct error *err);
void export_slices_release(struct export_slices *d);

#endif
