/* Joining databases into one (see store.h). Each input is attached in turn and its rows
 * copied into staging tables with process and string ids moved past those already
 * there and times shifted onto one timeline; the staging tables then fill the real ones
 * in start order, so that rowid order stays time order. Replays are attached last, and
 * only their counters are taken, onto the kernels they are joined to. */
#include "store/store.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "store/schema.h"
#include "util/strbuf.h"

/* A time of the row t on the merged timeline: shifted by its process's shift, and by the
 * drift of its clock from the shift's anchor (temp.merge_shift; drift 0 but for the
 * processes placed by their MPI clock exchanges). */
#define SHIFTED(column) \
	"(t." column " + s.shift + CAST((t." column " - s.anchor) * s.drift AS INTEGER))"

/* gpuprof_kernel's columns before call_id (added in 3.9) */
#define KERNEL_COLUMNS \
	"t.tid, t.agent_index, t.queue_index, t.name_id + ?1, t.correlation_id, t.dispatch_id, " \
	SHIFTED("start") ", " SHIFTED("end") ", t.grid_x, t.grid_y, t.grid_z, t.workgroup_x, " \
	"t.workgroup_y, t.workgroup_z, t.local_memory_bytes, t.private_memory_bytes, t.status, " \
	"t.registers, t.static_local_memory_bytes, t.dynamic_local_memory_bytes, t.stream_id, " \
	"t.context_id, t.graph_id, t.graph_node_id, t.range_id"

/* The tables with one row per event: copied with their times shifted and sorted. ?1 is
 * the string id offset, ?2 the process id offset; s is the shift of the row's process. */
static const struct {
	const char *table;
	const char *columns; /* after id and process_id */
	const char *order;   /* NULL: start, then the longer first */
	/* a column added to the table since 3.0, and the columns of an input without it */
	const char *added_column, *columns_without;
} timed[] = {
	{ "gpuprof_api_call", "t.tid, t.domain, t.function_id + ?1, t.correlation_id, "
			       SHIFTED("start") ", " SHIFTED("end") ", t.result" },
	{ "gpuprof_kernel", KERNEL_COLUMNS ", t.call_id", NULL, "call_id", KERNEL_COLUMNS ", 0" },
	{ "gpuprof_memory_copy", "t.tid, t.queue_index, t.src_agent_index, t.dst_agent_index, "
				 "t.operation, t.direction, t.function_id + ?1, t.bytes, "
				 "t.correlation_id, " SHIFTED("start") ", " SHIFTED("end") ", t.status, "
				 "t.src_memory_kind, t.dst_memory_kind, t.stream_id, t.context_id" },
	{ "gpuprof_memory_allocation", "t.tid, t.agent_index, t.operation, t.memory_kind, "
				       "t.address, t.bytes, t.correlation_id, " SHIFTED("start") ", "
				        SHIFTED("end") ", t.stream_id, t.context_id" },
	{ "gpuprof_synchronization", "t.tid, t.type, t.stream_id, t.context_id, t.event_id, "
				     "t.result, t.correlation_id, " SHIFTED("start") ", "
				      SHIFTED("end")  },
	{ "gpuprof_overhead", "t.kind, t.tid, t.agent_index, " SHIFTED("start") ", "
			       SHIFTED("end")  },
	{ "gpuprof_marker", "t.tid, t.end_tid, t.kind, "
			    "CASE t.domain_id WHEN 0 THEN 0 ELSE t.domain_id + ?1 END, "
			    "t.name_id + ?1, t.range_id, t.parent_id, " SHIFTED("start") ", "
			     SHIFTED("end") ", t.ended, "
			    "CASE t.module_id WHEN 0 THEN 0 ELSE t.module_id + ?1 END", NULL,
	  "module_id", "t.tid, t.end_tid, t.kind, "
			"CASE t.domain_id WHEN 0 THEN 0 ELSE t.domain_id + ?1 END, "
			"t.name_id + ?1, t.range_id, t.parent_id, " SHIFTED("start") ", "
			SHIFTED("end") ", t.ended, 0" },
	{ "gpuprof_metric", "t.series_id, " SHIFTED("time") ", t.value", "time, process_id" },
	{ "gpuprof_sample", "t.tid, " SHIFTED("time") ", t.stack_id", "time, process_id" },
	{ "gpuprof_sample_lost", "t.tid, " SHIFTED("start") ", " SHIFTED("end") ", t.samples" },
	{ "gpuprof_launch_stack", "t.correlation_id, t.domain, t.function_id + ?1, t.tid, "
				   SHIFTED("time") ", t.stack_id", "time, process_id" },
	{ "gpuprof_mpi_call", "t.tid, t.function_id + ?1, " SHIFTED("start") ", " SHIFTED("end")
			      ", t.call_id, CASE t.communicator_id WHEN 0 THEN 0 ELSE "
			      "t.communicator_id + ?1 END, t.communicator_size, t.peer, t.tag, t.root, "
			      "t.result, t.bytes_sent, t.bytes_received, t.sequence, t.request, "
			      "t.domain" },
};

#define TIMED_COUNT (sizeof(timed) / sizeof(timed[0]))

/* Runs sql with the two offsets bound. */
static int copy_rows(sqlite3 *db, const char *sql, int64_t strings, int64_t processes,
		     struct error *err)
{
	sqlite3_stmt *s;
	if (store_prepare(db, sql, &s, err))
		return -1;
	if (sqlite3_bind_parameter_count(s) >= 1)
		sqlite3_bind_int64(s, 1, strings);
	if (sqlite3_bind_parameter_count(s) >= 2)
		sqlite3_bind_int64(s, 2, processes);
	int rc = sqlite3_step(s);
	sqlite3_finalize(s);
	if (rc != SQLITE_DONE)
		return error_set(err, "cannot merge: %s", sqlite3_errmsg(db));
	return 0;
}

/* Whether the input attached as src has the table: an input of an older 3.x schema
 * lacks the tables added since (metrics and samples in 3.1, counters in 3.2, lost samples in 3.3,
 * launch stacks in 3.4, PC samples in 3.5, graph node clones in 3.8), and is read
 * as one without their rows. */
static int src_has_table(sqlite3 *db, const char *table)
{
	sqlite3_stmt *s;
	int found = 0;
	if (sqlite3_prepare_v2(db, "SELECT 1 FROM src.sqlite_master WHERE name = ?", -1, &s,
			       NULL) == SQLITE_OK) {
		sqlite3_bind_text(s, 1, table, -1, SQLITE_STATIC);
		found = sqlite3_step(s) == SQLITE_ROW;
	}
	sqlite3_finalize(s);
	return found;
}

/* Whether the input's table has the column (one added in a later 3.x schema). */
static int src_has_column(sqlite3 *db, const char *table, const char *column)
{
	sqlite3_stmt *s;
	int found = 0;
	if (sqlite3_prepare_v2(db, "SELECT 1 FROM pragma_table_info(?, 'src') WHERE name = ?",
			       -1, &s, NULL) == SQLITE_OK) {
		sqlite3_bind_text(s, 1, table, -1, SQLITE_STATIC);
		sqlite3_bind_text(s, 2, column, -1, SQLITE_STATIC);
		found = sqlite3_step(s) == SQLITE_ROW;
	}
	sqlite3_finalize(s);
	return found;
}

static int64_t max_of(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *s;
	int64_t v = 0;
	if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) == SQLITE_OK && sqlite3_step(s) == SQLITE_ROW)
		v = sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	return v;
}

/* A process of another host than the first that measured its clock against MPI rank
 * 0's (--mpi-trace) is placed by that measurement, when rank 0 ran on the first host
 * (its recording merged before): at its first exchange (anchor) by the offset measured
 * there, and between its exchanges by the offset interpolated (drift, ns per ns). The
 * real-time clocks of two hosts agree to NTP's milliseconds; the exchange to the round
 * trip of one message. Processes of the first host keep their clock exactly. */
static void clock_exchange_shift(sqlite3 *db, int64_t process, const char *first_host,
				 int64_t *shift, int64_t *anchor, double *drift)
{
	sqlite3_stmt *s;
	if (!src_has_table(db, "gpuprof_clock_sync") ||
	    sqlite3_prepare_v2(db, "SELECT 1 FROM main.gpuprof_clock_sync c JOIN "
			       "main.gpuprof_process p ON p.id = c.process_id WHERE c.rank = 0 AND "
			       "p.hostname = ?", -1, &s, NULL) != SQLITE_OK)
		return;
	sqlite3_bind_text(s, 1, first_host, -1, SQLITE_STATIC);
	int rank0_first = sqlite3_step(s) == SQLITE_ROW;
	sqlite3_finalize(s);
	if (!rank0_first || sqlite3_prepare_v2(db, "SELECT local_time, offset FROM "
					       "src.gpuprof_clock_sync WHERE process_id = ? ORDER BY "
					       "local_time", -1, &s, NULL) != SQLITE_OK)
		return;
	sqlite3_bind_int64(s, 1, process);
	int n = 0;
	int64_t t[2] = { 0 }, o[2] = { 0 };
	while (sqlite3_step(s) == SQLITE_ROW) {
		int k = n ? 1 : 0; /* the first and the last */
		t[k] = sqlite3_column_int64(s, 0);
		o[k] = sqlite3_column_int64(s, 1);
		n++;
	}
	sqlite3_finalize(s);
	if (!n)
		return;
	*shift = o[0];
	*anchor = t[0];
	*drift = n > 1 && t[1] > t[0] ? (double)(o[1] - o[0]) / (double)(t[1] - t[0]) : 0;
}

/* Hosts seen so far and the offset of their monotonic clock to real time. */
struct hosts {
	char **names;
	int64_t *offsets;
	size_t count;
};

/* The shift of each process of the attached input onto the first host's timeline:
 * processes of one host keep their shared clock exactly; another host's clock is
 * placed by the real-time reading taken with its first process's start. */
static int fill_shifts(sqlite3 *db, struct hosts *hosts, struct strbuf *notes,
		       int64_t process_offset, int *repeated, struct error *err)
{
	sqlite3_stmt *s, *insert;
	/* A recording is its process: host, pid and the real time it started. One already
	 * merged (the same database twice, a merged database and one of its sources) is
	 * left out, not counted twice. */
	if (store_exec(db, "DELETE FROM temp.merge_shift", err) ||
	    store_prepare(db, "SELECT id, hostname, start, realtime_start, EXISTS (SELECT 1 FROM "
			      "main.gpuprof_process m WHERE " STORE_RECORDING_KEY("m") " = "
			      STORE_RECORDING_KEY("t") ") FROM src.gpuprof_process t ORDER BY id",
			  &s, err))
		return -1;
	if (store_prepare(db, "INSERT INTO temp.merge_shift VALUES (?, ?, ?, ?)", &insert, err)) {
		sqlite3_finalize(s);
		return -1;
	}
	int rc = 0;
	while (rc == 0 && sqlite3_step(s) == SQLITE_ROW) {
		if (sqlite3_column_int(s, 4)) {
			++*repeated;
			continue;
		}
		const char *host = (const char *)sqlite3_column_text(s, 1);
		host = host ? host : "";
		int64_t offset = sqlite3_column_int64(s, 3) - sqlite3_column_int64(s, 2);
		size_t h = 0;
		while (h < hosts->count && strcmp(hosts->names[h], host))
			h++;
		if (h == hosts->count) {
			hosts->names = xrealloc(hosts->names, (h + 1) * sizeof(*hosts->names));
			hosts->offsets = xrealloc(hosts->offsets, (h + 1) * sizeof(*hosts->offsets));
			hosts->names[h] = xstrdup(host);
			hosts->offsets[h] = offset;
			hosts->count++;
		}
		int64_t shift = hosts->offsets[h] - hosts->offsets[0], anchor = 0;
		double drift = 0;
		if (h > 0)
			clock_exchange_shift(db, sqlite3_column_int64(s, 0), hosts->names[0], &shift,
					     &anchor, &drift);
		sqlite3_bind_int64(insert, 1, sqlite3_column_int64(s, 0));
		sqlite3_bind_int64(insert, 2, shift);
		sqlite3_bind_int64(insert, 3, anchor);
		sqlite3_bind_double(insert, 4, drift);
		if (sqlite3_step(insert) != SQLITE_DONE)
			rc = error_set(err, "cannot merge: %s", sqlite3_errmsg(db));
		sqlite3_reset(insert);
		strbuf_addf(notes, "INSERT INTO gpuprof_metadata VALUES ('process.%lld.time_shift', "
				   "'%lld');", (long long)(sqlite3_column_int64(s, 0) + process_offset),
			    (long long)shift);
	}
	sqlite3_finalize(s);
	sqlite3_finalize(insert);
	return rc;
}

/* Copies the attached input "src" into the staging and untimed tables. */
static int merge_one(sqlite3 *db, int index, const char *path, struct hosts *hosts,
		     struct strbuf *warnings, int *left_out, struct error *err)
{
	int64_t strings = max_of(db, "SELECT MAX(id) FROM main.gpuprof_string");
	int64_t processes = max_of(db, "SELECT MAX(id) FROM main.gpuprof_process");
	int64_t total = max_of(db, "SELECT COUNT(*) FROM src.gpuprof_process");
	struct strbuf sql = STRBUF_INIT, notes = STRBUF_INIT;
	int repeated = 0;
	int rc = fill_shifts(db, hosts, &notes, processes, &repeated, err);
	if (rc == 0 && repeated && repeated == total) {
		strbuf_addf(warnings, "'%s': its %s already merged from an earlier input: the "
				      "input is left out\n", path,
			    total > 1 ? "recordings were all" : "recording was");
		++*left_out;
	} else if (rc == 0 && repeated) {
		strbuf_addf(warnings, "'%s': %d of its %lld recordings %s already merged from an "
				      "earlier input, left out\n", path, repeated, (long long)total,
			    repeated > 1 ? "were" : "was");
	}
	static const struct { const char *table, *sql; } untimed[] = {
		{ "gpuprof_string",
		  "INSERT INTO main.gpuprof_string SELECT id + ?1, string FROM src.gpuprof_string" },
		{ "gpuprof_process",
		  "INSERT INTO main.gpuprof_process SELECT t.id + ?2, t.hostname, t.pid, t.ppid, "
		  "t.rank, t.size, t.command, " SHIFTED("start") ", " SHIFTED("end") ", t.realtime_start, "
		  "t.clean_exit, " SHIFTED("recording_start") " FROM src.gpuprof_process t "
		  "JOIN temp.merge_shift s ON s.id = t.id" },
		{ "gpuprof_agent",
		  "INSERT INTO main.gpuprof_agent SELECT process_id + ?2, agent_index, type, "
		  "name_id + ?1, vendor_name_id + ?1, driver_version_id + ?1, vendor_id, "
		  "compute_units, max_clock_mhz, global_memory_bytes, local_memory_bytes, "
		  "max_workgroup_size, max_workgroup_x, max_workgroup_y, max_workgroup_z, uuid, "
		  "pci_domain, pci_bus, pci_device, pci_function, compute_major, compute_minor, "
		  "warp_size, l2_cache_bytes, memory_bandwidth, device_index FROM src.gpuprof_agent "
		  "WHERE process_id IN (SELECT id FROM temp.merge_shift)" },
		{ "gpuprof_queue",
		  "INSERT INTO main.gpuprof_queue SELECT process_id + ?2, queue_index, agent_index, "
		  "properties FROM src.gpuprof_queue WHERE process_id IN (SELECT id FROM "
		  "temp.merge_shift)" },
		{ "gpuprof_dropped",
		  "INSERT INTO main.gpuprof_dropped SELECT process_id + ?2, reason, records, bytes "
		  "FROM src.gpuprof_dropped WHERE process_id IN (SELECT id FROM temp.merge_shift)" },
		{ "gpuprof_thread",
		  "INSERT INTO main.gpuprof_thread SELECT process_id + ?2, tid, name_id + ?1 "
		  "FROM src.gpuprof_thread WHERE process_id IN (SELECT id FROM temp.merge_shift)" },
		{ "gpuprof_metric_series",
		  "INSERT INTO main.gpuprof_metric_series SELECT process_id + ?2, series_id, source, "
		  "device, pid, name, unit FROM src.gpuprof_metric_series "
		  "WHERE process_id IN (SELECT id FROM temp.merge_shift)" },
		{ "gpuprof_frame",
		  "INSERT INTO main.gpuprof_frame SELECT process_id + ?2, frame_id, function, module, "
		  "offset, source, line, inlined FROM src.gpuprof_frame "
		  "WHERE process_id IN (SELECT id FROM temp.merge_shift)" },
		{ "gpuprof_stack",
		  "INSERT INTO main.gpuprof_stack SELECT process_id + ?2, stack_id, parent_id, "
		  "frame_id FROM src.gpuprof_stack "
		  "WHERE process_id IN (SELECT id FROM temp.merge_shift)" },
		{ "gpuprof_counter",
		  "INSERT INTO main.gpuprof_counter (process_id, correlation_id, agent_index, "
		  "name_id, value) SELECT process_id + ?2, correlation_id, agent_index, "
		  "name_id + ?1, value FROM src.gpuprof_counter "
		  "WHERE process_id IN (SELECT id FROM temp.merge_shift) ORDER BY id" },
		{ "gpuprof_pc_sample",
		  "INSERT INTO main.gpuprof_pc_sample (process_id, agent_index, correlation_id, "
		  "function_id, cubin_crc, pc_offset, reason_id, samples, file_id, line) SELECT "
		  "process_id + ?2, agent_index, correlation_id, function_id + ?1, cubin_crc, "
		  "pc_offset, reason_id + ?1, samples, CASE file_id WHEN 0 THEN 0 ELSE file_id + ?1 "
		  "END, line FROM src.gpuprof_pc_sample "
		  "WHERE process_id IN (SELECT id FROM temp.merge_shift) ORDER BY id" },
		{ "gpuprof_mpi_completion",
		  "INSERT INTO main.gpuprof_mpi_completion SELECT t.process_id + ?2, t.request, "
		  "t.completed_by, " SHIFTED("time") ", t.bytes_received, t.peer, t.tag "
		  "FROM src.gpuprof_mpi_completion t JOIN temp.merge_shift s ON s.id = t.process_id" },
		{ "gpuprof_clock_sync",
		  "INSERT INTO main.gpuprof_clock_sync SELECT t.process_id + ?2, "
		  SHIFTED("local_time") ", t.offset, t.round_trip, t.rank, t.size "
		  "FROM src.gpuprof_clock_sync t JOIN temp.merge_shift s ON s.id = t.process_id" },
		{ "gpuprof_pc_sampling",
		  "INSERT INTO main.gpuprof_pc_sampling SELECT process_id + ?2, agent_index, "
		  "period_log2, samples, dropped, other_samples, buffer_full "
		  "FROM src.gpuprof_pc_sampling WHERE process_id IN (SELECT id FROM "
		  "temp.merge_shift)" },
		{ "gpuprof_graph_node_clone",
		  "INSERT INTO main.gpuprof_graph_node_clone SELECT process_id + ?2, node_id, "
		  "original_id FROM src.gpuprof_graph_node_clone WHERE process_id IN (SELECT id "
		  "FROM temp.merge_shift)" },
	};
	/* an input from before recording_start: recording began with the process */
	static const char process_before_recording_start[] =
		"INSERT INTO main.gpuprof_process SELECT t.id + ?2, t.hostname, t.pid, t.ppid, "
		"t.rank, t.size, t.command, " SHIFTED("start") ", " SHIFTED("end") ", t.realtime_start, "
		"t.clean_exit, " SHIFTED("start") " FROM src.gpuprof_process t "
		"JOIN temp.merge_shift s ON s.id = t.id";
	int has_recording_start = src_has_column(db, "gpuprof_process", "recording_start");
	for (size_t i = 0; rc == 0 && i < sizeof(untimed) / sizeof(untimed[0]); i++)
		if (src_has_table(db, untimed[i].table))
			rc = copy_rows(db, !has_recording_start &&
					   !strcmp(untimed[i].table, "gpuprof_process")
					   ? process_before_recording_start : untimed[i].sql,
				       strings, processes, err);
	for (size_t i = 0; rc == 0 && i < TIMED_COUNT; i++) {
		if (!src_has_table(db, timed[i].table))
			continue;
		strbuf_reset(&sql);
		strbuf_addf(&sql, "INSERT INTO temp.merge_%s SELECT NULL, t.process_id + ?2, %s "
				  "FROM src.%s t JOIN temp.merge_shift s ON s.id = t.process_id",
			    timed[i].table, timed[i].added_column &&
			    !src_has_column(db, timed[i].table, timed[i].added_column)
			    ? timed[i].columns_without : timed[i].columns, timed[i].table);
		rc = copy_rows(db, sql.buf, strings, processes, err);
	}
	if (rc == 0) { /* the input's own metadata, kept under input.N. */
		sqlite3_stmt *s;
		strbuf_reset(&sql);
		strbuf_addf(&sql, "INSERT INTO main.gpuprof_metadata SELECT 'input.%d.' || tag, "
				  "value FROM src.gpuprof_metadata", index);
		rc = copy_rows(db, sql.buf, strings, processes, err);
		if (rc == 0 && store_prepare(db, "INSERT INTO main.gpuprof_metadata VALUES (?, ?)",
					     &s, err) == 0) {
			strbuf_reset(&sql);
			strbuf_addf(&sql, "input.%d", index);
			sqlite3_bind_text(s, 1, sql.buf, -1, SQLITE_STATIC);
			sqlite3_bind_text(s, 2, path, -1, SQLITE_STATIC);
			if (sqlite3_step(s) != SQLITE_DONE)
				rc = error_set(err, "cannot merge: %s", sqlite3_errmsg(db));
			sqlite3_finalize(s);
		} else if (rc == 0) {
			rc = -1;
		}
	}
	if (rc == 0)
		rc = store_exec(db, notes.buf, err);
	strbuf_release(&sql);
	strbuf_release(&notes);
	return rc;
}

/* Attaches the database at path as src (outside a transaction). */
static int attach_source(sqlite3 *db, const char *path, struct error *err)
{
	sqlite3_stmt *attach;
	if (store_prepare(db, "ATTACH DATABASE ? AS src", &attach, err))
		return -1;
	sqlite3_bind_text(attach, 1, path, -1, SQLITE_STATIC);
	int step = sqlite3_step(attach);
	sqlite3_finalize(attach);
	if (step != SQLITE_DONE)
		return error_set(err, "cannot read '%s': %s", path, sqlite3_errmsg(db));
	return 0;
}

/* The kernels of the merged inputs, numbered per name and device in start order: what
 * the kernels of a replay are joined to. */
static const char replay_main_sql[] =
	"CREATE TEMP TABLE replay_main AS SELECT k.process_id, k.correlation_id, k.agent_index, "
	"s.string AS name, COALESCE(a.device_index, k.agent_index) AS device, ROW_NUMBER() OVER "
	"(PARTITION BY s.string, COALESCE(a.device_index, k.agent_index) ORDER BY k.start, "
	"k.rowid) AS n FROM temp.merge_gpuprof_kernel k JOIN main.gpuprof_string s ON "
	"s.id = k.name_id LEFT JOIN main.gpuprof_agent a ON a.process_id = k.process_id AND "
	"a.agent_index = k.agent_index; "
	"CREATE INDEX temp.replay_main_key ON replay_main (name, device, n)";

/* The same of the replay attached as src, and its metric names' ids in main (added to
 * main's strings where missing). */
static const char replay_src_sql[] =
	"CREATE TEMP TABLE replay_src AS SELECT k.process_id, k.correlation_id, s.string AS name, "
	"COALESCE(a.device_index, k.agent_index) AS device, ROW_NUMBER() OVER (PARTITION BY "
	"s.string, COALESCE(a.device_index, k.agent_index) ORDER BY k.start, k.id) AS n "
	"FROM src.gpuprof_kernel k JOIN src.gpuprof_string s ON s.id = k.name_id "
	"LEFT JOIN src.gpuprof_agent a ON a.process_id = k.process_id AND "
	"a.agent_index = k.agent_index; "
	"INSERT INTO main.gpuprof_string (string) SELECT DISTINCT n.string FROM src.gpuprof_string n "
	"WHERE n.id IN (SELECT name_id FROM src.gpuprof_counter) AND n.string NOT IN "
	"(SELECT string FROM main.gpuprof_string); "
	"CREATE TEMP TABLE replay_names AS SELECT n.id AS src_id, (SELECT MIN(m.id) FROM "
	"main.gpuprof_string m WHERE m.string = n.string) AS id FROM src.gpuprof_string n "
	"WHERE n.id IN (SELECT name_id FROM src.gpuprof_counter)";

/* Each counter of the replay onto the kernel of the same name and device launched as
 * many times before it; a metric the kernel already has keeps its first value. */
static const char replay_join_sql[] =
	"INSERT INTO main.gpuprof_counter (process_id, correlation_id, agent_index, name_id, "
	"value) SELECT m.process_id, m.correlation_id, m.agent_index, n.id, c.value "
	"FROM temp.replay_src r JOIN src.gpuprof_counter c ON c.process_id = r.process_id AND "
	"c.correlation_id = r.correlation_id JOIN temp.replay_names n ON n.src_id = c.name_id "
	"JOIN temp.replay_main m ON m.name = r.name AND m.device = r.device AND m.n = r.n "
	"WHERE NOT EXISTS (SELECT 1 FROM main.gpuprof_counter e WHERE e.process_id = "
	"m.process_id AND e.correlation_id = m.correlation_id AND e.name_id = n.id) "
	"ORDER BY m.process_id, m.correlation_id, c.id";

/* The kernels (by name and device) launched a different number of times in the replay
 * than in the inputs: the first of them, and how many. */
static const char replay_differ_sql[] =
	"WITH a AS (SELECT name, device, COUNT(*) AS c FROM temp.replay_main GROUP BY 1, 2), "
	"b AS (SELECT name, device, COUNT(*) AS c FROM temp.replay_src GROUP BY 1, 2), "
	"d AS (SELECT a.name, a.c AS first, COALESCE(b.c, 0) AS replay FROM a LEFT JOIN b "
	"USING (name, device) WHERE a.c != COALESCE(b.c, 0) UNION ALL SELECT b.name, 0, b.c "
	"FROM b WHERE NOT EXISTS (SELECT 1 FROM a WHERE a.name = b.name AND "
	"a.device = b.device)) "
	"SELECT name, first, replay, (SELECT COUNT(*) FROM d) FROM d LIMIT 1";

/* The counters of the replay attached as src joined onto the merged inputs' kernels. */
static int join_replay(sqlite3 *db, int index, const char *path, struct strbuf *warnings,
		       struct error *err)
{
	if (!src_has_table(db, "gpuprof_counter") ||
	    max_of(db, "SELECT COUNT(*) FROM src.gpuprof_counter") == 0) {
		strbuf_addf(warnings, "replay '%s' has no counters: nothing joined\n", path);
		return 0;
	}
	int64_t before = max_of(db, "SELECT COUNT(*) FROM main.gpuprof_counter");
	if (store_exec(db, replay_src_sql, err) || store_exec(db, replay_join_sql, err))
		return -1;
	int64_t joined = max_of(db, "SELECT COUNT(*) FROM main.gpuprof_counter") - before;
	sqlite3_stmt *s;
	if (store_prepare(db, replay_differ_sql, &s, err))
		return -1;
	if (sqlite3_step(s) == SQLITE_ROW) {
		long long others = sqlite3_column_int64(s, 3) - 1;
		strbuf_addf(warnings, "replay '%s' launched %s %lld time%s, the first run %lld: "
				      "its counters were joined by launch order, the dispatches "
				      "beyond the shorter run have none", path,
			    (const char *)sqlite3_column_text(s, 0),
			    (long long)sqlite3_column_int64(s, 2),
			    sqlite3_column_int64(s, 2) == 1 ? "" : "s",
			    (long long)sqlite3_column_int64(s, 1));
		if (others > 0)
			strbuf_addf(warnings, " (and %lld other kernel%s differ)", others,
				    others == 1 ? "" : "s");
		strbuf_addch(warnings, '\n');
	}
	sqlite3_finalize(s);
	if (store_exec(db, "DROP TABLE temp.replay_src; DROP TABLE temp.replay_names", err) ||
	    store_prepare(db, "INSERT INTO main.gpuprof_metadata VALUES ('replay.' || ?1, ?2), "
			      "('replay.' || ?1 || '.counters', ?3)", &s, err))
		return -1;
	sqlite3_bind_int(s, 1, index);
	sqlite3_bind_text(s, 2, path, -1, SQLITE_STATIC);
	sqlite3_bind_int64(s, 3, joined);
	int rc = sqlite3_step(s) == SQLITE_DONE ? 0
		 : error_set(err, "cannot merge: %s", sqlite3_errmsg(db));
	sqlite3_finalize(s);
	return rc;
}

/* The MPI ranks of the inputs (the processes that made MPI calls: a rank's children
 * inherit its rank without making any): two recordings of one rank (not one recording
 * met again: its host, pid and real start the same, merged once), or ranks recorded in
 * jobs of different sizes, are not one run's. 0, or -1 with err naming the files. */
static int check_ranks(char *const *inputs, int count, struct error *err)
{
	struct seen {
		int64_t rank, size, pid, realtime;
		char host[256];
		int input;
	} *seen = NULL;
	size_t n = 0;
	int rc = 0;
	for (int i = 0; rc == 0 && i < count; i++) {
		sqlite3 *db;
		sqlite3_stmt *s;
		if (store_open(inputs[i], &db, err)) {
			rc = -1;
			break;
		}
		if (store_has_table(db, "gpuprof_mpi_call") &&
		    sqlite3_prepare_v2(db, "SELECT rank, COALESCE(size, -1), pid, realtime_start, "
				       "COALESCE(hostname, '') FROM gpuprof_process WHERE rank >= 0 "
				       "AND id IN " STORE_MPI_PROCESSES,
				       -1, &s, NULL) == SQLITE_OK) {
			while (rc == 0 && sqlite3_step(s) == SQLITE_ROW) {
				struct seen one = { sqlite3_column_int64(s, 0), sqlite3_column_int64(s, 1),
						    sqlite3_column_int64(s, 2), sqlite3_column_int64(s, 3),
						    "", i };
				snprintf(one.host, sizeof(one.host), "%s", sqlite3_column_text(s, 4));
				int64_t rank = one.rank, size = one.size;
				for (size_t k = 0; rc == 0 && k < n; k++) {
					int again = seen[k].pid == one.pid &&
						    seen[k].realtime == one.realtime &&
						    !strcmp(seen[k].host, one.host);
					if (seen[k].input != i && seen[k].rank == rank && !again)
						rc = error_set(err, "'%s' and '%s' both hold the MPI calls of "
							       "rank %lld: the ranks of one run are merged, "
							       "each once", inputs[seen[k].input], inputs[i],
							       (long long)rank);
					else if (seen[k].size > 0 && size > 0 && seen[k].size != size)
						rc = error_set(err, "'%s' was recorded in a job of %lld ranks "
							       "and '%s' in one of %lld: not one run's",
							       inputs[seen[k].input], (long long)seen[k].size,
							       inputs[i], (long long)size);
				}
				seen = xrealloc(seen, (n + 1) * sizeof(*seen));
				seen[n++] = one;
			}
			sqlite3_finalize(s);
		}
		sqlite3_close(db);
	}
	free(seen);
	return rc;
}

int store_merge(char *const *inputs, int count, char *const *replays, int replay_count,
		const char *db_path, struct strbuf *warnings, int *left_out, struct error *err)
{
	int none_left_out = 0;
	if (!left_out)
		left_out = &none_left_out;
	*left_out = 0;
	struct stat out_stat;
	int out_exists = stat(db_path, &out_stat) == 0;
	for (int i = 0; i < count + replay_count; i++) {
		const char *path = i < count ? inputs[i] : replays[i - count];
		sqlite3 *check;
		struct stat in_stat;
		if (out_exists && stat(path, &in_stat) == 0 &&
		    in_stat.st_dev == out_stat.st_dev && in_stat.st_ino == out_stat.st_ino)
			return error_set(err, "the output '%s' is also an input", db_path);
		if (store_open(path, &check, err))
			return -1;
		sqlite3_close(check);
	}
	if (check_ranks(inputs, count, err))
		return -1;
	struct strbuf temporary = STRBUF_INIT, sql = STRBUF_INIT;
	strbuf_addf(&temporary, "%s.partial", db_path);
	unlink(temporary.buf);
	struct hosts hosts = { 0 };
	sqlite3 *db = NULL;
	int rc = -1;
	store_configure();
	if (sqlite3_open_v2(temporary.buf, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE |
			    SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK) {
		error_set(err, "cannot create '%s': %s", temporary.buf,
			  db ? sqlite3_errmsg(db) : "out of memory");
		goto out;
	}
	if (store_writing(db, err) ||
	    store_exec(db, store_schema_sql, err) ||
	    store_exec(db, "CREATE TEMP TABLE merge_shift (id INTEGER PRIMARY KEY, shift INTEGER, "
			    "anchor INTEGER, drift REAL)",
		     err))
		goto out;
	for (size_t i = 0; i < TIMED_COUNT; i++) {
		strbuf_reset(&sql);
		strbuf_addf(&sql, "CREATE TEMP TABLE merge_%s AS SELECT * FROM main.%s WHERE 0",
			    timed[i].table, timed[i].table);
		if (store_exec(db, sql.buf, err))
			goto out;
	}
	for (int i = 0; i < count; i++) { /* an input is detached outside a transaction */
		if (attach_source(db, inputs[i], err))
			goto out;
		int failed = store_exec(db, "BEGIN", err) ||
			     merge_one(db, i, inputs[i], &hosts, warnings, left_out, err) ||
			     store_exec(db, "COMMIT", err);
		if (failed)
			sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
		if (store_exec(db, "DETACH DATABASE src", failed ? NULL : err) || failed)
			goto out;
	}
	if (replay_count && store_exec(db, replay_main_sql, err))
		goto out;
	for (int i = 0; i < replay_count; i++) {
		if (attach_source(db, replays[i], err))
			goto out;
		int failed = store_exec(db, "BEGIN", err) ||
			     join_replay(db, i + 1, replays[i], warnings, err) ||
			     store_exec(db, "COMMIT", err);
		if (failed)
			sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
		if (store_exec(db, "DETACH DATABASE src", failed ? NULL : err) || failed)
			goto out;
	}
	if (store_exec(db, "BEGIN", err))
		goto out;
	/* every timed table in start order (of equal starts the longer first) */
	for (size_t i = 0; i < TIMED_COUNT; i++) {
		strbuf_reset(&sql);
		strbuf_addf(&sql, "INSERT INTO main.%s SELECT * FROM temp.merge_%s "
				  "ORDER BY %s; DROP TABLE temp.merge_%s", timed[i].table,
			    timed[i].table, timed[i].order ? timed[i].order
			    : "start, end DESC, process_id", timed[i].table);
		if (store_exec(db, sql.buf, err))
			goto out;
	}
	strbuf_reset(&sql);
	strbuf_addf(&sql, "INSERT OR REPLACE INTO gpuprof_metadata VALUES "
			  "('schema_version', '%s'), ('gpuprof_version', '%s'), "
			  "('merged_inputs', '%d'); COMMIT",
		    STORE_SCHEMA_VERSION, GPUPROF_VERSION, count);
	if (store_exec(db, sql.buf, err))
		goto out;
	rc = 0;
out:
	if (db && sqlite3_close(db) != SQLITE_OK && rc == 0)
		rc = error_set(err, "cannot write '%s': %s", temporary.buf, store_write_error(db));
	if (rc == 0 && rename(temporary.buf, db_path) < 0)
		rc = error_set(err, "cannot create '%s': %s", db_path, strerror(errno));
	if (rc)
		unlink(temporary.buf);
	for (size_t i = 0; i < hosts.count; i++)
		free(hosts.names[i]);
	free(hosts.names);
	free(hosts.offsets);
	strbuf_release(&temporary);
	strbuf_release(&sql);
	return rc;
}
