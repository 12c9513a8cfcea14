/* What the findings' engine shares among its files: insight.c (the rules' passes),
 * insight-build.c (the run laid out in temporary files), insight-gaps.c (what the host
 * did while a device sat idle) and insight-engine.c (names, errors and statements, which
 * the other three use; each calls only down that list).
 *
 * The run is laid out once, in two files of fixed-size records: the top-level API calls
 * by process, thread and start, with the flags the rules read (a call's index is its
 * id); and the devices' work by process, device and start, each item with what it
 * needs of the call that enqueued it. Building them takes a few external sorts; every
 * pass after reads a range of one file in order. Memory holds a process's devices,
 * threads, queues and the names met, never the events. */
#ifndef GPUPROF_ANALYSIS_INSIGHT_INTERNAL_H
#define GPUPROF_ANALYSIS_INSIGHT_INTERNAL_H

#include "analysis/insight.h"
#include "util/extsort.h"

#define INSIGHT_NONE UINT64_MAX

/* A top-level API call. */
struct insight_call_record {
	int64_t tid, start, end, name_id;
	uint32_t process;             /* index in the engine's processes */
	uint8_t has_name, wait;       /* wait: it waits for the device (by its name) */
	uint8_t launch, blocking, waited;
};

/* A kernel or memory command. */
struct insight_item_record {
	int64_t agent, queue, name_id, start, end, tid, bytes, correlation_id;
	int64_t source_id;            /* its row in its table */
	double sm, memory;            /* speed-of-light counters; NAN: none */
	uint64_t call;                /* the top-level call's index; INSIGHT_NONE: none */
	int64_t call_tid, call_start, call_end;
	uint32_t process;
	int32_t direction, src_kind, dst_kind;
	uint8_t kind;                 /* enum insight_kind */
	uint8_t source;               /* 0: gpuprof_kernel, 1: gpuprof_memory_copy */
	uint8_t has_queue, has_name, launch, blocking, waited;
};

/* A thread's top-level calls: the indexes [first, end) of the calls' file. */
struct insight_thread {
	int64_t tid;
	uint64_t first, end;
};

struct insight_extra {
	uint64_t first_call, end_call; /* the process's calls */
	struct insight_thread *threads; /* by tid */
	size_t thread_count;
	uint64_t *device_first, *device_end; /* beside its devices: their items */
};

struct insight_names {
	char **slots;
	size_t size, used;
};

/* Names by their id in gpuprof_string. */
struct insight_ids {
	struct insight_id {
		int64_t id;
		const char *name;         /* NULL: an empty slot */
	} *slots;
	size_t size, used;
};

struct insight_engine {
	sqlite3 *db;
	const char *path;
	struct error *err;
	int failed;                   /* err is set; every later step does nothing */
	size_t memory;                /* bytes each external sort may hold */
	struct insight_process *processes;
	struct insight_extra *extra;  /* beside processes */
	size_t process_count;
	struct insight_names names;
	struct insight_ids ids;
	sqlite3_stmt *string;         /* a name by its id */
	struct tempfile calls, items;
};

/* One copy of each name for the engine's life (NULL reads as ""). */
const char *insight_intern(struct insight_engine *e, const unsigned char *text);

/* The name of a gpuprof_string id ("" for none or an unknown id). */
const char *insight_name(struct insight_engine *e, int has_name, int64_t id);

/* A failed SQLite call: err set from the database's message, once. */
void insight_fail(struct insight_engine *e);

/* A statement, or NULL after an error (set). */
sqlite3_stmt *insight_prepare(struct insight_engine *e, const char *sql);

/* The run read from the database into the engine: processes, devices, threads, and
 * the two files. Errors leave e->failed set. */
void insight_build(struct insight_engine *e);

/* A device's work in order of start, its busy intervals merged; its busy_ns and idle_ns
 * set at the end. */
void insight_stream_device(struct insight_engine *e, const struct insight_process *p,
			   const struct insight_device *d, insight_item_fn item,
			   insight_busy_fn busy, void *arg);

#endif
