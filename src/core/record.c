/* Names and size checks for the record model (see record.h). */
#include "core/record.h"

#include <stddef.h>

const char *record_domain_name(uint32_t domain)
{
	switch (domain) {
	case DOMAIN_OPENCL_API: return "OPENCL_API";
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
	}
	return "unknown";
}

uint32_t record_min_size(uint32_t type)
{
	switch (type) {
	case RECORD_STRING: return sizeof(struct record_string);
	case RECORD_PROCESS: return sizeof(struct record_process);
	case RECORD_AGENT: return sizeof(struct record_agent);
	case RECORD_QUEUE: return sizeof(struct record_queue);
	case RECORD_API_CALL: return sizeof(struct record_api_call);
	case RECORD_KERNEL: return sizeof(struct record_kernel);
	case RECORD_MEMORY_COPY: return sizeof(struct record_memory_copy);
	case RECORD_DROPPED: return sizeof(struct record_dropped);
	case RECORD_PROCESS_END: return sizeof(struct record_process_end);
	}
	return 0;
}
