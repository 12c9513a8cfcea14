/* Names and size checks for the record model (see record.h). */
#include "core/record.h"

#include <stddef.h>
#include <string.h>

/* The layouts are the spool format (docs/FORMAT.md): no implicit padding anywhere. */
_Static_assert(sizeof(struct record_agent) == 136, "record_agent layout");
_Static_assert(sizeof(struct record_kernel) == 144, "record_kernel layout");
_Static_assert(sizeof(struct record_marker) == 48, "record_marker layout");
_Static_assert(sizeof(struct record_marker_end) == 32, "record_marker_end layout");
_Static_assert(sizeof(struct record_memory_copy) == 88, "record_memory_copy layout");
_Static_assert(sizeof(struct record_memory_allocation) == 72, "allocation layout");
_Static_assert(sizeof(struct record_synchronization) == 56, "synchronization layout");
_Static_assert(sizeof(struct record_overhead) == 40, "record_overhead layout");
_Static_assert(sizeof(struct record_pc_sample) == 56, "record_pc_sample layout");
_Static_assert(sizeof(struct record_pc_sampling) == 48, "record_pc_sampling layout");
_Static_assert(sizeof(struct record_launch_delta) == 48, "record_launch_delta layout");
_Static_assert(sizeof(struct record_mpi_call) == 104, "record_mpi_call layout");
_Static_assert(sizeof(struct record_mpi_completion) == 48, "record_mpi_completion layout");
_Static_assert(sizeof(struct record_clock_sync) == 40, "record_clock_sync layout");

size_t record_text_copy(char *dst, const char *text, size_t room)
{
	size_t length = strnlen(text, room + 1);
	if (length <= room) {
		memcpy(dst, text, length);
		return length;
	}
	length = room - 3;
	while (length && ((unsigned char)text[length] & 0xc0) == 0x80)
		length--; /* not inside a UTF-8 sequence */
	memcpy(dst, text, length);
	memcpy(dst + length, "...", 3);
	return length + 3;
}

const char *record_communication_name(uint32_t domain)
{
	switch (domain) {
	case COMMUNICATION_TORCH: return "TORCH_DISTRIBUTED_API";
	case COMMUNICATION_NCCL: return "NCCL_API";
	}
	return "MPI_API";
}

const char *record_domain_name(uint32_t domain)
{
	switch (domain) {
	case DOMAIN_OPENCL_API: return "OPENCL_API";
	case DOMAIN_CUDA_API: return "CUDA_API";
	case DOMAIN_CUDA_DRIVER_API: return "CUDA_DRIVER_API";
	case DOMAIN_CUDA_GRAPH_NODE: return "CUDA_GRAPH_NODE";
	}
	return "UNKNOWN_API";
}

const char *record_agent_type_name(uint32_t type)
{
	switch (type) {
	case AGENT_CPU: return "CPU";
	case AGENT_GPU: return "GPU";
	case AGENT_ACCELERATOR: return "ACCELERATOR";
	}
	return "OTHER";
}

const char *record_direction_name(uint32_t direction)
{
	switch (direction) {
	case COPY_HOST_TO_DEVICE: return "MEMORY_COPY_HOST_TO_DEVICE";
	case COPY_DEVICE_TO_HOST: return "MEMORY_COPY_DEVICE_TO_HOST";
	case COPY_DEVICE_TO_DEVICE: return "MEMORY_COPY_DEVICE_TO_DEVICE";
	case COPY_HOST_TO_HOST: return "MEMORY_COPY_HOST_TO_HOST";
	case COPY_UNKNOWN: return "MEMORY_COPY_UNKNOWN";
	}
	return "MEMORY_COPY_NONE";
}

const char *record_operation_name(uint32_t operation)
{
	switch (operation) {
	case COPY_OPERATION_COPY: return "COPY";
	case COPY_OPERATION_FILL: return "FILL";
	case COPY_OPERATION_MAP: return "MAP";
	case COPY_OPERATION_UNMAP: return "UNMAP";
	case COPY_OPERATION_MIGRATE: return "MIGRATE";
	case COPY_OPERATION_MARKER: return "MARKER";
	case COPY_OPERATION_BARRIER: return "BARRIER";
	case COPY_OPERATION_FREE: return "FREE";
	}
	return "UNKNOWN";
}

const char *record_dropped_reason_name(uint32_t reason)
{
	switch (reason) {
	case DROPPED_BUFFER_FULL: return "thread buffer full";
	case DROPPED_NO_BUFFER: return "memory cap reached";
	case DROPPED_WRITE_FAILED: return "spool write failed";
	case DROPPED_NO_SLOT: return "too many commands in flight";
	case DROPPED_NO_TIMESTAMPS: return "no device timestamps";
	case DROPPED_UNTRACKED_QUEUE: return "queue not tracked";
	case DROPPED_BY_TRACER: return "lost by the vendor tracer";
	case DROPPED_MARKER_DEPTH: return "marker ranges nested too deep";
	case DROPPED_UNFINISHED: return "device work unfinished at exit";
	case DROPPED_SAMPLES: return "call-stack samples lost by the kernel";
	case DROPPED_COUNTERS: return "kernels without their counters";
	}
	return "unknown";
}

const char *record_memory_kind_name(uint32_t kind)
{
	switch (kind) {
	case MEMORY_KIND_PAGEABLE: return "PAGEABLE";
	case MEMORY_KIND_PINNED: return "PINNED";
	case MEMORY_KIND_DEVICE: return "DEVICE";
	case MEMORY_KIND_ARRAY: return "ARRAY";
	case MEMORY_KIND_MANAGED: return "MANAGED";
	case MEMORY_KIND_DEVICE_STATIC: return "DEVICE_STATIC";
	case MEMORY_KIND_MANAGED_STATIC: return "MANAGED_STATIC";
	}
	return "UNKNOWN";
}

const char *record_allocation_name(uint32_t operation)
{
	switch (operation) {
	case ALLOCATION_ALLOCATE: return "MEMORY_ALLOCATION_ALLOCATE";
	case ALLOCATION_FREE: return "MEMORY_ALLOCATION_FREE";
	}
	return "MEMORY_ALLOCATION_NONE";
}

const char *record_synchronization_name(uint32_t type)
{
	switch (type) {
	case SYNC_EVENT: return "EVENT_SYNCHRONIZE";
	case SYNC_STREAM_WAIT: return "STREAM_WAIT_EVENT";
	case SYNC_STREAM: return "STREAM_SYNCHRONIZE";
	case SYNC_CONTEXT: return "CONTEXT_SYNCHRONIZE";
	}
	return "UNKNOWN";
}

const char *record_overhead_name(uint32_t kind)
{
	switch (kind) {
	case OVERHEAD_COMPILER: return "COMPILER";
	case OVERHEAD_BUFFER_FLUSH: return "BUFFER_FLUSH";
	case OVERHEAD_INSTRUMENTATION: return "INSTRUMENTATION";
	case OVERHEAD_RESOURCE: return "RESOURCE";
	case OVERHEAD_MODULE_LOADING: return "MODULE_LOADING";
	case OVERHEAD_COMMAND_BUFFER_FULL: return "COMMAND_BUFFER_FULL";
	case OVERHEAD_BUFFER_REQUEST: return "BUFFER_REQUEST";
	case OVERHEAD_OTHER: return "OTHER";
	}
	return "UNKNOWN";
}

/* rocprofv3's Domain column for markers: ranges that nest and marks are the core API,
 * ranges started and stopped by id the range API. */
const char *record_marker_domain(uint32_t kind)
{
	return kind == MARKER_START_STOP ? "MARKER_CORE_RANGE_API" : "MARKER_CORE_API";
}

void record_uuid_text(const uint8_t uuid[16], char out[RECORD_UUID_TEXT])
{
	static const char hex[] = "0123456789abcdef";
	int zero = 1;
	for (int i = 0; i < 16; i++)
		zero &= uuid[i] == 0;
	char *p = out;
	for (int i = 0; i < 16 && !zero; i++) {
		if (i == 4 || i == 6 || i == 8 || i == 10)
			*p++ = '-';
		*p++ = hex[uuid[i] >> 4];
		*p++ = hex[uuid[i] & 15];
	}
	*p = '\0';
}

uint32_t record_min_size(uint32_t type)
{
	switch (type) {
	case RECORD_STRING: return sizeof(struct record_string);
	case RECORD_PROCESS: return RECORD_PROCESS_SIZE_V1; /* began_ns came later */
	case RECORD_AGENT: return sizeof(struct record_agent);
	case RECORD_QUEUE: return sizeof(struct record_queue);
	case RECORD_API_CALL: return sizeof(struct record_api_call);
	case RECORD_KERNEL: return sizeof(struct record_kernel);
	case RECORD_MEMORY_COPY: return sizeof(struct record_memory_copy);
	case RECORD_DROPPED: return sizeof(struct record_dropped);
	case RECORD_PROCESS_END: return sizeof(struct record_process_end);
	case RECORD_MEMORY_ALLOCATION: return sizeof(struct record_memory_allocation);
	case RECORD_SYNCHRONIZATION: return sizeof(struct record_synchronization);
	case RECORD_OVERHEAD: return sizeof(struct record_overhead);
	case RECORD_MARKER: return sizeof(struct record_marker);
	case RECORD_MARKER_END: return sizeof(struct record_marker_end);
	case RECORD_THREAD_NAME: return sizeof(struct record_thread_name);
	case RECORD_METRIC_SERIES: return sizeof(struct record_metric_series);
	case RECORD_METRIC: return sizeof(struct record_metric);
	case RECORD_SAMPLE: return sizeof(struct record_sample);
	case RECORD_MODULE: return RECORD_MODULE_SIZE_V1; /* time_ns came later */
	case RECORD_PYTHON_STACK: return sizeof(struct record_python_stack);
	case RECORD_SYMBOL: return sizeof(struct record_symbol);
	case RECORD_COUNTER: return sizeof(struct record_counter);
	case RECORD_SAMPLES_LOST: return sizeof(struct record_samples_lost);
	case RECORD_LAUNCH_STACK: return sizeof(struct record_launch_stack);
	case RECORD_PC_SAMPLE: return sizeof(struct record_pc_sample);
	case RECORD_PC_SAMPLING: return sizeof(struct record_pc_sampling);
	case RECORD_LAUNCH: return sizeof(struct record_launch);
	case RECORD_LAUNCH_DELTA: return sizeof(struct record_launch_delta);
	case RECORD_MPI_CALL: return sizeof(struct record_mpi_call);
	case RECORD_MPI_COMPLETION: return sizeof(struct record_mpi_completion);
	case RECORD_CLOCK_SYNC: return sizeof(struct record_clock_sync);
	case RECORD_PYTHON_CODE: return sizeof(struct record_python_code);
	case RECORD_GRAPH_NODE_CLONE: return sizeof(struct record_graph_node_clone);
	}
	return 0;
}
