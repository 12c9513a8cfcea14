/* The OpenCL backend: preloaded into the target, it wraps the OpenCL entry points the
 * application calls through the ICD loader, turns on queue profiling without the
 * application noticing, and records API calls, kernel executions and transfers.
 *
 * Device work is timed with the command's profiling timestamps, read on the recorder's
 * writer thread once the command completed (collect_completed()) and converted into
 * the trace clock (see device_to_host()). Per-command state
 * lives in a preallocated pool; objects (queues, kernels, devices) are looked up in
 * fixed tables that are written at creation time and read without locks
 * (opencl-commands.c). The wrappers of transfers and other commands are in
 * opencl-transfers.c; the loader's functions they all call are opencl-loader.c's. */
#include "opencl-internal.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/record.h"
#include "runtime/recorder.h"

/* ---- API function names ------------------------------------------------------------ */

static const char *const function_names[] = {
#define NAME(kind, version, ret, name, params, args) #name,
	OPENCL_API(NAME)
#undef NAME
};

uint32_t function_string[FUNCTION_COUNT];

/* ---- threads, correlation ------------------------------------------------------------ */

static __thread uint32_t thread_id;
static _Atomic uint64_t next_correlation;
_Atomic uint64_t next_dispatch;

uint32_t current_thread_id(void)
{
	if (!thread_id)
		thread_id = (uint32_t)syscall(SYS_gettid);
	return thread_id;
}

/* The child of a fork() has its own thread id and none of the parent's commands: their
 * events belong to the parent's runtime. */
static void after_fork_child(void)
{
	thread_id = 0;
	forget_in_flight();
}

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static int enabled;

static void exit_collect(void);

static void initialize(void)
{
	opencl_read_config();
	pthread_atfork(NULL, NULL, after_fork_child);
	if (!recorder_ready())
		return;
	recorder_add_collector(collect_completed);
	atexit(exit_collect);
	for (int i = 0; i < FUNCTION_COUNT; i++)
		function_string[i] = recorder_intern(function_names[i]);
	enabled = 1;
}

/* After fork() the recorder restarts on its own (recorder_ready()). */
static int active(void)
{
	pthread_once(&init_once, initialize);
	return enabled && recorder_ready();
}

void api_begin(struct api_call *call, enum function function)
{
	call->recorded = nesting++ == 0 && active();
	call->collected = call->recorded && recorder_collecting();
	call->function = function;
	call->correlation_id = call->recorded ? atomic_fetch_add(&next_correlation, 1) + 1 : 0;
	call->start_ns = call->recorded ? clock_now_ns() : 0;
}

void api_end(struct api_call *call, cl_int result)
{
	nesting--;
	if (!call->collected || !trace_api)
		return;
	struct record_api_call record = {
		.header = { sizeof(record), RECORD_API_CALL, 0 },
		.domain = DOMAIN_OPENCL_API,
		.function_id = function_string[call->function],
		.tid = current_thread_id(),
		.result = result,
		.correlation_id = call->correlation_id,
		.start_ns = call->start_ns,
		.end_ns = clock_now_ns(),
	};
	recorder_emit(&record);
}

/* ---- wrappers: queues, events and profiling ------------------------------------------- */

EXPORT cl_command_queue CL_API_CALL clCreateCommandQueue(cl_context context, cl_device_id device,
							 cl_command_queue_properties properties,
							 cl_int *errcode_ret)
{
	struct api_call call;
	api_begin(&call, FN_clCreateCommandQueue);
	cl_int rc = MISSING;
	cl_command_queue_properties ours = properties;
	if (call.recorded)
		ours |= CL_QUEUE_PROFILING_ENABLE;
	cl_command_queue queue = NULL;
	if (REAL(clCreateCommandQueue))
		queue = opencl_real.clCreateCommandQueue(context, device, ours, &rc);
	if (queue && call.recorded)
		queue_register(queue, device, properties, NULL);
	api_end(&call, rc);
	if (errcode_ret)
		*errcode_ret = rc;
	return queue;
}

EXPORT cl_command_queue CL_API_CALL
clCreateCommandQueueWithProperties(cl_context context, cl_device_id device,
				   const cl_queue_properties *properties, cl_int *errcode_ret)
{
	struct api_call call;
	api_begin(&call, FN_clCreateCommandQueueWithProperties);
	cl_int rc = MISSING;
	cl_queue_properties ours[32];
	cl_command_queue_properties app_bits = 0;
	size_t n = 0;
	int has_properties = 0;
	for (; properties && properties[n] && n + 2 < 30; n += 2) {
		ours[n] = properties[n];
		ours[n + 1] = properties[n + 1];
		if (properties[n] == CL_QUEUE_PROPERTIES) {
			app_bits = (cl_command_queue_properties)properties[n + 1];
			ours[n + 1] |= CL_QUEUE_PROFILING_ENABLE;
			has_properties = 1;
		}
	}
	if (!has_properties) {
		ours[n++] = CL_QUEUE_PROPERTIES;
		ours[n++] = CL_QUEUE_PROFILING_ENABLE;
	}
	ours[n] = 0;
	cl_command_queue queue = NULL;
	if (REAL(clCreateCommandQueueWithProperties))
		queue = opencl_real.clCreateCommandQueueWithProperties(
			context, device, call.recorded ? ours : properties, &rc);
	if (queue && call.recorded)
		queue_register(queue, device, app_bits, properties ? properties : ours + n);
	api_end(&call, rc);
	if (errcode_ret)
		*errcode_ret = rc;
	return queue;
}

EXPORT cl_int CL_API_CALL clGetCommandQueueInfo(cl_command_queue queue,
						cl_command_queue_info name, size_t size,
						void *value, size_t *size_ret)
{
	struct api_call call;
	api_begin(&call, FN_clGetCommandQueueInfo);
	struct queue_info *q = handle_find(&queue_map, queue);
	cl_int rc = MISSING;
	if (q && name == CL_QUEUE_PROPERTIES_ARRAY) {
		size_t need = q->app_array_size;
		rc = CL_SUCCESS;
		if (value && size < need)
			rc = CL_INVALID_VALUE;
		else if (value && need)
			memcpy(value, q->app_array, need);
		if (rc == CL_SUCCESS && size_ret)
			*size_ret = need;
	} else if (REAL(clGetCommandQueueInfo)) {
		rc = opencl_real.clGetCommandQueueInfo(queue, name, size, value, size_ret);
		if (rc == CL_SUCCESS && q && name == CL_QUEUE_PROPERTIES && value &&
		    size >= sizeof(cl_command_queue_properties) && !q->app_profiling)
			*(cl_command_queue_properties *)value &= ~(cl_command_queue_properties)
				CL_QUEUE_PROFILING_ENABLE;
	}
	api_end(&call, rc);
	return rc;
}

/* An application that did not ask for profiling sees what it would have seen. */
EXPORT cl_int CL_API_CALL clGetEventProfilingInfo(cl_event event, cl_profiling_info name,
						  size_t size, void *value, size_t *size_ret)
{
	struct api_call call;
	api_begin(&call, FN_clGetEventProfilingInfo);
	cl_int rc = MISSING;
	if (REAL(clGetEventProfilingInfo)) {
		cl_command_queue queue = NULL;
		struct queue_info *q = NULL;
		if (call.recorded && opencl_real.clGetEventInfo(event, CL_EVENT_COMMAND_QUEUE,
							 sizeof(queue), &queue, NULL) == CL_SUCCESS)
			q = queue ? handle_find(&queue_map, queue) : NULL;
		if (q && !q->app_profiling)
			rc = CL_PROFILING_INFO_NOT_AVAILABLE;
		else
			rc = opencl_real.clGetEventProfilingInfo(event, name, size, value,
								 size_ret);
	}
	api_end(&call, rc);
	return rc;
}

/* The references gpuprof holds on the application's events are not the application's. */
EXPORT cl_int CL_API_CALL clGetEventInfo(cl_event event, cl_event_info name, size_t size,
					 void *value, size_t *size_ret)
{
	struct api_call call;
	api_begin(&call, FN_clGetEventInfo);
	cl_int rc = REAL(clGetEventInfo)
		? opencl_real.clGetEventInfo(event, name, size, value, size_ret)
		: MISSING;
	if (rc == CL_SUCCESS && name == CL_EVENT_REFERENCE_COUNT && value &&
	    size >= sizeof(cl_uint) && call.recorded) {
		cl_uint held = references_held(event);
		cl_uint *count = value;
		*count = *count > held ? *count - held : 1;
	}
	api_end(&call, rc);
	return rc;
}

/* ---- wrappers: kernels ------------------------------------------------------------------ */

EXPORT cl_kernel CL_API_CALL clCreateKernel(cl_program program, const char *name,
					    cl_int *errcode_ret)
{
	struct api_call call;
	api_begin(&call, FN_clCreateKernel);
	cl_int rc = MISSING;
	cl_kernel kernel = REAL(clCreateKernel) ? opencl_real.clCreateKernel(program, name, &rc)
						: NULL;
	if (kernel && call.recorded)
		kernel_register(kernel);
	api_end(&call, rc);
	if (errcode_ret)
		*errcode_ret = rc;
	return kernel;
}

EXPORT cl_int CL_API_CALL clCreateKernelsInProgram(cl_program program, cl_uint count,
						   cl_kernel *kernels, cl_uint *count_ret)
{
	struct api_call call;
	api_begin(&call, FN_clCreateKernelsInProgram);
	cl_uint made = 0;
	cl_int rc = REAL(clCreateKernelsInProgram)
		? opencl_real.clCreateKernelsInProgram(program, count, kernels, &made) : MISSING;
	if (rc == CL_SUCCESS && kernels && call.recorded)
		for (cl_uint i = 0; i < made && i < count; i++)
			kernel_register(kernels[i]);
	api_end(&call, rc);
	if (count_ret && rc == CL_SUCCESS)
		*count_ret = made;
	return rc;
}

EXPORT cl_kernel CL_API_CALL clCloneKernel(cl_kernel source, cl_int *errcode_ret)
{
	struct api_call call;
	api_begin(&call, FN_clCloneKernel);
	cl_int rc = MISSING;
	cl_kernel kernel = REAL(clCloneKernel) ? opencl_real.clCloneKernel(source, &rc) : NULL;
	if (kernel && call.recorded) {
		kernel_register(kernel);
		struct kernel_info *from = handle_find(&kernel_map, source);
		struct kernel_info *to = handle_find(&kernel_map, kernel);
		if (from && to) { /* a clone keeps its source's arguments */
			memcpy(to->local_args, from->local_args, sizeof(to->local_args));
			atomic_store(&to->dynamic_local_bytes, atomic_load(&from->dynamic_local_bytes));
		}
	}
	api_end(&call, rc);
	if (errcode_ret)
		*errcode_ret = rc;
	return kernel;
}

/* A __local argument (no value, a size) changes the kernel's local memory per launch. */
EXPORT cl_int CL_API_CALL clSetKernelArg(cl_kernel kernel, cl_uint index, size_t size,
					 const void *value)
{
	struct api_call call;
	api_begin(&call, FN_clSetKernelArg);
	cl_int rc = REAL(clSetKernelArg) ? opencl_real.clSetKernelArg(kernel, index, size, value)
					 : MISSING;
	struct kernel_info *info = rc == CL_SUCCESS && call.recorded
		? handle_find(&kernel_map, kernel) : NULL;
	if (info) {
		uint32_t local = !value && size ? (uint32_t)size : 0;
		if (index < KERNEL_LOCAL_ARGS) {
			uint32_t before = info->local_args[index];
			info->local_args[index] = local;
			if (before != local) {
				atomic_fetch_add(&info->dynamic_local_bytes, local - before);
				atomic_store_explicit(&info->sized, 0, memory_order_release);
			}
		} else if (local) {
			atomic_store_explicit(&info->sized, 0, memory_order_release);
		}
	}
	api_end(&call, rc);
	return rc;
}

/* A kernel enqueue: `kernel` NULL for a native kernel. */
#define ENQUEUE_KERNEL(fn, queue, kernel, dims, global, local, event, call_args) \
	struct api_call call; \
	api_begin(&call, FN_##fn); \
	struct pending *p = kernel_begin(&call, queue, kernel, dims, global, local); \
	cl_event local_event = NULL; \
	cl_event *event_arg = EVENT_ARG(p, event, local_event); \
	cl_int rc = REAL(fn) ? opencl_real.fn call_args : MISSING; \
	enqueue_end(p, rc, event, local_event); \
	api_end(&call, rc)

EXPORT cl_int CL_API_CALL clEnqueueNDRangeKernel(cl_command_queue queue, cl_kernel kernel,
						 cl_uint dims, const size_t *offset,
						 const size_t *global, const size_t *local,
						 cl_uint wait_count, const cl_event *wait_list,
						 cl_event *event)
{
	ENQUEUE_KERNEL(clEnqueueNDRangeKernel, queue, kernel, dims, global, local, event,
		       (queue, kernel, dims, offset, global, local, wait_count, wait_list,
			event_arg));
	return rc;
}

EXPORT cl_int CL_API_CALL clEnqueueTask(cl_command_queue queue, cl_kernel kernel,
					cl_uint wait_count, const cl_event *wait_list,
					cl_event *event)
{
	size_t one = 1;
	ENQUEUE_KERNEL(clEnqueueTask, queue, kernel, 1, &one, &one, event,
		       (queue, kernel, wait_count, wait_list, event_arg));
	return rc;
}

EXPORT cl_int CL_API_CALL clEnqueueNativeKernel(cl_command_queue queue,
						void(CL_CALLBACK *user_func)(void *), void *args,
						size_t cb_args, cl_uint num_mem_objects,
						const cl_mem *mem_list, const void **args_mem_loc,
						cl_uint wait_count, const cl_event *wait_list,
						cl_event *event)
{
	size_t one = 1;
	ENQUEUE_KERNEL(clEnqueueNativeKernel, queue, NULL, 1, &one, &one, event,
		       (queue, user_func, args, cb_args, num_mem_objects, mem_list, args_mem_loc,
			wait_count, wait_list, event_arg));
	return rc;
}

/* ---- wrappers: releases ------------------------------------------------------------------ */

/* A release that forgets the object when the application drops its last reference. */
#define WRAP_RELEASE(fn, type, map, get_info, reference_count) \
	EXPORT cl_int CL_API_CALL fn(type object) \
	{ \
		struct api_call call; \
		api_begin(&call, FN_##fn); \
		cl_uint references = 0; \
		if (call.recorded && REAL(get_info)) \
			opencl_real.get_info(object, reference_count, sizeof(references), \
					     &references, NULL); \
		cl_int rc = REAL(fn) ? opencl_real.fn(object) : MISSING; \
		if (rc == CL_SUCCESS && call.recorded) \
			forget_if_last(&map, object, references); \
		api_end(&call, rc); \
		return rc; \
	}

WRAP_RELEASE(clReleaseKernel, cl_kernel, kernel_map, clGetKernelInfo, CL_KERNEL_REFERENCE_COUNT)
WRAP_RELEASE(clReleaseCommandQueue, cl_command_queue, queue_map, clGetCommandQueueInfo,
	     CL_QUEUE_REFERENCE_COUNT)

/* ---- wrappers: every other call, recorded as an API call ---------------------------------- */

#define WRAP_CUSTOM(ret, name, params, args)

#define WRAP_STATUS(ret, name, params, args) \
	EXPORT cl_int CL_API_CALL name params \
	{ \
		struct api_call call; \
		api_begin(&call, FN_##name); \
		cl_int rc = REAL(name) ? opencl_real.name args : MISSING; \
		api_end(&call, rc); \
		return rc; \
	}

#define WRAP_OBJECT(ret, name, params, args) \
	EXPORT ret CL_API_CALL name params \
	{ \
		struct api_call call; \
		api_begin(&call, FN_##name); \
		cl_int rc = MISSING; \
		ret object = REAL(name) ? opencl_real.name args : NULL; \
		_Generic((object), cl_mem: memory_object_made, default: memory_object_not)( \
			&call, FN_##name, (void *)object); \
		api_end(&call, rc); \
		if (errcode_ret) \
			*errcode_ret = rc; \
		return object; \
	}

#define WRAP_POINTER(ret, name, params, args) \
	EXPORT ret CL_API_CALL name params \
	{ \
		struct api_call call; \
		api_begin(&call, FN_##name); \
		ret pointer = REAL(name) ? opencl_real.name args : NULL; \
		api_end(&call, pointer ? CL_SUCCESS : CL_INVALID_VALUE); \
		return pointer; \
	}

#define WRAP_VOID(ret, name, params, args) \
	EXPORT void CL_API_CALL name params \
	{ \
		struct api_call call; \
		api_begin(&call, FN_##name); \
		if (REAL(name)) \
			opencl_real.name args; \
		api_end(&call, REAL(name) ? CL_SUCCESS : MISSING); \
	}

#define WRAP(kind, version, ret, name, params, args) WRAP_##kind(ret, name, params, args)
OPENCL_API(WRAP)
#undef WRAP

/* ---- lifetime ------------------------------------------------------------------------------ */

/* Registered at the first OpenCL call, so it runs at exit() before the runtime's own
 * exit handlers and finalisers: the commands that completed are read while the runtime
 * still works, and the runtime is not called again. Recording goes on: API calls made
 * later (by exit handlers registered earlier, static objects' destructors) are recorded
 * until the library's finaliser; device work enqueued by them is counted as unfinished. */
static void exit_collect(void)
{
	recorder_flush();
	atomic_store(&runtime_closing, 1);
}

/* The last flush, once the program's exit handlers have run (or the library is
 * unloaded). */
__attribute__((destructor)) static void unload(void)
{
	atomic_store(&runtime_closing, 1);
	recorder_stop();
}
