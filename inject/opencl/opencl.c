/* The OpenCL backend: preloaded into the target, it wraps the OpenCL entry points the
 * application calls through the ICD loader, turns on queue profiling without the
 * application noticing, and records API calls, kernel executions and transfers.
 *
 * Device work is timed with the command's profiling timestamps, read on the recorder's
 * writer thread once the command completed (collect_completed()) and converted into
 * the trace clock (see device_to_host()). Per-command state
 * lives in a preallocated pool; objects (queues, kernels, devices) are looked up in
 * fixed tables that are written at creation time and read without locks. */
#define CL_TARGET_OPENCL_VERSION 300
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#include <CL/cl.h>

#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/record.h"
#include "core/recorder.h"

#define EXPORT __attribute__((visibility("default")))

/* ---- configuration ---------------------------------------------------------------- */

static int trace_kernels = 1, trace_copies = 1, trace_api = 1;

static void read_config(void)
{
	const char *list = getenv("GPUPROF_TRACE");
	if (!list)
		return; /* preloaded by hand: record everything */
	trace_kernels = strstr(list, "kernel") != NULL;
	trace_copies = strstr(list, "memory_copy") != NULL;
	trace_api = strstr(list, "opencl_api") != NULL;
}

/* ---- API function names ------------------------------------------------------------ */

#define OPENCL_FUNCTIONS(X) \
	X(clGetPlatformIDs) X(clGetDeviceIDs) X(clCreateContext) X(clCreateContextFromType) \
	X(clReleaseContext) X(clCreateCommandQueue) X(clCreateCommandQueueWithProperties) \
	X(clReleaseCommandQueue) X(clCreateBuffer) X(clReleaseMemObject) \
	X(clCreateProgramWithSource) X(clCreateProgramWithBinary) X(clBuildProgram) \
	X(clReleaseProgram) X(clCreateKernel) X(clCreateKernelsInProgram) X(clCloneKernel) \
	X(clReleaseKernel) X(clSetKernelArg) X(clEnqueueNDRangeKernel) X(clEnqueueTask) \
	X(clEnqueueReadBuffer) X(clEnqueueWriteBuffer) X(clEnqueueCopyBuffer) \
	X(clEnqueueReadBufferRect) X(clEnqueueWriteBufferRect) X(clEnqueueCopyBufferRect) \
	X(clEnqueueFillBuffer) X(clEnqueueMapBuffer) X(clEnqueueUnmapMemObject) \
	X(clEnqueueMarkerWithWaitList) X(clEnqueueBarrierWithWaitList) X(clFlush) X(clFinish) \
	X(clWaitForEvents) X(clReleaseEvent)

enum function {
#define ENUM(name) FN_##name,
	OPENCL_FUNCTIONS(ENUM)
#undef ENUM
	FUNCTION_COUNT
};

static const char *const function_names[] = {
#define NAME(name) #name,
	OPENCL_FUNCTIONS(NAME)
#undef NAME
};

static uint32_t function_string[FUNCTION_COUNT];

/* The next definition of an OpenCL function: the ICD loader's. */
static void *next_symbol(const char *name)
{
	void *p = dlsym(RTLD_NEXT, name);
	if (!p) {
		fprintf(stderr, "gpuprof: cannot find the OpenCL function %s\n", name);
		abort(); /* the application itself could not have called it either */
	}
	return p;
}

/* real_<name>: the next definition, looked up on first use. Threads may race to look it
 * up; each finds the same one. */
#define REAL(name) \
	static _Atomic(__typeof__(&name)) next_##name; \
	__typeof__(&name) real_##name = atomic_load_explicit(&next_##name, memory_order_relaxed); \
	if (!real_##name) { \
		real_##name = (__typeof__(&name))next_symbol(#name); \
		atomic_store_explicit(&next_##name, real_##name, memory_order_relaxed); \
	}

/* ---- threads, correlation ------------------------------------------------------------ */

static __thread uint32_t thread_id;
static __thread int nesting; /* > 0 while inside a wrapper: inner calls are not recorded */
static _Atomic uint64_t next_correlation;
static _Atomic uint64_t next_dispatch;

static uint32_t current_thread_id(void)
{
	if (!thread_id)
		thread_id = (uint32_t)syscall(SYS_gettid);
	return thread_id;
}

static void forget_in_flight(void);

/* The child of a fork() has its own thread id and none of the parent's commands: their
 * events belong to the parent's runtime. */
static void after_fork_child(void)
{
	thread_id = 0;
	forget_in_flight();
}

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static int enabled;

static void shutdown_recording(void);
static int collect_completed(int final);

static void initialize(void)
{
	read_config();
	pthread_atfork(NULL, NULL, after_fork_child);
	if (!recorder_ready())
		return;
	recorder_add_collector(collect_completed);
	atexit(shutdown_recording);
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

struct api_call {
	int recorded;  /* followed: gpuprof sees the objects it creates */
	int collected; /* and recorded: collection is not paused (recorder_collecting()) */
	enum function function;
	uint64_t correlation_id;
	uint64_t start_ns;
};

static void api_begin(struct api_call *call, enum function function)
{
	call->recorded = nesting++ == 0 && active();
	call->collected = call->recorded && recorder_collecting();
	call->function = function;
	call->correlation_id = call->recorded ? atomic_fetch_add(&next_correlation, 1) + 1 : 0;
	call->start_ns = call->recorded ? clock_now_ns() : 0;
}

static void api_end(struct api_call *call, cl_int result)
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

/* ---- object tables ------------------------------------------------------------------- */

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
static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;

static size_t handle_slot(const void *key)
{
	uintptr_t k = (uintptr_t)key;
	return (size_t)((k >> 4) * 0x9e3779b97f4a7c15ull >> 50) & (HANDLE_SLOTS - 1);
}

#define NEXT_SLOT(i) (((i) + 1) & (HANDLE_SLOTS - 1))

static void *handle_find(struct handle_map *map, const void *key)
{
	for (size_t i = handle_slot(key), n = 0; n < HANDLE_SLOTS; i = NEXT_SLOT(i), n++) {
		void *k = atomic_load_explicit(&map->keys[i], memory_order_acquire);
		if (k == key)
			return atomic_load_explicit(&map->values[i], memory_order_acquire);
		if (!k)
			return NULL;
	}
	return NULL;
}

/* Caller holds table_lock. Sets the value of key and returns the value it replaces
 * (NULL for a new key), or TOMBSTONE when the table is full. */
static void *handle_put(struct handle_map *map, void *key, void *value)
{
	size_t free_slot = HANDLE_SLOTS;
	for (size_t i = handle_slot(key), n = 0; n < HANDLE_SLOTS; i = NEXT_SLOT(i), n++) {
		void *k = atomic_load(&map->keys[i]);
		if (k == key) {
			void *old = atomic_load(&map->values[i]);
			atomic_store_explicit(&map->values[i], value, memory_order_release);
			return old;
		}
		if (k == TOMBSTONE && free_slot == HANDLE_SLOTS)
			free_slot = i;
		if (!k) {
			if (free_slot == HANDLE_SLOTS)
				free_slot = i;
			break;
		}
	}
	if (free_slot == HANDLE_SLOTS)
		return TOMBSTONE;
	atomic_store_explicit(&map->values[free_slot], value, memory_order_release);
	atomic_store_explicit(&map->keys[free_slot], key, memory_order_release);
	return NULL;
}

/* Caller holds table_lock. Removes key and returns its value, or NULL. */
static void *handle_remove(struct handle_map *map, const void *key)
{
	for (size_t i = handle_slot(key), n = 0; n < HANDLE_SLOTS; i = NEXT_SLOT(i), n++) {
		void *k = atomic_load(&map->keys[i]);
		if (k == key) {
			void *old = atomic_load(&map->values[i]);
			atomic_store_explicit(&map->keys[i], TOMBSTONE, memory_order_release);
			atomic_store_explicit(&map->values[i], NULL, memory_order_release);
			return old;
		}
		if (!k)
			break;
	}
	return NULL;
}

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

struct kernel_info {
	uint32_t name_id;
	_Atomic int sized;              /* memory sizes below are known */
	uint32_t local_memory_bytes;
	uint32_t private_memory_bytes;
};

static struct handle_map device_map, queue_map, kernel_map;

static uint32_t device_string(cl_device_id device, cl_device_info what)
{
	char text[1024] = "";
	clGetDeviceInfo(device, what, sizeof(text) - 1, text, NULL);
	return recorder_intern(text);
}

static struct device_info *device_lookup(cl_device_id device)
{
	struct device_info *info = handle_find(&device_map, device);
	if (info || !device)
		return info;
	int created = 0;
	pthread_mutex_lock(&table_lock);
	info = handle_find(&device_map, device);
	if (!info && (info = calloc(1, sizeof(*info)))) {
		info->device = device;
		info->agent_id = recorder_new_agent_id();
		created = 1;
		if (handle_put(&device_map, device, info) == TOMBSTONE) {
			free(info);
			info = NULL;
		}
	}
	pthread_mutex_unlock(&table_lock);
	if (!info || !created)
		return info;

	cl_device_type type = 0;
	cl_uint units = 0, clock = 0, vendor = 0;
	cl_ulong global = 0, local = 0;
	size_t wg = 0, dims[3] = { 0, 0, 0 };
	clGetDeviceInfo(device, CL_DEVICE_TYPE, sizeof(type), &type, NULL);
	clGetDeviceInfo(device, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof(units), &units, NULL);
	clGetDeviceInfo(device, CL_DEVICE_MAX_CLOCK_FREQUENCY, sizeof(clock), &clock, NULL);
	clGetDeviceInfo(device, CL_DEVICE_VENDOR_ID, sizeof(vendor), &vendor, NULL);
	clGetDeviceInfo(device, CL_DEVICE_GLOBAL_MEM_SIZE, sizeof(global), &global, NULL);
	clGetDeviceInfo(device, CL_DEVICE_LOCAL_MEM_SIZE, sizeof(local), &local, NULL);
	clGetDeviceInfo(device, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof(wg), &wg, NULL);
	clGetDeviceInfo(device, CL_DEVICE_MAX_WORK_ITEM_SIZES, sizeof(dims), dims, NULL);
	struct record_agent agent = {
		.header = { sizeof(agent), RECORD_AGENT, 0 },
		.id = info->agent_id,
		.type = type & CL_DEVICE_TYPE_GPU ? AGENT_GPU
			: type & CL_DEVICE_TYPE_CPU ? AGENT_CPU
			: type & CL_DEVICE_TYPE_ACCELERATOR ? AGENT_ACCELERATOR : AGENT_OTHER,
		.name_id = device_string(device, CL_DEVICE_NAME),
		.vendor_name_id = device_string(device, CL_DEVICE_VENDOR),
		.driver_version_id = device_string(device, CL_DRIVER_VERSION),
		.vendor_id = vendor,
		.compute_units = units,
		.max_clock_mhz = clock,
		.global_memory_bytes = global,
		.local_memory_bytes = local,
		.max_workgroup_size = (uint32_t)wg,
		.max_workgroup_dim = { (uint32_t)dims[0], (uint32_t)dims[1], (uint32_t)dims[2] },
	};
	recorder_emit_metadata(&agent);
	return info;
}

static struct queue_info *queue_register(cl_command_queue queue, cl_device_id device,
					 cl_command_queue_properties app_properties,
					 const cl_queue_properties *app_array)
{
	struct queue_info *info = calloc(1, sizeof(*info));
	if (!info)
		return NULL;
	info->device = device_lookup(device);
	info->app_properties = app_properties;
	info->app_profiling = (app_properties & CL_QUEUE_PROFILING_ENABLE) != 0;
	if (app_array) {
		size_t n = 0;
		while (app_array[n] && n + 2 < 31)
			n += 2;
		memcpy(info->app_array, app_array, n * sizeof(app_array[0]));
		info->app_array_size = (n + 1) * sizeof(app_array[0]);
	}
	pthread_mutex_lock(&table_lock);
	info->queue_id = recorder_new_queue_id();
	void *old = handle_put(&queue_map, queue, info);
	pthread_mutex_unlock(&table_lock);
	if (old == TOMBSTONE) {
		free(info);
		return NULL;
	}
	free(old); /* a released queue whose handle the runtime reused */
	struct record_queue record = {
		.header = { sizeof(record), RECORD_QUEUE, 0 },
		.id = info->queue_id,
		.agent_id = info->device ? info->device->agent_id : 0,
		.properties = app_properties,
	};
	recorder_emit_metadata(&record);
	return info;
}

static void kernel_register(cl_kernel kernel)
{
	char name[1024] = "";
	if (clGetKernelInfo(kernel, CL_KERNEL_FUNCTION_NAME, sizeof(name) - 1, name, NULL))
		strcpy(name, "<unknown kernel>");
	struct kernel_info *info = calloc(1, sizeof(*info));
	if (!info)
		return;
	info->name_id = recorder_intern(name);
	pthread_mutex_lock(&table_lock);
	void *old = handle_put(&kernel_map, kernel, info);
	pthread_mutex_unlock(&table_lock);
	if (old == TOMBSTONE)
		free(info); /* the table is full: kernel_begin() names it on every launch */
	else
		free(old); /* a released kernel whose handle the runtime reused */
}

/* Forgets an object whose last reference the application is about to release. */
static void forget_if_last(struct handle_map *map, void *handle, cl_uint references)
{
	if (references != 1)
		return; /* others (or the runtime) still hold it */
	pthread_mutex_lock(&table_lock);
	void *info = handle_remove(map, handle);
	pthread_mutex_unlock(&table_lock);
	free(info);
}

static struct kernel_info *kernel_lookup(cl_kernel kernel)
{
	struct kernel_info *info = handle_find(&kernel_map, kernel);
	if (!info) {
		kernel_register(kernel);
		info = handle_find(&kernel_map, kernel);
	}
	return info;
}

/* ---- in-flight commands ---------------------------------------------------------------- */

#define PENDING_SLOTS 65536

struct pending {
	union {
		struct record_header header;
		struct record_kernel kernel;
		struct record_memory_copy copy;
	} record;
	uint64_t api_start_ns;
	struct device_info *device;
	cl_event event;        /* retained until the command completes */
	struct pending *next;  /* in the handoff stack, then in the writer's list */
	uint32_t next_free;    /* index + 1 of the next free slot */
};

static struct pending *pending_pool;
static _Atomic uint64_t pending_free; /* (tag << 32) | (index + 1) of the first free slot */
static _Atomic(struct pending *) handoff; /* enqueued commands not yet seen by the writer */
static _Atomic uint32_t in_flight;
static struct pending *followed;          /* the writer thread's own list */
static pthread_once_t pool_once = PTHREAD_ONCE_INIT;

static void pool_init_free_list(void)
{
	for (uint32_t i = 0; i < PENDING_SLOTS; i++)
		pending_pool[i].next_free = i + 1 < PENDING_SLOTS ? i + 2 : 0;
	atomic_store(&pending_free, 1);
}

static void pool_init(void)
{
	pending_pool = calloc(PENDING_SLOTS, sizeof(*pending_pool));
	if (pending_pool)
		pool_init_free_list();
}

static void forget_in_flight(void)
{
	atomic_store(&handoff, NULL);
	atomic_store(&in_flight, 0);
	followed = NULL;
	if (pending_pool)
		pool_init_free_list();
}

static struct pending *pending_get(void)
{
	pthread_once(&pool_once, pool_init);
	uint64_t head = atomic_load(&pending_free);
	for (;;) {
		uint32_t index = (uint32_t)head;
		if (!index)
			return NULL;
		uint64_t next = ((head >> 32) + 1) << 32 | pending_pool[index - 1].next_free;
		if (atomic_compare_exchange_weak(&pending_free, &head, next))
			return &pending_pool[index - 1];
	}
}

static void pending_put(struct pending *p)
{
	uint32_t index = (uint32_t)(p - pending_pool) + 1;
	uint64_t head = atomic_load(&pending_free);
	for (;;) {
		p->next_free = (uint32_t)head;
		uint64_t next = ((head >> 32) + 1) << 32 | index;
		if (atomic_compare_exchange_weak(&pending_free, &head, next))
			return;
	}
}

/* Device timestamps become trace-clock times. The command was queued (device time
 * `queued`) during the API call that began at host time `api_start`, so
 * api_start - queued is a lower bound of the device-to-host offset; the largest bound
 * seen on the device is used. With it no command starts before its API call. */
static uint64_t device_to_host(struct device_info *device, uint64_t api_start, uint64_t queued,
			       uint64_t t)
{
	int64_t bound = (int64_t)(api_start - queued);
	int64_t offset = atomic_load(&device->offset_ns);
	if (!atomic_load(&device->calibrated)) {
		int expected = 0;
		if (atomic_compare_exchange_strong(&device->calibrated, &expected, 1)) {
			atomic_store(&device->offset_ns, bound);
			offset = bound;
		} else {
			offset = atomic_load(&device->offset_ns);
		}
	}
	while (bound > offset && !atomic_compare_exchange_weak(&device->offset_ns, &offset, bound))
		;
	if (bound > offset)
		offset = bound;
	return (uint64_t)((int64_t)t + offset);
}

/* Reads a completed command's timestamps and emits its record; returns -1, keeping the
 * command, when the writer's buffer is full. Runs on the writer thread; `nesting` makes
 * the OpenCL calls below go straight to the runtime. */
static int complete(struct pending *p, cl_int status)
{
	cl_ulong queued = 0, start = 0, end = 0;
	cl_int rc = clGetEventProfilingInfo(p->event, CL_PROFILING_COMMAND_QUEUED, sizeof(queued),
					    &queued, NULL);
	rc |= clGetEventProfilingInfo(p->event, CL_PROFILING_COMMAND_START, sizeof(start), &start,
				      NULL);
	rc |= clGetEventProfilingInfo(p->event, CL_PROFILING_COMMAND_END, sizeof(end), &end, NULL);
	if (rc == CL_SUCCESS && p->device) {
		if (!queued)
			queued = start;
		uint64_t host_start = device_to_host(p->device, p->api_start_ns, queued, start);
		uint64_t host_end = host_start + (end > start ? end - start : 0);
		if (p->record.header.type == RECORD_KERNEL) {
			p->record.kernel.start_ns = host_start;
			p->record.kernel.end_ns = host_end;
			p->record.kernel.status = status;
		} else {
			p->record.copy.start_ns = host_start;
			p->record.copy.end_ns = host_end;
			p->record.copy.status = status;
		}
		if (recorder_try_emit(&p->record) == -1)
			return -1;
	} else {
		recorder_count_dropped(DROPPED_NO_TIMESTAMPS, 1);
	}
	clReleaseEvent(p->event);
	atomic_fetch_sub(&in_flight, 1);
	pending_put(p);
	return 0;
}

/* The recorder's collector: takes the commands enqueued since the last call and
 * completes every followed command that has finished. Device work is thus read on
 * gpuprof's own thread, never on the application's or the runtime's. */
static int collect_completed(int final)
{
	nesting++;
	struct pending *fresh = atomic_exchange(&handoff, NULL);
	struct pending *reversed = NULL; /* the stack is newest first */
	while (fresh) {
		struct pending *next = fresh->next;
		fresh->next = reversed;
		reversed = fresh;
		fresh = next;
	}
	struct pending **tail = &followed;
	while (*tail)
		tail = &(*tail)->next;
	*tail = reversed;
	for (struct pending **link = &followed; *link;) {
		struct pending *p = *link;
		cl_int status = CL_QUEUED;
		if (clGetEventInfo(p->event, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof(status),
				   &status, NULL) != CL_SUCCESS)
			status = CL_INVALID_EVENT;
		if (status == CL_COMPLETE || status < 0) {
			struct pending *next = p->next;
			if (complete(p, status == CL_COMPLETE ? 0 : status) < 0) {
				nesting--;
				return 1; /* the buffer is full: drain, then go on */
			}
			*link = next;
		} else {
			link = &p->next;
		}
	}
	(void)final; /* unfinished commands at the end were never completed: not recorded */
	nesting--;
	return 0;
}

/* Called after an enqueue succeeded: hands the command to the writer thread. `event` is
 * the command's event; `ours` says the application did not ask for it. */
static void follow(struct pending *p, cl_event event, int ours)
{
	if (!ours)
		clRetainEvent(event);
	p->event = event;
	struct pending *head = atomic_load(&handoff);
	do
		p->next = head;
	while (!atomic_compare_exchange_weak(&handoff, &head, p));
	if (atomic_fetch_add(&in_flight, 1) + 1 == PENDING_SLOTS / 2)
		recorder_wake(); /* collect early rather than run out of slots */
}

/* Prepares the in-flight state of one command, or NULL when it is not followed. */
static struct pending *pending_begin(const struct api_call *call, cl_command_queue queue,
				     int wanted)
{
	if (!call->collected || !wanted)
		return NULL;
	struct queue_info *q = handle_find(&queue_map, queue);
	if (!q) { /* created before gpuprof could see it: profiling may be off */
		recorder_count_dropped(DROPPED_UNTRACKED_QUEUE, 1);
		return NULL;
	}
	struct pending *p = pending_get();
	if (!p) {
		recorder_count_dropped(DROPPED_NO_SLOT, 1);
		return NULL;
	}
	p->api_start_ns = call->start_ns;
	p->device = q->device;
	memset(&p->record, 0, sizeof(p->record));
	p->record.kernel.agent_id = q->device ? q->device->agent_id : 0;
	p->record.kernel.queue_id = q->queue_id;
	return p;
}

static struct pending *kernel_begin(const struct api_call *call, cl_command_queue queue,
				    cl_kernel kernel, cl_uint dims, const size_t *global,
				    const size_t *local)
{
	struct pending *p = pending_begin(call, queue, trace_kernels);
	if (!p)
		return NULL;
	struct record_kernel *k = &p->record.kernel;
	uint32_t agent = k->agent_id, queue_id = k->queue_id;
	*k = (struct record_kernel){
		.header = { sizeof(*k), RECORD_KERNEL, 0 },
		.tid = current_thread_id(),
		.agent_id = agent,
		.queue_id = queue_id,
		.correlation_id = call->correlation_id,
		.dispatch_id = atomic_fetch_add(&next_dispatch, 1) + 1,
		.grid = { 1, 1, 1 },
		.stream_id = queue_id,
		.range_id = recorder_current_range(),
	};
	for (cl_uint d = 0; d < dims && d < 3; d++) {
		k->grid[d] = global ? (uint32_t)global[d] : 1;
		k->workgroup[d] = local ? (uint32_t)local[d] : 0;
	}
	if (local)
		for (cl_uint d = dims; d < 3; d++)
			k->workgroup[d] = 1;
	struct kernel_info *info = kernel_lookup(kernel);
	if (!info) {
		char name[1024] = "<unknown kernel>";
		clGetKernelInfo(kernel, CL_KERNEL_FUNCTION_NAME, sizeof(name) - 1, name, NULL);
		k->name_id = recorder_intern(name);
	} else {
		k->name_id = info->name_id;
		if (!atomic_load_explicit(&info->sized, memory_order_acquire) && p->device) {
			cl_ulong lmem = 0, pmem = 0;
			clGetKernelWorkGroupInfo(kernel, p->device->device, CL_KERNEL_LOCAL_MEM_SIZE,
						 sizeof(lmem), &lmem, NULL);
			clGetKernelWorkGroupInfo(kernel, p->device->device, CL_KERNEL_PRIVATE_MEM_SIZE,
						 sizeof(pmem), &pmem, NULL);
			info->local_memory_bytes = (uint32_t)lmem;
			info->private_memory_bytes = (uint32_t)pmem;
			atomic_store_explicit(&info->sized, 1, memory_order_release);
		}
		k->local_memory_bytes = info->local_memory_bytes;
		k->static_local_memory_bytes = info->local_memory_bytes;
		k->private_memory_bytes = info->private_memory_bytes;
	}
	return p;
}

static struct pending *copy_begin(const struct api_call *call, cl_command_queue queue,
				  uint32_t operation, uint32_t direction, uint64_t bytes)
{
	struct pending *p = pending_begin(call, queue, trace_copies);
	if (!p)
		return NULL;
	uint32_t agent = p->record.kernel.agent_id, queue_id = p->record.kernel.queue_id;
	struct record_memory_copy *c = &p->record.copy;
	*c = (struct record_memory_copy){
		.header = { sizeof(*c), RECORD_MEMORY_COPY, 0 },
		.tid = current_thread_id(),
		.queue_id = queue_id,
		.src_agent_id = direction == COPY_HOST_TO_DEVICE ? 0 : agent,
		.dst_agent_id = direction == COPY_DEVICE_TO_HOST ? 0 : agent,
		.operation = operation,
		.direction = direction,
		.function_id = function_string[call->function],
		.bytes = bytes,
		.correlation_id = call->correlation_id,
		.src_memory_kind = direction == COPY_HOST_TO_DEVICE ? MEMORY_KIND_UNKNOWN
								     : MEMORY_KIND_DEVICE,
		.dst_memory_kind = direction == COPY_DEVICE_TO_HOST ? MEMORY_KIND_UNKNOWN
								     : MEMORY_KIND_DEVICE,
		.stream_id = queue_id,
	};
	return p;
}

/* Finishes an enqueue: follows the command when it was enqueued, else frees the slot.
 * `app_event` is the application's event pointer (may be NULL), `event` our local one. */
static void enqueue_end(struct pending *p, cl_int rc, cl_event *app_event, cl_event event)
{
	if (!p)
		return;
	if (rc != CL_SUCCESS) {
		pending_put(p);
		return;
	}
	follow(p, app_event ? *app_event : event, app_event == NULL);
}

/* The event pointer to pass down: the application's, or ours when it passed none and
 * the command is followed. */
#define EVENT_ARG(p, app_event, local) ((app_event) ? (app_event) : (p) ? &(local) : NULL)

/* ---- wrappers: queues and profiling ---------------------------------------------------- */

EXPORT cl_command_queue CL_API_CALL clCreateCommandQueue(cl_context context, cl_device_id device,
							 cl_command_queue_properties properties,
							 cl_int *errcode_ret)
{
	REAL(clCreateCommandQueue);
	struct api_call call;
	api_begin(&call, FN_clCreateCommandQueue);
	cl_int rc = CL_SUCCESS;
	cl_command_queue_properties ours = properties;
	if (call.recorded)
		ours |= CL_QUEUE_PROFILING_ENABLE;
	cl_command_queue queue = real_clCreateCommandQueue(context, device, ours, &rc);
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
	REAL(clCreateCommandQueueWithProperties);
	struct api_call call;
	api_begin(&call, FN_clCreateCommandQueueWithProperties);
	cl_int rc = CL_SUCCESS;
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
	cl_command_queue queue = real_clCreateCommandQueueWithProperties(
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
	REAL(clGetCommandQueueInfo);
	struct queue_info *q = handle_find(&queue_map, queue);
	if (q && name == CL_QUEUE_PROPERTIES_ARRAY) {
		size_t need = q->app_array_size;
		if (value && size < need)
			return CL_INVALID_VALUE;
		if (value && need)
			memcpy(value, q->app_array, need);
		if (size_ret)
			*size_ret = need;
		return CL_SUCCESS;
	}
	cl_int rc = real_clGetCommandQueueInfo(queue, name, size, value, size_ret);
	if (rc == CL_SUCCESS && q && name == CL_QUEUE_PROPERTIES && value &&
	    size >= sizeof(cl_command_queue_properties) && !q->app_profiling)
		*(cl_command_queue_properties *)value &= ~(cl_command_queue_properties)
			CL_QUEUE_PROFILING_ENABLE;
	return rc;
}

/* An application that did not ask for profiling sees what it would have seen. */
EXPORT cl_int CL_API_CALL clGetEventProfilingInfo(cl_event event, cl_profiling_info name,
						  size_t size, void *value, size_t *size_ret)
{
	REAL(clGetEventProfilingInfo);
	if (!nesting) {
		REAL(clGetEventInfo);
		cl_command_queue queue = NULL;
		if (real_clGetEventInfo(event, CL_EVENT_COMMAND_QUEUE, sizeof(queue), &queue,
					NULL) == CL_SUCCESS) {
			struct queue_info *q = queue ? handle_find(&queue_map, queue) : NULL;
			if (q && !q->app_profiling)
				return CL_PROFILING_INFO_NOT_AVAILABLE;
		}
	}
	return real_clGetEventProfilingInfo(event, name, size, value, size_ret);
}

/* ---- wrappers: kernels ------------------------------------------------------------------ */

EXPORT cl_kernel CL_API_CALL clCreateKernel(cl_program program, const char *name,
					    cl_int *errcode_ret)
{
	REAL(clCreateKernel);
	struct api_call call;
	api_begin(&call, FN_clCreateKernel);
	cl_int rc = CL_SUCCESS;
	cl_kernel kernel = real_clCreateKernel(program, name, &rc);
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
	REAL(clCreateKernelsInProgram);
	struct api_call call;
	api_begin(&call, FN_clCreateKernelsInProgram);
	cl_uint made = 0;
	cl_int rc = real_clCreateKernelsInProgram(program, count, kernels, &made);
	if (rc == CL_SUCCESS && kernels && call.recorded)
		for (cl_uint i = 0; i < made && i < count; i++)
			kernel_register(kernels[i]);
	api_end(&call, rc);
	if (count_ret)
		*count_ret = made;
	return rc;
}

EXPORT cl_kernel CL_API_CALL clCloneKernel(cl_kernel source, cl_int *errcode_ret)
{
	REAL(clCloneKernel);
	struct api_call call;
	api_begin(&call, FN_clCloneKernel);
	cl_int rc = CL_SUCCESS;
	cl_kernel kernel = real_clCloneKernel(source, &rc);
	if (kernel && call.recorded)
		kernel_register(kernel);
	api_end(&call, rc);
	if (errcode_ret)
		*errcode_ret = rc;
	return kernel;
}

EXPORT cl_int CL_API_CALL clEnqueueNDRangeKernel(cl_command_queue queue, cl_kernel kernel,
						 cl_uint dims, const size_t *offset,
						 const size_t *global, const size_t *local,
						 cl_uint wait_count, const cl_event *wait_list,
						 cl_event *event)
{
	REAL(clEnqueueNDRangeKernel);
	struct api_call call;
	api_begin(&call, FN_clEnqueueNDRangeKernel);
	struct pending *p = kernel_begin(&call, queue, kernel, dims, global, local);
	cl_event local_event = NULL;
	cl_int rc = real_clEnqueueNDRangeKernel(queue, kernel, dims, offset, global, local,
						wait_count, wait_list,
						EVENT_ARG(p, event, local_event));
	enqueue_end(p, rc, event, local_event);
	api_end(&call, rc);
	return rc;
}

EXPORT cl_int CL_API_CALL clEnqueueTask(cl_command_queue queue, cl_kernel kernel,
					cl_uint wait_count, const cl_event *wait_list,
					cl_event *event)
{
	REAL(clEnqueueTask);
	struct api_call call;
	api_begin(&call, FN_clEnqueueTask);
	size_t one = 1;
	struct pending *p = kernel_begin(&call, queue, kernel, 1, &one, &one);
	cl_event local_event = NULL;
	cl_int rc = real_clEnqueueTask(queue, kernel, wait_count, wait_list,
				       EVENT_ARG(p, event, local_event));
	enqueue_end(p, rc, event, local_event);
	api_end(&call, rc);
	return rc;
}

/* ---- wrappers: transfers ---------------------------------------------------------------- */

/* Wraps an enqueue that moves `bytes` in `direction`; `args` are the real call's
 * arguments with the event pointer last. */
#define ENQUEUE_TRANSFER(fn, queue, operation, direction, bytes, event, call_args) \
	REAL(fn); \
	struct api_call call; \
	api_begin(&call, FN_##fn); \
	struct pending *p = copy_begin(&call, queue, operation, direction, bytes); \
	cl_event local_event = NULL; \
	cl_event *event_arg = EVENT_ARG(p, event, local_event); \
	cl_int rc = real_##fn call_args; \
	enqueue_end(p, rc, event, local_event); \
	api_end(&call, rc)

static uint64_t rect_bytes(const size_t *region)
{
	return region ? (uint64_t)region[0] * region[1] * region[2] : 0;
}

EXPORT cl_int CL_API_CALL clEnqueueReadBuffer(cl_command_queue queue, cl_mem buffer,
					      cl_bool blocking, size_t offset, size_t size,
					      void *ptr, cl_uint wait_count,
					      const cl_event *wait_list, cl_event *event)
{
	ENQUEUE_TRANSFER(clEnqueueReadBuffer, queue, COPY_OPERATION_COPY, COPY_DEVICE_TO_HOST,
			 size, event, (queue, buffer, blocking, offset, size, ptr, wait_count,
				       wait_list, event_arg));
	return rc;
}

EXPORT cl_int CL_API_CALL clEnqueueWriteBuffer(cl_command_queue queue, cl_mem buffer,
					       cl_bool blocking, size_t offset, size_t size,
					       const void *ptr, cl_uint wait_count,
					       const cl_event *wait_list, cl_event *event)
{
	ENQUEUE_TRANSFER(clEnqueueWriteBuffer, queue, COPY_OPERATION_COPY, COPY_HOST_TO_DEVICE,
			 size, event, (queue, buffer, blocking, offset, size, ptr, wait_count,
				       wait_list, event_arg));
	return rc;
}

EXPORT cl_int CL_API_CALL clEnqueueCopyBuffer(cl_command_queue queue, cl_mem src, cl_mem dst,
					      size_t src_offset, size_t dst_offset, size_t size,
					      cl_uint wait_count, const cl_event *wait_list,
					      cl_event *event)
{
	ENQUEUE_TRANSFER(clEnqueueCopyBuffer, queue, COPY_OPERATION_COPY, COPY_DEVICE_TO_DEVICE,
			 size, event, (queue, src, dst, src_offset, dst_offset, size, wait_count,
				       wait_list, event_arg));
	return rc;
}

EXPORT cl_int CL_API_CALL clEnqueueReadBufferRect(
	cl_command_queue queue, cl_mem buffer, cl_bool blocking, const size_t *buffer_origin,
	const size_t *host_origin, const size_t *region, size_t buffer_row_pitch,
	size_t buffer_slice_pitch, size_t host_row_pitch, size_t host_slice_pitch, void *ptr,
	cl_uint wait_count, const cl_event *wait_list, cl_event *event)
{
	ENQUEUE_TRANSFER(clEnqueueReadBufferRect, queue, COPY_OPERATION_COPY,
			 COPY_DEVICE_TO_HOST, rect_bytes(region), event,
			 (queue, buffer, blocking, buffer_origin, host_origin, region,
			  buffer_row_pitch, buffer_slice_pitch, host_row_pitch, host_slice_pitch,
			  ptr, wait_count, wait_list, event_arg));
	return rc;
}

EXPORT cl_int CL_API_CALL clEnqueueWriteBufferRect(
	cl_command_queue queue, cl_mem buffer, cl_bool blocking, const size_t *buffer_origin,
	const size_t *host_origin, const size_t *region, size_t buffer_row_pitch,
	size_t buffer_slice_pitch, size_t host_row_pitch, size_t host_slice_pitch,
	const void *ptr, cl_uint wait_count, const cl_event *wait_list, cl_event *event)
{
	ENQUEUE_TRANSFER(clEnqueueWriteBufferRect, queue, COPY_OPERATION_COPY,
			 COPY_HOST_TO_DEVICE, rect_bytes(region), event,
			 (queue, buffer, blocking, buffer_origin, host_origin, region,
			  buffer_row_pitch, buffer_slice_pitch, host_row_pitch, host_slice_pitch,
			  ptr, wait_count, wait_list, event_arg));
	return rc;
}

EXPORT cl_int CL_API_CALL clEnqueueCopyBufferRect(
	cl_command_queue queue, cl_mem src, cl_mem dst, const size_t *src_origin,
	const size_t *dst_origin, const size_t *region, size_t src_row_pitch,
	size_t src_slice_pitch, size_t dst_row_pitch, size_t dst_slice_pitch,
	cl_uint wait_count, const cl_event *wait_list, cl_event *event)
{
	ENQUEUE_TRANSFER(clEnqueueCopyBufferRect, queue, COPY_OPERATION_COPY,
			 COPY_DEVICE_TO_DEVICE, rect_bytes(region), event,
			 (queue, src, dst, src_origin, dst_origin, region, src_row_pitch,
			  src_slice_pitch, dst_row_pitch, dst_slice_pitch, wait_count, wait_list,
			  event_arg));
	return rc;
}

EXPORT cl_int CL_API_CALL clEnqueueFillBuffer(cl_command_queue queue, cl_mem buffer,
					      const void *pattern, size_t pattern_size,
					      size_t offset, size_t size, cl_uint wait_count,
					      const cl_event *wait_list, cl_event *event)
{
	ENQUEUE_TRANSFER(clEnqueueFillBuffer, queue, COPY_OPERATION_FILL, COPY_NONE, size, event,
			 (queue, buffer, pattern, pattern_size, offset, size, wait_count,
			  wait_list, event_arg));
	return rc;
}

/* Mapped regions, so that an unmap knows how many bytes it writes back. Maps are rare
 * and expensive, so a small locked table is enough. */
struct mapping {
	void *ptr;
	uint64_t bytes;
	int writes; /* mapped for writing: the unmap moves data to the device */
};
static struct mapping mappings[1024];
static pthread_mutex_t mapping_lock = PTHREAD_MUTEX_INITIALIZER;

EXPORT void *CL_API_CALL clEnqueueMapBuffer(cl_command_queue queue, cl_mem buffer,
					    cl_bool blocking, cl_map_flags flags, size_t offset,
					    size_t size, cl_uint wait_count,
					    const cl_event *wait_list, cl_event *event,
					    cl_int *errcode_ret)
{
	int invalidate = (flags & CL_MAP_WRITE_INVALIDATE_REGION) != 0;
	int reads = !invalidate && (flags & CL_MAP_READ || !(flags & CL_MAP_WRITE));
	uint32_t direction = reads ? COPY_DEVICE_TO_HOST : COPY_NONE;
	REAL(clEnqueueMapBuffer);
	struct api_call call;
	api_begin(&call, FN_clEnqueueMapBuffer);
	struct pending *p = copy_begin(&call, queue, COPY_OPERATION_MAP, direction, size);
	cl_event local_event = NULL;
	cl_int rc = CL_SUCCESS;
	void *ptr = real_clEnqueueMapBuffer(queue, buffer, blocking, flags, offset, size,
					    wait_count, wait_list,
					    EVENT_ARG(p, event, local_event), &rc);
	enqueue_end(p, rc, event, local_event);
	if (ptr && call.recorded) {
		pthread_mutex_lock(&mapping_lock);
		for (size_t i = 0; i < 1024; i++) {
			if (!mappings[i].ptr) {
				mappings[i] = (struct mapping){ ptr, size,
								(flags & (CL_MAP_WRITE |
									  CL_MAP_WRITE_INVALIDATE_REGION)) != 0 };
				break;
			}
		}
		pthread_mutex_unlock(&mapping_lock);
	}
	api_end(&call, rc);
	if (errcode_ret)
		*errcode_ret = rc;
	return ptr;
}

EXPORT cl_int CL_API_CALL clEnqueueUnmapMemObject(cl_command_queue queue, cl_mem memobj,
						  void *mapped, cl_uint wait_count,
						  const cl_event *wait_list, cl_event *event)
{
	struct mapping found = { NULL, 0, 0 };
	pthread_mutex_lock(&mapping_lock);
	for (size_t i = 0; i < 1024; i++) {
		if (mapped && mappings[i].ptr == mapped) {
			found = mappings[i];
			mappings[i].ptr = NULL;
			break;
		}
	}
	pthread_mutex_unlock(&mapping_lock);
	ENQUEUE_TRANSFER(clEnqueueUnmapMemObject, queue, COPY_OPERATION_UNMAP,
			 found.writes ? COPY_HOST_TO_DEVICE : COPY_NONE, found.bytes, event,
			 (queue, memobj, mapped, wait_count, wait_list, event_arg));
	return rc;
}

/* ---- wrappers: calls recorded as API calls only ------------------------------------------ */

/* A call that returns a cl_int status. */
#define WRAP_STATUS(fn, params, args) \
	EXPORT cl_int CL_API_CALL fn params \
	{ \
		REAL(fn); \
		struct api_call call; \
		api_begin(&call, FN_##fn); \
		cl_int rc = real_##fn args; \
		api_end(&call, rc); \
		return rc; \
	}

/* A call that returns an object and reports its status through errcode_ret. */
#define WRAP_OBJECT(type, fn, params, args) \
	EXPORT type CL_API_CALL fn params \
	{ \
		REAL(fn); \
		struct api_call call; \
		api_begin(&call, FN_##fn); \
		cl_int rc = CL_SUCCESS; \
		type object = real_##fn args; \
		api_end(&call, rc); \
		if (errcode_ret) \
			*errcode_ret = rc; \
		return object; \
	}

WRAP_STATUS(clGetPlatformIDs, (cl_uint n, cl_platform_id *platforms, cl_uint *count),
	    (n, platforms, count))
WRAP_STATUS(clGetDeviceIDs, (cl_platform_id platform, cl_device_type type, cl_uint n,
			     cl_device_id *devices, cl_uint *count),
	    (platform, type, n, devices, count))
WRAP_OBJECT(cl_context, clCreateContext,
	    (const cl_context_properties *properties, cl_uint n, const cl_device_id *devices,
	     void(CL_CALLBACK *notify)(const char *, const void *, size_t, void *),
	     void *user_data, cl_int *errcode_ret),
	    (properties, n, devices, notify, user_data, &rc))
WRAP_OBJECT(cl_context, clCreateContextFromType,
	    (const cl_context_properties *properties, cl_device_type type,
	     void(CL_CALLBACK *notify)(const char *, const void *, size_t, void *),
	     void *user_data, cl_int *errcode_ret),
	    (properties, type, notify, user_data, &rc))
WRAP_STATUS(clReleaseContext, (cl_context context), (context))
WRAP_OBJECT(cl_mem, clCreateBuffer,
	    (cl_context context, cl_mem_flags flags, size_t size, void *host_ptr,
	     cl_int *errcode_ret),
	    (context, flags, size, host_ptr, &rc))
WRAP_STATUS(clReleaseMemObject, (cl_mem memobj), (memobj))
WRAP_OBJECT(cl_program, clCreateProgramWithSource,
	    (cl_context context, cl_uint count, const char **strings, const size_t *lengths,
	     cl_int *errcode_ret),
	    (context, count, strings, lengths, &rc))
WRAP_OBJECT(cl_program, clCreateProgramWithBinary,
	    (cl_context context, cl_uint n, const cl_device_id *devices, const size_t *lengths,
	     const unsigned char **binaries, cl_int *binary_status, cl_int *errcode_ret),
	    (context, n, devices, lengths, binaries, binary_status, &rc))
WRAP_STATUS(clBuildProgram,
	    (cl_program program, cl_uint n, const cl_device_id *devices, const char *options,
	     void(CL_CALLBACK *notify)(cl_program, void *), void *user_data),
	    (program, n, devices, options, notify, user_data))
WRAP_STATUS(clReleaseProgram, (cl_program program), (program))
WRAP_STATUS(clSetKernelArg, (cl_kernel kernel, cl_uint index, size_t size, const void *value),
	    (kernel, index, size, value))
WRAP_STATUS(clEnqueueMarkerWithWaitList,
	    (cl_command_queue queue, cl_uint n, const cl_event *wait_list, cl_event *event),
	    (queue, n, wait_list, event))
WRAP_STATUS(clEnqueueBarrierWithWaitList,
	    (cl_command_queue queue, cl_uint n, const cl_event *wait_list, cl_event *event),
	    (queue, n, wait_list, event))
WRAP_STATUS(clFlush, (cl_command_queue queue), (queue))
WRAP_STATUS(clFinish, (cl_command_queue queue), (queue))
WRAP_STATUS(clWaitForEvents, (cl_uint n, const cl_event *events), (n, events))
WRAP_STATUS(clReleaseEvent, (cl_event event), (event))

/* A release that forgets the object when the application drops its last reference. */
#define WRAP_RELEASE(fn, type, map, get_info, reference_count) \
	EXPORT cl_int CL_API_CALL fn(type object) \
	{ \
		REAL(fn); \
		struct api_call call; \
		api_begin(&call, FN_##fn); \
		cl_uint references = 0; \
		if (call.recorded) \
			get_info(object, reference_count, sizeof(references), &references, NULL); \
		cl_int rc = real_##fn(object); \
		if (rc == CL_SUCCESS && call.recorded) \
			forget_if_last(&map, object, references); \
		api_end(&call, rc); \
		return rc; \
	}

WRAP_RELEASE(clReleaseKernel, cl_kernel, kernel_map, clGetKernelInfo, CL_KERNEL_REFERENCE_COUNT)
WRAP_RELEASE(clReleaseCommandQueue, cl_command_queue, queue_map, clGetCommandQueueInfo,
	     CL_QUEUE_REFERENCE_COUNT)

/* ---- shutdown ----------------------------------------------------------------------------- */

/* Registered with atexit() once the OpenCL runtime is loaded, so it runs before the
 * runtime's own destructors: the final collection still finds a working runtime. The
 * destructor covers a library unloaded without exit(). */
static void shutdown_recording(void)
{
	recorder_stop();
}

__attribute__((destructor)) static void unload(void)
{
	recorder_stop();
}
