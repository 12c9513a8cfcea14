/* What the two halves of the OTF2 writer share (otf2.c: the definitions and the
 * archive; otf2-events.c: each location's events): the archive being written and the
 * definitions it collects while the events are written. Built with OTF2 only. */
#ifndef GPUPROF_WRITER_OTF2_ARCHIVE_H
#define GPUPROF_WRITER_OTF2_ARCHIVE_H

#include <otf2/otf2.h>
#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

#include "util/error.h"

/* Definitions: strings and regions interned, by name. */
struct names {
	char **texts;
	uint32_t *slots;          /* open addressing: index + 1 into texts; 0 free */
	size_t count, capacity;
};

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

/* A name's id in n, added when new. */
uint32_t otf2_name_id(struct names *n, const char *text);
/* A region's id by its name, paradigm and role, defined when new. */
uint32_t otf2_region(struct otf2 *o, const char *name, OTF2_Paradigm paradigm,
		     OTF2_RegionRole role);
/* 0 when rc is OTF2's success; otherwise the archive failed (the first failure is the
 * one err tells): -1. */
int otf2_failed(struct otf2 *o, OTF2_ErrorCode rc, const char *what);
/* Widens the events' span to t. */
void otf2_seen_time(struct otf2 *o, uint64_t t);
/* The world's index of a world rank; OTF2_UNDEFINED_UINT32 for none. */
uint32_t otf2_world_index(const struct otf2 *o, int64_t rank);
/* A statement on the database (0; -1 with the archive failed), a step of it (1 for a
 * row; 0 at the end or on a failure, which fails the archive), a column's text ("" for
 * NULL). */
int otf2_prepare(struct otf2 *o, const char *sql, sqlite3_stmt **s);
int otf2_step(struct otf2 *o, sqlite3_stmt *s);
const char *otf2_text(sqlite3_stmt *s, int column);
/* A host's system tree node; a new location group (its index) and location (its id). */
uint32_t otf2_host_node(struct otf2 *o, const char *host);
uint32_t otf2_add_group(struct otf2 *o, const char *name, OTF2_LocationGroupType type,
			uint32_t parent, uint32_t node);
uint64_t otf2_add_location(struct otf2 *o, const char *name, OTF2_LocationType type,
			   uint32_t group);

/* Every location's events, a location at a time (otf2-events.c): its threads' MPI calls
 * and marker ranges, its queues' kernels and copies. 0, or -1 with the archive failed. */
int otf2_write_events(struct otf2 *o);

#endif
