/* The times each process had device work running (see device-busy.h). */
#include "analysis/device-busy.h"

#include "store/store.h"
#include "util/strbuf.h"

int device_busy_table(sqlite3 *db, const char *name, struct error *err)
{
	sqlite3_stmt *q, *insert;
	struct strbuf sql = STRBUF_INIT;
	strbuf_addf(&sql, "DROP TABLE IF EXISTS temp.%s; CREATE TEMP TABLE %s (process_id "
			  "INTEGER, start INTEGER, end INTEGER); CREATE INDEX temp.%s_start ON %s "
			  "(process_id, start)", name, name, name, name);
	int rc = store_exec(db, sql.buf, err);
	strbuf_reset(&sql);
	strbuf_addf(&sql, "INSERT INTO temp.%s VALUES (?, ?, ?)", name);
	if (rc || store_prepare(db, "SELECT process_id, start, end FROM gpuprof_kernel UNION ALL "
				    "SELECT process_id, start, end FROM gpuprof_memory_copy "
				    "ORDER BY 1, 2", &q, err)) {
		strbuf_release(&sql);
		return -1;
	}
	rc = store_prepare(db, sql.buf, &insert, err);
	strbuf_release(&sql);
	if (rc) {
		sqlite3_finalize(q);
		return -1;
	}
	rc = store_exec(db, "BEGIN", err);
	int open = 0;
	sqlite3_int64 process = 0, start = 0, end = 0;
	for (int more = 1; rc == 0 && more;) {
		more = sqlite3_step(q) == SQLITE_ROW;
		sqlite3_int64 p = more ? sqlite3_column_int64(q, 0) : 0;
		sqlite3_int64 s = more ? sqlite3_column_int64(q, 1) : 0;
		sqlite3_int64 e = more ? sqlite3_column_int64(q, 2) : 0;
		if (open && more && p == process && s <= end) { /* overlaps: one interval */
			if (e > end)
				end = e;
			continue;
		}
		if (open) {
			sqlite3_bind_int64(insert, 1, process);
			sqlite3_bind_int64(insert, 2, start);
			sqlite3_bind_int64(insert, 3, end);
			if (sqlite3_step(insert) != SQLITE_DONE)
				rc = error_set(err, "%s", sqlite3_errmsg(db));
			sqlite3_reset(insert);
		}
		process = p, start = s, end = e, open = more;
	}
	sqlite3_finalize(q);
	sqlite3_finalize(insert);
	if (rc) { /* the connection is left outside a transaction */
		struct error ignored;
		store_exec(db, "ROLLBACK", &ignored);
		return -1;
	}
	return store_exec(db, "COMMIT", err) ? -1 : 0;
}
