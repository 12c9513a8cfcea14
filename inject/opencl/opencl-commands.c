/* The OpenCL backend's objects and commands (see opencl-internal.h): the tables from a
 * queue, kernel or device handle to what gpuprof knows of it, and the commands in
 * flight, followed in a pool of slots until the writer thread finds them complete and
 * records them with their profiling timestamps in the trace clock. */
#include "opencl-internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/clock.h"
#include "runtime/recorder.h"

/* ---- object tables ------------------------------------------------------------------- */

static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;

static size_t handle_slot(const void *key)
{
	uintptr_t k = (uintptr_t)key;
	return (size_t)((k >> 4) * 0x9e3779b97f4a7c15ull >> 50) & (HANDLE_SLOTS - 1);
}

#define NEXT_SLOT(i) (((i) + 1) & (HANDLE_SLOTS - 1))

void *handle_find(struct handle_map *map, const void *key)
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


struct handle_map device_map, queue_map, kernel_map;

static uint32_t device_string(cl_device_id device, cl_device_info what)
{
	char text[1024] = "";
	if (REAL(clGetDeviceInfo))
		opencl_real.clGetDeviceInfo(device, what, sizeof(text) - 1, text, NULL);
	return recorder_intern(text);
}

struct device_info *device_lookup(cl_device_id device)
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
	__typeof__(&clGetDeviceInfo) get = opencl_real.clGetDeviceInfo;
	get(device, CL_DEVICE_TYPE, sizeof(type), &type, NULL);
	get(device, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof(units), &units, NULL);
	get(device, CL_DEVICE_MAX_CLOCK_FREQUENCY, sizeof(clock), &clock, NULL);
	get(device, CL_DEVICE_VENDOR_ID, sizeof(vendor), &vendor, NULL);
	get(device, CL_DEVICE_GLOBAL_MEM_SIZE, sizeof(global), &global, NULL);
	get(device, CL_DEVICE_LOCAL_MEM_SIZE, sizeof(local), &local, NULL);
	get(device, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof(wg), &wg, NULL);
	get(device, CL_DEVICE_MAX_WORK_ITEM_SIZES, sizeof(dims), dims, NULL);
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

static _Atomic uint32_t chunk_count; /* chunks in the commands' pool (below) */
static _Atomic int queue_made;       /* the program made a queue: commands may follow */

struct queue_info *queue_register(cl_command_queue queue, cl_device_id device,
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
	if (!atomic_exchange(&queue_made, 1))
		recorder_wake(); /* the slots of its commands made on the writer's thread */
	return info;
}

void kernel_register(cl_kernel kernel)
{
	char name[1024] = "";
	if (!REAL(clGetKernelInfo) ||
	    opencl_real.clGetKernelInfo(kernel, CL_KERNEL_FUNCTION_NAME, sizeof(name) - 1, name,
					NULL))
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
void forget_if_last(struct handle_map *map, void *handle, cl_uint references)
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


static _Atomic(struct pending *) pending_chunks[PENDING_CHUNKS];
static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER; /* growth only */
static _Atomic uint64_t pending_free; /* (tag << 32) | (index + 1) of the first free slot */
static _Atomic(struct pending *) handoff; /* enqueued commands not yet seen by the writer */
static _Atomic uint32_t in_flight;
_Atomic int runtime_closing;              /* exit began: the writer no longer calls OpenCL */

/* The writer thread's own lists of the commands it follows, one per queue with commands
 * in flight, in the order they were enqueued: in an in-order queue (most) a command
 * completes after those before it, so a pass asks the runtime about its commands up to
 * the first not complete, not about every command in flight (a program that enqueues
 * faster than the device runs had each asked some five times). Past FOLLOWED_QUEUES
 * queues at once the rest share the last list, every command of it asked each pass, as
 * the commands of an out-of-order queue are. A queue made out-of-order after it was
 * created (clSetCommandQueueProperty, OpenCL 1.0) only has its commands collected later:
 * the last pass asks every command. */
#define FOLLOWED_QUEUES 256
struct followed_queue {
	uint32_t queue_id;
	int in_order;
	struct pending *head;
	struct pending **tail; /* the last command's next */
};
static struct followed_queue followed[FOLLOWED_QUEUES + 1];
static size_t followed_count; /* lists in use before followed[FOLLOWED_QUEUES], the rest's */

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

/* Adds a chunk (pool_lock held): 0, or -1 at the cap or without memory. */
static int pool_add_chunk(void)
{
	uint32_t c = atomic_load(&chunk_count);
	if (c == PENDING_CHUNKS)
		return -1;
	struct pending *chunk = calloc(PENDING_CHUNK, sizeof(*chunk));
	if (!chunk)
		return -1;
	atomic_store(&pending_chunks[c], chunk);
	chunk_free_all(c, chunk);
	atomic_store(&chunk_count, c + 1);
	return 0;
}

/* On a launch that found the free list empty (a burst that outran the writer's top-up
 * below): a chunk added; 0 when there are slots, -1 at the cap. */
static int pool_grow(void)
{
	pthread_mutex_lock(&pool_lock);
	int rc = (uint32_t)atomic_load(&pending_free) ? 0 /* another thread grew it */
						      : pool_add_chunk();
	pthread_mutex_unlock(&pool_lock);
	return rc;
}

/* On gpuprof's writer thread, at each of its passes: a chunk added while less than half
 * a chunk of slots is left, so that the program's threads find slots ready and never
 * allocate and fill a chunk of 65,536 (some 20 ms at the first launch) themselves; the
 * first one right after the program's first queue (queue_register wakes the writer). */
static void pool_top_up(void)
{
	uint32_t chunks = atomic_load(&chunk_count);
	if (!atomic_load(&queue_made) || chunks == PENDING_CHUNKS ||
	    (uint64_t)chunks * PENDING_CHUNK >= (uint64_t)atomic_load(&in_flight) + PENDING_CHUNK / 2)
		return;
	pthread_mutex_lock(&pool_lock);
	if (atomic_load(&chunk_count) == chunks)
		pool_add_chunk();
	pthread_mutex_unlock(&pool_lock);
}

void forget_in_flight(void)
{
	atomic_store(&handoff, NULL);
	atomic_store(&in_flight, 0);
	atomic_store(&pending_free, 0);
	followed_count = 0;
	followed[FOLLOWED_QUEUES].head = NULL;
	for (uint32_t c = 0; c < atomic_load(&chunk_count); c++)
		chunk_free_all(c, atomic_load(&pending_chunks[c]));
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
cl_uint references_held(cl_event event)
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

/* The writer's list of p's queue, begun when it has none. */
static struct followed_queue *queue_list(const struct pending *p)
{
	static size_t last; /* most commands follow one of the same queue */
	if (last < followed_count && followed[last].queue_id == p->queue_id)
		return &followed[last];
	for (size_t i = 0; i < followed_count; i++)
		if (followed[i].queue_id == p->queue_id)
			return &followed[last = i];
	struct followed_queue *q = &followed[FOLLOWED_QUEUES];
	if (followed_count < FOLLOWED_QUEUES) {
		q = &followed[last = followed_count++];
		*q = (struct followed_queue){ p->queue_id, p->in_order, NULL, NULL };
	}
	if (!q->head)
		q->tail = &q->head;
	return q;
}

/* Takes the commands enqueued since the last call onto the writer's lists, oldest first. */
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
	while (reversed) {
		struct pending *p = reversed;
		reversed = p->next;
		p->next = NULL;
		struct followed_queue *q = queue_list(p);
		*q->tail = p;
		q->tail = &p->next;
	}
}

/* Completes the commands of one list that have finished: up to the first that has not
 * in an in-order queue, unless `final`. -1 when the buffer is full. */
static int collect_list(struct followed_queue *q, int final, int closing)
{
	for (struct pending **link = &q->head; *link;) {
		struct pending *p = *link;
		cl_int status = CL_QUEUED;
		if (!closing && REAL(clGetEventInfo)(atomic_load(&p->event),
						     CL_EVENT_COMMAND_EXECUTION_STATUS,
						     sizeof(status), &status, NULL) != CL_SUCCESS)
			status = CL_INVALID_EVENT;
		if (status == CL_COMPLETE || status < 0) {
			struct pending *next = p->next;
			if (complete(p, status == CL_COMPLETE ? 0 : status) < 0)
				return -1;
			*link = next;
			if (!next)
				q->tail = link;
		} else if (q->in_order && !final) {
			break; /* those after it have not completed either */
		} else {
			link = &p->next;
		}
	}
	return 0;
}

/* The recorder's collector: completes every followed command that has finished. Device
 * work is thus read on gpuprof's own thread, never on the application's or the
 * runtime's. At the end (`final`) what has not finished is counted as lost; once exit
 * began (runtime_closing) the runtime is not called again: its libraries may already be
 * finalised. */
int collect_completed(int final)
{
	nesting++;
	if (!final)
		pool_top_up();
	take_handoff();
	int closing = atomic_load(&runtime_closing), full = 0;
	for (size_t i = 0; i < followed_count && !full;) {
		full = collect_list(&followed[i], final, closing) < 0;
		if (followed[i].head)
			i++;
		else /* no command in flight: the list is dropped */
			followed[i] = followed[--followed_count];
	}
	if (!full)
		full = collect_list(&followed[FOLLOWED_QUEUES], final, closing) < 0; /* never in order */
	if (full) {
		nesting--;
		return 1; /* the buffer is full: drain, then go on */
	}
	if (final) {
		uint64_t unfinished = 0;
		for (size_t i = 0; i <= FOLLOWED_QUEUES; i++) {
			if (i >= followed_count && i < FOLLOWED_QUEUES)
				continue;
			for (struct pending *p = followed[i].head, *next; p; p = next) {
				next = p->next;
				unfinished++;
				if (!closing)
					pending_release(p);
			}
			followed[i].head = NULL;
		}
		followed_count = 0;
		if (unfinished)
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
				      call->correlation_id, call->start_ns);
	p->api_start_ns = call->start_ns;
	p->device = q->device;
	p->queue_id = q->queue_id;
	p->in_order = !(q->app_properties & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE);
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

/* The name of a kernel not in the table, asked of the runtime; out of line, so that its
 * buffer is not in the frame of every launch (a launch stack copies that frame). */
static __attribute__((noinline)) uint32_t unknown_kernel_name(cl_kernel kernel)
{
	char name[1024] = "<unknown kernel>";
	REAL(clGetKernelInfo)(kernel, CL_KERNEL_FUNCTION_NAME, sizeof(name) - 1, name, NULL);
	return recorder_intern(name);
}

struct pending *kernel_begin(const struct api_call *call, cl_command_queue queue,
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
		k->name_id = unknown_kernel_name(kernel);
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

struct pending *copy_begin(const struct api_call *call, cl_command_queue queue,
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
void enqueue_end(struct pending *p, cl_int rc, cl_event *app_event, cl_event event)
{
	if (!p)
		return;
	if (rc != CL_SUCCESS) {
		pending_put(p);
		return;
	}
	follow(p, app_event ? *app_event : event, app_event == NULL);
}


