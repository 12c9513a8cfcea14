/* The vendor-neutral event: one row of a recording as the writers and the analyses
 * read it, whether it comes from a database (writer/export.c) or from a spool read into
 * memory (writer/export-recording.c). Below both, so that analyses that take events
 * (analysis/domain-stats.h) need no writer. */
#ifndef GPUPROF_CORE_EVENT_H
#define GPUPROF_CORE_EVENT_H

#include <stddef.h>
#include <stdint.h>

/* end - start, or 0 for an event that ends before it starts: never overflows, whatever a
 * corrupt input holds. */
static inline uint64_t duration_ns(int64_t start, int64_t end)
{
	return end > start ? (uint64_t)end - (uint64_t)start : 0;
}

enum event_kind { EVENT_PROCESS, EVENT_AGENT, EVENT_THREAD, EVENT_KERNEL, EVENT_MEMORY_COPY,
		  EVENT_MEMORY_ALLOCATION, EVENT_API_CALL, EVENT_MARKER, EVENT_METRIC,
		  EVENT_SAMPLE };

/* The message flows one MPI call carries at most (a wait that completes more receives
 * draws the first ones). */
#define EVENT_MESSAGE_FLOWS 32

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
			int64_t call_id;  /* the NCCL call it was launched in (mpi.call_id); 0 */
			const struct event_counter *counters; /* its hardware counters, in the
						   * order recorded (gpuprof trace --pmc) */
			size_t counter_count;
		} kernel;
		struct {
			int64_t queue, stream, context, src_agent, dst_agent, bytes, status;
			const char *operation, *direction;
			const char *src_memory_kind, *dst_memory_kind;
		} copy;
		struct {
			int64_t agent, address, bytes, stream, context;
			const char *operation, *memory_kind;
		} allocation;
		struct {
			const char *domain;
			int64_t result;
			const char *call_stack; /* trace --launch-stacks: its launch's, from
						 * the root ("main;run;clEnqueue..."); or NULL */
			/* an MPI call (domain MPI_API, --mpi-trace): as record_mpi_call says,
			 * a nonblocking call's peer, tag and bytes received its completion's */
			int mpi;
			const char *communicator; /* "" when the call names none */
			int64_t communicator_size, peer, tag, root, bytes_sent, bytes_received;
			int64_t sequence, request, completed_ns; /* completed: 0 when not */
			/* the flows of its messages (a merged run's timeline), each from its
			 * send to the call where its receive ended (a wait ends several);
			 * message_end: they end here */
			int64_t message_flows[EVENT_MESSAGE_FLOWS];
			int message_flow_count, message_end;
		} api;
		struct {
			const char *category; /* MARKER_CORE_API, MARKER_CORE_RANGE_API */
			const char *domain;   /* the NVTX domain; "" for the default one */
			const char *module;   /* its module path ("Net.fc1"); "" when none */
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

#endif
