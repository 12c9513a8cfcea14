/* A database as an OTF2 archive (see otf2.h): read a location at a time, so that memory
 * holds the definitions (names, locations, communicators) and never the events. */
#include "writer/otf2.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/record.h"
#include "store/store.h"
#include "util/hash.h"
#include "util/strbuf.h"

#ifndef HAVE_OTF2

int otf2_write(const char *db_path, const char *directory, struct strbuf *written,
	       struct error *err)
{
	return error_set(err, "output format 'otf2': this gpuprof was built without OTF2 "
			 "(Debian package libotf2-trace-dev; scripts/install-deps.sh installs "
			 "it, then rebuild)");
}

#else

#include <otf2/otf2.h>

/* Definitions: strings and regions interned, by name. */
struct names {
	char **texts;
	uint32_t *slots;          /* open addressing: index + 1 into texts; 0 free */
	size_t count, capacity;
};

static uint32_t name_id(struct names *n, const char *text)
{
	if (2 * (n->count + 1) > n->capacity) {
		size_t capacity = n->capacity ? 2 * n->capacity : 256;
		uint32_t *slots = xcalloc(capacity, sizeof(*slots));
		for (size_t i = 0; i < n->count; i++) {
			size_t at = hash_string(n->texts[i]) & (capacity - 1);
			while (slots[at])
				at = (at + 1) & (capacity - 1);
			slots[at] = (uint32_t)i + 1;
		}
		free(n->slots);
		n->slots = slots;
		n->capacity = capacity;
		n->texts = xrealloc(n->texts, capacity / 2 * sizeof(*n->texts));
	}
	size_t at = hash_string(text) & (n->capacity - 1);
	for (; n->slots[at]; at = (at + 1) & (n->capacity - 1))
		if (!strcmp(n->texts[n->slots[at] - 1], text))
			return n->slots[at] - 1;
	n->texts[n->count] = xstrdup(text);
	n->slots[at] = (uint32_t)++n->count;
	return (uint32_t)n->count - 1;
}

static void names_release(struct names *n)
{
	for (size_t i = 0; i < n->count; i++)
		free(n->texts[i]);
	free(n->texts);
	free(n->slots);
}

/* A region: its name, paradigm and role (an MPI function's role says what Scalasca and
 * Vampir do with it). */
struct region {
	uint32_t name;
	OTF2_Paradigm paradigm;
	OTF2_RegionRole role;
};

struct location {
	uint64_t id;
	uint32_t name, group;
	OTF2_LocationType type;
	uint64_t events;
};

struct process {
	int64_t id, pid, rank;
	char *host;
	uint64_t mpi_location;   /* the thread that called MPI_Init (or made MPI calls);
				  * UINT64_MAX: none */
};

struct comm {
	char *name;
	uint64_t *members;       /* indices into the world's ranks */
	uint32_t size;
};

struct otf2 {
	sqlite3 *db;
	OTF2_Archive *archive;
	struct names strings, region_names;
	struct region *regions;
	struct process *processes;
	size_t process_count;
	struct location *locations;
	size_t location_count;
	struct {
		char *name;
		uint32_t parent;
		OTF2_LocationGroupType type;
		uint32_t node;
	} *groups;
	size_t group_count;
	char **hosts;
	size_t host_count;
	struct comm *comms;
	size_t comm_count;
	int64_t *world_ranks;    /* sorted: a rank's index is its place in the world */
	size_t world_size;
	uint64_t first, last;    /* the events' times */
	struct error *err;
	int failed;
};

static uint32_t region_of(struct otf2 *o, const char *name, OTF2_Paradigm paradigm,
			  OTF2_RegionRole role)
{
	struct strbuf key = STRBUF_INIT;
	strbuf_addf(&key, "%d/%d/%s", (int)paradigm, (int)role, name);
	uint32_t id = name_id(&o->region_names, key.buf);
	strbuf_release(&key);
	if (id == o->region_names.count - 1) { /* new */
		o->regions = xrealloc(o->regions, o->region_names.count * sizeof(*o->regions));
		o->regions[id] = (struct region){ name_id(&o->strings, name), paradigm, role };
	}
	return id;
}

static int otf2_failed(struct otf2 *o, OTF2_ErrorCode rc, const char *what)
{
	if (rc == OTF2_SUCCESS)
		return 0;
	if (!o->failed)
		error_set(o->err, "cannot write the OTF2 archive (%s): %s", what,
			  OTF2_Error_GetDescription(rc));
	o->failed = 1;
	return -1;
}

static void seen_time(struct otf2 *o, uint64_t t)
{
	if (!o->first || t < o->first)
		o->first = t;
	if (t > o->last)
		o->last = t;
}

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

/* The world's index of a world rank; UINT32_MAX for none. */
static uint32_t world_index(const struct otf2 *o, int64_t rank)
{
	size_t lo = 0, hi = rank >= 0 ? o->world_size : 0;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (o->world_ranks[mid] == rank)
			return (uint32_t)mid;
		if (o->world_ranks[mid] < rank)
			lo = mid + 1;
		else
			hi = mid;
	}
	return OTF2_UNDEFINED_UINT32;
}

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
	uint32_t index = world_index(o, world_rank);
	const struct comm *c = &o->comms[comm];
	for (uint32_t i = 0; index != OTF2_UNDEFINED_UINT32 && i < c->size; i++)
		if (c->members[i] == index)
			return i;
	return OTF2_UNDEFINED_UINT32;
}

/* ---- reading ------------------------------------------------------------------------- */

static int prepare(struct otf2 *o, const char *sql, sqlite3_stmt **s)
{
	if (store_prepare(o->db, sql, s, o->err)) {
		o->failed = 1;
		return -1;
	}
	return 0;
}

static int step(struct otf2 *o, sqlite3_stmt *s)
{
	int rc = sqlite3_step(s);
	if (rc == SQLITE_ROW)
		return 1;
	if (rc != SQLITE_DONE && !o->failed) {
		error_set(o->err, "cannot read '%s': %s", sqlite3_db_filename(o->db, "main"),
			  sqlite3_errmsg(o->db));
		o->failed = 1;
	}
	return 0;
}

static const char *text(sqlite3_stmt *s, int column)
{
	const char *t = (const char *)sqlite3_column_text(s, column);
	return t ? t : "";
}

static uint32_t host_node(struct otf2 *o, const char *host)
{
	for (size_t i = 0; i < o->host_count; i++)
		if (!strcmp(o->hosts[i], host))
			return (uint32_t)i + 1; /* node 0 is the machine */
	o->hosts = xrealloc(o->hosts, (o->host_count + 1) * sizeof(*o->hosts));
	o->hosts[o->host_count++] = xstrdup(host);
	return (uint32_t)o->host_count;
}

static uint32_t add_group(struct otf2 *o, const char *name, OTF2_LocationGroupType type,
			  uint32_t parent, uint32_t node)
{
	o->groups = xrealloc(o->groups, (o->group_count + 1) * sizeof(*o->groups));
	o->groups[o->group_count].name = xstrdup(name);
	o->groups[o->group_count].type = type;
	o->groups[o->group_count].parent = parent;
	o->groups[o->group_count].node = node;
	return (uint32_t)o->group_count++;
}

static uint64_t add_location(struct otf2 *o, const char *name, OTF2_LocationType type,
			     uint32_t group)
{
	o->locations = xrealloc(o->locations, (o->location_count + 1) * sizeof(*o->locations));
	struct location *l = &o->locations[o->location_count];
	*l = (struct location){ o->location_count, name_id(&o->strings, name), group, type, 0 };
	return o->location_count++;
}

/* The processes (ordered by rank), their groups, and the world's ranks. */
static int load_processes(struct otf2 *o)
{
	sqlite3_stmt *s;
	if (prepare(o, "SELECT id, pid, COALESCE(rank, -1), hostname FROM gpuprof_process "
		       "ORDER BY rank < 0, rank, id", &s))
		return -1;
	while (step(o, s)) {
		o->processes = xrealloc(o->processes, (o->process_count + 1) *
					sizeof(*o->processes));
		struct process *p = &o->processes[o->process_count++];
		p->id = sqlite3_column_int64(s, 0);
		p->pid = sqlite3_column_int64(s, 1);
		p->rank = sqlite3_column_int64(s, 2);
		p->host = xstrdup(text(s, 3));
		p->mpi_location = UINT64_MAX;
		struct strbuf name = STRBUF_INIT;
		if (p->rank >= 0)
			strbuf_addf(&name, "rank %lld (pid %lld)", (long long)p->rank, (long long)p->pid);
		else
			strbuf_addf(&name, "pid %lld", (long long)p->pid);
		add_group(o, name.buf, OTF2_LOCATION_GROUP_TYPE_PROCESS, OTF2_UNDEFINED_LOCATION_GROUP,
			  host_node(o, p->host));
		strbuf_release(&name);
	}
	sqlite3_finalize(s);
	return o->failed ? -1 : 0;
}

/* The communicators: the world first (its ranks those that made MPI calls), then each
 * other by its members (the ranks that named it). */
static int load_comms(struct otf2 *o)
{
	sqlite3_stmt *s;
	int has_mpi = store_has_table(o->db, "gpuprof_mpi_call");
	o->comms = xcalloc(1, sizeof(*o->comms));
	o->comms[0].name = xstrdup("MPI_COMM_WORLD");
	o->comm_count = 1;
	if (!has_mpi)
		return 0;
	if (prepare(o, "SELECT DISTINCT p.rank FROM gpuprof_mpi_call c JOIN gpuprof_process p ON "
		       "p.id = c.process_id WHERE p.rank >= 0 ORDER BY p.rank", &s))
		return -1;
	while (step(o, s)) {
		o->world_ranks = xrealloc(o->world_ranks, (o->world_size + 1) * sizeof(int64_t));
		o->world_ranks[o->world_size++] = sqlite3_column_int64(s, 0);
	}
	sqlite3_finalize(s);
	o->comms[0].size = (uint32_t)o->world_size;
	o->comms[0].members = xcalloc(o->world_size ? o->world_size : 1, sizeof(uint64_t));
	for (size_t i = 0; i < o->world_size; i++)
		o->comms[0].members[i] = i;
	if (prepare(o, "SELECT m.string, p.rank FROM gpuprof_mpi_call c JOIN gpuprof_process p ON "
		       "p.id = c.process_id JOIN gpuprof_string m ON m.id = c.communicator_id "
		       "WHERE m.string != 'MPI_COMM_WORLD' AND p.rank >= 0 GROUP BY m.string, "
		       "p.rank ORDER BY m.string, p.rank", &s))
		return -1;
	while (step(o, s)) {
		const char *name = text(s, 0);
		struct comm *c = &o->comms[o->comm_count - 1];
		if (strcmp(c->name, name)) {
			o->comms = xrealloc(o->comms, (o->comm_count + 1) * sizeof(*o->comms));
			c = &o->comms[o->comm_count++];
			memset(c, 0, sizeof(*c));
			c->name = xstrdup(name);
		}
		uint32_t index = world_index(o, sqlite3_column_int64(s, 1));
		if (index == OTF2_UNDEFINED_UINT32)
			continue;
		c->members = xrealloc(c->members, (c->size + 1) * sizeof(*c->members));
		c->members[c->size++] = index;
	}
	sqlite3_finalize(s);
	return o->failed ? -1 : 0;
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
	seen_time(t->o, time);
	otf2_failed(t->o, OTF2_EvtWriter_Enter(t->w, NULL, time, region), "enter");
	t->l->events++;
}

static void leave(struct thread_events *t, uint64_t time, uint32_t region)
{
	seen_time(t->o, time);
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
		*has_done = step(o, done);
	for (; *has_done && sqlite3_column_int64(done, 0) == call_id; *has_done = step(o, done)) {
		const char *function = text(done, 1);
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
	const char *function = text(s, 0);
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
	uint32_t region = region_of(o, function, OTF2_PARADIGM_MPI, role);
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
		if (prepare(o, "SELECT function, start, end, call_id, communicator, peer, tag, root, "
			       "sent, received, request FROM temp.otf2_call WHERE process_id = ?1 AND "
			       "tid = ?2 ORDER BY start, call_id", &calls) ||
		    prepare(o, "SELECT completed_by, function, request, communicator, peer, tag, "
			       "received FROM temp.otf2_done WHERE process_id = ?1 ORDER BY "
			       "completed_by, request", &done))
			goto out;
		sqlite3_bind_int64(calls, 1, process_id);
		sqlite3_bind_int64(calls, 2, tid);
		sqlite3_bind_int64(done, 1, process_id);
		has_call = step(o, calls);
		has_done = step(o, done);
	}
	/* push/pop ranges and marks: they nest (start/stop ranges need not, and are left
	 * out) */
	if (prepare(o, "SELECT s.string, k.start, k.end FROM gpuprof_marker k LEFT JOIN "
		       "gpuprof_string s ON s.id = k.name_id WHERE k.process_id = ?1 AND "
		       "k.tid = ?2 AND k.kind != 2 ORDER BY k.start, k.end DESC, k.id", &markers))
		goto out;
	sqlite3_bind_int64(markers, 1, process_id);
	sqlite3_bind_int64(markers, 2, tid);
	has_marker = step(o, markers);
	while (!o->failed && (has_call || has_marker)) {
		int marker_next = has_marker && (!has_call || sqlite3_column_int64(markers, 1) <=
								  sqlite3_column_int64(calls, 1));
		uint64_t start = (uint64_t)sqlite3_column_int64(marker_next ? markers : calls, 1);
		close_ranges(&t, start);
		if (marker_next) {
			uint32_t region = region_of(o, text(markers, 0), OTF2_PARADIGM_USER,
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
			has_marker = step(o, markers);
		} else {
			mpi_call(&t, calls, done, &has_done);
			has_call = step(o, calls);
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
	if (prepare(o, "SELECT name, start, end, cuda FROM temp.otf2_work WHERE process_id = ?1 "
		       "AND agent = ?2 AND queue = ?3 ORDER BY start, end", &s)) {
		OTF2_Archive_CloseEvtWriter(o->archive, w);
		return -1;
	}
	sqlite3_bind_int64(s, 1, process_id);
	sqlite3_bind_int64(s, 2, agent);
	sqlite3_bind_int64(s, 3, queue);
	uint64_t previous = 0;
	while (!o->failed && step(o, s)) {
		uint64_t start = (uint64_t)sqlite3_column_int64(s, 1);
		uint64_t end = (uint64_t)sqlite3_column_int64(s, 2);
		start = start < previous ? previous : start;
		end = end < start ? start : end;
		uint32_t region = region_of(o, text(s, 0), sqlite3_column_int64(s, 3)
					    ? OTF2_PARADIGM_CUDA : OTF2_PARADIGM_OPENCL,
					    OTF2_REGION_ROLE_FUNCTION);
		seen_time(o, start);
		seen_time(o, end);
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
static int write_events(struct otf2 *o)
{
	int has_mpi = store_has_table(o->db, "gpuprof_mpi_call");
	if (copy_by_location(o, has_mpi))
		return -1;
	sqlite3_stmt *threads, *queues;
	if (prepare(o, has_mpi
		       ? "SELECT process_id, tid, MAX(mpi), MAX(init) FROM (SELECT process_id, tid, "
			 "1 AS mpi, function_id IN (SELECT id FROM gpuprof_string WHERE string IN "
			 "('MPI_Init', 'MPI_Init_thread')) AS init FROM gpuprof_mpi_call UNION ALL "
			 "SELECT process_id, tid, 0, 0 FROM gpuprof_marker WHERE kind != 2) "
			 "GROUP BY process_id, tid ORDER BY " RANK_ORDER
		       : "SELECT DISTINCT process_id, tid, 0, 0 FROM gpuprof_marker WHERE kind != 2 "
			 "ORDER BY " RANK_ORDER, &threads))
		return -1;
	while (!o->failed && step(o, threads)) {
		size_t p = 0;
		while (p < o->process_count && o->processes[p].id != sqlite3_column_int64(threads, 0))
			p++;
		if (p == o->process_count)
			continue;
		struct process *proc = &o->processes[p];
		int64_t tid = sqlite3_column_int64(threads, 1);
		struct strbuf name = STRBUF_INIT;
		strbuf_addf(&name, "thread %lld", (long long)tid);
		uint64_t id = add_location(o, name.buf, OTF2_LOCATION_TYPE_CPU_THREAD, (uint32_t)p);
		strbuf_release(&name);
		int mpi = sqlite3_column_int(threads, 2);
		if (mpi && (proc->mpi_location == UINT64_MAX || sqlite3_column_int(threads, 3)))
			proc->mpi_location = id;
		write_thread(o, &o->locations[id], proc->id, tid, mpi);
	}
	sqlite3_finalize(threads);
	if (o->failed || prepare(o, "SELECT DISTINCT process_id, agent_index, queue_index FROM "
				    "gpuprof_kernel UNION SELECT DISTINCT process_id, CASE WHEN "
				    "dst_agent_index > 0 THEN dst_agent_index ELSE src_agent_index END, "
				    "queue_index FROM gpuprof_memory_copy ORDER BY 1, 2, 3", &queues))
		return -1;
	int64_t last_process = -1, last_agent = -1;
	uint32_t group = 0;
	while (!o->failed && step(o, queues)) {
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
			group = add_group(o, name.buf, OTF2_LOCATION_GROUP_TYPE_ACCELERATOR, (uint32_t)p,
					  host_node(o, o->processes[p].host));
			last_process = process_id;
			last_agent = agent;
			strbuf_reset(&name);
		}
		strbuf_addf(&name, "queue %lld", (long long)queue);
		uint64_t id = add_location(o, name.buf, OTF2_LOCATION_TYPE_ACCELERATOR_STREAM, group);
		strbuf_release(&name);
		write_queue(o, &o->locations[id], process_id, agent, queue);
	}
	sqlite3_finalize(queues);
	return o->failed ? -1 : 0;
}

/* ---- definitions ----------------------------------------------------------------------- */

static int write_definitions(struct otf2 *o)
{
	OTF2_GlobalDefWriter *d = OTF2_Archive_GetGlobalDefWriter(o->archive);
	if (!d)
		return error_set(o->err, "cannot write the OTF2 archive: no definition writer");
	uint32_t machine = name_id(&o->strings, "machine"), node = name_id(&o->strings, "node");
	uint32_t cluster = name_id(&o->strings, "gpuprof run");
	uint32_t world_locations = name_id(&o->strings, "");
	for (size_t i = 0; i < o->host_count; i++)
		name_id(&o->strings, o->hosts[i]);
	for (size_t i = 0; i < o->group_count; i++)
		name_id(&o->strings, o->groups[i].name);
	for (size_t i = 0; i < o->comm_count; i++)
		name_id(&o->strings, o->comms[i].name);
	OTF2_ErrorCode rc = OTF2_SUCCESS;
	for (size_t i = 0; rc == OTF2_SUCCESS && i < o->strings.count; i++)
		rc = OTF2_GlobalDefWriter_WriteString(d, (uint32_t)i, o->strings.texts[i]);
	if (!o->first)
		o->first = o->last = 0;
	if (rc == OTF2_SUCCESS) /* nanoseconds of the trace clock */
		rc = OTF2_GlobalDefWriter_WriteClockProperties(d, 1000000000, o->first,
							       o->last - o->first + 1,
							       OTF2_UNDEFINED_TIMESTAMP);
	if (rc == OTF2_SUCCESS)
		rc = OTF2_GlobalDefWriter_WriteSystemTreeNode(d, 0, cluster, machine,
							      OTF2_UNDEFINED_SYSTEM_TREE_NODE);
	for (size_t i = 0; rc == OTF2_SUCCESS && i < o->host_count; i++)
		rc = OTF2_GlobalDefWriter_WriteSystemTreeNode(d, (uint32_t)i + 1,
							      name_id(&o->strings, o->hosts[i]), node, 0);
	for (size_t i = 0; rc == OTF2_SUCCESS && i < o->group_count; i++)
		rc = OTF2_GlobalDefWriter_WriteLocationGroup(d, (uint32_t)i,
							     name_id(&o->strings, o->groups[i].name),
							     o->groups[i].type, o->groups[i].node,
							     o->groups[i].parent);
	for (size_t i = 0; rc == OTF2_SUCCESS && i < o->location_count; i++) {
		const struct location *l = &o->locations[i];
		rc = OTF2_GlobalDefWriter_WriteLocation(d, l->id, l->name, l->type, l->events,
							l->group);
	}
	for (size_t i = 0; rc == OTF2_SUCCESS && i < o->region_names.count; i++) {
		const struct region *r = &o->regions[i];
		rc = OTF2_GlobalDefWriter_WriteRegion(d, (uint32_t)i, r->name, r->name,
						      OTF2_UNDEFINED_STRING, r->role, r->paradigm,
						      OTF2_REGION_FLAG_NONE, OTF2_UNDEFINED_STRING, 0,
						      0);
	}
	if (o->world_size) {
		/* the world's ranks: each one's MPI location; every communicator a group of
		 * indices into it */
		uint64_t *ranks = xcalloc(o->world_size, sizeof(*ranks));
		for (size_t i = 0; i < o->world_size; i++)
			for (size_t p = 0; p < o->process_count; p++)
				if (o->processes[p].rank == o->world_ranks[i])
					ranks[i] = o->processes[p].mpi_location;
		if (rc == OTF2_SUCCESS)
			rc = OTF2_GlobalDefWriter_WriteGroup(d, 0, world_locations,
							     OTF2_GROUP_TYPE_COMM_LOCATIONS,
							     OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE,
							     (uint32_t)o->world_size, ranks);
		free(ranks);
		for (size_t i = 0; rc == OTF2_SUCCESS && i < o->comm_count; i++) {
			const struct comm *c = &o->comms[i];
			rc = OTF2_GlobalDefWriter_WriteGroup(d, (uint32_t)i + 1,
							     name_id(&o->strings, c->name),
							     OTF2_GROUP_TYPE_COMM_GROUP, OTF2_PARADIGM_MPI,
							     OTF2_GROUP_FLAG_NONE, c->size, c->members);
			if (rc == OTF2_SUCCESS)
				rc = OTF2_GlobalDefWriter_WriteComm(d, (uint32_t)i,
								    name_id(&o->strings, c->name),
								    (uint32_t)i + 1, i ? 0
								    : OTF2_UNDEFINED_COMM,
								    OTF2_COMM_FLAG_NONE);
		}
	}
	return otf2_failed(o, rc, "definitions");
}

static OTF2_FlushType pre_flush(void *data, OTF2_FileType type, OTF2_LocationRef location,
				void *caller, bool final)
{
	return OTF2_FLUSH;
}

static OTF2_TimeStamp post_flush(void *data, OTF2_FileType type, OTF2_LocationRef location)
{
	return 0;
}

int otf2_write(const char *db_path, const char *directory, struct strbuf *written,
	       struct error *err)
{
	struct otf2 o = { .err = err };
	struct stat st;
	if (stat(directory, &st) == 0)
		return error_set(err, "'%s' exists: an OTF2 archive is written into a new "
				 "directory (remove it, or choose another -o or -d)", directory);
	if (store_open(db_path, &o.db, err))
		return -1;
	int rc = load_processes(&o) || load_comms(&o);
	if (rc == 0) {
		o.archive = OTF2_Archive_Open(directory, "traces", OTF2_FILEMODE_WRITE, 1 << 20,
					      4 << 20, OTF2_SUBSTRATE_POSIX, OTF2_COMPRESSION_NONE);
		if (!o.archive)
			rc = error_set(err, "cannot create the OTF2 archive '%s/traces.otf2'",
				       directory);
	}
	static const OTF2_FlushCallbacks flush = { pre_flush, post_flush };
	if (rc == 0)
		rc = otf2_failed(&o, OTF2_Archive_SetFlushCallbacks(o.archive, &flush, NULL),
				 "flush") ||
		     otf2_failed(&o, OTF2_Archive_SetSerialCollectiveCallbacks(o.archive),
				 "collectives") ||
		     otf2_failed(&o, OTF2_Archive_SetCreator(o.archive, "gpuprof " GPUPROF_VERSION),
				 "creator") ||
		     otf2_failed(&o, OTF2_Archive_OpenEvtFiles(o.archive), "event files") ||
		     write_events(&o) ||
		     otf2_failed(&o, OTF2_Archive_CloseEvtFiles(o.archive), "event files") ||
		     write_definitions(&o);
	if (rc == 0 && !o.failed) {
		/* each location's local definitions: none, but OTF2's readers open them */
		rc = otf2_failed(&o, OTF2_Archive_OpenDefFiles(o.archive), "definition files");
		for (size_t i = 0; rc == 0 && i < o.location_count; i++) {
			OTF2_DefWriter *w = OTF2_Archive_GetDefWriter(o.archive, o.locations[i].id);
			rc = w ? otf2_failed(&o, OTF2_Archive_CloseDefWriter(o.archive, w), "close")
			       : error_set(err, "cannot write the OTF2 archive: no definition writer");
		}
		rc = rc || otf2_failed(&o, OTF2_Archive_CloseDefFiles(o.archive), "definition files");
	}
	if (o.archive && OTF2_Archive_Close(o.archive) != OTF2_SUCCESS && rc == 0)
		rc = error_set(err, "cannot write the OTF2 archive '%s'", directory);
	if (rc == 0 && !o.failed)
		strbuf_addf(written, "%s/traces.otf2\n", directory);
	sqlite3_close(o.db);
	names_release(&o.strings);
	names_release(&o.region_names);
	free(o.regions);
	for (size_t i = 0; i < o.process_count; i++)
		free(o.processes[i].host);
	free(o.processes);
	free(o.locations);
	for (size_t i = 0; i < o.group_count; i++)
		free(o.groups[i].name);
	free(o.groups);
	for (size_t i = 0; i < o.host_count; i++)
		free(o.hosts[i]);
	free(o.hosts);
	for (size_t i = 0; i < o.comm_count; i++) {
		free(o.comms[i].name);
		free(o.comms[i].members);
	}
	free(o.comms);
	free(o.world_ranks);
	return rc || o.failed ? -1 : 0;
}

#endif
