/* CUPTI activity records -> gpuprof records (see translate.h). */
#include "translate.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/hash.h"

/* libstdc++'s Itanium C++ ABI demangler (declared in <cxxabi.h>, a C++ header). */
extern char *__cxa_demangle(const char *mangled, char *buffer, size_t *length, int *status);

void translator_init(struct translator *t, const struct translate_ops *ops)
{
	memset(t, 0, sizeof(*t));
	t->ops = *ops;
}

void translator_release(struct translator *t)
{
	for (size_t i = 0; i < t->name_capacity; i++)
		free(t->names[i].mangled);
	free(t->names);
	free(t->queues);
	free(t->api_names[0]);
	free(t->api_names[1]);
	memset(t, 0, sizeof(*t));
}

uint64_t translator_time(const struct translator *t, uint64_t cupti_ns)
{
	if (!cupti_ns)
		return 0;
	int64_t converted = (int64_t)cupti_ns + t->clock_offset_ns;
	return converted > 0 ? (uint64_t)converted : 1;
}

char *translator_demangle(const char *mangled)
{
	if (!mangled || mangled[0] != '_' || mangled[1] != 'Z')
		return NULL;
	int status = 0;
	char *text = __cxa_demangle(mangled, NULL, NULL, &status);
	if (status != 0) {
		free(text);
		return NULL;
	}
	return text;
}

void translator_api_base_name(const char *name, char *out, size_t size)
{
	size_t len = strlen(name);
	size_t end = len;
	while (end > 0 && name[end - 1] >= '0' && name[end - 1] <= '9')
		end--;
	if (end < len && end >= 2 && name[end - 1] == 'v' && name[end - 2] == '_')
		len = end - 2;
	if (len >= size)
		len = size - 1;
	memcpy(out, name, len);
	out[len] = '\0';
}

/* ---- devices, queues, names ----------------------------------------------------------- */

/* gpuprof's agent for a CUDA device. The first sight of a device emits a placeholder
 * agent; its CUPTI device record, when it arrives, replaces it (of equal agent ids the
 * last written wins). */
static uint32_t agent_for(struct translator *t, uint32_t cuda_id)
{
	for (int i = 0; i < t->device_count; i++)
		if (t->devices[i].cuda_id == cuda_id)
			return t->devices[i].agent_id;
	if (t->device_count == TRANSLATE_MAX_DEVICES)
		return 0;
	uint32_t agent_id = t->ops.new_agent_id(t->ops.ctx);
	t->devices[t->device_count++] = (struct translate_device){ cuda_id, agent_id };
	char name[32];
	snprintf(name, sizeof(name), "CUDA device %u", cuda_id);
	struct record_agent agent = {
		.header = { sizeof(agent), RECORD_AGENT, 0 },
		.id = agent_id,
		.type = AGENT_GPU,
		.name_id = t->ops.intern(t->ops.ctx, name),
		.vendor_name_id = t->ops.intern(t->ops.ctx, "NVIDIA"),
		.driver_version_id = t->ops.intern(t->ops.ctx, ""),
		.vendor_id = 0x10de,
		.device_index = cuda_id,
	};
	t->ops.emit_metadata(t->ops.ctx, &agent);
	return agent_id;
}

static size_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	return (size_t)x;
}

/* gpuprof's queue for a CUDA stream, emitted at first sight; 0 (no queue) when the table
 * of queues is full and cannot grow (no memory: the record keeps its stream id). */
static uint32_t queue_for(struct translator *t, uint32_t context_id, uint32_t stream_id,
			  uint32_t agent_id)
{
	if (t->queue_count * 2 >= t->queue_capacity) {
		size_t old_capacity = t->queue_capacity;
		struct translate_queue *old = t->queues;
		size_t capacity = old_capacity ? old_capacity * 2 : 64;
		struct translate_queue *grown = calloc(capacity, sizeof(*grown));
		if (!grown && t->queue_count + 1 >= old_capacity)
			return 0;
		if (grown) {
			t->queues = grown;
			t->queue_capacity = capacity;
		}
		for (size_t i = 0; grown && i < old_capacity; i++) {
			if (!old[i].queue_id)
				continue;
			size_t slot = mix((uint64_t)old[i].context_id << 32 | old[i].stream_id);
			while (t->queues[slot & (t->queue_capacity - 1)].queue_id)
				slot++;
			t->queues[slot & (t->queue_capacity - 1)] = old[i];
		}
		if (grown)
			free(old);
	}
	size_t slot = mix((uint64_t)context_id << 32 | stream_id);
	for (;; slot++) {
		struct translate_queue *q = &t->queues[slot & (t->queue_capacity - 1)];
		if (q->queue_id && q->context_id == context_id && q->stream_id == stream_id)
			return q->queue_id;
		if (!q->queue_id) {
			*q = (struct translate_queue){ context_id, stream_id,
						       t->ops.new_queue_id(t->ops.ctx) };
			t->queue_count++;
			struct record_queue record = {
				.header = { sizeof(record), RECORD_QUEUE, 0 },
				.id = q->queue_id,
				.agent_id = agent_id,
				.properties = stream_id,
			};
			t->ops.emit_metadata(t->ops.ctx, &record);
			return q->queue_id;
		}
	}
}

/* The string id of a name demangled unless asked otherwise, without remembering it. */
static uint32_t intern_kernel_name(struct translator *t, const char *mangled)
{
	char *demangled = t->keep_mangled ? NULL : translator_demangle(mangled);
	uint32_t id = t->ops.intern(t->ops.ctx, demangled ? demangled : mangled);
	free(demangled);
	return id;
}

/* The string id of a kernel's name, demangled unless asked otherwise; each distinct
 * name is demangled and interned once (every time, when there is no memory to remember
 * it). */
static uint32_t kernel_name(struct translator *t, const char *mangled)
{
	if (!mangled)
		mangled = "<unnamed kernel>";
	if (t->name_count * 2 >= t->name_capacity) {
		size_t old_capacity = t->name_capacity;
		struct translate_name *old = t->names;
		size_t capacity = old_capacity ? old_capacity * 2 : 256;
		struct translate_name *grown = calloc(capacity, sizeof(*grown));
		if (!grown && t->name_count + 1 >= old_capacity)
			return intern_kernel_name(t, mangled);
		if (grown) {
			t->names = grown;
			t->name_capacity = capacity;
		}
		for (size_t i = 0; grown && i < old_capacity; i++) {
			if (!old[i].mangled)
				continue;
			size_t slot = hash_string(old[i].mangled);
			while (t->names[slot & (t->name_capacity - 1)].mangled)
				slot++;
			t->names[slot & (t->name_capacity - 1)] = old[i];
		}
		if (grown)
			free(old);
	}
	for (size_t slot = hash_string(mangled);; slot++) {
		struct translate_name *n = &t->names[slot & (t->name_capacity - 1)];
		if (n->mangled && !strcmp(n->mangled, mangled))
			return n->id;
		if (n->mangled)
			continue;
		if (!(n->mangled = strdup(mangled)))
			return intern_kernel_name(t, mangled);
		n->id = intern_kernel_name(t, mangled);
		t->name_count++;
		return n->id;
	}
}

/* The string id of an API function's name, looked up in CUPTI. */
static uint32_t intern_api_name(struct translator *t, int driver, uint32_t cbid)
{
	const char *name = t->ops.api_name(t->ops.ctx, driver ? CUPTI_CB_DOMAIN_DRIVER_API
							      : CUPTI_CB_DOMAIN_RUNTIME_API, cbid);
	char base[256];
	if (name)
		translator_api_base_name(name, base, sizeof(base));
	else
		snprintf(base, sizeof(base), "%s function %u", driver ? "driver" : "runtime", cbid);
	return t->ops.intern(t->ops.ctx, base);
}

/* The string id of an API function, remembered by callback id (looked up each time
 * when there is no memory to remember it). */
static uint32_t api_function(struct translator *t, int driver, uint32_t cbid)
{
	if (cbid >= 1u << 16)
		return t->ops.intern(t->ops.ctx, "<unknown API function>");
	if (cbid >= t->api_name_count[driver]) {
		uint32_t count = t->api_name_count[driver] ? t->api_name_count[driver] : 1024;
		while (count <= cbid)
			count *= 2;
		uint32_t *ids = realloc(t->api_names[driver], count * sizeof(*ids));
		if (!ids)
			return intern_api_name(t, driver, cbid);
		memset(ids + t->api_name_count[driver], 0,
		       (count - t->api_name_count[driver]) * sizeof(*ids));
		t->api_names[driver] = ids;
		t->api_name_count[driver] = count;
	}
	uint32_t *id = &t->api_names[driver][cbid];
	if (!*id)
		*id = intern_api_name(t, driver, cbid);
	return *id;
}

/* ---- enums ---------------------------------------------------------------------------- */

static uint32_t memory_kind(uint32_t cupti_kind)
{
	switch (cupti_kind) {
	case CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE: return MEMORY_KIND_PAGEABLE;
	case CUPTI_ACTIVITY_MEMORY_KIND_PINNED: return MEMORY_KIND_PINNED;
	case CUPTI_ACTIVITY_MEMORY_KIND_DEVICE: return MEMORY_KIND_DEVICE;
	case CUPTI_ACTIVITY_MEMORY_KIND_ARRAY: return MEMORY_KIND_ARRAY;
	case CUPTI_ACTIVITY_MEMORY_KIND_MANAGED: return MEMORY_KIND_MANAGED;
	case CUPTI_ACTIVITY_MEMORY_KIND_DEVICE_STATIC: return MEMORY_KIND_DEVICE_STATIC;
	case CUPTI_ACTIVITY_MEMORY_KIND_MANAGED_STATIC: return MEMORY_KIND_MANAGED_STATIC;
	}
	return MEMORY_KIND_UNKNOWN;
}

/* The direction of a copy, and which of its ends are on the device. */
static uint32_t copy_direction(uint32_t copy_kind, int *src_device, int *dst_device)
{
	*src_device = *dst_device = 1;
	switch (copy_kind) {
	case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD:
	case CUPTI_ACTIVITY_MEMCPY_KIND_HTOA:
		*src_device = 0;
		return COPY_HOST_TO_DEVICE;
	case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH:
	case CUPTI_ACTIVITY_MEMCPY_KIND_ATOH:
		*dst_device = 0;
		return COPY_DEVICE_TO_HOST;
	case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH:
		*src_device = *dst_device = 0;
		return COPY_HOST_TO_HOST;
	case CUPTI_ACTIVITY_MEMCPY_KIND_ATOA:
	case CUPTI_ACTIVITY_MEMCPY_KIND_ATOD:
	case CUPTI_ACTIVITY_MEMCPY_KIND_DTOA:
	case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD:
	case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP:
		return COPY_DEVICE_TO_DEVICE;
	}
	return COPY_NONE;
}

static uint32_t overhead_kind(uint32_t cupti_kind)
{
	switch (cupti_kind) {
	case CUPTI_ACTIVITY_OVERHEAD_DRIVER_COMPILER: return OVERHEAD_COMPILER;
	case CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH: return OVERHEAD_BUFFER_FLUSH;
	case CUPTI_ACTIVITY_OVERHEAD_CUPTI_INSTRUMENTATION: return OVERHEAD_INSTRUMENTATION;
	case CUPTI_ACTIVITY_OVERHEAD_CUPTI_RESOURCE: return OVERHEAD_RESOURCE;
	case CUPTI_ACTIVITY_OVERHEAD_RUNTIME_TRIGGERED_MODULE_LOADING:
	case CUPTI_ACTIVITY_OVERHEAD_LAZY_FUNCTION_LOADING: return OVERHEAD_MODULE_LOADING;
	case CUPTI_ACTIVITY_OVERHEAD_COMMAND_BUFFER_FULL: return OVERHEAD_COMMAND_BUFFER_FULL;
	case CUPTI_ACTIVITY_OVERHEAD_ACTIVITY_BUFFER_REQUEST: return OVERHEAD_BUFFER_REQUEST;
	case CUPTI_ACTIVITY_OVERHEAD_UNKNOWN: return OVERHEAD_UNKNOWN;
	}
	return OVERHEAD_OTHER;
}

static uint32_t synchronization_type(uint32_t cupti_type)
{
	switch (cupti_type) {
	case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE: return SYNC_EVENT;
	case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT: return SYNC_STREAM_WAIT;
	case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE: return SYNC_STREAM;
	case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE: return SYNC_CONTEXT;
	}
	return SYNC_UNKNOWN;
}

/* ---- records ---------------------------------------------------------------------------- */

/* Device work without timestamps (CUPTI ran out of device buffers, or the process ended
 * before the work did) is counted, not emitted. */
static int untimed(struct translator *t, uint64_t start, uint64_t end)
{
	if (start && end)
		return 0;
	t->ops.count_dropped(t->ops.ctx, DROPPED_NO_TIMESTAMPS, 1);
	return 1;
}

/* The start of a record collection control applies to (device work by the time it
 * began on the device: CUPTI does not say when it was launched); 0 for the others. */
static uint64_t collected_start(const struct record_header *h)
{
	switch (h->type) {
	case RECORD_KERNEL: return ((const struct record_kernel *)h)->start_ns;
	case RECORD_MEMORY_COPY: return ((const struct record_memory_copy *)h)->start_ns;
	case RECORD_MEMORY_ALLOCATION: return ((const struct record_memory_allocation *)h)->start_ns;
	case RECORD_API_CALL: return ((const struct record_api_call *)h)->start_ns;
	case RECORD_SYNCHRONIZATION: return ((const struct record_synchronization *)h)->start_ns;
	}
	return 0;
}

/* The correlation id of the call that launched a record's device work (a kernel, a copy
 * or a fill), 0 for any other record. */
static uint64_t launched_by(const struct record_header *h)
{
	switch (h->type) {
	case RECORD_KERNEL: return ((const struct record_kernel *)h)->correlation_id;
	case RECORD_MEMORY_COPY: return ((const struct record_memory_copy *)h)->correlation_id;
	}
	return 0;
}

/* Whether a record is of what was collected (pause and resume, capture ranges, periods):
 * device work by its launch where that is known, else by the time it began. */
static int collected(struct translator *t, const void *record)
{
	uint64_t correlation = launched_by(record), start = collected_start(record);
	int launched = correlation && t->ops.launch_collected
			       ? t->ops.launch_collected(t->ops.ctx, correlation) : -1;
	return launched > 0 || (launched < 0 && !(start && t->ops.collected_at &&
						  !t->ops.collected_at(t->ops.ctx, start)));
}

static int emit(struct translator *t, const void *record)
{
	if (!collected(t, record))
		return 0; /* not collected: done with, and not a loss */
	return t->ops.emit(t->ops.ctx, record) == -1 ? -1 : 0;
}

static int kernel(struct translator *t, const CUpti_ActivityKernel10 *r)
{
	if (t->graph_spans && r->graphId)
		return 0; /* its graph launch's span stands for it */
	/* a kernel measured under kernel replay comes without times (all zero on an H200,
	 * CUDA 13.0): it ran, with its replays, inside its launch call, whose window it
	 * takes */
	uint64_t start = 0, end = 0;
	if (r->start && r->end) {
		start = translator_time(t, r->start);
		end = translator_time(t, r->end);
	} else if (!t->ops.launch_window ||
		   !t->ops.launch_window(t->ops.ctx, r->correlationId, &start, &end)) {
		untimed(t, r->start, r->end); /* counted */
		return 0;
	}
	uint32_t agent = agent_for(t, r->deviceId);
	struct record_kernel k = {
		.header = { sizeof(k), RECORD_KERNEL, 0 },
		.agent_id = agent,
		.queue_id = queue_for(t, r->contextId, r->streamId, agent),
		.name_id = kernel_name(t, r->name),
		.correlation_id = r->correlationId,
		.dispatch_id = t->dispatches + 1,
		.start_ns = start,
		.end_ns = end,
		.local_memory_bytes = (uint32_t)r->staticSharedMemory + (uint32_t)r->dynamicSharedMemory,
		.private_memory_bytes = r->localMemoryPerThread,
		.registers = r->registersPerThread,
		.static_local_memory_bytes = (uint32_t)r->staticSharedMemory,
		.dynamic_local_memory_bytes = (uint32_t)r->dynamicSharedMemory,
		.stream_id = r->streamId,
		.context_id = r->contextId,
		.graph_id = r->graphId,
		.graph_node_id = r->graphNodeId,
	};
	const int32_t grid[3] = { r->gridX, r->gridY, r->gridZ };
	const int32_t block[3] = { r->blockX, r->blockY, r->blockZ };
	for (int d = 0; d < 3; d++) {
		uint64_t blocks = grid[d] > 0 ? (uint64_t)grid[d] : 1;
		k.workgroup[d] = block[d] > 0 ? (uint32_t)block[d] : 1;
		k.grid[d] = blocks * k.workgroup[d]; /* work-items, as rocprofv3 counts them */
	}
	int kept = collected(t, &k);
	if (emit(t, &k))
		return -1;
	t->dispatches++;
	/* a graph's kernels are not measured (counters.c): each kept is counted without */
	if (kept && t->counted && r->graphId)
		t->ops.count_dropped(t->ops.ctx, DROPPED_COUNTERS, 1);
	return 0;
}

/* What the three transfer records (Memcpy6, MemcpyPtoP4, Memset4) have in common. An
 * end on the host has device HOST. */
#define HOST UINT32_MAX
struct transfer {
	uint64_t start, end, bytes;
	uint32_t device, context, stream, correlation;
	uint32_t operation, direction, src_kind, dst_kind, src_device, dst_device;
};

static int transfer(struct translator *t, const struct transfer *x)
{
	if (untimed(t, x->start, x->end))
		return 0;
	uint32_t agent = agent_for(t, x->device);
	struct record_memory_copy c = {
		.header = { sizeof(c), RECORD_MEMORY_COPY, 0 },
		.queue_id = queue_for(t, x->context, x->stream, agent),
		.src_agent_id = x->src_device == HOST ? 0 : agent_for(t, x->src_device),
		.dst_agent_id = x->dst_device == HOST ? 0 : agent_for(t, x->dst_device),
		.operation = x->operation,
		.direction = x->direction,
		.bytes = x->bytes,
		.correlation_id = x->correlation,
		.start_ns = translator_time(t, x->start),
		.end_ns = translator_time(t, x->end),
		.src_memory_kind = memory_kind(x->src_kind),
		.dst_memory_kind = memory_kind(x->dst_kind),
		.stream_id = x->stream,
		.context_id = x->context,
	};
	return emit(t, &c);
}

static int memcpy_record(struct translator *t, const CUpti_ActivityMemcpy6 *r)
{
	int src_device, dst_device;
	uint32_t direction = copy_direction(r->copyKind, &src_device, &dst_device);
	return transfer(t, &(struct transfer){
		r->start, r->end, r->bytes, r->deviceId, r->contextId, r->streamId,
		r->correlationId, COPY_OPERATION_COPY, direction, r->srcKind, r->dstKind,
		src_device ? r->deviceId : HOST, dst_device ? r->deviceId : HOST });
}

static int peer_copy(struct translator *t, const CUpti_ActivityMemcpyPtoP4 *r)
{
	return transfer(t, &(struct transfer){
		r->start, r->end, r->bytes, r->deviceId, r->contextId, r->streamId,
		r->correlationId, COPY_OPERATION_COPY, COPY_DEVICE_TO_DEVICE, r->srcKind,
		r->dstKind, r->srcDeviceId, r->dstDeviceId });
}

static int memset_record(struct translator *t, const CUpti_ActivityMemset4 *r)
{
	return transfer(t, &(struct transfer){
		r->start, r->end, r->bytes, r->deviceId, r->contextId, r->streamId,
		r->correlationId, COPY_OPERATION_FILL, COPY_NONE, r->memoryKind, r->memoryKind,
		r->deviceId, r->deviceId });
}

static int allocation(struct translator *t, const CUpti_ActivityMemory4 *r)
{
	uint32_t operation;
	if (r->memoryOperationType == CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION)
		operation = ALLOCATION_ALLOCATE;
	else if (r->memoryOperationType == CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE)
		operation = ALLOCATION_FREE;
	else
		return 0;
	uint64_t at = translator_time(t, r->timestamp);
	struct record_memory_allocation a = {
		.header = { sizeof(a), RECORD_MEMORY_ALLOCATION, 0 },
		.agent_id = agent_for(t, r->deviceId),
		.operation = operation,
		.memory_kind = memory_kind(r->memoryKind),
		.address = r->address,
		.bytes = r->bytes,
		.correlation_id = r->correlationId,
		.start_ns = at,
		.end_ns = at,
		.stream_id = r->streamId,
		.context_id = r->contextId,
	};
	return emit(t, &a);
}

static int api(struct translator *t, const CUpti_ActivityAPI *r, int driver)
{
	struct record_api_call a = {
		.header = { sizeof(a), RECORD_API_CALL, 0 },
		.domain = driver ? DOMAIN_CUDA_DRIVER_API : DOMAIN_CUDA_API,
		.function_id = api_function(t, driver, r->cbid),
		.tid = r->threadId,
		.result = (int32_t)r->returnValue,
		.correlation_id = r->correlationId,
		.start_ns = translator_time(t, r->start),
		.end_ns = translator_time(t, r->end),
	};
	return emit(t, &a);
}

static int synchronization(struct translator *t, const CUpti_ActivitySynchronization2 *r)
{
	struct record_synchronization s = {
		.header = { sizeof(s), RECORD_SYNCHRONIZATION, 0 },
		.type = synchronization_type(r->type),
		.stream_id = r->streamId,
		.context_id = r->contextId,
		.event_id = r->cudaEventId,
		.result = (int32_t)r->returnValue,
		.correlation_id = r->correlationId,
		.start_ns = translator_time(t, r->start),
		.end_ns = translator_time(t, r->end),
	};
	return emit(t, &s);
}

static int overhead(struct translator *t, CUpti_ActivityOverhead3 *r)
{
	struct record_overhead o = {
		.header = { sizeof(o), RECORD_OVERHEAD, 0 },
		.kind = overhead_kind(r->overheadKind),
		.start_ns = translator_time(t, r->start),
		.end_ns = translator_time(t, r->end),
	};
	if (r->objectKind == CUPTI_ACTIVITY_OBJECT_THREAD)
		o.tid = r->objectId.pt.threadId;
	else if (r->objectKind == CUPTI_ACTIVITY_OBJECT_DEVICE ||
		 r->objectKind == CUPTI_ACTIVITY_OBJECT_CONTEXT ||
		 r->objectKind == CUPTI_ACTIVITY_OBJECT_STREAM)
		o.agent_id = agent_for(t, r->objectId.dcs.deviceId);
	if (emit(t, &o))
		return -1;
	free(r->overheadData); /* ours to free (cupti_activity.h), once the record is done */
	r->overheadData = NULL;
	return 0;
}

static int device(struct translator *t, CUpti_ActivityDevice5 *r)
{
	uint32_t agent_id = agent_for(t, r->id);
	struct record_agent agent = {
		.header = { sizeof(agent), RECORD_AGENT, 0 },
		.id = agent_id,
		.type = AGENT_GPU,
		.name_id = t->ops.intern(t->ops.ctx, r->name ? r->name : ""),
		.vendor_name_id = t->ops.intern(t->ops.ctx, "NVIDIA"),
		.vendor_id = 0x10de,
		.compute_units = r->numMultiprocessors,
		.max_clock_mhz = r->coreClockRate / 1000,
		.global_memory_bytes = r->globalMemorySize,
		.local_memory_bytes = r->maxSharedMemoryPerBlock,
		.max_workgroup_size = r->maxThreadsPerBlock,
		.max_workgroup_dim = { r->maxBlockDimX, r->maxBlockDimY, r->maxBlockDimZ },
		.compute_major = r->computeCapabilityMajor,
		.compute_minor = r->computeCapabilityMinor,
		.warp_size = r->numThreadsPerWarp,
		.l2_cache_bytes = r->l2CacheSize,
		.memory_bandwidth = r->globalMemoryBandwidth * 1000, /* kB/s */
		.device_index = r->id,
	};
	memcpy(agent.uuid, r->uuid.bytes, sizeof(agent.uuid));
	agent.driver_version_id = t->ops.intern(t->ops.ctx, "");
	if (t->ops.describe_device)
		t->ops.describe_device(t->ops.ctx, &agent);
	t->ops.emit_metadata(t->ops.ctx, &agent);
	free((void *)r->name); /* ours to free (cupti_activity.h) */
	r->name = NULL;
	return 0;
}

/* A graph launch's execution as one span (--cuda-graph-trace graph): a kernel named
 * "[CUDA graph N]" from the start of its first node to the end of its last, on the device
 * and stream it began on, under the launch's correlation id. */
static int graph_span(struct translator *t, const CUpti_ActivityGraphTrace2 *r)
{
	if (untimed(t, r->start, r->end))
		return 0;
	char name[48];
	snprintf(name, sizeof(name), "[CUDA graph %u]", r->graphId);
	uint32_t agent = agent_for(t, r->deviceId);
	struct record_kernel k = {
		.header = { sizeof(k), RECORD_KERNEL, 0 },
		.agent_id = agent,
		.queue_id = queue_for(t, r->contextId, r->streamId, agent),
		.name_id = t->ops.intern(t->ops.ctx, name),
		.correlation_id = r->correlationId,
		.dispatch_id = t->dispatches + 1,
		.start_ns = translator_time(t, r->start),
		.end_ns = translator_time(t, r->end),
		.grid = { 1, 1, 1 },
		.stream_id = r->streamId,
		.context_id = r->contextId,
		.graph_id = r->graphId,
	};
	if (emit(t, &k))
		return -1;
	t->dispatches++;
	return 0;
}

int translator_record(struct translator *t, CUpti_Activity *record)
{
	switch (record->kind) {
	case CUPTI_ACTIVITY_KIND_KERNEL:
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
		return kernel(t, (const CUpti_ActivityKernel10 *)record);
	case CUPTI_ACTIVITY_KIND_MEMCPY:
		return memcpy_record(t, (const CUpti_ActivityMemcpy6 *)record);
	case CUPTI_ACTIVITY_KIND_MEMCPY2:
		return peer_copy(t, (const CUpti_ActivityMemcpyPtoP4 *)record);
	case CUPTI_ACTIVITY_KIND_MEMSET:
		return memset_record(t, (const CUpti_ActivityMemset4 *)record);
	case CUPTI_ACTIVITY_KIND_MEMORY2:
		return allocation(t, (const CUpti_ActivityMemory4 *)record);
	case CUPTI_ACTIVITY_KIND_RUNTIME:
		return api(t, (const CUpti_ActivityAPI *)record, 0);
	case CUPTI_ACTIVITY_KIND_DRIVER:
		return api(t, (const CUpti_ActivityAPI *)record, 1);
	case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
		return synchronization(t, (const CUpti_ActivitySynchronization2 *)record);
	case CUPTI_ACTIVITY_KIND_OVERHEAD:
		return overhead(t, (CUpti_ActivityOverhead3 *)record);
	case CUPTI_ACTIVITY_KIND_DEVICE:
		return device(t, (CUpti_ActivityDevice5 *)record);
	case CUPTI_ACTIVITY_KIND_GRAPH_TRACE:
		return graph_span(t, (const CUpti_ActivityGraphTrace2 *)record);
	default:
		return 0;
	}
}

int translator_counters(struct translator *t, uint64_t correlation_id, uint32_t cuda_device,
			const char *const *names, const double *values, size_t count,
			size_t *done)
{
	uint32_t agent_id = agent_for(t, cuda_device);
	for (; *done < count; ++*done) {
		struct record_counter c = {
			.header = { sizeof(c), RECORD_COUNTER, 0 },
			.correlation_id = correlation_id,
			.agent_id = agent_id,
			.name_id = t->ops.intern(t->ops.ctx, names[*done]),
			.value = values[*done],
		};
		if (t->ops.emit(t->ops.ctx, &c) == -1)
			return -1;
	}
	return 0;
}

/* ---- PC sampling ----------------------------------------------------------------------- */

uint32_t translator_pc_period(double microseconds, int clock_khz)
{
	double cycles = microseconds * clock_khz / 1000.0;
	double exponent = cycles > 1 ? round(log2(cycles)) : 0;
	return exponent < 5 ? 5 : exponent > 31 ? 31 : (uint32_t)exponent;
}

static const char *stall_reason_name(const struct translate_stall_reasons *reasons,
				     uint32_t index)
{
	for (size_t i = 0; reasons && i < reasons->count; i++)
		if (reasons->index[i] == index)
			return reasons->name[i];
	return NULL;
}

int translator_pc_samples(struct translator *t, const CUpti_PCSamplingData *data,
			  uint32_t cuda_device, uint32_t period_log2,
			  const struct translate_stall_reasons *reasons,
			  struct translate_pc_cursor *cursor)
{
	uint32_t agent_id = agent_for(t, cuda_device);
	if (!cursor->totals_done) {
		struct record_pc_sampling totals = {
			.header = { sizeof(totals), RECORD_PC_SAMPLING, 0 },
			.agent_id = agent_id,
			.period_log2 = period_log2,
			.samples = data->totalSamples,
			.dropped = data->droppedSamples,
			.other_samples = data->nonUsrKernelsTotalSamples,
			.buffer_full = data->hardwareBufferFull ? 1 : 0,
		};
		if (t->ops.emit(t->ops.ctx, &totals) == -1)
			return -1;
		cursor->totals_done = 1;
	}
	for (; cursor->pc < data->totalNumPcs; cursor->pc++, cursor->reason = 0) {
		const CUpti_PCSamplingPCData *pc = &data->pPcData[cursor->pc];
		uint32_t function_id = 0, file_id = 0, line = 0;
		for (; cursor->reason < pc->stallReasonCount; cursor->reason++) {
			const CUpti_PCSamplingStallReason *r = &pc->stallReason[cursor->reason];
			if (!r->samples)
				continue;
			if (!function_id) { /* once per instruction */
				function_id = kernel_name(t, pc->functionName);
				if (t->ops.source_line)
					t->ops.source_line(t->ops.ctx, pc->cubinCrc,
							   pc->functionName, pc->pcOffset,
							   &file_id, &line);
			}
			const char *name = stall_reason_name(reasons, r->pcSamplingStallReasonIndex);
			char unknown[48];
			if (!name) {
				snprintf(unknown, sizeof(unknown), "stall reason %u",
					 r->pcSamplingStallReasonIndex);
				name = unknown;
			}
			struct record_pc_sample sample = {
				.header = { sizeof(sample), RECORD_PC_SAMPLE, 0 },
				.cubin_crc = pc->cubinCrc,
				.pc_offset = pc->pcOffset,
				.correlation_id = pc->correlationId,
				.agent_id = agent_id,
				.function_id = function_id,
				.reason_id = t->ops.intern(t->ops.ctx, name),
				.samples = r->samples,
				.file_id = file_id,
				.line = line,
			};
			if (t->ops.emit(t->ops.ctx, &sample) == -1)
				return -1;
		}
	}
	return 0;
}
