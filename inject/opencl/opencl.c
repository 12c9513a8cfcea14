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

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <link.h>
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
#include "api.h"

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

/* ---- API function names, and the real functions ------------------------------------ */

enum function {
#define ENUM(kind, version, ret, name, params, args) FN_##name,
	OPENCL_API(ENUM)
#undef ENUM
	FUNCTION_COUNT
};

static const char *const function_names[] = {
#define NAME(kind, version, ret, name, params, args) #name,
	OPENCL_API(NAME)
#undef NAME
};

static uint32_t function_string[FUNCTION_COUNT];

/* The OpenCL ICD loader's definitions. gpuprof's library is named like the loader
 * (libOpenCL.so.1), so the program and everything it loads find it instead of the loader
 * however they look for OpenCL (linked, dlopen()ed privately, dlsym() on a handle of
 * their own); it forwards to the loader, found by find_loader(). */
static struct {
#define FIELD(kind, version, ret, name, params, args) __typeof__(&name) name;
	OPENCL_API(FIELD)
#undef FIELD
} real;
static pthread_once_t real_once = PTHREAD_ONCE_INIT;
static _Atomic int real_loaded;

/* Marks this library, so that gpuprof (and find_loader()) never take it for the loader. */
EXPORT const int gpuprof_opencl_interposer = 1;

/* A loader at `path`, unless it is this library under another name. */
static void *open_loader(const char *path)
{
	void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (handle && dlsym(handle, "gpuprof_opencl_interposer")) {
		dlclose(handle);
		handle = NULL;
	}
	return handle;
}

/* The directory of the C library: where the distribution keeps the loader too. */
static int find_libc(struct dl_phdr_info *info, size_t size, void *data)
{
	const char *base = strrchr(info->dlpi_name, '/');
	if (!base || strncmp(base, "/libc.so", 8))
		return 0;
	snprintf(data, PATH_MAX, "%.*s", (int)(base - info->dlpi_name), info->dlpi_name);
	return 1;
}

/* GPUPROF_OPENCL_LOADER, which `gpuprof trace` sets to the loader the program would have
 * found; else (preloaded by hand) a loader later in the search order, or the system's. */
static void *find_loader(void)
{
	const char *named = getenv("GPUPROF_OPENCL_LOADER");
	void *handle = named && *named ? open_loader(named) : NULL;
	if (handle)
		return handle;
	void *next = dlsym(RTLD_NEXT, "clGetPlatformIDs");
	if (next && next != (void *)clGetPlatformIDs)
		return RTLD_NEXT;
	char dir[PATH_MAX] = "", path[PATH_MAX + 32];
	dl_iterate_phdr(find_libc, dir);
	const char *dirs[] = { dir, "/usr/lib64", "/usr/lib", "/usr/local/lib" };
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]) && !handle; i++) {
		if (!*dirs[i])
			continue;
		snprintf(path, sizeof(path), "%s/libOpenCL.so.1", dirs[i]);
		handle = open_loader(path);
	}
	return handle;
}

static void load_real(void)
{
	int saved = errno;
	void *handle = find_loader();
	if (!handle)
		recorder_report("no OpenCL ICD loader found (set GPUPROF_OPENCL_LOADER to its "
				"path): the program's OpenCL calls fail");
#define LOOKUP(kind, version, ret, name, params, args) \
	real.name = handle ? (__typeof__(&name))dlsym(handle, #name) : NULL;
	OPENCL_API(LOOKUP)
#undef LOOKUP
	atomic_store_explicit(&real_loaded, 1, memory_order_release);
	errno = saved;
}

/* The loader's `name`, or NULL when it has none (an older loader): wrappers then fail
 * the call as the loader would fail an unknown one, never the process. */
#define REAL(name) \
	((atomic_load_explicit(&real_loaded, memory_order_acquire) \
		  ? (void)0 : (void)pthread_once(&real_once, load_real)), \
	 real.name)

/* What a wrapper returns when the loader lacks its function. */
#define MISSING CL_INVALID_OPERATION

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

static int collect_completed(int final);
static void exit_collect(void);

static void initialize(void)
{
	read_config();
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

static struct handle_map device_map, queue_map, kernel_map;

static uint32_t device_string(cl_device_id device, cl_device_info what)
{
	char text[1024] = "";
	if (REAL(clGetDeviceInfo))
		real.clGetDeviceInfo(device, what, sizeof(text) - 1, text, NULL);
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

	if (!REAL(clGetDeviceInfo))
		return info;
	cl_device_type type = 0;
	cl_uint units = 0, clock = 0, vendor = 0;
	cl_ulong global = 0, local = 0;
	size_t wg = 0, dims[3] = { 0, 0, 0 };
	real.clGetDeviceInfo(device, CL_DEVICE_TYPE, sizeof(type), &type, NULL);
	real.clGetDeviceInfo(device, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof(units), &units, NULL);
	real.clGetDeviceInfo(device, CL_DEVICE_MAX_CLOCK_FREQUENCY, sizeof(clock), &clock, NULL);
	real.clGetDeviceInfo(device, CL_DEVICE_VENDOR_ID, sizeof(vendor), &vendor, NULL);
	real.clGetDeviceInfo(device, CL_DEVICE_GLOBAL_MEM_SIZE, sizeof(global), &global, NULL);
	real.clGetDeviceInfo(device, CL_DEVICE_LOCAL_MEM_SIZE, sizeof(local), &local, NULL);
	real.clGetDeviceInfo(device, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof(wg), &wg, NULL);
	real.clGetDeviceInfo(device, CL_DEVICE_MAX_WORK_ITEM_SIZES, sizeof(dims), dims, NULL);
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
	if (!REAL(clGetKernelInfo) ||
	    real.clGetKernelInfo(kernel, CL_KERNEL_FUNCTION_NAME, sizeof(name) - 1, name, NULL))
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

/* Commands are followed in slots of a pool that grows by chunks, so a program with
 * millions of commands in flight loses none until the memory cap below. */
#define PENDING_CHUNK 65536
#define PENDING_CHUNKS 64 /* at most 4,194,304 commands in flight */

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
	struct pending *next;    /* in the handoff stack, then in the writer's list */
	uint32_t index;          /* this slot's index + 1 in the pool */
	uint32_t next_free;      /* index + 1 of the next free slot */
};

static _Atomic(struct pending *) pending_chunks[PENDING_CHUNKS];
static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER; /* growth only */
static _Atomic uint64_t pending_free; /* (tag << 32) | (index + 1) of the first free slot */
static _Atomic(struct pending *) handoff; /* enqueued commands not yet seen by the writer */
static _Atomic uint32_t in_flight;
static struct pending *followed;          /* the writer thread's own list */
static _Atomic int runtime_closing;       /* exit began: the writer no longer calls OpenCL */

static struct pending *pending_at(uint32_t index)
{
	struct pending *chunk = atomic_load(&pending_chunks[(index - 1) / PENDING_CHUNK]);
	return &chunk[(index - 1) % PENDING_CHUNK];
}

/* Pushes the slots first..last (indexes + 1, chained by next_free) on the free list. */
static void pending_push(uint32_t first, struct pending *last)
{
	uint64_t head = atomic_load(&pending_free);
	for (;;) {
		last->next_free = (uint32_t)head;
		uint64_t next = ((head >> 32) + 1) << 32 | first;
		if (atomic_compare_exchange_weak(&pending_free, &head, next))
			return;
	}
}

/* Chains the slots of chunk c and pushes them. */
static void chunk_free_all(uint32_t c, struct pending *chunk)
{
	uint32_t base = c * PENDING_CHUNK;
	for (uint32_t i = 0; i < PENDING_CHUNK; i++) {
		chunk[i].index = base + i + 1;
		chunk[i].next_free = i + 1 < PENDING_CHUNK ? base + i + 2 : 0;
		atomic_store_explicit(&chunk[i].event, NULL, memory_order_relaxed);
	}
	pending_push(base + 1, &chunk[PENDING_CHUNK - 1]);
}

/* Adds a chunk when the free list is empty; 0 when it could, -1 at the cap. */
static int pool_grow(void)
{
	int rc = -1;
	pthread_mutex_lock(&pool_lock);
	if ((uint32_t)atomic_load(&pending_free)) {
		rc = 0; /* another thread grew it */
	} else {
		for (uint32_t c = 0; c < PENDING_CHUNKS; c++) {
			if (atomic_load(&pending_chunks[c]))
				continue;
			struct pending *chunk = calloc(PENDING_CHUNK, sizeof(*chunk));
			if (chunk) {
				atomic_store(&pending_chunks[c], chunk);
				chunk_free_all(c, chunk);
				rc = 0;
			}
			break;
		}
	}
	pthread_mutex_unlock(&pool_lock);
	return rc;
}

static void forget_in_flight(void)
{
	atomic_store(&handoff, NULL);
	atomic_store(&in_flight, 0);
	atomic_store(&pending_free, 0);
	followed = NULL;
	for (uint32_t c = 0; c < PENDING_CHUNKS; c++) {
		struct pending *chunk = atomic_load(&pending_chunks[c]);
		if (chunk)
			chunk_free_all(c, chunk);
	}
}

static struct pending *pending_get(void)
{
	for (;;) {
		uint64_t head = atomic_load(&pending_free);
		while ((uint32_t)head) {
			struct pending *p = pending_at((uint32_t)head);
			uint64_t next = ((head >> 32) + 1) << 32 | p->next_free;
			if (atomic_compare_exchange_weak(&pending_free, &head, next))
				return p;
		}
		if (pool_grow() < 0)
			return NULL;
	}
}

static void pending_put(struct pending *p)
{
	atomic_store_explicit(&p->event, NULL, memory_order_relaxed);
	pending_push(p->index, p);
}

/* How many references gpuprof holds on an event of the application's (see
 * clGetEventInfo). A rare query: the slots are searched. */
static cl_uint references_held(cl_event event)
{
	cl_uint held = 0;
	for (uint32_t c = 0; c < PENDING_CHUNKS; c++) {
		struct pending *chunk = atomic_load(&pending_chunks[c]);
		for (uint32_t i = 0; chunk && i < PENDING_CHUNK; i++)
			if (atomic_load_explicit(&chunk[i].event, memory_order_relaxed) == event &&
			    chunk[i].app_event)
				held++;
	}
	return held;
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

static void pending_release(struct pending *p)
{
	REAL(clReleaseEvent)(atomic_load(&p->event));
	atomic_fetch_sub(&in_flight, 1);
	pending_put(p);
}

/* Reads a completed command's timestamps and emits its record; returns -1, keeping the
 * command, when the writer's buffer is full. Runs on the writer thread; `nesting` makes
 * the OpenCL calls below go straight to the runtime. */
static int complete(struct pending *p, cl_int status)
{
	cl_ulong queued = 0, start = 0, end = 0;
	cl_event event = atomic_load(&p->event);
	cl_int rc = REAL(clGetEventProfilingInfo)(event, CL_PROFILING_COMMAND_QUEUED,
						  sizeof(queued), &queued, NULL);
	rc |= REAL(clGetEventProfilingInfo)(event, CL_PROFILING_COMMAND_START, sizeof(start),
					    &start, NULL);
	rc |= REAL(clGetEventProfilingInfo)(event, CL_PROFILING_COMMAND_END, sizeof(end), &end,
					    NULL);
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
	pending_release(p);
	return 0;
}

/* Takes the commands enqueued since the last call onto the writer's list, oldest first. */
static void take_handoff(void)
{
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
}

/* The recorder's collector: completes every followed command that has finished. Device
 * work is thus read on gpuprof's own thread, never on the application's or the
 * runtime's. At the end (`final`) what has not finished is counted as lost; once exit
 * began (runtime_closing) the runtime is not called again: its libraries may already be
 * finalised. */
static int collect_completed(int final)
{
	nesting++;
	take_handoff();
	int closing = atomic_load(&runtime_closing);
	for (struct pending **link = &followed; *link;) {
		struct pending *p = *link;
		cl_int status = CL_QUEUED;
		if (!closing && REAL(clGetEventInfo)(atomic_load(&p->event),
						     CL_EVENT_COMMAND_EXECUTION_STATUS,
						     sizeof(status), &status, NULL) != CL_SUCCESS)
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
	if (final && followed) {
		uint64_t unfinished = 0;
		for (struct pending *p = followed, *next; p; p = next) {
			next = p->next;
			unfinished++;
			if (!closing)
				pending_release(p);
		}
		followed = NULL;
		recorder_count_dropped(DROPPED_UNFINISHED, unfinished);
	}
	nesting--;
	return 0;
}

/* Called after an enqueue succeeded: hands the command to the writer thread. `event` is
 * the command's event; `ours` says the application did not ask for it. */
static void follow(struct pending *p, cl_event event, int ours)
{
	if (!ours)
		REAL(clRetainEvent)(event);
	p->app_event = !ours;
	atomic_store_explicit(&p->event, event, memory_order_relaxed);
	struct pending *head = atomic_load(&handoff);
	do
		p->next = head;
	while (!atomic_compare_exchange_weak(&handoff, &head, p));
	if ((atomic_fetch_add(&in_flight, 1) + 1) % (PENDING_CHUNK / 2) == 0)
		recorder_wake(); /* collect early rather than grow the pool */
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
	if (recorder_launch_stacks()) /* the program's call stack, from here */
		recorder_launch_stack(DOMAIN_OPENCL_API, function_string[call->function],
				      call->correlation_id);
	p->api_start_ns = call->start_ns;
	p->device = q->device;
	memset(&p->record, 0, sizeof(p->record));
	p->record.kernel.agent_id = q->device ? q->device->agent_id : 0;
	p->record.kernel.queue_id = q->queue_id;
	return p;
}

/* Sizes of a kernel's memory: the compiler's, plus the __local arguments set since. */
static void kernel_sizes(struct kernel_info *info, cl_kernel kernel, struct device_info *device)
{
	if (!atomic_load_explicit(&info->sized, memory_order_acquire) && device) {
		cl_ulong lmem = 0, pmem = 0;
		REAL(clGetKernelWorkGroupInfo)(kernel, device->device, CL_KERNEL_LOCAL_MEM_SIZE,
					       sizeof(lmem), &lmem, NULL);
		REAL(clGetKernelWorkGroupInfo)(kernel, device->device, CL_KERNEL_PRIVATE_MEM_SIZE,
					       sizeof(pmem), &pmem, NULL);
		info->local_memory_bytes = (uint32_t)lmem;
		info->private_memory_bytes = (uint32_t)pmem;
		atomic_store_explicit(&info->sized, 1, memory_order_release);
	}
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
	if (!kernel) { /* a native kernel: a host function the queue runs */
		k->name_id = function_string[call->function];
		return p;
	}
	struct kernel_info *info = kernel_lookup(kernel);
	if (!info) {
		char name[1024] = "<unknown kernel>";
		REAL(clGetKernelInfo)(kernel, CL_KERNEL_FUNCTION_NAME, sizeof(name) - 1, name, NULL);
		k->name_id = recorder_intern(name);
	} else {
		k->name_id = info->name_id;
		kernel_sizes(info, kernel, p->device);
		uint32_t dynamic = atomic_load_explicit(&info->dynamic_local_bytes,
							memory_order_relaxed);
		k->local_memory_bytes = info->local_memory_bytes;
		k->static_local_memory_bytes = info->local_memory_bytes > dynamic
			? info->local_memory_bytes - dynamic : 0;
		k->dynamic_local_memory_bytes = info->local_memory_bytes - k->static_local_memory_bytes;
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
	uint32_t kind = direction == COPY_UNKNOWN ? MEMORY_KIND_MANAGED : MEMORY_KIND_DEVICE;
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
		.src_memory_kind = direction == COPY_HOST_TO_DEVICE ? MEMORY_KIND_UNKNOWN : kind,
		.dst_memory_kind = direction == COPY_DEVICE_TO_HOST ? MEMORY_KIND_UNKNOWN : kind,
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
		queue = real.clCreateCommandQueue(context, device, ours, &rc);
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
		queue = real.clCreateCommandQueueWithProperties(
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
		rc = real.clGetCommandQueueInfo(queue, name, size, value, size_ret);
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
		if (call.recorded && real.clGetEventInfo(event, CL_EVENT_COMMAND_QUEUE,
							 sizeof(queue), &queue, NULL) == CL_SUCCESS)
			q = queue ? handle_find(&queue_map, queue) : NULL;
		if (q && !q->app_profiling)
			rc = CL_PROFILING_INFO_NOT_AVAILABLE;
		else
			rc = real.clGetEventProfilingInfo(event, name, size, value, size_ret);
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
	cl_int rc = REAL(clGetEventInfo) ? real.clGetEventInfo(event, name, size, value, size_ret)
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
	cl_kernel kernel = REAL(clCreateKernel) ? real.clCreateKernel(program, name, &rc) : NULL;
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
		? real.clCreateKernelsInProgram(program, count, kernels, &made) : MISSING;
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
	cl_kernel kernel = REAL(clCloneKernel) ? real.clCloneKernel(source, &rc) : NULL;
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
	cl_int rc = REAL(clSetKernelArg) ? real.clSetKernelArg(kernel, index, size, value)
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
	cl_int rc = REAL(fn) ? real.fn call_args : MISSING; \
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

/* ---- wrappers: transfers and other commands --------------------------------------------- */

/* Wraps an enqueue that moves `bytes` in `direction`; `args` are the real call's
 * arguments with the event pointer last. `bytes` is evaluated after api_begin(), so it
 * may use `call`. */
#define ENQUEUE_TRANSFER(fn, queue, operation, direction, bytes, event, call_args) \
	struct api_call call; \
	api_begin(&call, FN_##fn); \
	struct pending *p = copy_begin(&call, queue, operation, direction, bytes); \
	cl_event local_event = NULL; \
	cl_event *event_arg = EVENT_ARG(p, event, local_event); \
	cl_int rc = REAL(fn) ? real.fn call_args : MISSING; \
	enqueue_end(p, rc, event, local_event); \
	api_end(&call, rc)

static uint64_t rect_bytes(const size_t *region)
{
	return region ? (uint64_t)region[0] * region[1] * region[2] : 0;
}

/* Bytes of a region of an image: pixels times the size of one. */
static uint64_t image_bytes(const struct api_call *call, cl_mem image, const size_t *region)
{
	size_t element = 0;
	if (!call->collected || !REAL(clGetImageInfo) ||
	    real.clGetImageInfo(image, CL_IMAGE_ELEMENT_SIZE, sizeof(element), &element, NULL))
		return 0;
	return rect_bytes(region) * element;
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

EXPORT cl_int CL_API_CALL clEnqueueReadImage(cl_command_queue queue, cl_mem image,
					     cl_bool blocking, const size_t *origin,
					     const size_t *region, size_t row_pitch,
					     size_t slice_pitch, void *ptr, cl_uint wait_count,
					     const cl_event *wait_list, cl_event *event)
{
	ENQUEUE_TRANSFER(clEnqueueReadImage, queue, COPY_OPERATION_COPY, COPY_DEVICE_TO_HOST,
			 image_bytes(&call, image, region), event,
			 (queue, image, blocking, origin, region, row_pitch, slice_pitch, ptr,
			  wait_count, wait_list, event_arg));
	return rc;
}

EXPORT cl_int CL_API_CALL clEnqueueWriteImage(cl_command_queue queue, cl_mem image,
					      cl_bool blocking, const size_t *origin,
					      const size_t *region, size_t row_pitch,
					      size_t slice_pitch, const void *ptr,
					      cl_uint wait_count, const cl_event *wait_list,
					      cl_event *event)
{
	ENQUEUE_TRANSFER(clEnqueueWriteImage, queue, COPY_OPERATION_COPY, COPY_HOST_TO_DEVICE,
			 image_bytes(&call, image, region), event,
			 (queue, image, blocking, origin, region, row_pitch, slice_pitch, ptr,
			  wait_count, wait_list, event_arg));
	return rc;
}

EXPORT cl_int CL_API_CALL clEnqueueCopyImage(cl_command_queue queue, cl_mem src, cl_mem dst,
					     const size_t *src_origin, const size_t *dst_origin,
					     const size_t *region, cl_uint wait_count,
					     const cl_event *wait_list, cl_event *event)
{
	ENQUEUE_TRANSFER(clEnqueueCopyImage, queue, COPY_OPERATION_COPY, COPY_DEVICE_TO_DEVICE,
			 image_bytes(&call, src, region), event,
			 (queue, src, dst, src_origin, dst_origin, region, wait_count, wait_list,
			  event_arg));
	return rc;
}

EXPORT cl_int CL_API_CALL clEnqueueCopyImageToBuffer(cl_command_queue queue, cl_mem src,
						     cl_mem dst, const size_t *src_origin,
						     const size_t *region, size_t dst_offset,
						     cl_uint wait_count, const cl_event *wait_list,
						     cl_event *event)
{
	ENQUEUE_TRANSFER(clEnqueueCopyImageToBuffer, queue, COPY_OPERATION_COPY,
			 COPY_DEVICE_TO_DEVICE, image_bytes(&call, src, region), event,
			 (queue, src, dst, src_origin, region, dst_offset, wait_count, wait_list,
			  event_arg));
	return rc;
}

EXPORT cl_int CL_API_CALL clEnqueueCopyBufferToImage(cl_command_queue queue, cl_mem src,
						     cl_mem dst, size_t src_offset,
						     const size_t *dst_origin, const size_t *region,
						     cl_uint wait_count, const cl_event *wait_list,
						     cl_event *event)
{
	ENQUEUE_TRANSFER(clEnqueueCopyBufferToImage, queue, COPY_OPERATION_COPY,
			 COPY_DEVICE_TO_DEVICE, image_bytes(&call, dst, region), event,
			 (queue, src, dst, src_offset, dst_origin, region, wait_count, wait_list,
			  event_arg));
	return rc;
}

EXPORT cl_int CL_API_CALL clEnqueueFillImage(cl_command_queue queue, cl_mem image,
					     const void *fill_color, const size_t *origin,
					     const size_t *region, cl_uint wait_count,
					     const cl_event *wait_list, cl_event *event)
{
	ENQUEUE_TRANSFER(clEnqueueFillImage, queue, COPY_OPERATION_FILL, COPY_NONE,
			 image_bytes(&call, image, region), event,
			 (queue, image, fill_color, origin, region, wait_count, wait_list,
			  event_arg));
	return rc;
}

/* Memory objects migrated: their sizes added up. */
static uint64_t objects_bytes(cl_uint count, const cl_mem *objects)
{
	uint64_t total = 0;
	for (cl_uint i = 0; objects && i < count && REAL(clGetMemObjectInfo); i++) {
		size_t size = 0;
		if (real.clGetMemObjectInfo(objects[i], CL_MEM_SIZE, sizeof(size), &size, NULL) ==
		    CL_SUCCESS)
			total += size;
	}
	return total;
}

EXPORT cl_int CL_API_CALL clEnqueueMigrateMemObjects(cl_command_queue queue, cl_uint count,
						     const cl_mem *objects,
						     cl_mem_migration_flags flags,
						     cl_uint wait_count, const cl_event *wait_list,
						     cl_event *event)
{
	uint32_t direction = flags & CL_MIGRATE_MEM_OBJECT_HOST ? COPY_DEVICE_TO_HOST
								 : COPY_HOST_TO_DEVICE;
	uint64_t bytes = flags & CL_MIGRATE_MEM_OBJECT_CONTENT_UNDEFINED
		? 0 : objects_bytes(count, objects);
	ENQUEUE_TRANSFER(clEnqueueMigrateMemObjects, queue, COPY_OPERATION_MIGRATE, direction,
			 bytes, event,
			 (queue, count, objects, flags, wait_count, wait_list, event_arg));
	return rc;
}

EXPORT cl_int CL_API_CALL clEnqueueMarkerWithWaitList(cl_command_queue queue, cl_uint n,
						      const cl_event *wait_list, cl_event *event)
{
	ENQUEUE_TRANSFER(clEnqueueMarkerWithWaitList, queue, COPY_OPERATION_MARKER, COPY_NONE, 0,
			 event, (queue, n, wait_list, event_arg));
	return rc;
}

EXPORT cl_int CL_API_CALL clEnqueueBarrierWithWaitList(cl_command_queue queue, cl_uint n,
						       const cl_event *wait_list,
						       cl_event *event)
{
	ENQUEUE_TRANSFER(clEnqueueBarrierWithWaitList, queue, COPY_OPERATION_BARRIER, COPY_NONE,
			 0, event, (queue, n, wait_list, event_arg));
	return rc;
}

/* OpenCL 1.1's marker always returns its event. */
EXPORT cl_int CL_API_CALL clEnqueueMarker(cl_command_queue queue, cl_event *event)
{
	ENQUEUE_TRANSFER(clEnqueueMarker, queue, COPY_OPERATION_MARKER, COPY_NONE, 0, event,
			 (queue, event_arg));
	return rc;
}

/* OpenCL 1.1's barrier has no event: when followed, it is enqueued as the 1.2 barrier
 * with no wait list, which the standard defines as the same command. */
EXPORT cl_int CL_API_CALL clEnqueueBarrier(cl_command_queue queue)
{
	struct api_call call;
	api_begin(&call, FN_clEnqueueBarrier);
	struct pending *p = REAL(clEnqueueBarrierWithWaitList)
		? copy_begin(&call, queue, COPY_OPERATION_BARRIER, COPY_NONE, 0) : NULL;
	cl_event local_event = NULL;
	cl_int rc = p ? real.clEnqueueBarrierWithWaitList(queue, 0, NULL, &local_event)
		: REAL(clEnqueueBarrier) ? real.clEnqueueBarrier(queue) : MISSING;
	enqueue_end(p, rc, NULL, local_event);
	api_end(&call, rc);
	return rc;
}

EXPORT cl_int CL_API_CALL clEnqueueSVMMemcpy(cl_command_queue queue, cl_bool blocking,
					     void *dst, const void *src, size_t size,
					     cl_uint wait_count, const cl_event *wait_list,
					     cl_event *event)
{
	ENQUEUE_TRANSFER(clEnqueueSVMMemcpy, queue, COPY_OPERATION_COPY, COPY_UNKNOWN, size,
			 event, (queue, blocking, dst, src, size, wait_count, wait_list,
				 event_arg));
	return rc;
}

EXPORT cl_int CL_API_CALL clEnqueueSVMMemFill(cl_command_queue queue, void *svm_ptr,
					      const void *pattern, size_t pattern_size,
					      size_t size, cl_uint wait_count,
					      const cl_event *wait_list, cl_event *event)
{
	ENQUEUE_TRANSFER(clEnqueueSVMMemFill, queue, COPY_OPERATION_FILL, COPY_NONE, size, event,
			 (queue, svm_ptr, pattern, pattern_size, size, wait_count, wait_list,
			  event_arg));
	return rc;
}

EXPORT cl_int CL_API_CALL clEnqueueSVMMigrateMem(cl_command_queue queue, cl_uint count,
						 const void **pointers, const size_t *sizes,
						 cl_mem_migration_flags flags, cl_uint wait_count,
						 const cl_event *wait_list, cl_event *event)
{
	uint64_t bytes = 0;
	for (cl_uint i = 0; sizes && i < count; i++)
		bytes += sizes[i];
	uint32_t direction = flags & CL_MIGRATE_MEM_OBJECT_HOST ? COPY_DEVICE_TO_HOST
								 : COPY_HOST_TO_DEVICE;
	ENQUEUE_TRANSFER(clEnqueueSVMMigrateMem, queue, COPY_OPERATION_MIGRATE, direction, bytes,
			 event, (queue, count, pointers, sizes, flags, wait_count, wait_list,
				 event_arg));
	return rc;
}

EXPORT cl_int CL_API_CALL clEnqueueSVMFree(
	cl_command_queue queue, cl_uint count, void *pointers[],
	void(CL_CALLBACK *free_func)(cl_command_queue, cl_uint, void *[], void *), void *user_data,
	cl_uint wait_count, const cl_event *wait_list, cl_event *event)
{
	ENQUEUE_TRANSFER(clEnqueueSVMFree, queue, COPY_OPERATION_FREE, COPY_NONE, 0, event,
			 (queue, count, pointers, free_func, user_data, wait_count, wait_list,
			  event_arg));
	return rc;
}

/* Mapped regions, so that an unmap knows how many bytes it writes back: a table that
 * grows, under a lock (maps are rare and expensive). */
struct mapping {
	void *ptr;
	uint64_t bytes;
	int writes; /* mapped for writing: the unmap moves data to the device */
};
static struct mapping *mappings;
static size_t mapping_count, mapping_capacity;
static pthread_mutex_t mapping_lock = PTHREAD_MUTEX_INITIALIZER;

/* A map moves the region to the host unless it is mapped to be overwritten. */
static uint32_t map_direction(cl_map_flags flags)
{
	return flags & CL_MAP_WRITE_INVALIDATE_REGION ? COPY_NONE : COPY_DEVICE_TO_HOST;
}

static void mapping_add(void *ptr, uint64_t bytes, cl_map_flags flags)
{
	pthread_mutex_lock(&mapping_lock);
	if (mapping_count == mapping_capacity) {
		size_t capacity = mapping_capacity ? mapping_capacity * 2 : 256;
		struct mapping *grown = realloc(mappings, capacity * sizeof(*grown));
		if (grown) {
			mappings = grown;
			mapping_capacity = capacity;
		}
	}
	if (mapping_count < mapping_capacity)
		mappings[mapping_count++] = (struct mapping){
			ptr, bytes, (flags & (CL_MAP_WRITE | CL_MAP_WRITE_INVALIDATE_REGION)) != 0
		};
	pthread_mutex_unlock(&mapping_lock);
}

/* The mapping of `ptr`, forgotten; the latest one when the same region is mapped twice. */
static struct mapping mapping_take(void *ptr)
{
	struct mapping found = { NULL, 0, 0 };
	pthread_mutex_lock(&mapping_lock);
	for (size_t i = mapping_count; ptr && i-- > 0;) {
		if (mappings[i].ptr == ptr) {
			found = mappings[i];
			mappings[i] = mappings[--mapping_count];
			break;
		}
	}
	pthread_mutex_unlock(&mapping_lock);
	return found;
}

EXPORT void *CL_API_CALL clEnqueueMapBuffer(cl_command_queue queue, cl_mem buffer,
					    cl_bool blocking, cl_map_flags flags, size_t offset,
					    size_t size, cl_uint wait_count,
					    const cl_event *wait_list, cl_event *event,
					    cl_int *errcode_ret)
{
	struct api_call call;
	api_begin(&call, FN_clEnqueueMapBuffer);
	struct pending *p = copy_begin(&call, queue, COPY_OPERATION_MAP, map_direction(flags),
				       size);
	cl_event local_event = NULL;
	cl_int rc = MISSING;
	void *ptr = REAL(clEnqueueMapBuffer)
		? real.clEnqueueMapBuffer(queue, buffer, blocking, flags, offset, size, wait_count,
					  wait_list, EVENT_ARG(p, event, local_event), &rc)
		: NULL;
	enqueue_end(p, rc, event, local_event);
	if (ptr && call.recorded)
		mapping_add(ptr, size, flags);
	api_end(&call, rc);
	if (errcode_ret)
		*errcode_ret = rc;
	return ptr;
}

EXPORT void *CL_API_CALL clEnqueueMapImage(cl_command_queue queue, cl_mem image,
					   cl_bool blocking, cl_map_flags flags,
					   const size_t *origin, const size_t *region,
					   size_t *row_pitch, size_t *slice_pitch,
					   cl_uint wait_count, const cl_event *wait_list,
					   cl_event *event, cl_int *errcode_ret)
{
	struct api_call call;
	api_begin(&call, FN_clEnqueueMapImage);
	uint64_t bytes = call.recorded ? image_bytes(&call, image, region) : 0;
	struct pending *p = copy_begin(&call, queue, COPY_OPERATION_MAP, map_direction(flags),
				       bytes);
	cl_event local_event = NULL;
	cl_int rc = MISSING;
	void *ptr = REAL(clEnqueueMapImage)
		? real.clEnqueueMapImage(queue, image, blocking, flags, origin, region, row_pitch,
					 slice_pitch, wait_count, wait_list,
					 EVENT_ARG(p, event, local_event), &rc)
		: NULL;
	enqueue_end(p, rc, event, local_event);
	if (ptr && call.recorded)
		mapping_add(ptr, bytes, flags);
	api_end(&call, rc);
	if (errcode_ret)
		*errcode_ret = rc;
	return ptr;
}

EXPORT cl_int CL_API_CALL clEnqueueSVMMap(cl_command_queue queue, cl_bool blocking,
					  cl_map_flags flags, void *svm_ptr, size_t size,
					  cl_uint wait_count, const cl_event *wait_list,
					  cl_event *event)
{
	ENQUEUE_TRANSFER(clEnqueueSVMMap, queue, COPY_OPERATION_MAP, map_direction(flags), size,
			 event, (queue, blocking, flags, svm_ptr, size, wait_count, wait_list,
				 event_arg));
	if (rc == CL_SUCCESS && call.recorded)
		mapping_add(svm_ptr, size, flags);
	return rc;
}

EXPORT cl_int CL_API_CALL clEnqueueUnmapMemObject(cl_command_queue queue, cl_mem memobj,
						  void *mapped, cl_uint wait_count,
						  const cl_event *wait_list, cl_event *event)
{
	struct mapping found = mapping_take(mapped);
	ENQUEUE_TRANSFER(clEnqueueUnmapMemObject, queue, COPY_OPERATION_UNMAP,
			 found.writes ? COPY_HOST_TO_DEVICE : COPY_NONE, found.bytes, event,
			 (queue, memobj, mapped, wait_count, wait_list, event_arg));
	return rc;
}

EXPORT cl_int CL_API_CALL clEnqueueSVMUnmap(cl_command_queue queue, void *svm_ptr,
					    cl_uint wait_count, const cl_event *wait_list,
					    cl_event *event)
{
	struct mapping found = mapping_take(svm_ptr);
	ENQUEUE_TRANSFER(clEnqueueSVMUnmap, queue, COPY_OPERATION_UNMAP,
			 found.writes ? COPY_HOST_TO_DEVICE : COPY_NONE, found.bytes, event,
			 (queue, svm_ptr, wait_count, wait_list, event_arg));
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
			real.get_info(object, reference_count, sizeof(references), &references, \
				      NULL); \
		cl_int rc = REAL(fn) ? real.fn(object) : MISSING; \
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
		cl_int rc = REAL(name) ? real.name args : MISSING; \
		api_end(&call, rc); \
		return rc; \
	}

#define WRAP_OBJECT(ret, name, params, args) \
	EXPORT ret CL_API_CALL name params \
	{ \
		struct api_call call; \
		api_begin(&call, FN_##name); \
		cl_int rc = MISSING; \
		ret object = REAL(name) ? real.name args : NULL; \
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
		ret pointer = REAL(name) ? real.name args : NULL; \
		api_end(&call, pointer ? CL_SUCCESS : CL_INVALID_VALUE); \
		return pointer; \
	}

#define WRAP_VOID(ret, name, params, args) \
	EXPORT void CL_API_CALL name params \
	{ \
		struct api_call call; \
		api_begin(&call, FN_##name); \
		if (REAL(name)) \
			real.name args; \
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
