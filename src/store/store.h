/* The SQLite store: one database per recorded process, the canonical form of the
 * recorded data (documented in docs/SCHEMA.md). */
#ifndef GPUPROF_STORE_STORE_H
#define GPUPROF_STORE_STORE_H

#include <sqlite3.h>
#include <stdint.h>

#include "core/record.h"
#include "core/recording.h"
#include "util/error.h"
#include "util/strbuf.h"

#define STORE_SCHEMA_VERSION "3.9.0"
#define STORE_SCHEMA_MAJOR "3." /* readable: this major version, any minor */

/* Builds a database at db_path from a spool read into memory (spool_path is recorded
 * in its metadata). The database is written beside db_path and renamed into place only
 * when complete; an existing file is replaced. Kernels, copies and API calls are
 * inserted in start-time order, so rowid order is time order. Reads rec only: it may
 * run on a thread of its own while writers read the same recording. */
int store_write(const struct recording *rec, const char *spool_path, const char *db_path,
		struct error *err);

/* The identity of a recording (one process) as an SQL expression over the gpuprof_process
 * row `t`: its host, pid and the real time it started. The same recording met twice
 * (a database given twice, a merged one and one of its sources) has the same key. */
#define STORE_RECORDING_KEY(t) \
	"quote(" t ".hostname) || ' ' || quote(" t ".pid) || ' ' || quote(" t ".realtime_start)"

/* The processes that are an MPI job's ranks, as an SQL subquery: those that made MPI
 * calls (gpuprof_mpi_call: check it exists). A rank's child processes inherit its rank
 * from the launcher's environment without making any, and are not ranks. */
#define STORE_MPI_PROCESSES "(SELECT DISTINCT process_id FROM gpuprof_mpi_call)"

/* Joins databases into one at db_path (written beside it, renamed into place when
 * complete): process and string ids renumbered, every row kept with its process (host,
 * pid, rank), times moved onto the timeline of the first input's host (processes of one
 * host share its clock; another host is placed by real time), tables in start order.
 * Each input's metadata is kept under "input.N.<tag>", each process's shift under
 * "process.<id>.time_shift". A recording (a process: host, pid, real start time) already
 * merged from an earlier input is left out, with a line in warnings; *left_out (when
 * not NULL) counts the inputs left out whole so.
 * Each of replay_count replays (a database of another run of the same program, made for
 * other counters: an application replay) gives only its counters, joined onto the
 * inputs' kernels of the same name and device launched as many times before; a kernel
 * launched a different number of times in a replay is named in warnings. */
int store_merge(char *const *inputs, int count, char *const *replays, int replay_count,
		const char *db_path, struct strbuf *warnings, int *left_out, struct error *err);

/* Whether db's table has a column of that name (columns added in minor versions). */
int store_has_column(sqlite3 *db, const char *table, const char *column);
/* Whether db has a table of that name (tables added in minor versions of the schema). */
int store_has_table(sqlite3 *db, const char *table);
/* Opens an existing gpuprof database read-only and checks its schema version. */
int store_open(const char *db_path, sqlite3 **db, struct error *err);
/* Sets SQLite up for this process's limit of data memory, once, before it starts (each
 * open of the store does it). */
void store_configure(void);

/* Runs SQL that returns no rows; on failure err names the database and the message. */
int store_exec(sqlite3 *db, const char *sql, struct error *err);
/* SQLite's message for db's last error, with the system's reason where a write failed on
 * one ("disk I/O error (File too large)": a file-size limit, a full disk): for messages
 * of the thread that made the error, valid until its next call. */
const char *store_write_error(sqlite3 *db);

/* A database being written: no journal, no sync, 64 KiB pages and a page cache of
 * 64 MiB (a quarter of a smaller limit of data memory). 0, or -1 with err. */
int store_writing(sqlite3 *db, struct error *err);

/* Prepares a statement; on failure err names the database and SQLite's message. */
int store_prepare(sqlite3 *db, const char *sql, sqlite3_stmt **stmt, struct error *err);
/* Steps s, a statement of db, to its next row: 1 for a row, 0 at the end, -1 with err
 * naming the database (damage met in the middle of a file). */
int store_step(sqlite3 *db, sqlite3_stmt *s, struct error *err);

/* One text value of gpuprof_metadata, or NULL (the caller frees it). */
char *store_metadata(sqlite3 *db, const char *tag);

#endif
