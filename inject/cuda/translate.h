/* Translation of CUPTI activity records into gpuprof records.
 *
 * Everything that touches a CUPTI record's layout is here, behind a small ops table, so
 * that the translation is tested on records built in the test (tests/unit/test-cupti.c)
 * on machines without a GPU. The layouts are those of the CUPTI headers this file is
 * compiled with (CUDA 13.0: Kernel10, Memcpy6, MemcpyPtoP4, Memset4, Memory4, API,
 * Synchronization2, Overhead3, Device5); cuda.c refuses a CUPTI of another major
 * version at run time. */
#ifndef GPUPROF_INJECT_CUDA_TRANSLATE_H
#define GPUPROF_INJECT_CUDA_TRANSLATE_H

#include <cupti_activity.h>
#include <cupti_pcsampling.h>
#include <stdint.h>

#include "core/record.h"

/* Where translated records go: the recorder in the injected library, a capture in the
 * tests. */
struct translate_ops {
	uint32_t (*intern)(void *ctx, const char *text);
	/* 0 when emitted, -1 when the buffer is full (the caller retries the same record
	 * later), -2 when the record was dropped (and counted) for another reason. */
	int (*emit)(void *ctx, const void *record);
	void (*emit_metadata)(void *ctx, const void *record);
	void (*count_dropped)(void *ctx, uint32_t reason, uint64_t records);
	uint32_t (*new_agent_id)(void *ctx);
	uint32_t (*new_queue_id)(void *ctx);
	/* CUPTI's name of API function cbid in CUPTI_CB_DOMAIN_RUNTIME_API or
	 * CUPTI_CB_DOMAIN_DRIVER_API ("cudaLaunchKernel_v7000"), or NULL. */
	const char *(*api_name)(void *ctx, uint32_t cupti_domain, uint32_t cbid);
	/* Fills what CUPTI does not say about a device (PCI location, driver version)
	 * from the system; may leave the agent as it is. */
	void (*describe_device)(void *ctx, struct record_agent *agent);
	/* Whether collection was on at a trace-clock time (pause/resume, collection
	 * periods); work that began while it was off is not emitted. NULL: always on. */
	int (*collected_at)(void *ctx, uint64_t ns);
	/* Whether collection was on when the call of correlation_id launched its work
	 * (kernels and copies are kept by that, where it is known, rather than by the time
	 * they began on the device: those launched inside a capture range run after its
	 * end): 1 on, 0 off, -1 not known. NULL: never known. */
	int (*launch_collected)(void *ctx, uint64_t correlation_id);
	/* The source line of an instruction of function (its mangled name) in the module
	 * of that CRC: *file_id (a string id) and *line; 0 when the module has no line
	 * information or is not known. NULL: never known. */
	void (*source_line)(void *ctx, uint64_t cubin_crc, const char *function,
			    uint64_t pc_offset, uint32_t *file_id, uint32_t *line);
	/* For a kernel CUPTI gives no times (one measured under kernel replay): the
	 * trace-clock times its launch call began and returned, 1, once per correlation id;
	 * 0 when none is known. NULL: never known. */
	int (*launch_window)(void *ctx, uint64_t correlation_id, uint64_t *start_ns,
			     uint64_t *end_ns);
	void *ctx;
};

#define TRANSLATE_MAX_DEVICES 64

struct translate_device {
	uint32_t cuda_id;  /* CUPTI's device id */
	uint32_t agent_id; /* gpuprof's */
};

struct translate_queue {
	uint32_t context_id, stream_id, queue_id;
};

struct translate_name {
	char *mangled;
	uint32_t id;
};

struct translator {
	struct translate_ops ops;
	int64_t clock_offset_ns; /* trace clock = CUPTI timestamp + offset */
	int keep_mangled;        /* kernel names as the compiler wrote them */
	int counted;             /* counters are collected (--pmc): a graph's kernels, which
				  * are not measured, are counted without them */
	int graph_spans;         /* --cuda-graph-trace graph: a graph launch is one span (a
				  * kernel named "[CUDA graph N]"), its kernels not kept */
	uint64_t dispatches;     /* kernels emitted so far: the next dispatch id - 1 */
	struct translate_device devices[TRANSLATE_MAX_DEVICES];
	int device_count;
	struct translate_queue *queues; /* open addressing on (context, stream) */
	size_t queue_capacity, queue_count;
	struct translate_name *names;   /* open addressing on the mangled name */
	size_t name_capacity, name_count;
	uint32_t *api_names[2];         /* string ids by cbid: runtime, driver */
	uint32_t api_name_count[2];
};

void translator_init(struct translator *t, const struct translate_ops *ops);
void translator_release(struct translator *t);

/* Translates one activity record. Returns 0 when the record is done with (emitted,
 * counted as dropped, or of a kind gpuprof does not keep) and -1 when the recorder's
 * buffer is full: the caller drains and calls again with the same record, which is then
 * translated as if for the first time (nothing is counted twice). */
int translator_record(struct translator *t, CUpti_Activity *record);

/* Emits the counters of the kernel launched by the API call of correlation_id on CUPTI's
 * device cuda_device: values[i] is the value of metric names[i] (NaN: none). Starts at
 * *done and advances it; returns -1 when the recorder's buffer filled first (call again
 * with the same *done), 0 when all are emitted. */
int translator_counters(struct translator *t, uint64_t correlation_id, uint32_t cuda_device,
			const char *const *names, const double *values, size_t count,
			size_t *done);

/* The stall reasons of a device (cuptiPCSamplingGetStallReasons): CUPTI's index and
 * name of each. */
struct translate_stall_reasons {
	size_t count;
	const uint32_t *index;
	char *const *name;
};

/* How far the translation of one buffer of PC sampling data has come. */
struct translate_pc_cursor {
	size_t pc, reason; /* the next instruction and stall reason to emit */
	int totals_done;   /* the buffer's totals are emitted */
};

/* Emits a buffer of PC sampling data (CUpti_PCSamplingData, parsed format) of CUPTI's
 * device cuda_device, sampled every 2^period_log2 cycles: its totals, then one
 * RECORD_PC_SAMPLE per instruction and stall reason that has samples. Starts at *cursor
 * (zeroed for a new buffer) and advances it; returns -1 when the recorder's buffer filled
 * first (call again with the same cursor), 0 when the buffer is done with. */
int translator_pc_samples(struct translator *t, const CUpti_PCSamplingData *data,
			  uint32_t cuda_device, uint32_t period_log2,
			  const struct translate_stall_reasons *reasons,
			  struct translate_pc_cursor *cursor);

/* CUPTI's sampling period for a time in microseconds at a clock in kHz: the power of
 * two nearest to that many cycles (in log2), within the 5..31 CUPTI accepts. */
uint32_t translator_pc_period(double microseconds, int clock_khz);

/* A CUPTI timestamp in the trace clock; 0 stays 0 (not collected). */
uint64_t translator_time(const struct translator *t, uint64_t cupti_ns);

/* The demangled form of a C++ symbol, malloc()ed, or NULL when it is not mangled. */
char *translator_demangle(const char *mangled);

/* "cudaLaunchKernel_v7000" -> "cudaLaunchKernel": the function's documented name,
 * without the ABI version suffix CUPTI adds. Writes at most size bytes. */
void translator_api_base_name(const char *name, char *out, size_t size);

#endif
