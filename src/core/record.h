/* The vendor-neutral record model: fixed-layout records that backends emit, the spool
 * stores verbatim and every reader decodes. Layouts are part of the spool format
 * (docs/FORMAT.md): fields are little-endian, records are padded to 8 bytes, and a
 * change of layout needs a new record type or a new spool version. */
#ifndef GPUPROF_CORE_RECORD_H
#define GPUPROF_CORE_RECORD_H

#include <stddef.h>
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
	RECORD_MEMORY_ALLOCATION = 10, /* device memory allocated or freed */
	RECORD_SYNCHRONIZATION = 11,   /* a host thread waited for device work */
	RECORD_OVERHEAD = 12,    /* time the vendor tracer reports as its own overhead */
	RECORD_MARKER = 13,      /* a marker range began, or an instant mark */
	RECORD_MARKER_END = 14,  /* a marker range ended */
	RECORD_THREAD_NAME = 15, /* the application named a thread */
	RECORD_METRIC_SERIES = 16, /* a metric sampled over time: what it measures */
	RECORD_METRIC = 17,      /* one value of a metric series */
	RECORD_SAMPLE = 18,      /* a thread's registers and top of stack, sampled */
	RECORD_MODULE = 19,      /* an ELF file mapped into the process */
	RECORD_PYTHON_STACK = 20, /* a thread's Python functions, read at a sampling tick */
	RECORD_SYMBOL = 21,      /* code made at run time (a JIT), named in the perf map */
	RECORD_COUNTER = 22,     /* a hardware counter's value for one kernel dispatch */
	RECORD_SAMPLES_LOST = 23, /* call-stack samples the kernel lost, and when */
	RECORD_LAUNCH_STACK = 24, /* the call stack of a thread as it launched GPU work */
	RECORD_PC_SAMPLE = 25,   /* a device instruction's PC samples with one stall reason */
	RECORD_PC_SAMPLING = 26, /* a device's PC sampling totals: all samples, those lost */
	RECORD_LAUNCH = 27,      /* a thread launched GPU work: which thread, when, its call */
	RECORD_MPI_CALL = 28,    /* one MPI call of the program (--mpi-trace) */
	RECORD_MPI_COMPLETION = 29, /* a nonblocking MPI operation completed in a wait or test */
	RECORD_CLOCK_SYNC = 30,  /* this process's clock against MPI rank 0's, measured */
	RECORD_PYTHON_CODE = 31, /* where a Python code object lies, named */
	RECORD_LAUNCH_DELTA = 32, /* a launch stack as its difference from the thread's last */
	RECORD_GRAPH_NODE_CLONE = 33, /* a CUDA graph node copied from another (instantiation) */
	RECORD_TYPE_COUNT
};

struct record_header {
	uint32_t size;  /* bytes, this header included; a multiple of RECORD_ALIGN */
	uint16_t type;  /* enum record_type; readers skip types they do not know */
	uint16_t flags; /* 0; a launch stack: its number in its thread (SAMPLE_STACK_DELTA) */
};

/* API domains (the Domain column of the *_api_trace.csv files). */
enum record_domain {
	DOMAIN_OPENCL_API = 1,
	DOMAIN_CUDA_API = 2,        /* the CUDA runtime API (cuda*) */
	DOMAIN_CUDA_DRIVER_API = 3, /* the CUDA driver API (cu*) */
	/* a CUDA graph node made (captured from a stream, or added): its launch point or
	 * stack carries the node's id where others carry a correlation id */
	DOMAIN_CUDA_GRAPH_NODE = 4,
	DOMAIN_COUNT
};

/* Marker ranges and marks (ROCTX, NVTX, the gpuprof marker API). */
enum marker_kind {
	MARKER_PUSH_POP = 1,   /* a range pushed and popped on one thread: they nest */
	MARKER_START_STOP = 2, /* a range started and stopped by id, on any threads */
	MARKER_MARK = 3,       /* an instant */
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
	COPY_UNKNOWN = 5,          /* data moves, the runtime does not say where (SVM) */
};

enum copy_operation {
	COPY_OPERATION_COPY = 1,   /* a read, write or copy between buffers */
	COPY_OPERATION_FILL = 2,   /* a pattern written into a buffer */
	COPY_OPERATION_MAP = 3,    /* a buffer mapped into host memory */
	COPY_OPERATION_UNMAP = 4,  /* a mapping released */
	COPY_OPERATION_MIGRATE = 5, /* memory objects moved to a device or to the host */
	COPY_OPERATION_MARKER = 6, /* a queue's marker: no data, the time it waited */
	COPY_OPERATION_BARRIER = 7, /* a queue's barrier: no data, the time it waited */
	COPY_OPERATION_FREE = 8,   /* memory freed by the queue (SVM) */
};

enum dropped_reason {
	DROPPED_BUFFER_FULL = 1,   /* a thread's buffer was full */
	DROPPED_NO_BUFFER = 2,     /* the memory cap allowed no buffer for a thread */
	DROPPED_WRITE_FAILED = 3,  /* the spool could not be written (disk full...) */
	DROPPED_NO_SLOT = 4,       /* too many device commands in flight to follow */
	DROPPED_NO_TIMESTAMPS = 5, /* the runtime gave no timestamps for a completed command */
	DROPPED_UNTRACKED_QUEUE = 6, /* a command on a queue gpuprof could not follow */
	DROPPED_BY_TRACER = 7,     /* lost inside the vendor's tracer (CUPTI) */
	DROPPED_MARKER_DEPTH = 8,  /* a range pushed deeper than the recorder follows */
	DROPPED_UNFINISHED = 9,    /* device work not finished when the process ended */
	DROPPED_SAMPLES = 10,      /* call-stack samples the kernel could not hand over */
	DROPPED_COUNTERS = 11,     /* kernels whose counters the profiler could not give */
	DROPPED_REASON_COUNT
};

/* Where the memory of a transfer or allocation lives. */
enum memory_kind {
	MEMORY_KIND_UNKNOWN = 0,
	MEMORY_KIND_PAGEABLE = 1,       /* ordinary host memory */
	MEMORY_KIND_PINNED = 2,         /* page-locked host memory */
	MEMORY_KIND_DEVICE = 3,         /* device memory */
	MEMORY_KIND_ARRAY = 4,          /* an opaque device array (texture layout) */
	MEMORY_KIND_MANAGED = 5,        /* memory migrated on demand between host and device */
	MEMORY_KIND_DEVICE_STATIC = 6,  /* a device variable of a module */
	MEMORY_KIND_MANAGED_STATIC = 7, /* a managed variable of a module */
};

enum allocation_operation {
	ALLOCATION_ALLOCATE = 1,
	ALLOCATION_FREE = 2,
};

enum synchronization_type {
	SYNC_UNKNOWN = 0,
	SYNC_EVENT = 1,        /* waited for an event */
	SYNC_STREAM_WAIT = 2,  /* a stream made to wait for an event (no host wait) */
	SYNC_STREAM = 3,       /* waited for a stream */
	SYNC_CONTEXT = 4,      /* waited for a whole device context */
};

enum overhead_kind {
	OVERHEAD_UNKNOWN = 0,
	OVERHEAD_COMPILER = 1,        /* the driver compiled code (JIT) */
	OVERHEAD_BUFFER_FLUSH = 2,    /* the tracer flushed its buffers */
	OVERHEAD_INSTRUMENTATION = 3, /* the tracer instrumented kernel code */
	OVERHEAD_RESOURCE = 4,        /* the tracer created its own resources */
	OVERHEAD_MODULE_LOADING = 5,  /* modules or functions loaded lazily */
	OVERHEAD_COMMAND_BUFFER_FULL = 6, /* launches waited for room in the command buffer */
	OVERHEAD_BUFFER_REQUEST = 7,  /* the tracer waited for a record buffer */
	OVERHEAD_OTHER = 8,
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
	/* trace clock when the process itself began (its start time in /proc, in steps of
	 * the kernel's clock tick, 10 ms), at or before start_ns; 0 when unknown. Absent in
	 * spools before it (RECORD_PROCESS_SIZE_V1 bytes): see record_process_life_start() */
	uint64_t began_ns;
};

#define RECORD_PROCESS_SIZE_V1 48

/* When the process began: began_ns where known, else when recording began (an older
 * spool, or a recorder that could not read it). */
static inline uint64_t record_process_life_start(const struct record_process *p)
{
	uint64_t began = p->header.size >= sizeof(*p) ? p->began_ns : 0;
	return began && began <= p->start_ns ? began : p->start_ns;
}

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
	uint8_t uuid[16];              /* the device's UUID; zero when unknown */
	uint32_t pci_domain, pci_bus, pci_device, pci_function; /* location; 0 when unknown */
	uint32_t compute_major;        /* compute capability (CUDA); 0 otherwise */
	uint32_t compute_minor;
	uint32_t warp_size;            /* threads per warp (wavefront); 0 when unknown */
	uint32_t l2_cache_bytes;
	uint64_t memory_bandwidth;     /* bytes per second; 0 when unknown */
	uint32_t device_index;         /* the runtime's own index of the device */
	uint32_t reserved;
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
	uint32_t tid;            /* thread that enqueued it; 0 when the tracer does not say */
	uint32_t agent_id;
	uint32_t queue_id;
	uint32_t name_id;        /* string id of the kernel name */
	uint64_t correlation_id; /* of the enqueuing API call */
	uint64_t dispatch_id;    /* per-process launch sequence number, from 1 */
	uint64_t start_ns;       /* trace clock, converted from the device clock */
	uint64_t end_ns;
	uint64_t grid[3];        /* global size in work-items (1 for unused dimensions) */
	uint32_t workgroup[3];   /* local size in work-items; 0 when the runtime chose it */
	uint32_t local_memory_bytes;   /* local (shared) memory used by the kernel */
	uint32_t private_memory_bytes; /* private (scratch) memory per work-item */
	int32_t status;          /* 0 = completed; a negative runtime status on failure */
	uint32_t registers;      /* registers per work-item; 0 when unknown */
	uint32_t static_local_memory_bytes;  /* of local_memory_bytes, fixed by the code */
	uint32_t dynamic_local_memory_bytes; /* of local_memory_bytes, asked for at launch */
	uint32_t stream_id;      /* the runtime's stream id (CUDA); the queue id otherwise */
	uint32_t context_id;     /* the runtime's context id (CUDA); 0 otherwise */
	uint32_t graph_id;       /* the graph the kernel was launched from; 0 when none */
	uint64_t graph_node_id;  /* its node in that graph; 0 when none */
	uint64_t range_id;       /* the innermost push/pop marker range open on the enqueuing
				    thread at launch (record_marker.id); 0 when none or unknown */
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
	uint32_t src_memory_kind; /* enum memory_kind */
	uint32_t dst_memory_kind;
	uint32_t stream_id;      /* as in record_kernel */
	uint32_t context_id;
};

struct record_memory_allocation {
	struct record_header header;
	uint32_t tid;            /* the calling thread; 0 when the tracer does not say */
	uint32_t agent_id;       /* the device the memory belongs to */
	uint32_t operation;      /* enum allocation_operation */
	uint32_t memory_kind;    /* enum memory_kind */
	uint64_t address;
	uint64_t bytes;
	uint64_t correlation_id; /* of the API call that allocated or freed */
	uint64_t start_ns;       /* trace clock */
	uint64_t end_ns;
	uint32_t stream_id;      /* of a stream-ordered allocation; 0 otherwise */
	uint32_t context_id;
};

struct record_synchronization {
	struct record_header header;
	uint32_t tid;            /* 0 when the tracer does not say: see the API call */
	uint32_t type;           /* enum synchronization_type */
	uint32_t stream_id;      /* the stream waited for or made to wait; 0 when none */
	uint32_t context_id;
	uint32_t event_id;       /* the event waited for; 0 when none */
	int32_t result;
	uint64_t correlation_id; /* of the API call that waited */
	uint64_t start_ns;       /* trace clock */
	uint64_t end_ns;
};

struct record_overhead {
	struct record_header header;
	uint32_t kind;           /* enum overhead_kind */
	uint32_t tid;            /* the thread that paid it; 0 when device-wide */
	uint32_t agent_id;       /* the device concerned; 0 for the host */
	uint32_t reserved;
	uint64_t start_ns;       /* trace clock */
	uint64_t end_ns;
};

/* How deep push/pop ranges nest: the recorder follows this many per thread and drops
 * deeper ones, so a walk up a chain of parent_ids longer than this is a corrupt input
 * (a chain that loops back on itself) and stops there. */
#define RECORD_RANGE_DEPTH 256

/* The text of a marker travels with it (messages are often unique: "step 41"), so it is
 * not interned. A mark is one record with start = end; a range is this record at its
 * start and a RECORD_MARKER_END with the same id at its end. */
struct record_marker {
	struct record_header header;
	uint64_t id;           /* > 0, unique in the process */
	uint64_t parent_id;    /* the push/pop range open on this thread when it began; 0: none */
	uint64_t start_ns;     /* trace clock */
	uint32_t tid;          /* the thread that pushed, started or marked it */
	uint32_t kind;         /* enum marker_kind */
	uint32_t domain_id;    /* string id of the NVTX domain; 0 for the default domain */
	uint32_t length;       /* bytes of text, without a NUL */
	char text[];           /* not NUL-terminated; padded */
};

struct record_marker_end {
	struct record_header header;
	uint64_t id;           /* of the record_marker */
	uint64_t end_ns;       /* trace clock */
	uint32_t tid;          /* the thread that popped or stopped it */
	uint32_t reserved;
};

struct record_thread_name {
	struct record_header header;
	uint32_t tid;
	uint32_t name_id;      /* string id */
};

/* Metrics over time (gpuprof sys) are sampled by gpuprof itself, outside the program,
 * and appended to each process's spool once the program has ended: the machine's
 * series (pid 0) and the process's own. */
enum metric_source {
	METRIC_HOST = 1,    /* the whole machine: device is the CPU number, or -1 */
	METRIC_PROCESS = 2, /* one process (pid): device is -1 */
	METRIC_GPU = 3,     /* one GPU through NVML: device is its NVML index */
};

#define METRIC_NAME_SIZE 40
#define METRIC_UNIT_SIZE 16

struct record_metric_series {
	struct record_header header;
	uint32_t id;                    /* unique within the spool */
	uint32_t source;                /* enum metric_source */
	int32_t device;
	uint32_t pid;                   /* METRIC_PROCESS: the process; else 0 */
	char name[METRIC_NAME_SIZE];    /* "utilization", "power": NUL-terminated */
	char unit[METRIC_UNIT_SIZE];    /* "%", "W", "bytes", "1/s" */
};

struct record_metric {
	struct record_header header;
	uint32_t series_id;
	uint32_t reserved;
	uint64_t time_ns;               /* trace clock */
	double value;
};

/* Call-stack sampling (gpuprof sys): the kernel copies each sampled thread's user
 * registers and the top of its stack; they are unwound after the run, with the unwind
 * tables of the modules mapped then. */
#define SAMPLE_REGISTERS 17   /* DWARF's x86-64 order: rax rdx rcx rbx rsi rdi rbp rsp
			       * r8-r15 rip */
#define SAMPLE_STACK_BYTES 7936   /* stack copied per launch by default
				   * (--launch-stack-size), and per sample before
				   * --sampling-stack-size */
#define SAMPLE_STACK_DEFAULT 16384 /* stack copied per sample by default: a PyTorch
				    * training step's samples reach their entry 97 % of
				    * the time with it, 50 % with 7,936 (PERFORMANCE.md) */
#define SAMPLE_STACK_MAX 65344    /* the most the kernel copies (--sampling-stack-size): a
				   * sample is at most 65,535 bytes, and beside the stack one
				   * holds its header, thread, time, 17 registers and two sizes
				   * (184 bytes), the rest rounded to whole words */

struct record_sample {
	struct record_header header;
	uint32_t tid;
	uint32_t stack_size;    /* bytes of stack that follow, from the stack pointer up */
	uint64_t time_ns;       /* trace clock */
	uint64_t registers[SAMPLE_REGISTERS];
	uint32_t flags;         /* SAMPLE_OFF_CPU, SAMPLE_RUNNABLE */
	int32_t syscall;        /* off the CPU: the system call it waits in; -1 none */
	/* followed by stack_size bytes, padded to 8 */
};

/* Samples the kernel could not hand over (its buffer was full) between start_ns, the
 * last sample it kept in that buffer, and end_ns, when it had room again: the profile of
 * that time lacks them. tid is the thread whose sample first found room again. */
struct record_samples_lost {
	struct record_header header;
	uint32_t tid;
	uint32_t samples;
	uint64_t start_ns, end_ns; /* trace clock */
};

/* A sample of a thread that was off the CPU (--sampling-realtime): only its stack and
 * instruction pointers are known (the other registers read 0). */
#define SAMPLE_OFF_CPU 1u
/* A thread ready to run that waited for a CPU (--sampling-realtime): no registers and no
 * stack; it stands where the thread's last sample on the CPU before it stood. */
#define SAMPLE_RUNNABLE 2u

/* The call stack of a thread as it called an API function that launches GPU work (a
 * kernel, a copy: --launch-stacks), tied to that call by its correlation id: its
 * registers and the top of its stack, copied by the thread itself (runtime/launch-stack.c)
 * and unwound after the run as a sample is. */
struct record_launch_stack {
	struct record_header header;
	uint32_t domain;                /* enum record_domain of the call */
	uint32_t function_id;           /* the API function's name (a string id) */
	uint64_t correlation_id;        /* the API call's, and its GPU work's */
	struct record_sample sample;    /* its header's size: the sample and the stack's bytes;
					 * flags SAMPLE_LAUNCH */
	/* followed by sample.stack_size bytes, padded to 8 */
};

/* Where and when an API call that launches GPU work began, for a backend whose device
 * records name only the call's correlation id (CUDA) when the API calls themselves are
 * not traced: the kernel is then attributed to the marker range open on that thread at
 * that time, as it is from its API call record. A launch stack holds the same facts. */
struct record_launch {
	struct record_header header;
	uint32_t tid;                   /* the launching thread */
	uint32_t domain;                /* enum record_domain of the call */
	uint32_t function_id;           /* the API function's name (a string id) */
	uint32_t reserved;
	uint64_t correlation_id;        /* the API call's, and its GPU work's */
	uint64_t time_ns;               /* when the call began (trace clock) */
};

/* A CUDA graph node copied from another by cudaGraphInstantiate, cudaGraphClone or an
 * update (CUPTI's GRAPHNODE_CLONED): the kernels of an instantiated graph carry the
 * copy's node id, and were captured where the original was made. */
struct record_graph_node_clone {
	struct record_header header;
	uint64_t node_id;               /* the copy's (a kernel record's graph_node_id) */
	uint64_t original_id;           /* the node made by the program (a copy's copy: the
					 * first), whose capture point or stack stands for it */
};

/* A sample that is a launch's call stack, not a tick of CPU time. */
#define SAMPLE_LAUNCH 4u
/* The copy took all the bytes it was allowed: the stack may go on above them (a
 * sample without the flag whose copy is SAMPLE_STACK_BYTES long is read so as well: the
 * spools written before the flag). */
#define SAMPLE_STACK_FULL 8u
/* A launch's stack given as its difference from the previous launch stack of the thread
 * (the same stack pointer and size): stack_size is the stack's, and the bytes that follow
 * the sample are a struct launch_stack_delta. Written before RECORD_LAUNCH_DELTA, which
 * gives the registers' difference too; still read. */
#define SAMPLE_STACK_DELTA 16u

/* After a delta launch stack's sample: a bit per 8-byte word of the stack (bit w % 8 of
 * byte w / 8: the word differs from the previous stack's at the same place), padded to
 * 8 bytes, then the words that differ, in order; the others are the previous ones.
 * The launch stacks of a thread are numbered in their records' header.flags, from 1 (0
 * after 65535): a delta rebuilds on the one numbered just before it, or on none (one
 * lost). */
struct launch_stack_delta {
	uint32_t words;         /* of the stack: its stack_size / 8 */
	uint32_t changed;       /* words that follow the map */
};

/* A launch stack (RECORD_LAUNCH_DELTA) from the same stack pointer and of the same size as
 * the thread's previous one (numbered in header.flags, as RECORD_LAUNCH_STACK's), given
 * as its difference from it: the call as a launch point gives it, the registers that
 * changed, then the stack's struct launch_stack_delta. In a loop that launches, two or
 * three of the seventeen registers change and a few words of the stack: the record is
 * about half of a RECORD_LAUNCH_STACK's difference, whose sample has every register. */
struct record_launch_delta {
	struct record_launch launch;    /* its header's type RECORD_LAUNCH_DELTA, size the whole
					 * record's, flags the stack's number */
	uint32_t sample_flags;          /* the sample's: SAMPLE_LAUNCH, SAMPLE_STACK_FULL */
	uint32_t registers;             /* bit r: register r (DWARF's order) changed */
	/* followed by the changed registers (u64) in order, then the stack's
	 * struct launch_stack_delta, its map and words */
};

/* The Python functions a thread was in at a tick of the sampler, innermost first; the
 * samples of that thread nearest in time take them in place of the interpreter's
 * evaluation loop. */
#define PYTHON_STACK_MAX 256

struct record_python_stack {
	struct record_header header;
	uint32_t tid;
	uint32_t count;         /* frames that follow */
	uint64_t time_ns;       /* trace clock */
	uint64_t period_ns;     /* between two ticks: how far a sample may be to take it */
	/* followed by count struct python_frame */
};

struct python_frame {
	uint32_t function_id;   /* string id: the function's qualified name */
	uint32_t file_id;       /* string id: its file */
	uint32_t line;          /* the line running (its first where unknown) */
	uint32_t flags;         /* PYTHON_FRAME_ENTRY */
};

/* A code object the Python frames named, and the bytes it takes in the process (its
 * bytecode among them): the interpreter keeps a pointer into the code it runs in a
 * register, so a sample whose evaluation loop holds one names the function that loop
 * ran at the sample itself, not at the tick nearest it. Written when a code object is
 * named, again when another one takes its place. */
struct record_python_code {
	struct record_header header;
	uint32_t function_id;   /* string id: the function's qualified name */
	uint32_t file_id;       /* string id: its file */
	uint64_t start, end;    /* [start, end): the object */
	uint64_t time_ns;       /* when it was named (trace clock) */
};

/* The outermost frame of one entry into the evaluation loop: the frames up to the next
 * such frame run in one C call of _PyEval_EvalFrameDefault. */
#define PYTHON_FRAME_ENTRY 1u

struct record_symbol {
	struct record_header header;
	uint64_t start;         /* address */
	uint32_t size;          /* bytes */
	uint32_t name_id;       /* string id: the name the program gave it */
};

struct record_module {
	struct record_header header;
	uint64_t start, end;    /* the lowest and highest address of the file's mappings */
	uint64_t offset;        /* the file offset mapped at start */
	uint32_t path_id;       /* string id; "[vdso]" for the kernel's vDSO */
	uint32_t build_id;      /* string id of its GNU build-id in hexadecimal (the vDSO's);
				 * 0: not recorded */
	/* when the set of files this record belongs to was read (trace clock, ns): a file
	 * unloaded and another mapped at its addresses later are told apart by it. Absent
	 * (a record of RECORD_MODULE_SIZE_V1 bytes) in spools before it: read as 0 by
	 * record_module_time() */
	uint64_t time_ns;
};

#define RECORD_MODULE_SIZE_V1 40

/* A module record's time_ns, 0 in a record written before it had one. */
static inline uint64_t record_module_time(const struct record_module *m)
{
	return m->header.size >= sizeof(*m) ? m->time_ns : 0;
}

/* Hardware counters per kernel (gpuprof trace --pmc, gpuprof compute profile): the
 * vendor's profiler reads them while the kernel runs, as many times as the counters need
 * passes, and each value is one record. The kernel is the one enqueued by the API call of
 * correlation_id. */
struct record_counter {
	struct record_header header;
	uint64_t correlation_id; /* of the kernel (record_kernel.correlation_id) */
	uint32_t agent_id;       /* the device that counted */
	uint32_t name_id;        /* string id of the metric: "dram__bytes_read.sum" */
	double value;            /* in the metric's own unit; NaN: the profiler gave none */
};

/* PC sampling (gpuprof trace --pc-sampling-*, CUDA): the device samples the program
 * counter of a warp on every SM at a fixed period, and tells for each sample why the
 * warp was stalled (or that it issued). The vendor aggregates the samples per
 * instruction and stall reason; each record is one such count. Samples of continuous
 * collection are the function's over all of its launches (correlation_id 0); those of
 * serialised collection belong to the launch of correlation_id. */
struct record_pc_sample {
	struct record_header header;
	uint64_t cubin_crc;      /* the module's binary (CUPTI's CRC): which code */
	uint64_t pc_offset;      /* the instruction: its byte offset in the function */
	uint64_t correlation_id; /* the launch's; 0: every launch of the function */
	uint32_t agent_id;       /* the device sampled */
	uint32_t function_id;    /* string id of the kernel's name, as its kernel records */
	uint32_t reason_id;      /* string id of the stall reason, the vendor's name:
				  * "smsp__pcsamp_warps_issue_stalled_long_scoreboard" */
	uint32_t samples;
	uint32_t file_id;        /* string id of the source file ("dir/file.cu"); 0: the
				  * module has no line information */
	uint32_t line;           /* 0: unknown */
};

/* A device's totals since the previous record of its kind (deltas: readers add them). */
struct record_pc_sampling {
	struct record_header header;
	uint32_t agent_id;
	uint32_t period_log2;    /* samples every 2^period_log2 cycles per SM */
	uint64_t samples;        /* all samples taken, those of the vendor's own kernels too */
	uint64_t dropped;        /* samples lost (the device's buffer was full) */
	uint64_t other_samples;  /* samples of kernels not the program's (the vendor's) */
	uint32_t buffer_full;    /* times the device's buffer filled up */
	uint32_t reserved;
};

/* The libraries whose communication calls are recorded as record_mpi_call. */
enum communication_domain {
	COMMUNICATION_MPI = 1,        /* MPI (--mpi-trace: inject/mpi) */
	COMMUNICATION_TORCH = 2,      /* torch.distributed (--torch-trace's Python hooks) */
	COMMUNICATION_NCCL = 3,       /* NCCL and RCCL (--nccl-trace: inject/nccl) */
};

/* One call of a communication library: MPI (--mpi-trace: inject/mpi), through MPI's
 * profiling interface, or torch.distributed (--torch-trace). Ranks are world ranks (of
 * MPI_COMM_WORLD; torch.distributed's global ranks), whatever communicator the call
 * names, so that a message or a collective is found on every rank by the same values. */
struct record_mpi_call {
	struct record_header header;
	uint32_t tid;
	uint32_t function_id;    /* string id of the function as MPI names it: "MPI_Send" */
	uint64_t start_ns;       /* trace clock */
	uint64_t end_ns;
	uint64_t call_id;        /* per process, from 1: what a completion names */
	uint32_t communicator_id; /* string id of the communicator's name, the same on every
				   * rank (docs/MPI.md); 0: the call names none */
	uint32_t communicator_size; /* its ranks; 0 when none */
	int32_t peer;            /* the world rank sent to or received from (NCCL's: its rank
				  * in the call's communicator); -1: none, or any source (a
				  * nonblocking receive: its completion says) */
	int32_t tag;             /* -1: none, or any tag */
	int32_t root;            /* world rank of a rooted collective's root (NCCL's: in the
				  * communicator); -1: none */
	int32_t result;          /* the MPI error code returned (0 = MPI_SUCCESS) */
	uint64_t bytes_sent;     /* bytes this rank sent in the call (or will, nonblocking) */
	uint64_t bytes_received; /* bytes received (a receive: its status's count) */
	uint64_t sequence;       /* collectives: which one on this communicator, from 1, the
				  * same instance on every rank; 0 for other calls */
	uint64_t request;        /* a nonblocking call: its request, per process from 1; 0 */
	uint32_t domain;         /* enum communication_domain */
	uint32_t reserved;
};

/* A request of a nonblocking call completed (MPI_Wait and its kin, MPI_Test when it says
 * done): what a receive got, and which call completed it. */
struct record_mpi_completion {
	struct record_header header;
	uint64_t request;        /* record_mpi_call.request of the call that began it */
	uint64_t completed_by;   /* the call_id of the wait or test */
	uint64_t time_ns;        /* when that call returned (trace clock) */
	uint64_t bytes_received; /* a receive's count from its status; 0 otherwise */
	int32_t peer;            /* a receive's source (world rank); -1 otherwise */
	int32_t tag;             /* a receive's tag; -1 otherwise */
};

/* The offset of this process's trace clock to MPI rank 0's, measured by ping-pong at
 * MPI_Init and MPI_Finalize: rank 0's clock read t0 while this one read local_ns (the
 * middle of the round trip), offset = t0 - local_ns. Merging places the process on rank
 * 0's timeline with the offset interpolated between the two measurements (drift). */
struct record_clock_sync {
	struct record_header header;
	uint64_t local_ns;       /* trace clock */
	int64_t offset_ns;       /* rank 0's clock minus this one's; 0 on rank 0 */
	uint64_t round_trip_ns;  /* of the exchange kept (the shortest): the error bound */
	int32_t rank;            /* the process's rank in MPI_COMM_WORLD */
	int32_t size;            /* of MPI_COMM_WORLD */
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
/* Copies text into dst, which has room for `room` bytes (no NUL written), and returns the
 * bytes copied. A text longer than room is cut at a character boundary and ends with
 * "...", so that a cut name is never taken for the whole one. */
size_t record_text_copy(char *dst, const char *text, size_t room);

const char *record_domain_name(uint32_t domain);       /* "OPENCL_API" */
const char *record_communication_name(uint32_t domain); /* "MPI_API" */
const char *record_agent_type_name(uint32_t type);     /* "CPU", "GPU" */
const char *record_direction_name(uint32_t direction); /* "MEMORY_COPY_HOST_TO_DEVICE" */
const char *record_operation_name(uint32_t operation); /* "COPY", "FILL" */
const char *record_dropped_reason_name(uint32_t reason);
const char *record_memory_kind_name(uint32_t kind);    /* "DEVICE", "PINNED" */
const char *record_allocation_name(uint32_t operation); /* "MEMORY_ALLOCATION_ALLOCATE" */
const char *record_synchronization_name(uint32_t type); /* "STREAM_SYNCHRONIZE" */
const char *record_overhead_name(uint32_t kind);        /* "INSTRUMENTATION" */
const char *record_marker_domain(uint32_t kind);        /* "MARKER_CORE_API" */

/* A UUID as text, "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", or "" when it is all zero. */
#define RECORD_UUID_TEXT 37
void record_uuid_text(const uint8_t uuid[16], char out[RECORD_UUID_TEXT]);

/* The size a record of this type must have at least; 0 for unknown types. */
uint32_t record_min_size(uint32_t type);

#endif
