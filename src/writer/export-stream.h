/* The rows of one query of a database as events, read ahead in batches on a thread with a
 * connection of its own (SQLite's connections are each for one thread at a time), so
 * that an export reads its tables side by side on every CPU while the writers run
 * (export.c merges the streams by start). Where no thread starts, where the query needs
 * the caller's connection (its temporary tables), or under a limit of data memory that
 * leaves a sort less than its EXTSORT_MEMORY, the rows are read on the caller's
 * connection as they are wanted: the same events in the same order. */
#ifndef GPUPROF_WRITER_EXPORT_STREAM_H
#define GPUPROF_WRITER_EXPORT_STREAM_H

#include <sqlite3.h>

#include "core/event.h"
#include "util/error.h"

/* Fills e from the row s stands on; its strings must outlive the stream (the database's
 * strings held in memory), as a batch keeps events past the row. */
typedef void (*export_fill_fn)(sqlite3_stmt *s, const void *arg, struct event *e);

struct export_stream;

/* The rows of sql on db, each made an event by fill(row, arg): read ahead on a thread
 * where ahead is set and a thread starts, else on db as they are wanted. Returns NULL
 * with err set where sql cannot be prepared here. */
struct export_stream *export_stream_open(sqlite3 *db, const char *sql, export_fill_fn fill,
					 const void *arg, int ahead, struct error *err);
/* The stream's next event (valid until export_stream_next): 1, 0 at the end, or -1 with
 * err set (a read failed). */
int export_stream_peek(struct export_stream *s, struct event **e, struct error *err);
/* Past the event export_stream_peek gave. */
void export_stream_next(struct export_stream *s);
/* Stops the reading (at its end or not) and frees the stream. */
void export_stream_close(struct export_stream *s);

#endif
