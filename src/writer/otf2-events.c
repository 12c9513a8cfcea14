/* The events of an OTF2 archive (see otf2.h), a location at a time: each thread's MPI
 * calls with their messages and collectives, and its marker ranges; each queue's kernels
 * and copies. */
#ifdef HAVE_OTF2

#include <stdint.h>
#include <string.h>

#include "core/record.h"
#include "store/store.h"
#include "util/strbuf.h"
#include "writer/otf2-archive.h"

/* ---- MPI's functions ---------------------------------------------------------------- */

static const struct {
	const char *name;
	OTF2_CollectiveOp op;
	OTF2_RegionRole role;
} collectives[] = {
	{ "MPI_Barrier", OTF2_COLLECTIVE_OP_BARRIER, OTF2_REGION_ROLE_BARRIER },
	{ "MPI_Bcast", OTF2_COLLECTIVE_OP_BCAST, OTF2_REGION_ROLE_COLL_ONE2ALL },
	{ "MPI_Scatter", OTF2_COLLECTIVE_OP_SCATTER, OTF2_REGION_ROLE_COLL_ONE2ALL },
	{ "MPI_Scatterv", OTF2_COLLECTIVE_OP_SCATTERV, OTF2_REGION_ROLE_COLL_ONE2ALL },
	{ "MPI_Reduce", OTF2_COLLECTIVE_OP_REDUCE, OTF2_REGION_ROLE_COLL_ALL2ONE },
	{ "MPI_Gather", OTF2_COLLECTIVE_OP_GATHER, OTF2_REGION_ROLE_COLL_ALL2ONE },
	{ "MPI_Gatherv", OTF2_COLLECTIVE_OP_GATHERV, OTF2_REGION_ROLE_COLL_ALL2ONE },
	{ "MPI_Allreduce", OTF2_COLLECTIVE_OP_ALLREDUCE, OTF2_REGION_ROLE_COLL_ALL2ALL },
	{ "MPI_Allgather", OTF2_COLLECTIVE_OP_ALLGATHER, OTF2_REGION_ROLE_COLL_ALL2ALL },
	{ "MPI_Allgatherv", OTF2_COLLECTIVE_OP_ALLGATHERV, OTF2_REGION_ROLE_COLL_ALL2ALL },
	{ "MPI_Alltoall", OTF2_COLLECTIVE_OP_ALLTOALL, OTF2_REGION_ROLE_COLL_ALL2ALL },
	{ "MPI_Alltoallv", OTF2_COLLECTIVE_OP_ALLTOALLV, OTF2_REGION_ROLE_COLL_ALL2ALL },
	{ "MPI_Reduce_scatter", OTF2_COLLECTIVE_OP_REDUCE_SCATTER, OTF2_REGION_ROLE_COLL_ALL2ALL },
	{ "MPI_Reduce_scatter_block", OTF2_COLLECTIVE_OP_REDUCE_SCATTER_BLOCK,
	  OTF2_REGION_ROLE_COLL_ALL2ALL },
	{ "MPI_Scan", OTF2_COLLECTIVE_OP_SCAN, OTF2_REGION_ROLE_COLL_OTHER },
	{ "MPI_Exscan", OTF2_COLLECTIVE_OP_EXSCAN, OTF2_REGION_ROLE_COLL_OTHER },
	{ "MPI_Comm_dup", OTF2_COLLECTIVE_OP_CREATE_HANDLE, OTF2_REGION_ROLE_COLL_OTHER },
	{ "MPI_Comm_split", OTF2_COLLECTIVE_OP_CREATE_HANDLE, OTF2_REGION_ROLE_COLL_OTHER },
	{ "MPI_Comm_split_type", OTF2_COLLECTIVE_OP_CREATE_HANDLE, OTF2_REGION_ROLE_COLL_OTHER },
	{ "MPI_Comm_create", OTF2_COLLECTIVE_OP_CREATE_HANDLE, OTF2_REGION_ROLE_COLL_OTHER },
	{ "MPI_Comm_free", OTF2_COLLECTIVE_OP_DESTROY_HANDLE, OTF2_REGION_ROLE_COLL_OTHER },
};

static int collective_of(const char *name)
{
	for (size_t i = 0; i < sizeof(collectives) / sizeof(collectives[0]); i++)
		if (!strcmp(collectives[i].name, name))
			return (int)i;
	return -1;
}

static int is_function(const char *name, const char *const *list)
{
	for (; *list; list++)
		if (!strcmp(name, *list))
			return 1;
	return 0;
}

static const char *const blocking_sends[] = { "MPI_Send", "MPI_Ssend", "MPI_Bsend",
					      "MPI_Rsend", NULL };
static const char *const nonblocking_sends[] = { "MPI_Isend", "MPI_Issend", "MPI_Ibsend",
						 "MPI_Irsend", NULL };

/* The communicator's definition id (by name), and a world rank's rank in it. */
static uint32_t comm_of(const struct otf2 *o, const char *name)
{
	for (size_t i = 0; name && i < o->comm_count; i++)
		if (!strcmp(o->comms[i].name, name))
			return (uint32_t)i;
	return 0; /* the world */
}

static uint32_t rank_in(const struct otf2 *o, uint32_t comm, int64_t world_rank)
{
	uint32_t index = otf2_world_index(o, world_rank);
	const struct comm *c = &o->comms[comm];
	for (uint32_t i = 0; index != OTF2_UNDEFINED_UINT32 && i < c->size; i++)
		if (c->members[i] == index)
			return i;
	return OTF2_UNDEFINED_UINT32;
}

/* ---- events of a thread: its MPI calls, their completions and its marker ranges ---- */

struct thread_events {
	struct otf2 *o;
	OTF2_EvtWriter *w;
	struct location *l;
	uint64_t open_ends[RECORD_RANGE_DEPTH];
	uint32_t open_regions[RECORD_RANGE_DEPTH];
	int depth;
};

static void enter(struct thread_events *t, uint64_t time, uint32_t region)
{
	otf2_seen_time(t->o, time);
	otf2_failed(t->o, OTF2_EvtWriter_Enter(t->w, NULL, time, region), "enter");
	t->l->events++;
}

static void leave(struct thread_events *t, uint64_t time, uint32_t region)
{
	otf2_seen_time(t->o, time);
	otf2_failed(t->o, OTF2_EvtWriter_Leave(t->w, NULL, time, region), "leave");
	t->l->events++;
}

/* Leaves the marker ranges that ended at or before time. */
static void close_ranges(struct thread_events *t, uint64_t time)
{
	while (t->depth && t->open_ends[t->depth - 1] <= time) {
		t->depth--;
		leave(t, t->open_ends[t->depth], t->open_regions[t->depth]);
	}
}

/* The completions that call completed (completions: ordered by completed_by), written
 * inside the call at its end. */
static void completions_of(struct thread_events *t, sqlite3_stmt *done, int *has_done,
			   int64_t call_id, uint64_t end)
{
	struct otf2 *o = t->o;
	while (*has_done && sqlite3_column_int64(done, 0) < call_id)
		*has_done = otf2_step(o, done);
	for (; *has_done && sqlite3_column_int64(done, 0) == call_id; *has_done = otf2_step(o, done)) {
		const char *function = otf2_text(done, 1);
		uint64_t request = (uint64_t)sqlite3_column_int64(done, 2);
		if (is_function(function, nonblocking_sends)) {
			otf2_failed(o, OTF2_EvtWriter_MpiIsendComplete(t->w, NULL, end, request),
				    "MPI_Isend's completion");
		} else if (!strcmp(function, "MPI_Irecv")) {
			uint32_t comm = comm_of(o, (const char *)sqlite3_column_text(done, 3));
			otf2_failed(o, OTF2_EvtWriter_MpiIrecv(t->w, NULL, end,
					rank_in(o, comm, sqlite3_column_int64(done, 4)), comm,
					(uint32_t)sqlite3_column_int64(done, 5),
					(uint64_t)sqlite3_column_int64(done, 6), request),
				    "MPI_Irecv's completion");
		} else {
			continue; /* a nonblocking collective: written as its region only */
		}
		t->l->events++;
	}
}

/* One MPI call: its region, and what it did inside it. */
static void mpi_call(struct thread_events *t, sqlite3_stmt *s, sqlite3_stmt *done,
		     int *has_done)
{
	struct otf2 *o = t->o;
	const char *function = otf2_text(s, 0);
	uint64_t start = (uint64_t)sqlite3_column_int64(s, 1);
	uint64_t end = (uint64_t)sqlite3_column_int64(s, 2);
	int64_t call_id = sqlite3_column_int64(s, 3);
	uint32_t comm = comm_of(o, (const char *)sqlite3_column_text(s, 4));
	int64_t peer = sqlite3_column_int64(s, 5);
	uint32_t tag = (uint32_t)sqlite3_column_int64(s, 6);
	int64_t root = sqlite3_column_int64(s, 7);
	uint64_t sent = (uint64_t)sqlite3_column_int64(s, 8);
	uint64_t received = (uint64_t)sqlite3_column_int64(s, 9);
	uint64_t request = (uint64_t)sqlite3_column_int64(s, 10);
	int c = collective_of(function);
	OTF2_RegionRole role = c >= 0 ? collectives[c].role
			     : is_function(function, blocking_sends) ||
			       is_function(function, nonblocking_sends) ||
			       !strcmp(function, "MPI_Recv") || !strcmp(function, "MPI_Irecv") ||
			       !strcmp(function, "MPI_Sendrecv")
			       ? OTF2_REGION_ROLE_POINT2POINT : OTF2_REGION_ROLE_FUNCTION;
	uint32_t region = otf2_region(o, function, OTF2_PARADIGM_MPI, role);
	enter(t, start, region);
	uint32_t to = peer >= 0 ? rank_in(o, comm, peer) : OTF2_UNDEFINED_UINT32;
	OTF2_ErrorCode rc = OTF2_SUCCESS;
	int wrote = 1;
	if (c >= 0) {
		rc = OTF2_EvtWriter_MpiCollectiveBegin(t->w, NULL, start);
		if (rc == OTF2_SUCCESS)
			rc = OTF2_EvtWriter_MpiCollectiveEnd(t->w, NULL, end, collectives[c].op, comm,
							     root >= 0 ? rank_in(o, comm, root)
								       : OTF2_UNDEFINED_UINT32,
							     sent, received);
		t->l->events++;
	} else if (to != OTF2_UNDEFINED_UINT32 && is_function(function, blocking_sends)) {
		rc = OTF2_EvtWriter_MpiSend(t->w, NULL, start, to, comm, tag, sent);
	} else if (to != OTF2_UNDEFINED_UINT32 && is_function(function, nonblocking_sends)) {
		rc = OTF2_EvtWriter_MpiIsend(t->w, NULL, start, to, comm, tag, sent, request);
	} else if (to != OTF2_UNDEFINED_UINT32 && !strcmp(function, "MPI_Recv")) {
		rc = OTF2_EvtWriter_MpiRecv(t->w, NULL, end, to, comm, tag, received);
	} else if (!strcmp(function, "MPI_Irecv") && request) {
		rc = OTF2_EvtWriter_MpiIrecvRequest(t->w, NULL, start, request);
	} else {
		wrote = 0;
	}
	t->l->events += (uint64_t)wrote;
	otf2_failed(o, rc, function);
	completions_of(t, done, has_done, call_id, end);
	leave(t, end, region);
}

static int write_thread(struct otf2 *o, struct location *l, int64_t process_id, int64_t tid,
			int has_mpi)
{
	struct thread_events t = { .o = o, .l = l };
	sqlite3_stmt *calls = NULL, *done = NULL, *markers = NULL;
	int has_call = 0, has_done = 0, has_marker = 0;
	t.w = OTF2_Archive_GetEvtWriter(o->archive, l->id);
	if (!t.w)
		return error_set(o->err, "cannot write the OTF2 archive: no event writer");
	if (has_mpi) {
		if (otf2_prepare(o, "SELECT function, start, end, call_id, communicator, peer, tag, root, "
			       "sent, received, request FROM temp.otf2_call WHERE process_id = ?1 AND "
			       "tid = ?2 ORDER BY start, call_id", &calls) ||
		    otf2_prepare(o, "SELECT completed_by, function, request, communicator, peer, tag, "
			       "received FROM temp.otf2_done WHERE process_id = ?1 ORDER BY "
			       "completed_by, request", &done))
			goto out;
		sqlite3_bind_int64(calls, 1, process_id);
		sqlite3_bind_int64(calls, 2, tid);
		sqlite3_bind_int64(done, 1, process_id);
		has_call = otf2_step(o, calls);
		has_done = otf2_step(o, done);
	}
	/* push/pop ranges and marks: they nest (start/stop ranges need not, and are left
	 * out) */
	if (otf2_prepare(o, "SELECT s.string, k.start, k.end FROM gpuprof_marker k LEFT JOIN "
		       "gpuprof_string s ON s.id = k.name_id WHERE k.process_id = ?1 AND "
		       "k.tid = ?2 AND k.kind != 2 ORDER BY k.start, k.end DESC, k.id", &markers))
		goto out;
	sqlite3_bind_int64(markers, 1, process_id);
	sqlite3_bind_int64(markers, 2, tid);
	has_marker = otf2_step(o, markers);
	while (!o->failed && (has_call || has_marker)) {
		int marker_next = has_marker && (!has_call || sqlite3_column_int64(markers, 1) <=
								  sqlite3_column_int64(calls, 1));
		uint64_t start = (uint64_t)sqlite3_column_int64(marker_next ? markers : calls, 1);
		close_ranges(&t, start);
		if (marker_next) {
			uint32_t region = otf2_region(o, otf2_text(markers, 0), OTF2_PARADIGM_USER,
						      OTF2_REGION_ROLE_FUNCTION);
			uint64_t end = (uint64_t)sqlite3_column_int64(markers, 2);
			enter(&t, start, region);
			if (t.depth < RECORD_RANGE_DEPTH &&
			    (!t.depth || end <= t.open_ends[t.depth - 1])) {
				t.open_ends[t.depth] = end > start ? end : start;
				t.open_regions[t.depth++] = region;
			} else { /* deeper than followed, or ending past its parent */
				leave(&t, start, region);
			}
			has_marker = otf2_step(o, markers);
		} else {
			mpi_call(&t, calls, done, &has_done);
			has_call = otf2_step(o, calls);
		}
	}
	close_ranges(&t, UINT64_MAX);
out:
	sqlite3_finalize(calls);
	sqlite3_finalize(done);
	sqlite3_finalize(markers);
	otf2_failed(o, OTF2_Archive_CloseEvtWriter(o->archive, t.w), "close");
	return o->failed ? -1 : 0;
}

/* The kernels and copies of one queue: each a region on its stream, in start order; one
 * that starts before the previous ended (an out-of-order queue) starts at that end, as
 * OTF2's regions must nest. */
static int write_queue(struct otf2 *o, struct location *l, int64_t process_id, int64_t agent,
		       int64_t queue)
{
	OTF2_EvtWriter *w = OTF2_Archive_GetEvtWriter(o->archive, l->id);
	sqlite3_stmt *s;
	if (!w)
		return error_set(o->err, "cannot write the OTF2 archive: no event writer");
	if (otf2_prepare(o, "SELECT name, start, end, cuda FROM temp.otf2_work WHERE process_id = ?1 "
		       "AND agent = ?2 AND queue = ?3 ORDER BY start, end", &s)) {
		OTF2_Archive_CloseEvtWriter(o->archive, w);
		return -1;
	}
	sqlite3_bind_int64(s, 1, process_id);
	sqlite3_bind_int64(s, 2, agent);
	sqlite3_bind_int64(s, 3, queue);
	uint64_t previous = 0;
	while (!o->failed && otf2_step(o, s)) {
		uint64_t start = (uint64_t)sqlite3_column_int64(s, 1);
		uint64_t end = (uint64_t)sqlite3_column_int64(s, 2);
		start = start < previous ? previous : start;
		end = end < start ? start : end;
		uint32_t region = otf2_region(o, otf2_text(s, 0), sqlite3_column_int64(s, 3)
					      ? OTF2_PARADIGM_CUDA : OTF2_PARADIGM_OPENCL,
					      OTF2_REGION_ROLE_FUNCTION);
		otf2_seen_time(o, start);
		otf2_seen_time(o, end);
		otf2_failed(o, OTF2_EvtWriter_Enter(w, NULL, start, region), "enter");
		otf2_failed(o, OTF2_EvtWriter_Leave(w, NULL, end, region), "leave");
		l->events += 2;
		previous = end;
	}
	sqlite3_finalize(s);
	otf2_failed(o, OTF2_Archive_CloseEvtWriter(o->archive, w), "close");
	return o->failed ? -1 : 0;
}

/* The threads' locations in the order of their processes' ranks (the ranks' MPI threads
 * numbered 0, 1, ... where each rank has one). */
#define RANK_ORDER "(SELECT COALESCE(rank, -1) < 0 FROM gpuprof_process p WHERE p.id = " \
	"process_id), (SELECT rank FROM gpuprof_process p WHERE p.id = process_id), process_id, tid"

/* What the locations read, copied once into SQLite's temporary tables, indexed by
 * location: a query per location over the tables themselves would read them whole each
 * time. */
static int copy_by_location(struct otf2 *o, int has_mpi)
{
	static const char work[] =
		"CREATE TEMP TABLE otf2_work AS SELECT k.process_id, k.agent_index AS agent, "
		" k.queue_index AS queue, s.string AS name, k.start, k.end, k.context_id != 0 AS cuda "
		" FROM gpuprof_kernel k LEFT JOIN gpuprof_string s ON s.id = k.name_id "
		"UNION ALL SELECT c.process_id, CASE WHEN c.dst_agent_index > 0 THEN "
		" c.dst_agent_index ELSE c.src_agent_index END, c.queue_index, CASE c.direction "
		" WHEN 1 THEN 'MEMORY_COPY_HOST_TO_DEVICE' WHEN 2 THEN 'MEMORY_COPY_DEVICE_TO_HOST' "
		" WHEN 3 THEN 'MEMORY_COPY_DEVICE_TO_DEVICE' WHEN 4 THEN 'MEMORY_COPY_HOST_TO_HOST' "
		" ELSE 'MEMORY_COPY' END, c.start, c.end, c.context_id != 0 FROM gpuprof_memory_copy c;"
		"CREATE INDEX temp.otf2_work_key ON otf2_work (process_id, agent, queue, start);";
	static const char calls[] =
		"CREATE TEMP TABLE otf2_call AS SELECT c.process_id, c.tid, f.string AS function, "
		" c.start, c.end, c.call_id, m.string AS communicator, "
		" CASE WHEN d.peer >= 0 THEN d.peer ELSE c.peer END AS peer, "
		" CASE WHEN d.tag >= 0 THEN d.tag ELSE c.tag END AS tag, c.root, c.bytes_sent AS sent, "
		" CASE WHEN d.bytes_received > 0 THEN d.bytes_received ELSE c.bytes_received END "
		"  AS received, c.request FROM gpuprof_mpi_call c "
		" LEFT JOIN gpuprof_string f ON f.id = c.function_id "
		" LEFT JOIN gpuprof_string m ON m.id = c.communicator_id "
		" LEFT JOIN gpuprof_mpi_completion d ON d.process_id = c.process_id AND "
		"  d.request = c.request AND c.request > 0;"
		"CREATE INDEX temp.otf2_call_key ON otf2_call (process_id, tid, start, call_id);"
		"CREATE TEMP TABLE otf2_done AS SELECT d.process_id, d.completed_by, c.function, "
		" d.request, c.communicator, d.peer, d.tag, d.bytes_received AS received "
		" FROM gpuprof_mpi_completion d JOIN otf2_call c ON c.process_id = d.process_id AND "
		" c.request = d.request;"
		"CREATE INDEX temp.otf2_done_key ON otf2_done (process_id, completed_by, request);";
	if (store_exec(o->db, work, o->err) || (has_mpi && store_exec(o->db, calls, o->err))) {
		o->failed = 1;
		return -1;
	}
	return 0;
}

/* Every location's events, a location at a time. */
int otf2_write_events(struct otf2 *o)
{
	int has_mpi = store_has_table(o->db, "gpuprof_mpi_call");
	if (copy_by_location(o, has_mpi))
		return -1;
	sqlite3_stmt *threads, *queues;
	if (otf2_prepare(o, has_mpi
		       ? "SELECT process_id, tid, MAX(mpi), MAX(init) FROM (SELECT process_id, tid, "
			 "1 AS mpi, function_id IN (SELECT id FROM gpuprof_string WHERE string IN "
			 "('MPI_Init', 'MPI_Init_thread')) AS init FROM gpuprof_mpi_call UNION ALL "
			 "SELECT process_id, tid, 0, 0 FROM gpuprof_marker WHERE kind != 2) "
			 "GROUP BY process_id, tid ORDER BY " RANK_ORDER
		       : "SELECT DISTINCT process_id, tid, 0, 0 FROM gpuprof_marker WHERE kind != 2 "
			 "ORDER BY " RANK_ORDER, &threads))
		return -1;
	while (!o->failed && otf2_step(o, threads)) {
		size_t p = 0;
		while (p < o->process_count && o->processes[p].id != sqlite3_column_int64(threads, 0))
			p++;
		if (p == o->process_count)
			continue;
		struct process *proc = &o->processes[p];
		int64_t tid = sqlite3_column_int64(threads, 1);
		struct strbuf name = STRBUF_INIT;
		strbuf_addf(&name, "thread %lld", (long long)tid);
		uint64_t id = otf2_add_location(o, name.buf, OTF2_LOCATION_TYPE_CPU_THREAD, (uint32_t)p);
		strbuf_release(&name);
		int mpi = sqlite3_column_int(threads, 2);
		if (mpi && (proc->mpi_location == UINT64_MAX || sqlite3_column_int(threads, 3)))
			proc->mpi_location = id;
		write_thread(o, &o->locations[id], proc->id, tid, mpi);
	}
	sqlite3_finalize(threads);
	if (o->failed || otf2_prepare(o, "SELECT DISTINCT process_id, agent_index, queue_index FROM "
				    "gpuprof_kernel UNION SELECT DISTINCT process_id, CASE WHEN "
				    "dst_agent_index > 0 THEN dst_agent_index ELSE src_agent_index END, "
				    "queue_index FROM gpuprof_memory_copy ORDER BY 1, 2, 3", &queues))
		return -1;
	int64_t last_process = -1, last_agent = -1;
	uint32_t group = 0;
	while (!o->failed && otf2_step(o, queues)) {
		int64_t process_id = sqlite3_column_int64(queues, 0);
		int64_t agent = sqlite3_column_int64(queues, 1), queue = sqlite3_column_int64(queues, 2);
		size_t p = 0;
		while (p < o->process_count && o->processes[p].id != process_id)
			p++;
		if (p == o->process_count)
			continue;
		struct strbuf name = STRBUF_INIT;
		if (process_id != last_process || agent != last_agent) {
			strbuf_addf(&name, "device %lld of pid %lld", (long long)agent,
				    (long long)o->processes[p].pid);
			group = otf2_add_group(o, name.buf, OTF2_LOCATION_GROUP_TYPE_ACCELERATOR, (uint32_t)p,
					       otf2_host_node(o, o->processes[p].host));
			last_process = process_id;
			last_agent = agent;
			strbuf_reset(&name);
		}
		strbuf_addf(&name, "queue %lld", (long long)queue);
		uint64_t id = otf2_add_location(o, name.buf, OTF2_LOCATION_TYPE_ACCELERATOR_STREAM, group);
		strbuf_release(&name);
		write_queue(o, &o->locations[id], process_id, agent, queue);
	}
	sqlite3_finalize(queues);
	return o->failed ? -1 : 0;
}

#endif
