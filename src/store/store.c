/* The SQLite store (see store.h): schema creation, spool loading, opening. */
#include "store/store.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/spool.h"
#include "store/schema.h"
#include "util/strbuf.h"

int store_prepare(sqlite3 *db, const char *sql, sqlite3_stmt **stmt, struct error *err)
{
	if (sqlite3_prepare_v2(db, sql, -1, stmt, NULL) != SQLITE_OK)
		return error_set(err, "cannot read '%s': %s", sqlite3_db_filename(db, "main"),
				 sqlite3_errmsg(db));
	return 0;
}

static int exec(sqlite3 *db, const char *sql, struct error *err)
{
	char *message = NULL;
	if (sqlite3_exec(db, sql, NULL, NULL, &message) != SQLITE_OK) {
		error_set(err, "cannot write '%s': %s", sqlite3_db_filename(db, "main"),
			  message ? message : sqlite3_errmsg(db));
		sqlite3_free(message);
		return -1;
	}
	return 0;
}

enum statement {
	INSERT_STRING, INSERT_PROCESS, INSERT_AGENT, INSERT_QUEUE, INSERT_API, INSERT_KERNEL,
	INSERT_COPY, INSERT_DROPPED, INSERT_METADATA, STATEMENT_COUNT
};

static const char *const statement_sql[STATEMENT_COUNT] = {
	[INSERT_STRING] = "INSERT OR REPLACE INTO gpuprof_string VALUES (?,?)",
	[INSERT_PROCESS] = "INSERT INTO gpuprof_process (id, hostname, pid, ppid, rank, size, "
			   "command, start, end, realtime_start, clean_exit) VALUES "
			   "(1,?,?,?,?,?,?,?,?,?,?)",
	[INSERT_AGENT] = "INSERT OR REPLACE INTO gpuprof_agent VALUES (1,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
	[INSERT_QUEUE] = "INSERT OR REPLACE INTO gpuprof_queue VALUES (1,?,?,?)",
	[INSERT_API] = "INSERT INTO gpuprof_api_call (process_id, tid, domain, function_id, "
		       "correlation_id, start, end, result) VALUES (1,?,?,?,?,?,?,?)",
	[INSERT_KERNEL] = "INSERT INTO gpuprof_kernel (process_id, tid, agent_index, queue_index, "
			  "name_id, correlation_id, dispatch_id, start, end, grid_x, grid_y, "
			  "grid_z, workgroup_x, workgroup_y, workgroup_z, local_memory_bytes, "
			  "private_memory_bytes, status) VALUES (1,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
	[INSERT_COPY] = "INSERT INTO gpuprof_memory_copy (process_id, tid, queue_index, "
			"src_agent_index, dst_agent_index, operation, direction, function_id, "
			"bytes, correlation_id, start, end, status) VALUES "
			"(1,?,?,?,?,?,?,?,?,?,?,?,?)",
	[INSERT_DROPPED] = "INSERT INTO gpuprof_dropped VALUES (1,?,?,?)",
	[INSERT_METADATA] = "INSERT OR REPLACE INTO gpuprof_metadata VALUES (?,?)",
};

struct loader {
	sqlite3 *db;
	sqlite3_stmt *stmt[STATEMENT_COUNT];
	struct record_process process;
	int have_process;
	uint64_t first_ns, last_ns; /* earliest start and latest end seen */
	uint64_t end_ns;            /* from RECORD_PROCESS_END, 0 when absent */
	uint64_t dropped[8][2];     /* by reason: records, bytes */
	struct store_load_stats *stats;
};

static void bind_i64(sqlite3_stmt *s, int *column, int64_t value)
{
	sqlite3_bind_int64(s, ++*column, value);
}

static int step(struct loader *l, enum statement which, struct error *err)
{
	sqlite3_stmt *s = l->stmt[which];
	int rc = sqlite3_step(s);
	sqlite3_reset(s);
	if (rc != SQLITE_DONE)
		return error_set(err, "cannot write '%s': %s", sqlite3_db_filename(l->db, "main"),
				 sqlite3_errmsg(l->db));
	return 0;
}

static void see_interval(struct loader *l, uint64_t start, uint64_t end)
{
	if (!l->first_ns || start < l->first_ns)
		l->first_ns = start;
	if (end > l->last_ns)
		l->last_ns = end;
}

static int load_record(struct loader *l, const struct record_header *h, struct error *err)
{
	int c = 0;
	sqlite3_stmt *s;
	switch (h->type) {
	case RECORD_STRING: {
		const struct record_string *r = (const void *)h;
		s = l->stmt[INSERT_STRING];
		bind_i64(s, &c, r->id);
		sqlite3_bind_text(s, ++c, r->text, (int)r->length, SQLITE_STATIC);
		return step(l, INSERT_STRING, err);
	}
	case RECORD_PROCESS:
		memcpy(&l->process, h, sizeof(l->process));
		l->have_process = 1;
		return 0;
	case RECORD_AGENT: {
		const struct record_agent *r = (const void *)h;
		s = l->stmt[INSERT_AGENT];
		bind_i64(s, &c, r->id);
		bind_i64(s, &c, r->type);
		bind_i64(s, &c, r->name_id);
		bind_i64(s, &c, r->vendor_name_id);
		bind_i64(s, &c, r->driver_version_id);
		bind_i64(s, &c, r->vendor_id);
		bind_i64(s, &c, r->compute_units);
		bind_i64(s, &c, r->max_clock_mhz);
		bind_i64(s, &c, (int64_t)r->global_memory_bytes);
		bind_i64(s, &c, (int64_t)r->local_memory_bytes);
		bind_i64(s, &c, r->max_workgroup_size);
		for (int i = 0; i < 3; i++)
			bind_i64(s, &c, r->max_workgroup_dim[i]);
		return step(l, INSERT_AGENT, err);
	}
	case RECORD_QUEUE: {
		const struct record_queue *r = (const void *)h;
		s = l->stmt[INSERT_QUEUE];
		bind_i64(s, &c, r->id);
		bind_i64(s, &c, r->agent_id);
		bind_i64(s, &c, (int64_t)r->properties);
		return step(l, INSERT_QUEUE, err);
	}
	case RECORD_API_CALL: {
		const struct record_api_call *r = (const void *)h;
		s = l->stmt[INSERT_API];
		bind_i64(s, &c, r->tid);
		bind_i64(s, &c, r->domain);
		bind_i64(s, &c, r->function_id);
		bind_i64(s, &c, (int64_t)r->correlation_id);
		bind_i64(s, &c, (int64_t)r->start_ns);
		bind_i64(s, &c, (int64_t)r->end_ns);
		bind_i64(s, &c, r->result);
		see_interval(l, r->start_ns, r->end_ns);
		return step(l, INSERT_API, err);
	}
	case RECORD_KERNEL: {
		const struct record_kernel *r = (const void *)h;
		s = l->stmt[INSERT_KERNEL];
		bind_i64(s, &c, r->tid);
		bind_i64(s, &c, r->agent_id);
		bind_i64(s, &c, r->queue_id);
		bind_i64(s, &c, r->name_id);
		bind_i64(s, &c, (int64_t)r->correlation_id);
		bind_i64(s, &c, (int64_t)r->dispatch_id);
		bind_i64(s, &c, (int64_t)r->start_ns);
		bind_i64(s, &c, (int64_t)r->end_ns);
		for (int i = 0; i < 3; i++)
			bind_i64(s, &c, r->grid[i]);
		for (int i = 0; i < 3; i++)
			bind_i64(s, &c, r->workgroup[i]);
		bind_i64(s, &c, r->local_memory_bytes);
		bind_i64(s, &c, r->private_memory_bytes);
		bind_i64(s, &c, r->status);
		see_interval(l, r->start_ns, r->end_ns);
		return step(l, INSERT_KERNEL, err);
	}
	case RECORD_MEMORY_COPY: {
		const struct record_memory_copy *r = (const void *)h;
		s = l->stmt[INSERT_COPY];
		bind_i64(s, &c, r->tid);
		bind_i64(s, &c, r->queue_id);
		bind_i64(s, &c, r->src_agent_id);
		bind_i64(s, &c, r->dst_agent_id);
		bind_i64(s, &c, r->operation);
		bind_i64(s, &c, r->direction);
		bind_i64(s, &c, r->function_id);
		bind_i64(s, &c, (int64_t)r->bytes);
		bind_i64(s, &c, (int64_t)r->correlation_id);
		bind_i64(s, &c, (int64_t)r->start_ns);
		bind_i64(s, &c, (int64_t)r->end_ns);
		bind_i64(s, &c, r->status);
		see_interval(l, r->start_ns, r->end_ns);
		return step(l, INSERT_COPY, err);
	}
	case RECORD_DROPPED: {
		const struct record_dropped *r = (const void *)h;
		uint32_t reason = r->reason < 8 ? r->reason : 0;
		l->dropped[reason][0] += r->records;
		l->dropped[reason][1] += r->bytes;
		l->stats->dropped_records += r->records;
		return 0;
	}
	case RECORD_PROCESS_END:
		l->end_ns = ((const struct record_process_end *)h)->end_ns;
		l->stats->clean_exit = 1;
		return 0;
	}
	l->stats->unknown_records++;
	return 0;
}

static int insert_metadata(struct loader *l, const char *tag, const char *value,
			   struct error *err)
{
	sqlite3_stmt *s = l->stmt[INSERT_METADATA];
	sqlite3_bind_text(s, 1, tag, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(s, 2, value, -1, SQLITE_TRANSIENT);
	return step(l, INSERT_METADATA, err);
}

static int finish(struct loader *l, const char *spool_path, struct error *err)
{
	char number[32];
	for (uint32_t reason = 0; reason < 8; reason++) {
		if (!l->dropped[reason][0])
			continue;
		sqlite3_stmt *s = l->stmt[INSERT_DROPPED];
		sqlite3_bind_text(s, 1, record_dropped_reason_name(reason), -1, SQLITE_STATIC);
		sqlite3_bind_int64(s, 2, (int64_t)l->dropped[reason][0]);
		sqlite3_bind_int64(s, 3, (int64_t)l->dropped[reason][1]);
		if (step(l, INSERT_DROPPED, err))
			return -1;
	}
	if (l->have_process) {
		const struct record_process *p = &l->process;
		sqlite3_stmt *s = l->stmt[INSERT_PROCESS];
		int c = 0;
		/* names resolve through the string table loaded above */
		sqlite3_bind_null(s, ++c);
		bind_i64(s, &c, p->pid);
		bind_i64(s, &c, p->ppid);
		bind_i64(s, &c, p->rank);
		bind_i64(s, &c, p->size);
		sqlite3_bind_null(s, ++c);
		bind_i64(s, &c, (int64_t)p->start_ns);
		uint64_t end = l->end_ns ? l->end_ns : l->last_ns > p->start_ns ? l->last_ns
										    : p->start_ns;
		bind_i64(s, &c, (int64_t)end);
		bind_i64(s, &c, (int64_t)p->realtime_ns);
		bind_i64(s, &c, l->stats->clean_exit);
		if (step(l, INSERT_PROCESS, err))
			return -1;
		struct strbuf sql = STRBUF_INIT;
		strbuf_addf(&sql,
			    "UPDATE gpuprof_process SET "
			    "hostname = (SELECT string FROM gpuprof_string WHERE id = %u), "
			    "command = (SELECT string FROM gpuprof_string WHERE id = %u);",
			    p->hostname_id, p->command_id);
		int rc = exec(l->db, sql.buf, err);
		strbuf_release(&sql);
		if (rc)
			return -1;
	}
	snprintf(number, sizeof(number), "%d", SPOOL_VERSION);
	snprintf(number + 16, 16, "%llu", (unsigned long long)l->stats->dropped_records);
	if (insert_metadata(l, "schema_version", STORE_SCHEMA_VERSION, err) ||
	    insert_metadata(l, "gpuprof_version", GPUPROF_VERSION, err) ||
	    insert_metadata(l, "spool_version", number, err) ||
	    insert_metadata(l, "source_spool", spool_path, err) ||
	    insert_metadata(l, "clean_exit", l->stats->clean_exit ? "1" : "0", err) ||
	    insert_metadata(l, "dropped_records", number + 16, err))
		return -1;
	return 0;
}

/* Kernels, copies and API calls are inserted in start-time order, so that a table's
 * rowid order is its time order and readers need no sort. Records stay in the mapped
 * spool; only pointers to them are sorted, ties kept in file order. */
struct timed_records {
	const struct record_header **items;
	size_t count, alloc;
};

static uint64_t record_start(const struct record_header *h)
{
	switch (h->type) {
	case RECORD_API_CALL: return ((const struct record_api_call *)h)->start_ns;
	case RECORD_KERNEL: return ((const struct record_kernel *)h)->start_ns;
	case RECORD_MEMORY_COPY: return ((const struct record_memory_copy *)h)->start_ns;
	}
	return 0;
}

static int by_start(const void *a, const void *b)
{
	const struct record_header *x = *(const struct record_header *const *)a;
	const struct record_header *y = *(const struct record_header *const *)b;
	uint64_t sx = record_start(x), sy = record_start(y);
	if (sx != sy)
		return sx < sy ? -1 : 1;
	return x < y ? -1 : x > y;
}

static void timed_add(struct timed_records *t, const struct record_header *h)
{
	if (t->count == t->alloc) {
		t->alloc = t->alloc ? t->alloc * 2 : 4096;
		t->items = xrealloc(t->items, t->alloc * sizeof(*t->items));
	}
	t->items[t->count++] = h;
}

int store_load_spool(const char *spool_path, const char *db_path, struct store_load_stats *stats,
		     struct error *err)
{
	struct timed_records timed[RECORD_TYPE_COUNT];
	memset(timed, 0, sizeof(timed));
	memset(stats, 0, sizeof(*stats));
	struct spool_reader reader;
	if (spool_reader_open(&reader, spool_path, err))
		return -1;
	struct strbuf temporary = STRBUF_INIT;
	strbuf_addf(&temporary, "%s.partial", db_path);
	unlink(temporary.buf);
	struct loader l = { .stats = stats };
	int rc = -1;
	if (sqlite3_open_v2(temporary.buf, &l.db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE |
			    SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK) {
		error_set(err, "cannot create '%s': %s", temporary.buf,
			  l.db ? sqlite3_errmsg(l.db) : "out of memory");
		goto out;
	}
	if (exec(l.db, "PRAGMA page_size = 65536; PRAGMA journal_mode = OFF; "
		       "PRAGMA synchronous = OFF; "
		       "PRAGMA locking_mode = EXCLUSIVE; PRAGMA cache_size = -65536;", err) ||
	    exec(l.db, store_schema_sql, err) || exec(l.db, "BEGIN", err))
		goto out;
	for (int i = 0; i < STATEMENT_COUNT; i++)
		if (store_prepare(l.db, statement_sql[i], &l.stmt[i], err))
			goto out;
	const struct record_header *record;
	int more;
	while ((more = spool_reader_next(&reader, &record, err)) > 0) {
		if (record->type < RECORD_TYPE_COUNT)
			stats->records[record->type]++;
		if (record->type == RECORD_API_CALL || record->type == RECORD_KERNEL ||
		    record->type == RECORD_MEMORY_COPY)
			timed_add(&timed[record->type], record);
		else if (load_record(&l, record, err))
			goto out;
	}
	if (more < 0)
		goto out;
	for (int type = 0; type < RECORD_TYPE_COUNT; type++) {
		struct timed_records *t = &timed[type];
		if (t->count)
			qsort(t->items, t->count, sizeof(*t->items), by_start);
		for (size_t i = 0; i < t->count; i++)
			if (load_record(&l, t->items[i], err))
				goto out;
	}
	stats->truncated_bytes = reader.truncated_bytes;
	if (!l.have_process) {
		error_set(err, "'%s' holds no process record: it is empty or was cut off before "
			  "its first flush", spool_path);
		goto out;
	}
	if (finish(&l, spool_path, err) || exec(l.db, "COMMIT", err))
		goto out;
	rc = 0;
out:
	for (int i = 0; i < STATEMENT_COUNT; i++)
		sqlite3_finalize(l.stmt[i]);
	if (l.db && sqlite3_close(l.db) != SQLITE_OK && rc == 0)
		rc = error_set(err, "cannot write '%s': %s", temporary.buf, sqlite3_errmsg(l.db));
	if (rc == 0 && rename(temporary.buf, db_path) < 0)
		rc = error_set(err, "cannot create '%s': %s", db_path, strerror(errno));
	if (rc)
		unlink(temporary.buf);
	strbuf_release(&temporary);
	for (int type = 0; type < RECORD_TYPE_COUNT; type++)
		free(timed[type].items);
	spool_reader_release(&reader);
	return rc;
}

char *store_metadata(sqlite3 *db, const char *tag)
{
	sqlite3_stmt *s;
	char *value = NULL;
	if (sqlite3_prepare_v2(db, "SELECT value FROM gpuprof_metadata WHERE tag = ?", -1, &s,
			       NULL) != SQLITE_OK)
		return NULL;
	sqlite3_bind_text(s, 1, tag, -1, SQLITE_STATIC);
	if (sqlite3_step(s) == SQLITE_ROW && sqlite3_column_text(s, 0))
		value = strdup((const char *)sqlite3_column_text(s, 0));
	sqlite3_finalize(s);
	return value;
}

int store_open(const char *db_path, sqlite3 **db, struct error *err)
{
	*db = NULL;
	if (access(db_path, R_OK) < 0)
		return error_set(err, "cannot open '%s': %s", db_path, strerror(errno));
	if (sqlite3_open_v2(db_path, db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, NULL) !=
	    SQLITE_OK) {
		error_set(err, "cannot open '%s': %s", db_path,
			  *db ? sqlite3_errmsg(*db) : "out of memory");
		sqlite3_close(*db);
		*db = NULL;
		return -1;
	}
	/* Reading the metadata fails on a file that is not a database or whose first pages
	 * are damaged; damage further in is reported by the reads that meet it. */
	char *version = store_metadata(*db, "schema_version");
	if (!version) {
		sqlite3_stmt *probe = NULL;
		int rc = sqlite3_prepare_v2(*db, "SELECT value FROM gpuprof_metadata", -1, &probe, NULL);
		if (rc == SQLITE_OK)
			error_set(err, "'%s' is not a gpuprof database (no schema version)", db_path);
		else
			error_set(err, "'%s' is not a readable gpuprof database: %s", db_path,
				  sqlite3_errmsg(*db));
		sqlite3_finalize(probe);
	} else if (strncmp(version, "1.", 2)) {
		error_set(err, "'%s' has database schema %s; this gpuprof reads schema 1.x", db_path,
			  version);
	}
	if (!version || strncmp(version, "1.", 2)) {
		free(version);
		sqlite3_close(*db);
		*db = NULL;
		return -1;
	}
	free(version);
	return 0;
}
