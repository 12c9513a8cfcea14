/* PyTorch's operators in a compute workload (gpuprof compute profile --torch-trace, as
 * rocprof-compute's operator mapping): each kernel that ran inside an operator range
 * (trace --torch-trace's ranges, domain "torch": the innermost open on its launching
 * thread) with each of its counters, written to torch_trace/consolidated.csv in
 * rocprof-compute's columns; and the tables of compute analyze
 * --list-torch-operators and --torch-operator. */
#ifndef GPUPROF_COMPUTE_TORCH_OPS_H
#define GPUPROF_COMPUTE_TORCH_OPS_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdio.h>

#include "util/error.h"
#include "util/table.h"

#define TORCH_OPS_COLUMNS 10 /* rocprof-compute's nine, then Module_Path */
extern const char *const torch_ops_columns[TORCH_OPS_COLUMNS];

/* Whether operator op (a hierarchy a/b/c), run in module path module ("Net.fc1"; NULL or
 * "" for none), matches name, as --torch-operator matches: "all", "*" or "**"; a glob
 * of its last levels (PurePosixPath.match: "*conv2d", or "* /nn.Module.Linear.forward"
 * without the space for two levels); the whole, a prefix, or from one of its levels
 * on; or its module path (whole, a glob, or a prefix of it at a dot). */
int torch_ops_matches(const char *op, const char *module, const char *name);

/* consolidated.csv from a database: the header, then a row per kernel inside an
 * operator and counter of it (a kernel without counters: one row, the counter empty),
 * by kernel start. *rows: the rows written. 0, or -1 with err. */
int torch_ops_write(sqlite3 *db, FILE *out, size_t *rows, struct error *err);

/* The operators of a workload (a directory with torch_trace/consolidated.csv, or a
 * database): with name NULL, each operator's dispatches, kernel time and counters;
 * else the counters (count, sum, mean, min, max over its dispatches) of each operator
 * whose hierarchy matches name: the whole, a prefix, or from one of its levels on. */
int torch_ops_print(const char *workload, const char *name, enum table_format format,
		    FILE *out, struct error *err);

#endif
