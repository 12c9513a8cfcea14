/* The times each process of a database had device work running (a kernel or a copy, on
 * any device), merged into disjoint intervals, as a temporary table: for gpuprof
 * profile's --device-busy/--device-idle and the device's time during MPI calls. */
#ifndef GPUPROF_ANALYSIS_DEVICE_BUSY_H
#define GPUPROF_ANALYSIS_DEVICE_BUSY_H

#include <sqlite3.h>

#include "util/error.h"

/* temp.<name>(process_id, start, end), indexed by (process_id, start), made again: 0, or
 * -1 with err set. */
int device_busy_table(sqlite3 *db, const char *name, struct error *err);

#endif
