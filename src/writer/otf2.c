/* A database as an OTF2 archive (see otf2.h): read a location at a time, so that memory
 * holds the definitions (names, locations, communicators) and never the events. */
#include "writer/otf2.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

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

#include "writer/otf2-archive.h"

uint32_t otf2_name_id(struct names *n, const char *text)
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

uint32_t otf2_region(struct otf2 *o, const char *name, OTF2_Paradigm paradigm,
		     OTF2_RegionRole role)
{
	struct strbuf key = STRBUF_INIT;
	strbuf_addf(&key, "%d/%d/%s", (int)paradigm, (int)role, name);
	uint32_t id = otf2_name_id(&o->region_names, key.buf);
	strbuf_release(&key);
	if (id == o->region_names.count - 1) { /* new */
		o->regions = xrealloc(o->regions, o->region_names.count * sizeof(*o->regions));
		o->regions[id] = (struct region){ otf2_name_id(&o->strings, name), paradigm, role };
	}
	return id;
}

int otf2_failed(struct otf2 *o, OTF2_ErrorCode rc, const char *what)
{
	if (rc == OTF2_SUCCESS)
		return 0;
	if (!o->failed)
		error_set(o->err, "cannot write the OTF2 archive (%s): %s", what,
			  OTF2_Error_GetDescription(rc));
	o->failed = 1;
	return -1;
}

void otf2_seen_time(struct otf2 *o, uint64_t t)
{
	if (!o->first || t < o->first)
		o->first = t;
	if (t > o->last)
		o->last = t;
}

/* The world's index of a world rank; UINT32_MAX for none. */
uint32_t otf2_world_index(const struct otf2 *o, int64_t rank)
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

/* ---- reading ------------------------------------------------------------------------- */

int otf2_prepare(struct otf2 *o, const char *sql, sqlite3_stmt **s)
{
	if (store_prepare(o->db, sql, s, o->err)) {
		o->failed = 1;
		return -1;
	}
	return 0;
}

int otf2_step(struct otf2 *o, sqlite3_stmt *s)
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

const char *otf2_text(sqlite3_stmt *s, int column)
{
	const char *t = (const char *)sqlite3_column_text(s, column);
	return t ? t : "";
}

uint32_t otf2_host_node(struct otf2 *o, const char *host)
{
	for (size_t i = 0; i < o->host_count; i++)
		if (!strcmp(o->hosts[i], host))
			return (uint32_t)i + 1; /* node 0 is the machine */
	o->hosts = xrealloc(o->hosts, (o->host_count + 1) * sizeof(*o->hosts));
	o->hosts[o->host_count++] = xstrdup(host);
	return (uint32_t)o->host_count;
}

uint32_t otf2_add_group(struct otf2 *o, const char *name, OTF2_LocationGroupType type,
			uint32_t parent, uint32_t node)
{
	o->groups = xrealloc(o->groups, (o->group_count + 1) * sizeof(*o->groups));
	o->groups[o->group_count].name = xstrdup(name);
	o->groups[o->group_count].type = type;
	o->groups[o->group_count].parent = parent;
	o->groups[o->group_count].node = node;
	return (uint32_t)o->group_count++;
}

uint64_t otf2_add_location(struct otf2 *o, const char *name, OTF2_LocationType type,
			   uint32_t group)
{
	o->locations = xrealloc(o->locations, (o->location_count + 1) * sizeof(*o->locations));
	struct location *l = &o->locations[o->location_count];
	*l = (struct location){ o->location_count, otf2_name_id(&o->strings, name), group, type, 0 };
	return o->location_count++;
}

/* The processes (ordered by rank), their groups, and the world's ranks. */
static int load_processes(struct otf2 *o)
{
	sqlite3_stmt *s;
	if (otf2_prepare(o, "SELECT id, pid, COALESCE(rank, -1), hostname FROM gpuprof_process "
		       "ORDER BY rank < 0, rank, id", &s))
		return -1;
	while (otf2_step(o, s)) {
		o->processes = xrealloc(o->processes, (o->process_count + 1) *
					sizeof(*o->processes));
		struct process *p = &o->processes[o->process_count++];
		p->id = sqlite3_column_int64(s, 0);
		p->pid = sqlite3_column_int64(s, 1);
		p->rank = sqlite3_column_int64(s, 2);
		p->host = xstrdup(otf2_text(s, 3));
		p->mpi_location = UINT64_MAX;
		struct strbuf name = STRBUF_INIT;
		if (p->rank >= 0)
			strbuf_addf(&name, "rank %lld (pid %lld)", (long long)p->rank, (long long)p->pid);
		else
			strbuf_addf(&name, "pid %lld", (long long)p->pid);
		otf2_add_group(o, name.buf, OTF2_LOCATION_GROUP_TYPE_PROCESS, OTF2_UNDEFINED_LOCATION_GROUP,
			       otf2_host_node(o, p->host));
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
	if (otf2_prepare(o, "SELECT DISTINCT p.rank FROM gpuprof_mpi_call c JOIN gpuprof_process p ON "
		       "p.id = c.process_id WHERE p.rank >= 0 ORDER BY p.rank", &s))
		return -1;
	while (otf2_step(o, s)) {
		o->world_ranks = xrealloc(o->world_ranks, (o->world_size + 1) * sizeof(int64_t));
		o->world_ranks[o->world_size++] = sqlite3_column_int64(s, 0);
	}
	sqlite3_finalize(s);
	o->comms[0].size = (uint32_t)o->world_size;
	o->comms[0].members = xcalloc(o->world_size ? o->world_size : 1, sizeof(uint64_t));
	for (size_t i = 0; i < o->world_size; i++)
		o->comms[0].members[i] = i;
	if (otf2_prepare(o, "SELECT m.string, p.rank FROM gpuprof_mpi_call c JOIN gpuprof_process p ON "
		       "p.id = c.process_id JOIN gpuprof_string m ON m.id = c.communicator_id "
		       "WHERE m.string != 'MPI_COMM_WORLD' AND p.rank >= 0 GROUP BY m.string, "
		       "p.rank ORDER BY m.string, p.rank", &s))
		return -1;
	while (otf2_step(o, s)) {
		const char *name = otf2_text(s, 0);
		struct comm *c = &o->comms[o->comm_count - 1];
		if (strcmp(c->name, name)) {
			o->comms = xrealloc(o->comms, (o->comm_count + 1) * sizeof(*o->comms));
			c = &o->comms[o->comm_count++];
			memset(c, 0, sizeof(*c));
			c->name = xstrdup(name);
		}
		uint32_t index = otf2_world_index(o, sqlite3_column_int64(s, 1));
		if (index == OTF2_UNDEFINED_UINT32)
			continue;
		c->members = xrealloc(c->members, (c->size + 1) * sizeof(*c->members));
		c->members[c->size++] = index;
	}
	sqlite3_finalize(s);
	return o->failed ? -1 : 0;
}

/* ---- definitions ----------------------------------------------------------------------- */

static int write_definitions(struct otf2 *o)
{
	OTF2_GlobalDefWriter *d = OTF2_Archive_GetGlobalDefWriter(o->archive);
	if (!d)
		return error_set(o->err, "cannot write the OTF2 archive: no definition writer");
	uint32_t machine = otf2_name_id(&o->strings, "machine"), node = otf2_name_id(&o->strings, "node");
	uint32_t cluster = otf2_name_id(&o->strings, "gpuprof run");
	uint32_t world_locations = otf2_name_id(&o->strings, "");
	for (size_t i = 0; i < o->host_count; i++)
		otf2_name_id(&o->strings, o->hosts[i]);
	for (size_t i = 0; i < o->group_count; i++)
		otf2_name_id(&o->strings, o->groups[i].name);
	for (size_t i = 0; i < o->comm_count; i++)
		otf2_name_id(&o->strings, o->comms[i].name);
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
							      otf2_name_id(&o->strings, o->hosts[i]), node, 0);
	for (size_t i = 0; rc == OTF2_SUCCESS && i < o->group_count; i++)
		rc = OTF2_GlobalDefWriter_WriteLocationGroup(d, (uint32_t)i,
							     otf2_name_id(&o->strings, o->groups[i].name),
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
							     otf2_name_id(&o->strings, c->name),
							     OTF2_GROUP_TYPE_COMM_GROUP, OTF2_PARADIGM_MPI,
							     OTF2_GROUP_FLAG_NONE, c->size, c->members);
			if (rc == OTF2_SUCCESS)
				rc = OTF2_GlobalDefWriter_WriteComm(d, (uint32_t)i,
								    otf2_name_id(&o->strings, c->name),
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
		     otf2_write_events(&o) ||
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
