/* A spool read into memory for post-processing: the file stays mapped, records are
 * validated once, names and agents are indexed by id, and kernels, transfers and API
 * calls are sorted by start time (of equal starts, the longer first). Both the database and the writers are fed from it,
 * so they see the same rows in the same order. */
#ifndef GPUPROF_CORE_RECORDING_H
#define GPUPROF_CORE_RECORDING_H

#include <stddef.h>
#include <stdint.h>

#include "core/record.h"
#include "core/spool.h"
#include "util/error.h"

/* What a spool held, for the user's summary line. */
struct recording_stats {
	uint64_t records[RECORD_TYPE_COUNT]; /* by record type */
	uint64_t unknown_records;            /* types this version does not know, skipped */
	uint64_t dropped_records;            /* lost while recording (RECORD_DROPPED) */
	uint64_t truncated_bytes;            /* an incomplete last chunk, ignored */
	int clean_exit;                      /* the process ended with a final flush */
};

/* A marker range or mark, its start and end records joined. */
struct recording_marker {
	uint64_t id, parent_id;  /* as recorded (record_marker) */
	uint64_t start_ns, end_ns;
	uint32_t tid, end_tid;   /* the threads that began and ended it */
	uint32_t kind;           /* enum marker_kind */
	uint32_t domain_id;      /* string id; 0 for the default domain */
	uint32_t name_id;        /* string id: marker texts are interned when read */
	uint32_t module_id;      /* string id of its module path ("Net.fc1"); 0: none */
	int ended;               /* 0: still open when recording ended, which ends it */
};

/* A list of records: pointers into the spool's mapping. Past RECORD_LIST_IN_MEMORY
 * bytes its pointers move to a shared mapping of an unnamed temporary file (its pages
 * are the kernel's to write out), so that a run of any length holds little memory. */
struct record_list {
	const struct record_header **items;
	size_t count, alloc;
	int fd;                       /* the temporary file, when mapped */
	unsigned mapped : 1;
};

#define RECORD_LIST_IN_MEMORY (8 << 20)

/* A zeroed block of memory that grows with a run (the markers, their indexes): past
 * RECORD_LIST_IN_MEMORY bytes, a shared mapping of an unnamed temporary file. */
struct record_block {
	void *data;
	size_t bytes;
	unsigned mapped : 1;
};

/* bytes of zeroes (no failure: memory is the fallback of a file); NULL for none. */
void *record_block_alloc(struct record_block *b, size_t bytes);
void record_block_free(struct record_block *b);

/* A record at the end (no failure: memory is the fallback of a file). */
void record_list_add(struct record_list *list, const struct record_header *h);
void record_list_release(struct record_list *list);

struct sample_stacks;

struct recording {
	struct spool_reader reader;            /* keeps the records mapped */
	const struct record_process *process;  /* the first RECORD_PROCESS */
	uint64_t end_ns;                       /* from RECORD_PROCESS_END, else the last end seen */
	struct record_list strings;            /* by id; of equal ids the last written wins */
	char **texts;                          /* NUL-terminated copies, as strings.items */
	struct record_list agents;             /* by id, likewise */
	struct record_list queues;             /* by id, likewise */
	struct record_list api_calls;          /* by start time, then file order */
	struct record_list kernels;            /* likewise */
	struct record_list copies;             /* likewise */
	struct record_list allocations;        /* likewise */
	struct record_list synchronizations;   /* likewise */
	struct record_list overheads;          /* likewise */
	struct record_list mpi_calls;          /* likewise (--mpi-trace) */
	struct record_list mpi_completions;    /* as written */
	struct record_list clock_syncs;        /* as written: at MPI_Init, at MPI_Finalize */
	struct recording_marker *markers;      /* by start time (of equal starts the longer first) */
	size_t marker_count;
	struct recording_marker **markers_by_id;
	struct record_block markers_block, markers_by_id_block; /* what those two hold */
	struct {                               /* ranges of kernels whose record has none */
		const struct record_header **kernels; /* open addressing by address */
		uint64_t *ranges;
		size_t slots;
		struct record_block kernels_block, ranges_block;
	} attributed;
	struct record_list owned;              /* records made while reading (marker texts) */
	struct record_list thread_names;       /* by tid; of equal tids the last written wins */
	struct record_list metric_series;      /* by id (gpuprof sys) */
	struct record_list metrics;            /* by time, then file order */
	struct record_list samples;            /* call-stack samples, by time */
	struct record_list samples_lost;       /* samples the kernel lost, as written */
	struct record_list launch_stacks;      /* launches' call stacks, as written */
	struct record_list modules;            /* ELF files mapped, as written */
	struct record_list python_stacks;      /* Python functions at sampling ticks */
	struct record_list python_codes;       /* where their code objects lie */
	struct record_list symbols;            /* code made at run time, from the perf map */
	struct record_list counters;           /* hardware counters, by the kernel's correlation
						  id, then file order */
	struct record_list pc_samples;         /* device instructions' PC samples, as written */
	struct record_list pc_sampling;        /* devices' PC sampling totals, as written */
	const struct sample_stacks *stacks;    /* the samples unwound (core/stacks.h), set
						  by the caller; NULL when not */
	struct record_list calls_by_correlation; /* API calls by correlation id, then domain;
						    built when device records need them */
	struct record_list launches;           /* launch points and launch stacks, by
						  correlation id then file order */
	struct record_list graph_captures;     /* those of CUDA graph nodes made (domain
						  DOMAIN_CUDA_GRAPH_NODE), by node id */
	struct record_list graph_clones;       /* graph nodes copied, by the copy's id */
	struct record_list communication_calls; /* NCCL's calls, by thread then start */
	int rename_kernels;                    /* kernels take the name of their range (set by
						  the caller before reading names) */
	uint64_t dropped[DROPPED_REASON_COUNT][2];                /* by enum dropped_reason: records, bytes */
	struct recording_stats stats;
};

/* Reads and checks a whole spool. A spool without a process record is refused. */
int recording_read(struct recording *rec, const char *spool_path, struct error *err);
/* Whether the process recorded nothing of its own: no API call, kernel, copy, allocation,
 * synchronization, MPI call, marker, call-stack sample or counter, and none dropped (what gpuprof
 * adds, the process and its metrics, does not count). */
int recording_empty(const struct recording *rec);

void recording_release(struct recording *rec);

/* The metric series of that id, NULL when there is none. */
const struct record_metric_series *recording_metric_series(const struct recording *rec,
							   uint32_t id);

/* The thread and time of the launch with that correlation id, from its launch point or
 * launch stack (the first recorded), and its function's name: 1, or 0 when none was
 * recorded. */
int recording_launch(const struct recording *rec, uint64_t correlation_id, uint32_t *tid,
		     uint64_t *ns, uint32_t *function_id);

/* Where the CUDA graph node of a kernel (its graph_node_id) was made: the thread, time and
 * function of its capture point or stack, that of the node it was copied from for an
 * instantiated graph's: 1, or 0 when none was recorded. */
int recording_graph_capture(const struct recording *rec, uint64_t node_id, uint32_t *tid,
			    uint64_t *ns, uint32_t *function_id);

/* The thread and function of the API call that enqueued device work (kernel, copy,
 * allocation, synchronization), for backends whose device records leave them out (tid
 * 0): CUPTI gives only the correlation id. Of several calls with that id, the one of the
 * lowest domain (the runtime API before the driver API) is taken; without API calls,
 * the launch's own record (RECORD_LAUNCH, or its launch stack). Fields are left as
 * they are when nothing matches or when the record names its own thread. */
void recording_enqueuer(const struct recording *rec, uint64_t correlation_id, uint32_t *tid,
			uint32_t *function_id);

/* The innermost push/pop range open on the launching thread when a kernel was launched:
 * the one it recorded (OpenCL), else the one open on the thread of its launching API
 * call when that call began (CUDA, when API calls were traced); 0 when none. */
uint64_t recording_kernel_range(const struct recording *rec, const struct record_kernel *k);

/* The communication call (NCCL's: record_mpi_call.call_id) a kernel was launched in: the
 * call open on the thread of its launching API call or launch point when that began
 * (ncclGroupEnd's for a group's collectives, which NCCL launches there); 0 when none, or
 * for a CUDA graph's kernel (launched by the graph's launch, whatever captured it). */
uint64_t recording_kernel_call(const struct recording *rec, const struct record_kernel *k);

/* The name (string id) a kernel is shown with: its own, or with rename_kernels the
 * name of the innermost range open on its thread when it was launched. */
uint32_t recording_kernel_name(const struct recording *rec, const struct record_kernel *k);

/* A device record with what the recording resolves for it, once: the thread (and for a
 * copy the function) of the call that enqueued it (recording_enqueuer()), and for a
 * kernel the name it is shown with (recording_kernel_name()) and its marker range
 * (recording_kernel_range()). The store writes these, and the export of a spool gives
 * them (core/record-fields.h). */
struct resolved_kernel {
	const struct record_kernel *r;
	uint32_t tid, name_id;
	uint64_t range_id;
	uint64_t call_id;     /* recording_kernel_call() */
};
struct resolved_copy {
	const struct record_memory_copy *r;
	uint32_t tid, function_id;
};
struct resolved_allocation {
	const struct record_memory_allocation *r;
	uint32_t tid;
};
void recording_resolve_kernel(const struct recording *rec, const struct record_kernel *r,
			      struct resolved_kernel *k);
void recording_resolve_copy(const struct recording *rec, const struct record_memory_copy *r,
			    struct resolved_copy *k);
void recording_resolve_allocation(const struct recording *rec,
				  const struct record_memory_allocation *r,
				  struct resolved_allocation *k);

/* Drops the kernels the filter does not keep (kernel-filter.h), and their counters:
 * iterations count each kernel name's dispatches in launch order (dispatch id). Returns
 * how many kernels were dropped. */
struct kernel_filter;
size_t recording_filter_kernels(struct recording *rec, const struct kernel_filter *filter);

/* The counters of the kernel of that correlation id: how many, *first the first. */
size_t recording_counters(const struct recording *rec, uint64_t correlation_id,
			  const struct record_counter *const **first);

/* The marker of a recorded id, or NULL. */
const struct recording_marker *recording_marker(const struct recording *rec, uint64_t id);

/* The API call with that correlation id (of several, the lowest domain's: the runtime
 * API before the driver API), or NULL. Needs calls_by_correlation. */
const struct record_api_call *recording_call(const struct recording *rec, uint64_t correlation_id);

/* The text of a string id, or "" when the spool does not define it. */
const char *recording_string(const struct recording *rec, uint32_t id);

#endif
