/* Output writers: each format is one file with one small ops table that sees only
 * vendor-neutral events, read from a database (export_database()) or from a spool read
 * into memory (export_recording()); both give the same events in the same order. */
#ifndef GPUPROF_WRITER_WRITER_H
#define GPUPROF_WRITER_WRITER_H

#include <sqlite3.h>
#include <stdint.h>

#include "core/recording.h"
#include "util/error.h"
#include "util/strbuf.h"

struct output_options {
	const char *prefix;   /* outputs are <prefix>_<name>.<ext> */
	int truncate_kernels; /* kernel names cut to their base name */
	int rename_kernels;   /* kernels named after their innermost marker range (spools) */
	int stats;            /* also the *_stats.csv files */
	const char *summary_units; /* for the summary writer: sec, msec, usec or nsec */
	/* a time window, in ns from each process's start: the timed events that end before
	 * from or begin after to are left out (to 0: no end); both 0 (as zeroed): all */
	int64_t window_from_ns, window_to_ns;
	void *context;        /* for writers that gather across exports (gpuprof summary) */
};

/* end - start, or 0 for an event that ends before it starts: never overflows, whatever a
 * corrupt input holds. */
static inline uint64_t duration_ns(int64_t start, int64_t end)
{
	return end > start ? (uint64_t)end - (uint64_t)start : 0;
}

enum event_kind { EVENT_PROCESS, EVENT_AGENT, EVENT_THREAD, EVENT_KERNEL, EVENT_MEMORY_COPY,
		  EVENT_MEMORY_ALLOCATION, EVENT_API_CALL, EVENT_MARKER, EVENT_METRIC,
		  EVENT_SAMPLE };

/* One hardware counter of a kernel. */
struct event_counter {
	const char *name;  /* the metric: "dram__bytes_read.sum" */
	double value;      /* NaN: the profiler gave no value */
};

/* One row of the store. The strings of timed events (kernels, copies, allocations, API
 * calls, markers) stay valid and unchanged until the export ends, so writers may key
 * tables on their addresses; those of processes, agents and threads are valid only
 * during the event() call. EVENT_THREAD names a thread (name) and comes before the
 * timed events. */
struct event {
	enum event_kind kind;
	int64_t process_id;       /* the store's process id: 1 unless databases were merged */
	int64_t pid;
	int64_t tid;
	int64_t start_ns, end_ns; /* trace clock */
	int64_t correlation_id;
	int linked;               /* API calls, kernels and copies: the call and the device
				   * work it enqueued are both in the output (a flow joins
				   * them); set by the export for timeline writers */
	const char *name;         /* kernel name, API function, agent name */
	union {
		struct {
			int64_t ppid, rank, size, realtime_start_ns;
			int64_t recording_start_ns; /* when recording began: start_ns is
						     * when the process did */
			const char *hostname, *command; /* the command is in name too */
		} process;
		struct {
			int64_t index, vendor_id, compute_units, max_clock_mhz;
			int64_t global_memory_bytes, local_memory_bytes, max_workgroup_size;
			int64_t max_workgroup[3];
			int64_t pci_domain, pci_bus, pci_device, pci_function;
			int64_t compute_major, compute_minor, warp_size, l2_cache_bytes;
			int64_t memory_bandwidth, device_index;
			const char *type_name, *vendor_name, *driver_version;
			const char *uuid; /* "" when unknown */
		} agent;
		struct {
			int64_t agent, queue, kernel_id, dispatch_id;
			int64_t grid[3], workgroup[3];
			int64_t local_memory_bytes, private_memory_bytes, status;
			int64_t registers, static_local_memory_bytes, dynamic_local_memory_bytes;
			int64_t stream, context, graph, graph_node;
			int64_t range_id; /* the innermost range open at launch (marker.range_id) */
			const struct event_counter *counters; /* its hardware counters, in the
						   * order recorded (gpuprof trace --pmc) */
			size_t counter_count;
		} kernel;
		struct {
			int64_t queue, stream, src_agent, dst_agent, bytes, status;
			const char *operation, *direction;
			const char *src_memory_kind, *dst_memory_kind;
		} copy;
		struct {
			int64_t agent, address, bytes, stream;
			const char *operation, *memory_kind;
		} allocation;
		struct {
			const char *domain;
			int64_t result;
			const char *call_stack; /* trace --launch-stacks: its launch's, from
						 * the root ("main;run;clEnqueue..."); or NULL */
		} api;
		struct {
			const char *category; /* MARKER_CORE_API, MARKER_CORE_RANGE_API */
			const char *domain;   /* the NVTX domain; "" for the default one */
			int64_t kind;         /* enum marker_kind */
			int64_t range_id, parent_id, end_tid;
			int ended;            /* 0: still open when recording ended */
		} marker;
		struct {                      /* one value of a series (gpuprof sys); name is the
					       * series' name, start_ns = end_ns its time */
			const char *source;   /* HOST, PROCESS, GPU */
			const char *unit;
			int64_t series, device, pid; /* device: CPU number, GPU index or -1 */
			double value;
		} metric;
		struct {                      /* a frame of a thread's sampled stacks, while it
					       * was on the stack (analysis/unwind.h); name is
					       * its function */
			const char *module;
			int64_t depth;        /* 0: the outermost */
		} sample;
	};
};

struct writer_ops {
	const char *format; /* the -f name */
	int (*begin)(void **state, const struct output_options *options, struct error *err);
	int (*event)(void *state, const struct event *event, struct error *err);
	/* Writes what remains, lists the files it wrote (one per line, appended to
	 * `written`) and frees the state. With `failed` set it only removes what it began
	 * to write and frees the state. */
	int (*end)(void *state, int failed, struct strbuf *written, struct error *err);
	int timeline; /* a timeline: reads event.linked and shows the sampled stacks, which
		       * the export works out only for such writers */
};

extern const struct writer_ops csv_writer;
extern const struct writer_ops json_writer;
extern const struct writer_ops pftrace_writer;
extern const struct writer_ops summary_writer;

/* Streams every event of db through the writers: its processes, then its agents, then
 * kernels, copies, allocations and API calls merged in start-time order (of equal
 * starts, in that order of kinds). Files written are listed in `written`. */
int export_database(sqlite3 *db, const struct writer_ops *const *writers, int count,
		    const struct output_options *options, struct strbuf *written,
		    struct error *err);

/* The same from a spool read into memory: the events the database built from it would
 * give, in the same order. */
int export_recording(const struct recording *rec, const struct writer_ops *const *writers,
		     int count, const struct output_options *options, struct strbuf *written,
		     struct error *err);

/* Kernel names without namespaces, template arguments and parameters
 * ("ns::k<int>(float*)" becomes "k"), as rocprofv3's --truncate-kernels. */
void writer_truncate_name(const char *name, struct strbuf *out);

/* "HOST", "PROCESS" or "GPU" for an enum metric_source. */
const char *writer_metric_source_name(int64_t source);

/* Appends what a metric series measures, whose it is first: "GPU 0 power", "process 42
 * CPU", "CPU 3 utilization" (one CPU of the machine), "machine memory used". */
void writer_metric_label(struct strbuf *out, const char *source, int64_t device, int64_t pid,
			 const char *name);

#endif
