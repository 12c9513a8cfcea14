/* What the files of the OpenCL backend share: opencl.c (the configuration, the wrappers
 * and the library's lifetime) and opencl-transfers.c (the wrappers of transfers) call
 * opencl-commands.c (the tables of OpenCL objects, and the commands in flight, timed
 * once they complete, on the recorder's writer thread); all of them call the loader's
 * functions through opencl-loader.c. Nothing here is exported from the library
 * (-fvisibility=hidden). */
#ifndef GPUPROF_INJECT_OPENCL_INTERNAL_H
#define GPUPROF_INJECT_OPENCL_INTERNAL_H

#define CL_TARGET_OPENCL_VERSION 300
#define CL_USE_DEPRECATED_OPENCL_1_0_APIS
#define CL_USE_DEPRECATED_OPENCL_1_1_APIS
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#define CL_USE_DEPRECATED_OPENCL_2_0_APIS
#define CL_USE_DEPRECATED_OPENCL_2_1_APIS
#define CL_USE_DEPRECATED_OPENCL_2_2_APIS
#include <CL/cl.h>
#include <CL/cl_egl.h>
#include <CL/cl_ext.h>
#include <CL/cl_gl.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "api.h"
#include "core/record.h"

enum function {
#define ENUM(kind, version, ret, name, params, args) FN_##name,
	OPENCL_API(ENUM)
#undef ENUM
	FUNCTION_COUNT
};

/* The OpenCL ICD loader's functions (opencl.c finds the loader). */
struct opencl_functions {
#define FIELD(kind, version, ret, name, params, args) __typeof__(&name) name;
	OPENCL_API(FIELD)
#undef FIELD
};
extern struct opencl_functions opencl_real;
extern pthread_once_t opencl_real_once;
extern _Atomic int opencl_real_loaded;
void opencl_load_real(void);

/* The loader's `name`, or NULL when it has none (an older loader): wrappers then fail
 * the call as the loader would fail an unknown one, never the process. */
#define REAL(name) \
	((atomic_load_explicit(&opencl_real_loaded, memory_order_acquire) \
		  ? (void)0 : (void)pthread_once(&opencl_real_once, opencl_load_real)), \
	 opencl_real.name)

/* What a wrapper returns when the loader lacks its function. */
#define MISSING CL_INVALID_OPERATION

/* What GPUPROF_TRACE asks for. */
extern int trace_kernels, trace_copies, trace_api, trace_allocations;
/* Reads GPUPROF_TRACE into them (all 1 without it: preloaded by hand). */
void opencl_read_config(void);
/* The string id of each function's name. */
extern uint32_t function_string[FUNCTION_COUNT];
/* > 0 while inside a wrapper: inner calls are not recorded. */
extern __thread int nesting;
extern _Atomic uint64_t next_dispatch;
uint32_t current_thread_id(void);

struct api_call {
	int recorded;  /* followed: gpuprof sees the objects it creates */
	int collected; /* and recorded: collection is not paused (recorder_collecting()) */
	enum function function;
	uint64_t correlation_id;
	uint64_t start_ns;
};

/* The library's own entry points: the OpenCL functions it defines for the program. */
#define EXPORT __attribute__((visibility("default")))

/* Around the real call of a wrapper: api_begin() gives the call its correlation id and
 * start (recorded: only the outermost call of a thread, while the recorder runs),
 * api_end() records it with its result. */
void api_begin(struct api_call *call, enum function function);
void api_end(struct api_call *call, cl_int result);

/* ---- opencl-commands.c: object tables ------------------------------------------------ */

/* A fixed-size map from an OpenCL handle to our information about it. Writers hold
 * table_lock (creation and final release only); readers do not lock. An entry is
 * removed when the application releases its last reference, leaving a tombstone that
 * readers probe past; a handle the runtime reuses is overwritten by its creation. */
#define HANDLE_SLOTS 16384
#define TOMBSTONE ((void *)(uintptr_t)1)

struct handle_map {
	_Atomic(void *) keys[HANDLE_SLOTS];
	_Atomic(void *) values[HANDLE_SLOTS];
};

struct device_info {
	cl_device_id device;
	uint32_t agent_id;
	/* device clock + offset = trace clock; the largest lower bound seen so far */
	_Atomic int64_t offset_ns;
	_Atomic int calibrated;
};

struct queue_info {
	uint32_t queue_id;
	struct device_info *device;
	int app_profiling;                 /* the application asked for profiling */
	cl_command_queue_properties app_properties;
	cl_queue_properties app_array[32]; /* what the application passed, 0-terminated */
	size_t app_array_size;             /* bytes; 0 when created without an array */
};

/* __local arguments followed one by one; beyond, a change makes the sizes be read again */
#define KERNEL_LOCAL_ARGS 32

struct kernel_info {
	uint32_t name_id;
	_Atomic int sized;              /* memory sizes below are known */
	uint32_t local_memory_bytes;    /* all local memory of a launch: static and arguments */
	uint32_t private_memory_bytes;
	uint32_t local_args[KERNEL_LOCAL_ARGS]; /* bytes of each __local argument, 0 if none */
	_Atomic uint32_t dynamic_local_bytes;   /* their sum */
};

extern struct handle_map device_map, queue_map, kernel_map;

void *handle_find(struct handle_map *map, const void *key);
/* The device's information, its agent recorded at its first lookup; NULL for none. */
struct device_info *device_lookup(cl_device_id device);
struct queue_info *queue_register(cl_command_queue queue, cl_device_id device,
				  cl_command_queue_properties app_properties,
				  const cl_queue_properties *app_array);
void kernel_register(cl_kernel kernel);
/* Forgets handle when the application releases its last reference (references: the
 * count before its release). */
void forget_if_last(struct handle_map *map, void *handle, cl_uint references);

/* ---- opencl-commands.c: commands in flight ------------------------------------------- */

struct pending {
	union {
		struct record_header header;
		struct record_kernel kernel;
		struct record_memory_copy copy;
	} record;
	uint64_t api_start_ns;
	struct device_info *device;
	_Atomic(cl_event) event; /* retained until the command completes; NULL when free */
	int app_event;           /* the application's own event, retained by gpuprof too */
	uint32_t queue_id;       /* its queue's */
	int in_order;            /* its queue runs commands in order (not out-of-order) */
	struct pending *next;    /* in the handoff stack, then in the writer's list */
	uint32_t index;          /* this slot's index + 1 in the pool */
	uint32_t next_free;      /* index + 1 of the next free slot */
};

/* ---- opencl-memory.c: device memory (--memory-allocation-trace) ------------------------- */

/* After a call that may have made a memory object (object: what it returned, NULL when
 * it failed): a buffer, image or pipe the program made is recorded as allocated, with
 * its size and the call's stack, and as freed when the runtime destroys it. */
void memory_object_made(const struct api_call *call, enum function function, void *object);
/* What other objects' wrappers call instead (_Generic in opencl.c's WRAP_OBJECT). */
void memory_object_not(const struct api_call *call, enum function function, void *object);
/* An SVM allocation followed (recorded at its clSVMAlloc). */
struct svm_taken {
	uint64_t address, bytes;
	uint32_t agent_id;
};
/* Takes pointer's allocation out of those followed, before the runtime frees it: 1 and
 * *out, or 0 when it is not followed. memory_svm_keep puts one back (its free failed). */
int memory_svm_take(void *pointer, struct svm_taken *out);
void memory_svm_keep(const struct svm_taken *taken);
/* Records the free of a taken allocation by call (clSVMFree; clEnqueueSVMFree, at its
 * enqueueing, whatever its queue does later). */
void memory_svm_freed(const struct api_call *call, const struct svm_taken *taken);

/* exit began: the writer no longer calls OpenCL */
extern _Atomic int runtime_closing;

/* In the child of a fork(): none of the parent's commands. */
void forget_in_flight(void);
/* The references gpuprof holds on event (a command it follows). */
cl_uint references_held(cl_event event);
/* The recorder's collector: times the commands completed (all of them, when final). */
int collect_completed(int final);
/* A kernel launch or a memory command about to be enqueued by call: its slot, or NULL
 * when it is not followed. */
struct pending *kernel_begin(const struct api_call *call, cl_command_queue queue,
			     cl_kernel kernel, cl_uint dims, const size_t *global,
			     const size_t *local);
struct pending *copy_begin(const struct api_call *call, cl_command_queue queue,
			   uint32_t operation, uint32_t direction, uint64_t bytes);
/* After the enqueue returned rc: follows the command until it completes. */
void enqueue_end(struct pending *p, cl_int rc, cl_event *app_event, cl_event event);

/* The event pointer to pass down: the application's, or ours when it passed none and
 * the command is followed. */
#define EVENT_ARG(p, app_event, local) ((app_event) ? (app_event) : (p) ? &(local) : NULL)

#endif
