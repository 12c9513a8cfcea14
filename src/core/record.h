/* The vendor-neutral record model: fixed-layout records that backends emit, the spool
 * stores verbatim and every reader decodes. Layouts are part of the spool format
 * (docs/FORMAT.md): fields are little-endian, records are padded to 8 bytes, and a
 * change of layout needs a new record type or a new spool version. */
#ifndef GPUPROF_CORE_RECORD_H
#define GPUPROF_CORE_RECORD_H

#include <stdint.h>

#define RECORD_ALIGN 8u
#define RECORD_PADDED(n) (((n) + RECORD_ALIGN - 1) & ~(uint32_t)(RECORD_ALIGN - 1))
/* Bound on one record, strings included; longer strings are cut. */
#define RECORD_MAX_SIZE 8192u

enum record_type {
	RECORD_STRING = 1,       /* an interned string: names are referenced by id */
	RECORD_PROCESS = 2,      /* the recorded process (once, first) */
	RECORD_AGENT = 3,        /* a device, or the host CPU (agent 0) */
	RECORD_QUEUE = 4,        /* a command queue / stream */
	RECORD_API_CALL = 5,     /* one intercepted API call on a host thread */
	RECORD_KERNEL = 6,       /* one kernel execution on a device */
	RECORD_MEMORY_COPY = 7,  /* one transfer, fill or map on a device */
	RECORD_DROPPED = 8,      /* records lost by the recorder (deltas: readers add them) */
	RECORD_PROCESS_END = 9,  /* written by the final flush of a clean exit */
	RECORD_TYPE_COUNT
};

struct record_header {
	uint32_t size;  /* bytes, this header included; a multiple of RECORD_ALIGN */
	uint16_t type;  /* enum record_type; readers skip types they do not know */
	uint16_t flags; /* reserved, 0 */
};

/* API domains (the Domain column of the *_api_trace.csv files). */
enum record_domain {
	DOMAIN_OPENCL_API = 1,
	DOMAIN_COUNT
};

enum agent_type {
	AGENT_CPU = 1,
	AGENT_GPU = 2,
	AGENT_ACCELERATOR = 3,
	AGENT_OTHER = 4,
};

enum copy_direction {
	COPY_NONE = 0,             /* no data moves between host and device (fills) */
	COPY_HOST_TO_DEVICE = 1,
	COPY_DEVICE_TO_HOST = 2,
	COPY_DEVICE_TO_DEVICE = 3,
	COPY_HOST_TO_HOST = 4,
};

enum copy_operation {
	COPY_OPERATION_COPY = 1,   /* a read, write or copy between buffers */
	COPY_OPERATION_FILL = 2,   /* a pattern written into a buffer */
	COPY_OPERATION_MAP = 3,    /* a buffer mapped into host memory */
	COPY_OPERATION_UNMAP = 4,  /* a mapping released */
};

enum dropped_reason {
	DROPPED_BUFFER_FULL = 1,   /* a thread's buffer was full */
	DROPPED_NO_BUFFER = 2,     /* the memory cap allowed no buffer for a thread */
	DROPPED_WRITE_FAILED = 3,  /* the spool could not be written (disk full...) */
	DROPPED_NO_SLOT = 4,       /* too many device commands in flight to follow */
	DROPPED_NO_TIMESTAMPS = 5, /* the runtime gave no timestamps for a completed command */
	DROPPED_UNTRACKED_QUEUE = 6, /* a command on a queue gpuprof could not follow */
};

struct record_string {
	struct record_header header;
	uint32_t id;     /* > 0; ids are per process */
	uint32_t length; /* bytes of text, without a NUL */
	char text[];     /* not NUL-terminated; padded */
};

struct record_process {
	struct record_header header;
	uint32_t pid;
	uint32_t ppid;
	uint64_t start_ns;    /* trace clock (CLOCK_MONOTONIC) when recording began */
	uint64_t realtime_ns; /* CLOCK_REALTIME at the same instant: aligns nodes */
	uint32_t hostname_id; /* string id */
	uint32_t command_id;  /* string id: the command line, arguments space-separated */
	int32_t rank;         /* launcher rank (Slurm, MPI...), -1 when not launched so */
	int32_t size;         /* launcher world size, -1 when unknown */
};

struct record_agent {
	struct record_header header;
	uint32_t id;                   /* 0 is the host CPU; devices count from 1 */
	uint32_t type;                 /* enum agent_type */
	uint32_t name_id;              /* string id */
	uint32_t vendor_name_id;       /* string id */
	uint32_t driver_version_id;    /* string id */
	uint32_t vendor_id;            /* PCI vendor id, 0 when unknown */
	uint32_t compute_units;        /* count */
	uint32_t max_clock_mhz;        /* MHz */
	uint64_t global_memory_bytes;  /* bytes */
	uint64_t local_memory_bytes;   /* bytes of work-group local memory */
	uint32_t max_workgroup_size;   /* work-items */
	uint32_t max_workgroup_dim[3]; /* work-items per dimension */
};

struct record_queue {
	struct record_header header;
	uint32_t id;          /* > 0, per process */
	uint32_t agent_id;
	uint64_t properties;  /* the properties the application asked for (API-specific bits) */
};

struct record_api_call {
	struct record_header header;
	uint32_t domain;         /* enum record_domain */
	uint32_t function_id;    /* string id of the function name */
	uint32_t tid;            /* calling thread */
	int32_t result;          /* the call's status code (0 = success) */
	uint64_t correlation_id; /* links the call to the device work it enqueued */
	uint64_t start_ns;       /* trace clock */
	uint64_t end_ns;
};

struct record_kernel {
	struct record_header header;
	uint32_t tid;            /* thread that enqueued it */
	uint32_t agent_id;
	uint32_t queue_id;
	uint32_t name_id;        /* string id of the kernel name */
	uint64_t correlation_id; /* of the enqueuing API call */
	uint64_t dispatch_id;    /* per-process launch sequence number, from 1 */
	uint64_t start_ns;       /* trace clock, converted from the device clock */
	uint64_t end_ns;
	uint32_t grid[3];        /* global size in work-items (1 for unused dimensions) */
	uint32_t workgroup[3];   /* local size in work-items; 0 when the runtime chose it */
	uint32_t local_memory_bytes;   /* local (shared) memory used by the kernel */
	uint32_t private_memory_bytes; /* private (scratch) memory per work-item */
	int32_t status;          /* 0 = completed; a negative runtime status on failure */
	uint32_t reserved;
};

struct record_memory_copy {
	struct record_header header;
	uint32_t tid;
	uint32_t queue_id;
	uint32_t src_agent_id;
	uint32_t dst_agent_id;
	uint32_t operation;      /* enum copy_operation */
	uint32_t direction;      /* enum copy_direction */
	uint32_t function_id;    /* string id of the enqueuing API function */
	int32_t status;          /* 0 = completed */
	uint64_t bytes;
	uint64_t correlation_id;
	uint64_t start_ns;       /* trace clock */
	uint64_t end_ns;
};

struct record_dropped {
	struct record_header header;
	uint32_t reason;  /* enum dropped_reason */
	uint32_t reserved;
	uint64_t records; /* records lost since the previous RECORD_DROPPED of this reason */
	uint64_t bytes;
};

struct record_process_end {
	struct record_header header;
	uint64_t end_ns; /* trace clock */
};

/* Names used in outputs. */
const char *record_domain_name(uint32_t domain);       /* "OPENCL_API" */
const char *record_agent_type_name(uint32_t type);     /* "CPU", "GPU" */
const char *record_direction_name(uint32_t direction); /* "MEMORY_COPY_HOST_TO_DEVICE" */
const char *record_operation_name(uint32_t operation); /* "COPY", "FILL" */
const char *record_dropped_reason_name(uint32_t reason);

/* The size a record of this type must have at least; 0 for unknown types. */
uint32_t record_min_size(uint32_t type);

#endif
