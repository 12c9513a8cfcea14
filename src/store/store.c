/* The SQLite store (see store.h): schema creation, spool loading, opening. */
#include "store/store.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/launch-delta.h"
#include "core/record-fields.h"
#include "core/recording.h"
#include "core/spool.h"
#include "core/stacks.h"
#include "store/schema.h"
#include "util/extsort.h"
#include "util/progress.h"
#include "util/strbuf.h"
#include "util/unfinished.h"

int store_step(sqlite3 *db, sqlite3_stmt *s, struct error *err)
{
	int step = sqlite3_step(s);
	if (step == SQLITE_ROW)
		return 1;
	if (step == SQLITE_DONE)
		return 0;
	return error_set(err, "cannot read '%s': %s", sqlite3_db_filename(db, "main"),
			 sqlite3_errmsg(db));
}

int store_prepare(sqlite3 *db, const char *sql, sqlite3_stmt **stmt, struct error *err)
{
	if (sqlite3_prepare_v2(db, sql, -1, stmt, NULL) != SQLITE_OK)
		return error_set(err, "cannot read '%s': %s", sqlite3_db_filename(db, "main"),
				 sqlite3_errmsg(db));
	return 0;
}

static void configure_sqlite(void)
{
	/* SQLite's sorter (an ORDER BY it cannot take from an index) holds at least
	 * SQLITE_CONFIG_PMASZ pages in memory before it spills to a temporary file: 250 by
	 * default, 16 MiB of the databases' 64 KiB pages. Under a smaller limit of data
	 * memory it holds what one of gpuprof's own sorts may. Process-wide, and only
	 * before SQLite starts (later it is refused, harmlessly). */
	size_t pages = extsort_memory() / 65536;
	if (pages < 250)
		sqlite3_config(SQLITE_CONFIG_PMASZ, (unsigned)(pages < 4 ? 4 : pages));
}

void store_configure(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	pthread_once(&once, configure_sqlite);
}

int store_writing(sqlite3 *db, struct error *err)
{
	/* the page cache: 64 MiB, a quarter of a smaller limit of data memory */
	long long kib = 65536;
	struct rlimit limit;
	if (getrlimit(RLIMIT_DATA, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY &&
	    (long long)(limit.rlim_cur / 4096) < kib)
		kib = limit.rlim_cur / 4096 > 1024 ? (long long)(limit.rlim_cur / 4096) : 1024;
	char sql[200];
	snprintf(sql, sizeof(sql), "PRAGMA page_size = 65536; PRAGMA journal_mode = OFF; "
		 "PRAGMA synchronous = OFF; PRAGMA cache_size = -%lld", kib);
	return store_exec(db, sql, err);
}

const char *store_write_error(sqlite3 *db)
{
	static _Thread_local char text[512];
	int code = sqlite3_errcode(db), system = sqlite3_system_errno(db);
	struct rlimit limit;
	struct stat st;
	const char *path = sqlite3_db_filename(db, "main");
	if ((code == SQLITE_IOERR || code == SQLITE_FULL) && system)
		snprintf(text, sizeof(text), "%s (%s)", sqlite3_errmsg(db), strerror(system));
	else if ((code == SQLITE_IOERR || code == SQLITE_FULL) &&
		 getrlimit(RLIMIT_FSIZE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY &&
		 path && stat(path, &st) == 0 && (uint64_t)st.st_size + 65536 > limit.rlim_cur)
		/* SQLite keeps no errno of a failed write: a file at the limit tells */
		snprintf(text, sizeof(text), "%s (the file size limit, ulimit -f, %llu bytes, is "
			 "reached)", sqlite3_errmsg(db), (unsigned long long)limit.rlim_cur);
	else
		snprintf(text, sizeof(text), "%s", sqlite3_errmsg(db));
	return text;
}

int store_exec(sqlite3 *db, const char *sql, struct error *err)
{
	if (sqlite3_exec(db, sql, NULL, NULL, NULL) != SQLITE_OK)
		return error_set(err, "cannot write '%s': %s", sqlite3_db_filename(db, "main"),
				 store_write_error(db));
	return 0;
}

enum statement {
	INSERT_STRING, INSERT_PROCESS, INSERT_AGENT, INSERT_QUEUE, INSERT_API, INSERT_KERNEL,
	INSERT_COPY, INSERT_ALLOCATION, INSERT_SYNCHRONIZATION, INSERT_OVERHEAD, INSERT_DROPPED,
	INSERT_METADATA, INSERT_MARKER, INSERT_THREAD, INSERT_METRIC_SERIES, INSERT_METRIC,
	INSERT_FRAME, INSERT_STACK, INSERT_SAMPLE, INSERT_SAMPLES_LOST, INSERT_LAUNCH_STACK,
	INSERT_COUNTER, INSERT_PC_SAMPLE, INSERT_PC_SAMPLING, INSERT_MPI_CALL,
	INSERT_MPI_COMPLETION, INSERT_CLOCK_SYNC, INSERT_GRAPH_NODE_CLONE,
	STATEMENT_COUNT
};

static const char *const statement_sql[STATEMENT_COUNT] = {
	[INSERT_STRING] = "INSERT OR REPLACE INTO gpuprof_string VALUES (?,?)",
	[INSERT_PROCESS] = "INSERT INTO gpuprof_process (id, hostname, pid, ppid, rank, size, "
			   "command, start, end, realtime_start, clean_exit, recording_start) "
			   "VALUES (1,?,?,?,?,?,?,?,?,?,?,?)",
	[INSERT_AGENT] = "INSERT OR REPLACE INTO gpuprof_agent VALUES "
			 "(1,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
	[INSERT_QUEUE] = "INSERT OR REPLACE INTO gpuprof_queue VALUES (1,?,?,?)",
	/* the records of every output: their columns from core/record-fields.h */
	[INSERT_API] = "INSERT INTO gpuprof_api_call (process_id" API_CALL_FIELDS(FIELD_COLUMN)
		       ") VALUES (1" API_CALL_FIELDS(FIELD_PLACEHOLDER) ")",
	[INSERT_KERNEL] = "INSERT INTO gpuprof_kernel (process_id" KERNEL_FIELDS(FIELD_COLUMN)
			  ") VALUES (1" KERNEL_FIELDS(FIELD_PLACEHOLDER) ")",
	[INSERT_COPY] = "INSERT INTO gpuprof_memory_copy (process_id" COPY_FIELDS(FIELD_COLUMN)
			") VALUES (1" COPY_FIELDS(FIELD_PLACEHOLDER) ")",
	[INSERT_ALLOCATION] = "INSERT INTO gpuprof_memory_allocation (process_id"
			      ALLOCATION_FIELDS(FIELD_COLUMN) ") VALUES (1"
			      ALLOCATION_FIELDS(FIELD_PLACEHOLDER) ")",
	[INSERT_SYNCHRONIZATION] = "INSERT INTO gpuprof_synchronization (process_id, tid, type, "
				   "stream_id, context_id, event_id, result, correlation_id, "
				   "start, end) VALUES (1,?,?,?,?,?,?,?,?,?)",
	[INSERT_OVERHEAD] = "INSERT INTO gpuprof_overhead (process_id, kind, tid, agent_index, "
			    "start, end) VALUES (1,?,?,?,?,?)",
	[INSERT_DROPPED] = "INSERT INTO gpuprof_dropped VALUES (1,?,?,?)",
	[INSERT_METADATA] = "INSERT OR REPLACE INTO gpuprof_metadata VALUES (?,?)",
	[INSERT_MARKER] = "INSERT INTO gpuprof_marker (process_id, tid, end_tid, kind, domain_id, "
			  "name_id, range_id, parent_id, start, end, ended, module_id) VALUES "
			  "(1,?,?,?,?,?,?,?,?,?,?,?)",
	[INSERT_THREAD] = "INSERT OR REPLACE INTO gpuprof_thread VALUES (1,?,?)",
	[INSERT_METRIC_SERIES] = "INSERT OR REPLACE INTO gpuprof_metric_series VALUES "
				 "(1,?,?,?,?,?,?)",
	[INSERT_METRIC] = "INSERT INTO gpuprof_metric (process_id, series_id, time, value) "
			  "VALUES (1,?,?,?)",
	[INSERT_FRAME] = "INSERT INTO gpuprof_frame VALUES (1,?,?,?,?,?,?,?)",
	[INSERT_STACK] = "INSERT INTO gpuprof_stack VALUES (1,?,?,?)",
	[INSERT_SAMPLE] = "INSERT INTO gpuprof_sample (process_id, tid, time, stack_id) "
			  "VALUES (1,?,?,?)",
	[INSERT_SAMPLES_LOST] = "INSERT INTO gpuprof_sample_lost (process_id, tid, start, end, "
				"samples) VALUES (1,?,?,?,?)",
	[INSERT_LAUNCH_STACK] = "INSERT INTO gpuprof_launch_stack (process_id, correlation_id, "
				"domain, function_id, tid, time, stack_id) VALUES (1,?,?,?,?,?,?)",
	[INSERT_COUNTER] = "INSERT INTO gpuprof_counter (process_id, correlation_id, "
			   "agent_index, name_id, value) VALUES (1,?,?,?,?)",
	[INSERT_PC_SAMPLE] = "INSERT INTO gpuprof_pc_sample (process_id, agent_index, "
			     "correlation_id, function_id, cubin_crc, pc_offset, reason_id, "
			     "samples, file_id, line) VALUES (1,?,?,?,?,?,?,?,?,?)",
	[INSERT_PC_SAMPLING] = "INSERT INTO gpuprof_pc_sampling VALUES (1,?,?,?,?,?,?)",
	/* a node copied again (a graph updated) keeps its last original */
	[INSERT_GRAPH_NODE_CLONE] = "INSERT OR REPLACE INTO gpuprof_graph_node_clone (process_id, "
				    "node_id, original_id) VALUES (1,?,?)",
	[INSERT_MPI_CALL] = "INSERT INTO gpuprof_mpi_call (process_id, tid, function_id, start, "
			    "end, call_id, communicator_id, communicator_size, peer, tag, root, "
			    "result, bytes_sent, bytes_received, sequence, request, domain) VALUES "
			    "(1,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
	[INSERT_MPI_COMPLETION] = "INSERT OR REPLACE INTO gpuprof_mpi_completion VALUES "
				  "(1,?,?,?,?,?,?)",
	[INSERT_CLOCK_SYNC] = "INSERT INTO gpuprof_clock_sync VALUES (1,?,?,?,?,?)",
};

/* Rows per multi-row INSERT for the large tables: one statement step per batch
 * instead of per row cut the insert time of 5M records from 4.7 s to 2.8 s here. */
#define BATCH_ROWS 128

struct loader {
	sqlite3 *db;
	sqlite3_stmt *stmt[STATEMENT_COUNT];
	sqlite3_stmt *batch[STATEMENT_COUNT]; /* BATCH_ROWS rows; for the large tables only */
	const struct recording *rec;
	struct progress_task *progress;
	uint64_t rows; /* inserted so far */
};

/* The bound values in one row of a statement. */
static int row_columns(const char *sql)
{
	const char *values = strstr(sql, "VALUES");
	int n = 0;
	for (const char *p = values; p && *p; p++)
		n += *p == '?';
	return n;
}

/* "INSERT ... VALUES (row)" becomes "INSERT ... VALUES (row),(row),..." */
static int prepare_batch(struct loader *l, enum statement which, struct error *err)
{
	const char *sql = statement_sql[which];
	const char *row = strstr(sql, "VALUES") + strlen("VALUES ");
	struct strbuf batch = STRBUF_INIT;
	strbuf_add(&batch, sql, (size_t)(row - sql));
	for (int i = 0; i < BATCH_ROWS; i++)
		strbuf_addf(&batch, "%s%s", i ? "," : "", row);
	int rc = store_prepare(l->db, batch.buf, &l->batch[which], err);
	strbuf_release(&batch);
	return rc;
}

static void bind_i64(sqlite3_stmt *s, int *column, int64_t value)
{
	sqlite3_bind_int64(s, ++*column, value);
}

static int step_statement(struct loader *l, sqlite3_stmt *s, struct error *err)
{
	int rc = sqlite3_step(s);
	sqlite3_reset(s);
	if (rc != SQLITE_DONE)
		return error_set(err, "cannot write '%s': %s", sqlite3_db_filename(l->db, "main"),
				 store_write_error(l->db));
	return 0;
}

static int step(struct loader *l, enum statement which, struct error *err)
{
	return step_statement(l, l->stmt[which], err);
}

/* One field of a list of core/record-fields.h: its value, bound to the next column. */
#define BIND_FIELD(column, value, event, to_event) bind_i64(s, &c, value);

/* Binds a record's values to the columns after `c` of s (a row of a multi-row insert
 * starts further on). Device records without their thread take it (and the function)
 * from their API call. */
static void bind_record(sqlite3_stmt *s, int c, const struct record_header *h,
			const struct recording *rec)
{
	switch (h->type) {
	case RECORD_STRING: {
		const struct record_string *r = (const void *)h;
		bind_i64(s, &c, r->id);
		sqlite3_bind_text(s, ++c, r->text, (int)r->length, SQLITE_STATIC);
		return;
	}
	case RECORD_AGENT: {
		const struct record_agent *r = (const void *)h;
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
		char uuid[RECORD_UUID_TEXT];
		record_uuid_text(r->uuid, uuid);
		sqlite3_bind_text(s, ++c, uuid, -1, SQLITE_TRANSIENT);
		bind_i64(s, &c, r->pci_domain);
		bind_i64(s, &c, r->pci_bus);
		bind_i64(s, &c, r->pci_device);
		bind_i64(s, &c, r->pci_function);
		bind_i64(s, &c, r->compute_major);
		bind_i64(s, &c, r->compute_minor);
		bind_i64(s, &c, r->warp_size);
		bind_i64(s, &c, r->l2_cache_bytes);
		bind_i64(s, &c, (int64_t)r->memory_bandwidth);
		bind_i64(s, &c, r->device_index);
		return;
	}
	case RECORD_QUEUE: {
		const struct record_queue *r = (const void *)h;
		bind_i64(s, &c, r->id);
		bind_i64(s, &c, r->agent_id);
		bind_i64(s, &c, (int64_t)r->properties);
		return;
	}
	case RECORD_API_CALL: {
		const struct record_api_call *k = (const void *)h;
		API_CALL_FIELDS(BIND_FIELD)
		return;
	}
	case RECORD_KERNEL: {
		struct resolved_kernel resolved, *k = &resolved;
		recording_resolve_kernel(rec, (const void *)h, k);
		KERNEL_FIELDS(BIND_FIELD)
		return;
	}
	case RECORD_MPI_CALL: {
		const struct record_mpi_call *r = (const void *)h;
		bind_i64(s, &c, r->tid);
		bind_i64(s, &c, r->function_id);
		bind_i64(s, &c, (int64_t)r->start_ns);
		bind_i64(s, &c, (int64_t)r->end_ns);
		bind_i64(s, &c, (int64_t)r->call_id);
		bind_i64(s, &c, r->communicator_id);
		bind_i64(s, &c, r->communicator_size);
		bind_i64(s, &c, r->peer);
		bind_i64(s, &c, r->tag);
		bind_i64(s, &c, r->root);
		bind_i64(s, &c, r->result);
		bind_i64(s, &c, (int64_t)r->bytes_sent);
		bind_i64(s, &c, (int64_t)r->bytes_received);
		bind_i64(s, &c, (int64_t)r->sequence);
		bind_i64(s, &c, (int64_t)r->request);
		bind_i64(s, &c, r->domain);
		return;
	}
	case RECORD_MPI_COMPLETION: {
		const struct record_mpi_completion *r = (const void *)h;
		bind_i64(s, &c, (int64_t)r->request);
		bind_i64(s, &c, (int64_t)r->completed_by);
		bind_i64(s, &c, (int64_t)r->time_ns);
		bind_i64(s, &c, (int64_t)r->bytes_received);
		bind_i64(s, &c, r->peer);
		bind_i64(s, &c, r->tag);
		return;
	}
	case RECORD_GRAPH_NODE_CLONE: {
		const struct record_graph_node_clone *r = (const void *)h;
		bind_i64(s, &c, (int64_t)r->node_id);
		bind_i64(s, &c, (int64_t)r->original_id);
		return;
	}
	case RECORD_CLOCK_SYNC: {
		const struct record_clock_sync *r = (const void *)h;
		bind_i64(s, &c, (int64_t)r->local_ns);
		bind_i64(s, &c, r->offset_ns);
		bind_i64(s, &c, (int64_t)r->round_trip_ns);
		bind_i64(s, &c, r->rank);
		bind_i64(s, &c, r->size);
		return;
	}
	case RECORD_THREAD_NAME: {
		const struct record_thread_name *r = (const void *)h;
		bind_i64(s, &c, r->tid);
		bind_i64(s, &c, r->name_id);
		return;
	}
	case RECORD_METRIC_SERIES: {
		const struct record_metric_series *r = (const void *)h;
		bind_i64(s, &c, r->id);
		bind_i64(s, &c, r->source);
		bind_i64(s, &c, r->device);
		bind_i64(s, &c, r->pid);
		sqlite3_bind_text(s, ++c, r->name, (int)strnlen(r->name, sizeof(r->name)),
				  SQLITE_STATIC);
		sqlite3_bind_text(s, ++c, r->unit, (int)strnlen(r->unit, sizeof(r->unit)),
				  SQLITE_STATIC);
		return;
	}
	case RECORD_METRIC: {
		const struct record_metric *r = (const void *)h;
		bind_i64(s, &c, r->series_id);
		bind_i64(s, &c, (int64_t)r->time_ns);
		sqlite3_bind_double(s, ++c, r->value);
		return;
	}
	case RECORD_COUNTER: {
		const struct record_counter *r = (const void *)h;
		bind_i64(s, &c, (int64_t)r->correlation_id);
		bind_i64(s, &c, r->agent_id);
		bind_i64(s, &c, r->name_id);
		if (r->value == r->value)
			sqlite3_bind_double(s, ++c, r->value);
		else
			sqlite3_bind_null(s, ++c); /* no value (NaN) */
		return;
	}
	case RECORD_PC_SAMPLE: {
		const struct record_pc_sample *r = (const void *)h;
		bind_i64(s, &c, r->agent_id);
		bind_i64(s, &c, (int64_t)r->correlation_id);
		bind_i64(s, &c, r->function_id);
		bind_i64(s, &c, (int64_t)r->cubin_crc);
		bind_i64(s, &c, (int64_t)r->pc_offset);
		bind_i64(s, &c, r->reason_id);
		bind_i64(s, &c, r->samples);
		bind_i64(s, &c, r->file_id);
		bind_i64(s, &c, r->line);
		return;
	}
	case RECORD_PC_SAMPLING: {
		const struct record_pc_sampling *r = (const void *)h;
		bind_i64(s, &c, r->agent_id);
		bind_i64(s, &c, r->period_log2);
		bind_i64(s, &c, (int64_t)r->samples);
		bind_i64(s, &c, (int64_t)r->dropped);
		bind_i64(s, &c, (int64_t)r->other_samples);
		bind_i64(s, &c, r->buffer_full);
		return;
	}
	case RECORD_MEMORY_COPY: {
		struct resolved_copy resolved, *k = &resolved;
		recording_resolve_copy(rec, (const void *)h, k);
		COPY_FIELDS(BIND_FIELD)
		return;
	}
	case RECORD_MEMORY_ALLOCATION: {
		struct resolved_allocation resolved, *k = &resolved;
		recording_resolve_allocation(rec, (const void *)h, k);
		ALLOCATION_FIELDS(BIND_FIELD)
		return;
	}
	case RECORD_SYNCHRONIZATION: {
		const struct record_synchronization *r = (const void *)h;
		uint32_t tid = r->tid;
		recording_enqueuer(rec, r->correlation_id, &tid, NULL);
		bind_i64(s, &c, tid);
		bind_i64(s, &c, r->type);
		bind_i64(s, &c, r->stream_id);
		bind_i64(s, &c, r->context_id);
		bind_i64(s, &c, r->event_id);
		bind_i64(s, &c, r->result);
		bind_i64(s, &c, (int64_t)r->correlation_id);
		bind_i64(s, &c, (int64_t)r->start_ns);
		bind_i64(s, &c, (int64_t)r->end_ns);
		return;
	}
	case RECORD_OVERHEAD: {
		const struct record_overhead *r = (const void *)h;
		bind_i64(s, &c, r->kind);
		bind_i64(s, &c, r->tid);
		bind_i64(s, &c, r->agent_id);
		bind_i64(s, &c, (int64_t)r->start_ns);
		bind_i64(s, &c, (int64_t)r->end_ns);
		return;
	}
	}
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
	const struct recording *rec = l->rec;
	for (uint32_t reason = 0; reason < DROPPED_REASON_COUNT; reason++) {
		if (!rec->dropped[reason][0])
			continue;
		sqlite3_stmt *s = l->stmt[INSERT_DROPPED];
		sqlite3_bind_text(s, 1, record_dropped_reason_name(reason), -1, SQLITE_STATIC);
		sqlite3_bind_int64(s, 2, (int64_t)rec->dropped[reason][0]);
		sqlite3_bind_int64(s, 3, (int64_t)rec->dropped[reason][1]);
		if (step(l, INSERT_DROPPED, err))
			return -1;
	}
	const struct record_process *p = rec->process;
	sqlite3_stmt *s = l->stmt[INSERT_PROCESS];
	int c = 0;
	sqlite3_bind_text(s, ++c, recording_string(rec, p->hostname_id), -1, SQLITE_STATIC);
	bind_i64(s, &c, p->pid);
	bind_i64(s, &c, p->ppid);
	bind_i64(s, &c, p->rank);
	bind_i64(s, &c, p->size);
	sqlite3_bind_text(s, ++c, recording_string(rec, p->command_id), -1, SQLITE_STATIC);
	/* the process's life, and the real time at its start; recording began later */
	uint64_t began = record_process_life_start(p);
	bind_i64(s, &c, (int64_t)began);
	bind_i64(s, &c, (int64_t)rec->end_ns);
	bind_i64(s, &c, (int64_t)(p->realtime_ns - (p->start_ns - began)));
	bind_i64(s, &c, rec->stats.clean_exit);
	bind_i64(s, &c, (int64_t)p->start_ns);
	if (step(l, INSERT_PROCESS, err))
		return -1;
	char spool_version[16], dropped[32];
	snprintf(spool_version, sizeof(spool_version), "%d", SPOOL_VERSION);
	snprintf(dropped, sizeof(dropped), "%llu", (unsigned long long)rec->stats.dropped_records);
	if (insert_metadata(l, "schema_version", STORE_SCHEMA_VERSION, err) ||
	    insert_metadata(l, "gpuprof_version", GPUPROF_VERSION, err) ||
	    insert_metadata(l, "spool_version", spool_version, err) ||
	    insert_metadata(l, "source_spool", spool_path, err) ||
	    insert_metadata(l, "clean_exit", rec->stats.clean_exit ? "1" : "0", err) ||
	    insert_metadata(l, "dropped_records", dropped, err) ||
	    insert_metadata(l, "kernel_rename", rec->rename_kernels ? "1" : "0", err))
		return -1;
	return 0;
}

static int load_markers(struct loader *l, struct error *err)
{
	for (size_t i = 0; i < l->rec->marker_count; i++) {
		const struct recording_marker *m = &l->rec->markers[i];
		sqlite3_stmt *s = l->stmt[INSERT_MARKER];
		int c = 0;
		bind_i64(s, &c, m->tid);
		bind_i64(s, &c, m->end_tid);
		bind_i64(s, &c, m->kind);
		bind_i64(s, &c, m->domain_id);
		bind_i64(s, &c, m->name_id);
		bind_i64(s, &c, (int64_t)m->id);
		bind_i64(s, &c, (int64_t)m->parent_id);
		bind_i64(s, &c, (int64_t)m->start_ns);
		bind_i64(s, &c, (int64_t)m->end_ns);
		bind_i64(s, &c, m->ended);
		bind_i64(s, &c, m->module_id);
		if (step(l, INSERT_MARKER, err))
			return -1;
		if (++l->rows % 8192 == 0)
			progress_set(l->progress, l->rows);
	}
	return 0;
}

/* The samples' frames, stacks and samples (core/stacks.h), ids from 1 (0: none). */
static int load_samples(struct loader *l, struct error *err)
{
	const struct sample_stacks *st = l->rec->stacks;
	if (!st)
		return 0;
	for (size_t i = 0; i < st->frame_count; i++) {
		sqlite3_stmt *s = l->stmt[INSERT_FRAME];
		int c = 0;
		bind_i64(s, &c, (int64_t)i + 1);
		sqlite3_bind_text(s, ++c, st->frames[i].function, -1, SQLITE_STATIC);
		sqlite3_bind_text(s, ++c, st->frames[i].module, -1, SQLITE_STATIC);
		bind_i64(s, &c, (int64_t)st->frames[i].offset);
		sqlite3_bind_text(s, ++c, st->frames[i].source, -1, SQLITE_STATIC);
		bind_i64(s, &c, st->frames[i].line);
		bind_i64(s, &c, st->frames[i].inlined);
		if (step(l, INSERT_FRAME, err))
			return -1;
	}
	for (size_t i = 1; i < st->node_count; i++) {
		sqlite3_stmt *s = l->stmt[INSERT_STACK];
		int c = 0;
		bind_i64(s, &c, (int64_t)i);
		bind_i64(s, &c, st->nodes[i].parent);
		bind_i64(s, &c, (int64_t)st->nodes[i].frame + 1);
		if (step(l, INSERT_STACK, err))
			return -1;
	}
	for (size_t i = 0; i < l->rec->samples.count && i < st->sample_count; i++) {
		const struct record_sample *r = (const void *)l->rec->samples.items[i];
		sqlite3_stmt *s = l->stmt[INSERT_SAMPLE];
		int c = 0;
		bind_i64(s, &c, r->tid);
		bind_i64(s, &c, (int64_t)r->time_ns);
		bind_i64(s, &c, st->leaf[i]);
		if (step(l, INSERT_SAMPLE, err))
			return -1;
		if (++l->rows % 8192 == 0)
			progress_set(l->progress, l->rows);
	}
	return 0;
}

/* Each launch's call stack: its API call (correlation id), thread, time and leaf. */
static int load_launch_stacks(struct loader *l, struct error *err)
{
	const struct sample_stacks *st = l->rec->stacks;
	for (size_t i = 0; st && i < l->rec->launch_stacks.count && i < st->launch_count; i++) {
		struct record_launch r = launch_stack_call(l->rec->launch_stacks.items[i]);
		if (!st->launch_leaf[i])
			continue; /* corrupt */
		sqlite3_stmt *s = l->stmt[INSERT_LAUNCH_STACK];
		int c = 0;
		bind_i64(s, &c, (int64_t)r.correlation_id);
		bind_i64(s, &c, r.domain);
		bind_i64(s, &c, r.function_id);
		bind_i64(s, &c, r.tid);
		bind_i64(s, &c, (int64_t)r.time_ns);
		bind_i64(s, &c, st->launch_leaf[i]);
		if (step(l, INSERT_LAUNCH_STACK, err))
			return -1;
	}
	return 0;
}

static int load_samples_lost(struct loader *l, struct error *err)
{
	for (size_t i = 0; i < l->rec->samples_lost.count; i++) {
		const struct record_samples_lost *r = (const void *)l->rec->samples_lost.items[i];
		sqlite3_stmt *s = l->stmt[INSERT_SAMPLES_LOST];
		int c = 0;
		bind_i64(s, &c, r->tid);
		bind_i64(s, &c, (int64_t)r->start_ns);
		bind_i64(s, &c, (int64_t)r->end_ns);
		bind_i64(s, &c, r->samples);
		if (step(l, INSERT_SAMPLES_LOST, err))
			return -1;
	}
	return 0;
}

/* Inserts every record of a list into the table of `which`, in batches where it can. */
static int load_list(struct loader *l, const struct record_list *list, enum statement which,
		     struct error *err)
{
	int columns = row_columns(statement_sql[which]);
	size_t i = 0;
	if (l->batch[which])
		for (; i + BATCH_ROWS <= list->count; i += BATCH_ROWS) {
			for (int r = 0; r < BATCH_ROWS; r++)
				bind_record(l->batch[which], r * columns, list->items[i + r], l->rec);
			if (step_statement(l, l->batch[which], err))
				return -1;
			l->rows += BATCH_ROWS;
			if (i % 8192 < BATCH_ROWS)
				progress_set(l->progress, l->rows);
		}
	for (; i < list->count; i++) {
		bind_record(l->stmt[which], 0, list->items[i], l->rec);
		if (step(l, which, err))
			return -1;
		if (++l->rows % 8192 == 0)
			progress_set(l->progress, l->rows);
	}
	return 0;
}

int store_write(const struct recording *rec, const char *spool_path, const char *db_path,
		struct error *err)
{
	struct strbuf temporary = STRBUF_INIT;
	strbuf_addf(&temporary, "%s.partial", db_path);
	unlink(temporary.buf);
	unfinished_add(temporary.buf);
	struct loader l = { .rec = rec };
	int rc = -1;
	store_configure();
	if (sqlite3_open_v2(temporary.buf, &l.db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE |
			    SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK) {
		error_set(err, "cannot create '%s': %s", temporary.buf,
			  l.db ? sqlite3_errmsg(l.db) : "out of memory");
		goto out;
	}
	unfinished_created(temporary.buf);
	if (store_writing(l.db, err) || store_exec(l.db, "PRAGMA locking_mode = EXCLUSIVE", err) ||
	    store_exec(l.db, store_schema_sql, err) || store_exec(l.db, "BEGIN", err))
		goto out;
	for (int i = 0; i < STATEMENT_COUNT; i++)
		if (store_prepare(l.db, statement_sql[i], &l.stmt[i], err))
			goto out;
	if (prepare_batch(&l, INSERT_API, err) || prepare_batch(&l, INSERT_KERNEL, err) ||
	    prepare_batch(&l, INSERT_COPY, err) || prepare_batch(&l, INSERT_COUNTER, err) ||
	    prepare_batch(&l, INSERT_PC_SAMPLE, err) || prepare_batch(&l, INSERT_MPI_CALL, err))
		goto out;
	/* tables in start-time order: rowid order is time order for readers */
	const struct { const struct record_list *list; enum statement insert; } tables[] = {
		{ &rec->strings, INSERT_STRING }, { &rec->agents, INSERT_AGENT },
		{ &rec->queues, INSERT_QUEUE }, { &rec->api_calls, INSERT_API },
		{ &rec->kernels, INSERT_KERNEL }, { &rec->copies, INSERT_COPY },
		{ &rec->allocations, INSERT_ALLOCATION },
		{ &rec->synchronizations, INSERT_SYNCHRONIZATION },
		{ &rec->overheads, INSERT_OVERHEAD }, { &rec->thread_names, INSERT_THREAD },
		{ &rec->metric_series, INSERT_METRIC_SERIES }, { &rec->metrics, INSERT_METRIC },
		{ &rec->counters, INSERT_COUNTER }, { &rec->pc_samples, INSERT_PC_SAMPLE },
		{ &rec->pc_sampling, INSERT_PC_SAMPLING }, { &rec->mpi_calls, INSERT_MPI_CALL },
		{ &rec->mpi_completions, INSERT_MPI_COMPLETION },
		{ &rec->clock_syncs, INSERT_CLOCK_SYNC },
		{ &rec->graph_clones, INSERT_GRAPH_NODE_CLONE },
	};
	uint64_t rows = rec->marker_count + rec->samples.count;
	for (size_t t = 0; t < sizeof(tables) / sizeof(tables[0]); t++)
		rows += tables[t].list->count;
	l.progress = progress_task_begin("database", rows);
	for (size_t t = 0; t < sizeof(tables) / sizeof(tables[0]); t++)
		if (load_list(&l, tables[t].list, tables[t].insert, err))
			goto out;
	if (load_markers(&l, err) || load_samples(&l, err) || load_samples_lost(&l, err) ||
	    load_launch_stacks(&l, err) ||
	    finish(&l, spool_path, err) ||
	    store_exec(l.db, "COMMIT", err))
		goto out;
	rc = 0;
out:
	progress_task_end(l.progress);
	for (int i = 0; i < STATEMENT_COUNT; i++) {
		sqlite3_finalize(l.stmt[i]);
		sqlite3_finalize(l.batch[i]);
	}
	if (l.db && sqlite3_close(l.db) != SQLITE_OK && rc == 0)
		rc = error_set(err, "cannot write '%s': %s", temporary.buf, store_write_error(l.db));
	if (rc == 0) {
		/* db_path may be a temporary file of the caller's, listed to be removed: the
		 * rename makes it, so a removal then waits for it (a final output is not) */
		int listed = unfinished_listed(db_path);
		if (listed) /* the caller's entry, made here: it stays listed for the caller */
			unfinished_add(db_path);
		if (rename(temporary.buf, db_path) < 0) {
			rc = error_set(err, "cannot create '%s': %s", db_path, strerror(errno));
			if (listed)
				unfinished_forget(db_path);
		} else if (listed) {
			unfinished_created(db_path);
		}
	}
	if (rc)
		unlink(temporary.buf);
	unfinished_forget(temporary.buf);
	strbuf_release(&temporary);
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

int store_has_column(sqlite3 *db, const char *table, const char *column)
{
	sqlite3_stmt *s;
	int found = 0;
	if (sqlite3_prepare_v2(db, "SELECT 1 FROM pragma_table_info(?) WHERE name = ?", -1, &s,
			       NULL) == SQLITE_OK) {
		sqlite3_bind_text(s, 1, table, -1, SQLITE_STATIC);
		sqlite3_bind_text(s, 2, column, -1, SQLITE_STATIC);
		found = sqlite3_step(s) == SQLITE_ROW;
	}
	sqlite3_finalize(s);
	return found;
}

int store_has_table(sqlite3 *db, const char *table)
{
	sqlite3_stmt *s;
	int found = 0;
	if (sqlite3_prepare_v2(db, "SELECT 1 FROM sqlite_master WHERE name = ?", -1, &s, NULL) ==
	    SQLITE_OK) {
		sqlite3_bind_text(s, 1, table, -1, SQLITE_STATIC);
		found = sqlite3_step(s) == SQLITE_ROW;
	}
	sqlite3_finalize(s);
	return found;
}

int store_open(const char *db_path, sqlite3 **db, struct error *err)
{
	*db = NULL;
	if (access(db_path, R_OK) < 0)
		return error_set(err, "cannot open '%s': %s", db_path, strerror(errno));
	store_configure();
	if (sqlite3_open_v2(db_path, db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, NULL) !=
	    SQLITE_OK) {
		error_set(err, "cannot open '%s': %s", db_path,
			  *db ? sqlite3_errmsg(*db) : "out of memory");
		sqlite3_close(*db);
		*db = NULL;
		return -1;
	}
	/* Pages are read from a mapping rather than copied in (up to SQLite's limit); the
	 * cache of what is copied holds SQLite's default 2,000 KiB, or what one of
	 * gpuprof's sorts may under a smaller limit of data memory */
	size_t memory_kib = extsort_memory() / 1024;
	size_t cache_kib = memory_kib < 2000 ? memory_kib : 2000;
	char pragmas[120];
	snprintf(pragmas, sizeof(pragmas), "PRAGMA mmap_size = 2147418112; PRAGMA cache_size = -%zu",
		 cache_kib);
	sqlite3_exec(*db, pragmas, NULL, NULL, NULL);
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
	} else if (strncmp(version, STORE_SCHEMA_MAJOR, strlen(STORE_SCHEMA_MAJOR))) {
		error_set(err, "'%s' has database schema %s; this gpuprof reads schema %sx",
			  db_path, version, STORE_SCHEMA_MAJOR);
	}
	if (!version || strncmp(version, STORE_SCHEMA_MAJOR, strlen(STORE_SCHEMA_MAJOR))) {
		free(version);
		sqlite3_close(*db);
		*db = NULL;
		return -1;
	}
	free(version);
	return 0;
}
