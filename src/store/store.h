/* The SQLite store: one database per recorded process, the canonical form of the
 * recorded data (documented in docs/SCHEMA.md). Every output is written from it. */
#ifndef GPUPROF_STORE_STORE_H
#define GPUPROF_STORE_STORE_H

#include <sqlite3.h>
#include <stdint.h>

#include "core/record.h"
#include "util/error.h"

#define STORE_SCHEMA_VERSION "1.0.0"

/* What a load found, for the user's summary line. */
struct store_load_stats {
	uint64_t records[RECORD_TYPE_COUNT]; /* by record type */
	uint64_t unknown_records;            /* types this version does not know, skipped */
	uint64_t dropped_records;            /* lost while recording (RECORD_DROPPED) */
	uint64_t truncated_bytes;            /* an incomplete last chunk, ignored */
	int clean_exit;                      /* the process ended with a final flush */
};

/* Builds a database at db_path from a spool. The database is written beside db_path
 * and renamed into place only when complete; an existing file is replaced. */
int store_load_spool(const char *spool_path, const char *db_path, struct store_load_stats *stats,
		     struct error *err);

/* Opens an existing gpuprof database read-only and checks its schema version. */
int store_open(const char *db_path, sqlite3 **db, struct error *err);

/* Prepares a statement; on failure err names the database and SQLite's message. */
int store_prepare(sqlite3 *db, const char *sql, sqlite3_stmt **stmt, struct error *err);

/* One text value of gpuprof_metadata, or NULL (the caller frees it). */
char *store_metadata(sqlite3 *db, const char *tag);

#endif
