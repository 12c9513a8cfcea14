/* Reads the store's views and streams their rows through the writers (see writer.h). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/mpi-ranks.h"
#include "core/record-fields.h"
#include "core/record.h"
#include "store/store-job.h"
#include "store/store.h"
#include "util/hash.h"
#include "util/progress.h"
#include "util/thread.h"
#include "writer/export-run.h"
#include "writer/export-slices.h"
#include "writer/export-stream.h"
#include "writer/launch-stacks.h"
#include "writer/writer.h"

/* The database's strings and processes, held in memory while exporting so that rows
 * are read from the tables without a join per row. */
struct names {
	int64_t *ids;      /* sorted */
	char **texts;
	size_t count;
	int64_t *process_ids, *pids;
	size_t process_count;
	struct series {              /* metric series, by process and series id */
		int64_t process_id, id, device, pid;
		const char *source;
		char *name, *unit;
	} *series;
	size_t series_count;
};

const char *writer_metric_source_name(int64_t source)
{
	return source == METRIC_HOST ? "HOST" : source == METRIC_PROCESS ? "PROCESS"
	       : source == METRIC_GPU ? "GPU" : "UNKNOWN";
}

void writer_metric_label(struct strbuf *out, const char *source, int64_t device, int64_t pid,
			 const char *name)
{
	if (!strcmp(source, "GPU"))
		strbuf_addf(out, "GPU %lld ", (long long)device);
	else if (!strcmp(source, "PROCESS"))
		strbuf_addf(out, "process %lld ", (long long)pid);
	else if (device >= 0)
		strbuf_addf(out, "CPU %lld ", (long long)device);
	else
		strbuf_addstr(out, "machine ");
	strbuf_addstr(out, name);
}

static const struct series *series_of(const struct names *n, int64_t process_id, int64_t id)
{
	size_t lo = 0, hi = n->series_count;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct series *x = &n->series[mid];
		if (x->process_id < process_id || (x->process_id == process_id && x->id < id))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n->series_count && n->series[lo].process_id == process_id &&
	       n->series[lo].id == id ? &n->series[lo] : NULL;
}

static const char *name_of(const struct names *n, int64_t id)
{
	size_t lo = 0, hi = n->count;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (n->ids[mid] < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n->count && n->ids[lo] == id ? n->texts[lo] : "";
}

static int64_t pid_of(const struct names *n, int64_t process_id)
{
	for (size_t i = 0; i < n->process_count; i++)
		if (n->process_ids[i] == process_id)
			return n->pids[i];
	return 0;
}

static void names_release(struct names *n)
{
	for (size_t i = 0; i < n->count; i++)
		free(n->texts[i]);
	free(n->ids);
	free(n->texts);
	free(n->process_ids);
	free(n->pids);
	for (size_t i = 0; i < n->series_count; i++) {
		free(n->series[i].name);
		free(n->series[i].unit);
	}
	free(n->series);
	memset(n, 0, sizeof(*n));
}

static int names_load(sqlite3 *db, struct names *n, struct error *err)
{
	sqlite3_stmt *s;
	size_t alloc = 0;
	memset(n, 0, sizeof(*n));
	if (store_prepare(db, "SELECT id, string FROM gpuprof_string ORDER BY id", &s, err))
		return -1;
	while (sqlite3_step(s) == SQLITE_ROW) {
		if (n->count == alloc) {
			alloc = alloc ? alloc * 2 : 256;
			n->ids = xrealloc(n->ids, alloc * sizeof(*n->ids));
			n->texts = xrealloc(n->texts, alloc * sizeof(*n->texts));
		}
		const unsigned char *t = sqlite3_column_text(s, 1);
		n->ids[n->count] = sqlite3_column_int64(s, 0);
		n->texts[n->count++] = xstrdup(t ? (const char *)t : "");
	}
	sqlite3_finalize(s);
	if (store_prepare(db, "SELECT id, pid FROM gpuprof_process", &s, err))
		return -1;
	alloc = 0;
	while (sqlite3_step(s) == SQLITE_ROW) {
		if (n->process_count == alloc) {
			alloc = alloc ? alloc * 2 : 4;
			n->process_ids = xrealloc(n->process_ids, alloc * sizeof(int64_t));
			n->pids = xrealloc(n->pids, alloc * sizeof(int64_t));
		}
		n->process_ids[n->process_count] = sqlite3_column_int64(s, 0);
		n->pids[n->process_count++] = sqlite3_column_int64(s, 1);
	}
	sqlite3_finalize(s);
	if (!store_has_table(db, "gpuprof_metric_series")) /* schema 3.0 */
		return 0;
	if (store_prepare(db, "SELECT process_id, series_id, source, device, pid, name, unit "
			  "FROM gpuprof_metric_series ORDER BY process_id, series_id", &s, err))
		return -1;
	alloc = 0;
	while (sqlite3_step(s) == SQLITE_ROW) {
		if (n->series_count == alloc) {
			alloc = alloc ? alloc * 2 : 64;
			n->series = xrealloc(n->series, alloc * sizeof(*n->series));
		}
		struct series *x = &n->series[n->series_count++];
		x->process_id = sqlite3_column_int64(s, 0);
		x->id = sqlite3_column_int64(s, 1);
		x->source = writer_metric_source_name(sqlite3_column_int64(s, 2));
		x->device = sqlite3_column_int64(s, 3);
		x->pid = sqlite3_column_int64(s, 4);
		const unsigned char *name = sqlite3_column_text(s, 5), *unit = sqlite3_column_text(s, 6);
		x->name = xstrdup(name ? (const char *)name : "");
		x->unit = xstrdup(unit ? (const char *)unit : "");
	}
	sqlite3_finalize(s);
	return 0;
}

static const char *text(sqlite3_stmt *s, int column)
{
	const unsigned char *t = sqlite3_column_text(s, column);
	return t ? (const char *)t : "";
}

#define I64(column) sqlite3_column_int64(s, column)

static void fill_agent(sqlite3_stmt *s, const void *names, struct event *e)
{
	(void)names;
	e->kind = EVENT_AGENT;
	e->pid = I64(0);
	e->agent.index = I64(1);
	e->agent.type_name = text(s, 2);
	e->name = text(s, 3);
	e->agent.vendor_name = text(s, 4);
	e->agent.driver_version = text(s, 5);
	e->agent.vendor_id = I64(6);
	e->agent.compute_units = I64(7);
	e->agent.max_clock_mhz = I64(8);
	e->agent.global_memory_bytes = I64(9);
	e->agent.local_memory_bytes = I64(10);
	e->agent.max_workgroup_size = I64(11);
	for (int i = 0; i < 3; i++)
		e->agent.max_workgroup[i] = I64(12 + i);
	e->agent.uuid = text(s, 15);
	e->agent.pci_domain = I64(16);
	e->agent.pci_bus = I64(17);
	e->agent.pci_device = I64(18);
	e->agent.pci_function = I64(19);
	e->agent.compute_major = I64(20);
	e->agent.compute_minor = I64(21);
	e->agent.warp_size = I64(22);
	e->agent.l2_cache_bytes = I64(23);
	e->agent.memory_bandwidth = I64(24);
	e->agent.device_index = I64(25);
	e->process_id = I64(26);
}

static void fill_process(sqlite3_stmt *s, const void *names, struct event *e)
{
	(void)names;
	e->kind = EVENT_PROCESS;
	e->process_id = I64(0);
	e->process.hostname = text(s, 1);
	e->pid = I64(2);
	e->process.ppid = I64(3);
	e->process.rank = I64(4);
	e->process.size = I64(5);
	e->name = e->process.command = text(s, 6);
	e->start_ns = I64(7);
	e->end_ns = I64(8);
	e->process.realtime_start_ns = I64(9);
	e->process.recording_start_ns = I64(10);
}

/* The lists of core/record-fields.h read back: each field from the next column. */
#define FIELD_INT(value) (value)
#define FIELD_STRING(id) name_of(n, id)
#define READ_FIELD(column, value, event, to_event) event = to_event(I64(c)), c++;

static void fill_kernel(sqlite3_stmt *s, const void *names, struct event *e)
{
	const struct names *n = names;
	int c = 1;
	e->kind = EVENT_KERNEL;
	e->process_id = I64(0);
	e->pid = pid_of(n, e->process_id);
	KERNEL_FIELDS(READ_FIELD)
	e->name = name_of(n, e->kernel.kernel_id);
}

static void fill_copy(sqlite3_stmt *s, const void *names, struct event *e)
{
	const struct names *n = names;
	int c = 1;
	e->kind = EVENT_MEMORY_COPY;
	e->process_id = I64(0);
	e->pid = pid_of(n, e->process_id);
	COPY_FIELDS(READ_FIELD)
}

static void fill_allocation(sqlite3_stmt *s, const void *names, struct event *e)
{
	const struct names *n = names;
	int c = 1;
	e->kind = EVENT_MEMORY_ALLOCATION;
	e->process_id = I64(0);
	e->pid = pid_of(n, e->process_id);
	ALLOCATION_FIELDS(READ_FIELD)
}

static void fill_api(sqlite3_stmt *s, const void *names, struct event *e)
{
	const struct names *n = names;
	int c = 1;
	e->kind = EVENT_API_CALL;
	e->process_id = I64(0);
	e->pid = pid_of(n, e->process_id);
	API_CALL_FIELDS(READ_FIELD)
}

#undef READ_FIELD
#undef FIELD_STRING
#undef FIELD_INT

/* An MPI call, with its completion's values (the query below) */
static void fill_mpi(sqlite3_stmt *s, const void *names, struct event *e)
{
	const struct names *n = names;
	e->kind = EVENT_API_CALL;
	e->process_id = I64(0);
	e->pid = pid_of(n, e->process_id);
	e->tid = I64(1);
	e->name = name_of(n, I64(2));
	e->start_ns = I64(3);
	e->end_ns = I64(4);
	e->correlation_id = I64(5);
	e->api.domain = record_communication_name((uint32_t)I64(19));
	e->api.mpi = 1;
	e->api.communicator = I64(6) ? name_of(n, I64(6)) : "";
	e->api.communicator_size = I64(7);
	e->api.peer = I64(8);
	e->api.tag = I64(9);
	e->api.root = I64(10);
	e->api.result = I64(11);
	e->api.bytes_sent = I64(12);
	e->api.bytes_received = I64(13);
	e->api.sequence = I64(14);
	e->api.request = I64(15);
	e->api.completed_ns = I64(16);
	/* "id,id,..." */
	const char *flows = (const char *)sqlite3_column_text(s, 17);
	for (char *end; flows && *flows && e->api.message_flow_count < EVENT_MESSAGE_FLOWS;
	     flows = *end ? end + 1 : end) {
		e->api.message_flows[e->api.message_flow_count++] = strtoll(flows, &end, 10);
		if (end == flows)
			break;
	}
	e->api.message_end = (int)I64(18);
}

static void fill_thread(sqlite3_stmt *s, const void *names, struct event *e)
{
	const struct names *n = names;
	e->kind = EVENT_THREAD;
	e->process_id = I64(0);
	e->pid = pid_of(n, e->process_id);
	e->tid = I64(1);
	e->name = name_of(n, I64(2));
}

static void fill_marker(sqlite3_stmt *s, const void *names, struct event *e)
{
	const struct names *n = names;
	e->kind = EVENT_MARKER;
	e->process_id = I64(0);
	e->pid = pid_of(n, e->process_id);
	e->tid = I64(1);
	e->marker.end_tid = I64(2);
	e->marker.kind = I64(3);
	e->marker.category = record_marker_domain((uint32_t)e->marker.kind);
	e->marker.domain = I64(4) ? name_of(n, I64(4)) : "";
	e->name = name_of(n, I64(5));
	e->marker.range_id = I64(6);
	e->marker.parent_id = I64(7);
	e->start_ns = I64(8);
	e->end_ns = I64(9);
	e->marker.ended = (int)I64(10);
	e->marker.module = I64(11) ? name_of(n, I64(11)) : "";
}

static void fill_metric(sqlite3_stmt *s, const void *names, struct event *e)
{
	const struct names *n = names;
	e->kind = EVENT_METRIC;
	e->process_id = I64(0);
	e->pid = pid_of(n, e->process_id);
	e->metric.series = I64(1);
	e->start_ns = e->end_ns = I64(2);
	e->metric.value = sqlite3_column_double(s, 3);
	const struct series *x = series_of(n, e->process_id, e->metric.series);
	e->name = x ? x->name : "";
	e->metric.unit = x ? x->unit : "";
	e->metric.source = x ? x->source : "UNKNOWN";
	e->metric.device = x ? x->device : -1;
	e->metric.pid = x ? x->pid : 0;
}

#undef I64

/* The processes, agents and threads, then the timed rows: each table is read in rowid order,
 * which the loader made start-time order, and the tables are merged by start. */
struct query {
	const char *sql;
	export_fill_fn fill;
	int timing;            /* UNTIMED: read whole before the timed tables */
	const char *since_3_1; /* a table databases of schema 3.0 lack: read when present */
	/* a column added to a table in a later 3.x schema (table.column), and the query of
	 * databases without it */
	const char *added_column, *without_added_column;
};

/* UNTIMED rows' strings are the row's: each is written as it is read. TIMED rows are read
 * ahead on a connection of their own; TIMED_HERE ones on the caller's, whose temporary
 * tables they join. */
enum { UNTIMED, TIMED, TIMED_HERE };

static const struct query queries[] = {
	{ "SELECT id, hostname, pid, ppid, rank, size, command, start, end, realtime_start, "
	  "COALESCE(recording_start, start) FROM gpuprof_process ORDER BY id", fill_process, UNTIMED,
	  NULL, "gpuprof_process.recording_start", "SELECT id, hostname, pid, ppid, rank, size, command, start, end, "
	  "realtime_start, start FROM gpuprof_process ORDER BY id" },
	{ "SELECT pid, agent_id, type, name, vendor_name, driver_version, vendor_id, "
	  "compute_units, max_clock_mhz, global_memory_bytes, local_memory_bytes, "
	  "max_workgroup_size, max_workgroup_x, max_workgroup_y, max_workgroup_z, uuid, "
	  "pci_domain, pci_bus, pci_device, pci_function, compute_major, compute_minor, "
	  "warp_size, l2_cache_bytes, memory_bandwidth, device_index, process_id "
	  "FROM agents ORDER BY process_id, agent_id", fill_agent, UNTIMED },
	{ "SELECT process_id, tid, name_id FROM gpuprof_thread ORDER BY process_id, tid",
	  fill_thread, UNTIMED },
	{ "SELECT process_id" KERNEL_FIELDS(FIELD_COLUMN) " FROM gpuprof_kernel ORDER BY id",
	  fill_kernel, TIMED, NULL, "gpuprof_kernel.call_id",
	  "SELECT process_id" KERNEL_FIELDS_BEFORE_3_9(FIELD_COLUMN) ", 0 FROM gpuprof_kernel "
	  "ORDER BY id" },
	{ "SELECT process_id" COPY_FIELDS(FIELD_COLUMN) " FROM gpuprof_memory_copy ORDER BY id",
	  fill_copy, TIMED },
	{ "SELECT process_id" ALLOCATION_FIELDS(FIELD_COLUMN)
	  " FROM gpuprof_memory_allocation ORDER BY id", fill_allocation, TIMED },
	{ "SELECT process_id" API_CALL_FIELDS(FIELD_COLUMN) " FROM gpuprof_api_call ORDER BY id",
	  fill_api, TIMED },
	{ "SELECT process_id, tid, end_tid, kind, domain_id, name_id, range_id, parent_id, "
	  "start, end, ended, module_id FROM gpuprof_marker ORDER BY id", fill_marker, TIMED, NULL,
	  "gpuprof_marker.module_id",
	  "SELECT process_id, tid, end_tid, kind, domain_id, name_id, range_id, parent_id, "
	  "start, end, ended, 0 FROM gpuprof_marker ORDER BY id" },
	{ "SELECT c.process_id, c.tid, c.function_id, c.start, c.end, c.call_id, "
	  "c.communicator_id, c.communicator_size, "
	  "CASE WHEN d.peer >= 0 THEN d.peer ELSE c.peer END, "
	  "CASE WHEN d.tag >= 0 THEN d.tag ELSE c.tag END, c.root, c.result, c.bytes_sent, "
	  "CASE WHEN d.bytes_received > 0 THEN d.bytes_received ELSE c.bytes_received END, "
	  "c.sequence, c.request, COALESCE(d.time, 0), g.flows, COALESCE(g.terminating, 0), "
	  "c.domain FROM gpuprof_mpi_call c "
	  "LEFT JOIN gpuprof_mpi_completion d ON d.process_id = c.process_id "
	  "AND d.request = c.request AND c.request > 0 LEFT JOIN temp.mpi_flow g ON "
	  "g.process_id = c.process_id AND g.call_id = c.call_id ORDER BY c.id", fill_mpi, TIMED_HERE,
	  "gpuprof_mpi_call" },
	{ "SELECT process_id, series_id, time, value FROM gpuprof_metric ORDER BY id",
	  fill_metric, TIMED, "gpuprof_metric" },
};

#define QUERY_COUNT (sizeof(queries) / sizeof(queries[0]))

/* Whether the database has the column, named table.column. */
static int has_added_column(sqlite3 *db, const char *name)
{
	char table[64];
	const char *dot = strchr(name, '.');
	snprintf(table, sizeof(table), "%.*s", (int)(dot - name), name);
	return store_has_column(db, table, dot + 1);
}

/* About how many events the database holds, for the progress: rows are numbered from 1
 * in each table. */
static uint64_t approximate_events(sqlite3 *db)
{
	sqlite3_stmt *s;
	uint64_t total = 0;
	if (sqlite3_prepare_v2(db, "SELECT (SELECT IFNULL(MAX(id), 0) FROM gpuprof_kernel) + "
			       "(SELECT IFNULL(MAX(id), 0) FROM gpuprof_memory_copy) + "
			       "(SELECT IFNULL(MAX(id), 0) FROM gpuprof_memory_allocation) + "
			       "(SELECT IFNULL(MAX(id), 0) FROM gpuprof_api_call) + "
			       "(SELECT IFNULL(MAX(id), 0) FROM gpuprof_marker)", -1, &s,
			       NULL) != SQLITE_OK)
		return 0;
	if (sqlite3_step(s) == SQLITE_ROW && sqlite3_column_int64(s, 0) > 0)
		total = (uint64_t)sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	return total;
}

/* The MPI messages' flows, each from its send to the call where its receive ended, in
 * temp.mpi_flow (empty without a timeline), which the MPI calls' query joins. Their ids
 * are apart from the calls' flows to their device work (timeline_flow_id()). */
static int load_message_flows(sqlite3 *db, int timeline, struct error *err)
{
	if (store_exec(db, "DROP TABLE IF EXISTS temp.mpi_flow; CREATE TEMP TABLE mpi_flow "
			   "(process_id INTEGER, call_id INTEGER, flows TEXT, terminating INTEGER, "
			   "PRIMARY KEY (process_id, call_id)) WITHOUT ROWID", err))
		return -1;
	if (!timeline)
		return 0;
	/* a call sends or receives: its flows all start or all end there */
	int rc = mpi_match_messages(db, err) ||
		 store_exec(db, "INSERT OR IGNORE INTO temp.mpi_flow SELECT process_id, call_id, "
				"GROUP_CONCAT(flow), MAX(terminating) FROM (SELECT send_process AS "
				"process_id, send_call AS call_id, (1 << 51) | rowid AS flow, 0 AS "
				"terminating FROM temp.mpi_msg WHERE send_id IS NOT NULL AND recv_call "
				"IS NOT NULL UNION ALL SELECT recv_process, recv_call, (1 << 51) | rowid, "
				"1 FROM temp.mpi_msg WHERE send_id IS NOT NULL AND recv_call IS NOT "
				"NULL ORDER BY 4, 3) GROUP BY process_id, call_id", err) ? -1 : 0;
	mpi_match_release(db);
	return rc;
}

/* A share of the device work in the database, for the flows: rows (first, last] of each
 * table, as part of flows. */
struct flow_part {
	struct flows *flows;
	unsigned part;
	int64_t bounds[2][2]; /* of the kernels, of the copies */
};

static int load_flow_part(sqlite3 *db, void *arg, struct error *err)
{
	static const char *const sql[] = {
		"SELECT process_id, correlation_id FROM gpuprof_kernel WHERE id > ? AND id <= ?",
		"SELECT process_id, correlation_id FROM gpuprof_memory_copy WHERE id > ? AND id <= ?",
	};
	const struct flow_part *p = arg;
	for (size_t q = 0; q < sizeof(sql) / sizeof(sql[0]); q++) {
		sqlite3_stmt *s;
		if (store_prepare(db, sql[q], &s, err))
			return -1;
		sqlite3_bind_int64(s, 1, p->bounds[q][0]);
		sqlite3_bind_int64(s, 2, p->bounds[q][1]);
		int row;
		while ((row = store_step(db, s, err)) > 0)
			if (export_flows_add(p->flows, p->part, sqlite3_column_int64(s, 0),
					     sqlite3_column_int64(s, 1), err)) {
				row = -1;
				break;
			}
		sqlite3_finalize(s);
		if (row < 0)
			return -1;
	}
	return 0;
}

/* The device work in the database, for the flows: its rows split among the CPUs, each
 * share read over a connection of its own (a share of fewer rows than FLOW_SHARE_LEAST
 * is read sooner than a connection opens). */
#define FLOW_SHARE_LEAST 65536
static int load_flows(sqlite3 *db, struct flows *flows, struct error *err)
{
	int64_t rows[2] = { 0, 0 };
	sqlite3_stmt *s;
	if (store_prepare(db, "SELECT (SELECT IFNULL(MAX(id), 0) FROM gpuprof_kernel), "
			  "(SELECT IFNULL(MAX(id), 0) FROM gpuprof_memory_copy)", &s, err))
		return -1;
	int got = store_step(db, s, err);
	for (int t = 0; got > 0 && t < 2; t++)
		rows[t] = sqlite3_column_int64(s, t);
	sqlite3_finalize(s);
	if (got < 0)
		return -1;
	unsigned parts = (unsigned)thread_cpus();
	int64_t most = (rows[0] + rows[1]) / FLOW_SHARE_LEAST + 1;
	if (parts > EXPORT_FLOW_PARTS)
		parts = EXPORT_FLOW_PARTS;
	if ((int64_t)parts > most)
		parts = (unsigned)most;
	export_flows_split(flows, parts);
	struct flow_part share[EXPORT_FLOW_PARTS];
	struct store_job jobs[EXPORT_FLOW_PARTS];
	for (unsigned p = 0; p < parts; p++) {
		share[p].flows = flows;
		share[p].part = p;
		for (int t = 0; t < 2; t++) {
			share[p].bounds[t][0] = p ? rows[t] * p / parts : INT64_MIN;
			share[p].bounds[t][1] = p + 1 < parts ? rows[t] * (p + 1) / parts : INT64_MAX;
		}
		if (p)
			store_job_start(&jobs[p], db, load_flow_part, &share[p]);
	}
	int failed = load_flow_part(db, &share[0], err);
	for (unsigned p = 1; p < parts; p++)
		failed |= store_job_finish(&jobs[p], failed ? NULL : err);
	return failed ? -1 : export_flows_ready(flows, err);
}

/* The kernels' counters in the database (schema 3.2 and later). */
static int load_counters(sqlite3 *db, const struct names *n, struct counter_index *ci,
			 struct error *err)
{
	sqlite3_stmt *s;
	if (!store_has_table(db, "gpuprof_counter"))
		return 0;
	if (store_prepare(db, "SELECT process_id, correlation_id, name_id, value FROM "
			  "gpuprof_counter ORDER BY process_id, correlation_id, id", &s, err))
		return -1;
	int row;
	while ((row = store_step(db, s, err)) > 0)
		export_counters_add(ci, sqlite3_column_int64(s, 0), sqlite3_column_int64(s, 1),
			     name_of(n, sqlite3_column_int64(s, 2)),
			     sqlite3_column_type(s, 3) == SQLITE_NULL ? NAN
			     : sqlite3_column_double(s, 3));
	sqlite3_finalize(s);
	return row < 0 ? -1 : 0;
}

/* The rows of an untimed query, each written as it is read. */
static int write_rows(sqlite3 *db, const char *sql, export_fill_fn fill, const struct names *n,
		      struct export_run *run, struct error *err)
{
	sqlite3_stmt *s;
	if (store_prepare(db, sql, &s, err))
		return -1;
	int row;
	while ((row = store_step(db, s, err)) > 0) {
		struct event e;
		memset(&e, 0, sizeof(e));
		fill(s, n, &e);
		if (export_run_event(run, &e, err)) {
			row = -1;
			break;
		}
	}
	sqlite3_finalize(s);
	return row < 0 ? -1 : 0;
}

int export_database(sqlite3 *db, const struct writer_ops *const *writers, int count,
		    const struct output_options *options, struct strbuf *written,
		    struct error *err)
{
	struct export_run run = { 0 };
	struct names names;
	struct export_stream *streams[QUERY_COUNT] = { NULL };
	struct event *heads[QUERY_COUNT] = { NULL }; /* each stream's next event */
	struct export_slices slices = { 0 };
	size_t next_slice = 0;
	int failed = names_load(db, &names, err) || export_run_begin(&run, writers, count, options, err) ||
		     load_counters(db, &names, &run.counters, err) ||
		     (run.timeline && (load_flows(db, &run.flows, err) ||
				       export_slices_load(db, &slices, err) ||
				       launch_stacks_load(db, &run.launch_stacks, err)));
	if (!failed && store_has_table(db, "gpuprof_mpi_call"))
		failed = load_message_flows(db, run.timeline, err);
	if (!failed)
		run.progress = progress_task_begin("files", approximate_events(db));
	/* the timed tables read ahead while the processes, agents and threads are written */
	for (int untimed = 0; untimed < 2; untimed++)
		for (size_t q = 0; !failed && q < QUERY_COUNT; q++) {
			const struct query *x = &queries[q];
			if ((x->timing == UNTIMED) != untimed ||
			    (x->since_3_1 && !store_has_table(db, x->since_3_1)))
				continue;
			const char *sql = x->added_column && !has_added_column(db, x->added_column)
					  ? x->without_added_column : x->sql;
			if (untimed) {
				failed = write_rows(db, sql, x->fill, &names, &run, err);
				continue;
			}
			streams[q] = export_stream_open(db, sql, x->fill, &names, x->timing == TIMED,
							err);
			failed = !streams[q];
		}
	for (size_t q = 0; !failed && q < QUERY_COUNT; q++) {
		int got = streams[q] ? export_stream_peek(streams[q], &heads[q], err) : 0;
		failed = got < 0;
		if (got <= 0)
			heads[q] = NULL;
	}
	while (!failed) {
		/* the row that starts first; of rows that start together, the first query's */
		int next = -1;
		for (size_t q = 0; q < QUERY_COUNT; q++)
			if (heads[q] && (next < 0 || heads[q]->start_ns < heads[next]->start_ns))
				next = (int)q;
		/* the sampled stacks' slices, from memory, after the rows that start with them */
		if (next_slice < slices.count &&
		    (next < 0 || slices.items[next_slice].slice.start < heads[next]->start_ns)) {
			struct event e;
			memset(&e, 0, sizeof(e));
			size_t process = slices.items[next_slice].process;
			export_event_from_slice(&slices.stacks[process], &slices.items[next_slice++].slice, &e);
			e.process_id = slices.process_ids[process];
			e.pid = pid_of(&names, e.process_id);
			failed = export_run_event(&run, &e, err);
			continue;
		}
		if (next < 0)
			break;
		failed = export_run_event(&run, heads[next], err);
		if (!failed) {
			export_stream_next(streams[next]);
			int got = export_stream_peek(streams[next], &heads[next], err);
			failed = got < 0;
			if (got <= 0)
				heads[next] = NULL;
		}
	}
	for (size_t q = 0; q < QUERY_COUNT; q++)
		export_stream_close(streams[q]);
	int rc = export_run_end(&run, failed, written, err);
	export_slices_release(&slices);
	names_release(&names);
	return rc;
}
