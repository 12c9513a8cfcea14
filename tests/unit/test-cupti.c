/* Unit tests of the CUDA backend's translation of CUPTI activity records, on records
 * built here: no GPU, driver or CUPTI library is needed. */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../inject/cuda/nvidia-proc.h"
#include "../../inject/cuda/translate.h"
#include "check.h"

/* ---- a capturing sink ------------------------------------------------------------------ */

#define MAX_RECORDS 64

struct sink {
	char *strings[256];          /* by id */
	uint32_t string_count;
	_Alignas(8) unsigned char records[MAX_RECORDS][256]; /* records are 8-aligned */
	int record_count;
	_Alignas(8) unsigned char metadata[MAX_RECORDS][256];
	int metadata_count;
	uint64_t dropped[DROPPED_REASON_COUNT];
	uint32_t next_agent, next_queue;
	int refuse_next_emit;        /* emit() answers "full" this many times */
	int full_at;                 /* > 0: emit() answers "full" once, when record_count
				      * is full_at - 1 */
	int describe_calls;
};

static uint32_t s_intern(void *ctx, const char *text)
{
	struct sink *s = ctx;
	for (uint32_t i = 1; i <= s->string_count; i++)
		if (!strcmp(s->strings[i], text))
			return i;
	s->strings[++s->string_count] = strdup(text);
	return s->string_count;
}

static int s_emit(void *ctx, const void *record)
{
	struct sink *s = ctx;
	if (s->refuse_next_emit > 0) {
		s->refuse_next_emit--;
		return -1;
	}
	if (s->full_at && s->record_count == s->full_at - 1) {
		s->full_at = 0;
		return -1;
	}
	const struct record_header *h = record;
	memcpy(s->records[s->record_count++], record, h->size);
	return 0;
}

static void s_emit_metadata(void *ctx, const void *record)
{
	struct sink *s = ctx;
	const struct record_header *h = record;
	memcpy(s->metadata[s->metadata_count++], record, h->size);
}

static void s_count_dropped(void *ctx, uint32_t reason, uint64_t records)
{
	((struct sink *)ctx)->dropped[reason] += records;
}

static uint32_t s_new_agent(void *ctx)
{
	return ++((struct sink *)ctx)->next_agent;
}

static uint32_t s_new_queue(void *ctx)
{
	return ++((struct sink *)ctx)->next_queue;
}

static const char *s_api_name(void *ctx, uint32_t domain, uint32_t cbid)
{
	if (domain == CUPTI_CB_DOMAIN_RUNTIME_API && cbid == 211)
		return "cudaLaunchKernel_v7000";
	if (domain == CUPTI_CB_DOMAIN_DRIVER_API && cbid == 307)
		return "cuLaunchKernel";
	if (domain == CUPTI_CB_DOMAIN_DRIVER_API && cbid == 32)
		return "cuMemAlloc_v2";
	return NULL;
}

static void s_describe(void *ctx, struct record_agent *agent)
{
	struct sink *s = ctx;
	s->describe_calls++;
	agent->pci_bus = 0x18;
	agent->driver_version_id = s_intern(ctx, "570.86.15");
}

static const char *text(struct sink *s, uint32_t id)
{
	return id && id <= s->string_count ? s->strings[id] : "(no string)";
}

static void sink_reset(struct sink *s)
{
	for (uint32_t i = 1; i <= s->string_count; i++)
		free(s->strings[i]);
	memset(s, 0, sizeof(*s));
}

static struct sink sink;

static void setup(struct translator *t)
{
	const struct translate_ops ops = {
		.intern = s_intern, .emit = s_emit, .emit_metadata = s_emit_metadata,
		.count_dropped = s_count_dropped, .new_agent_id = s_new_agent,
		.new_queue_id = s_new_queue, .api_name = s_api_name,
		.describe_device = s_describe, .ctx = &sink,
	};
	sink_reset(&sink);
	translator_init(t, &ops);
}

#define RECORD(i, type) ((const type *)sink.records[i])
#define METADATA(i, type) ((const type *)sink.metadata[i])

/* ---- tests ------------------------------------------------------------------------------ */

static CUpti_ActivityKernel10 make_kernel(void)
{
	CUpti_ActivityKernel10 k;
	memset(&k, 0, sizeof(k));
	k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
	k.registersPerThread = 32;
	k.start = 1700000000000001000ull;
	k.end = 1700000000000005000ull;
	k.deviceId = 0;
	k.contextId = 1;
	k.streamId = 13;
	k.gridX = 4096, k.gridY = 2, k.gridZ = 1;
	k.blockX = 256, k.blockY = 1, k.blockZ = 1;
	k.staticSharedMemory = 1024;
	k.dynamicSharedMemory = 4096;
	k.localMemoryPerThread = 16;
	k.correlationId = 77;
	k.name = "_Z7vecCopyPKfPfi";
	k.graphId = 5;
	k.graphNodeId = 0x100000002ull;
	return k;
}

static void test_kernel(void)
{
	struct translator t;
	setup(&t);
	t.clock_offset_ns = -1700000000000000000ll + 500; /* CUPTI realtime -> monotonic */
	CUpti_ActivityKernel10 k = make_kernel();
	CHECK(translator_record(&t, (CUpti_Activity *)&k) == 0);
	CHECK(sink.record_count == 1);
	const struct record_kernel *r = RECORD(0, struct record_kernel);
	CHECK(r->header.type == RECORD_KERNEL && r->header.size == sizeof(*r));
	CHECK(r->tid == 0); /* from the launch call, in post-processing */
	CHECK(r->agent_id == 1);
	CHECK(r->queue_id == 1);
	CHECK_STR(text(&sink, r->name_id), "vecCopy(float const*, float*, int)");
	CHECK(r->correlation_id == 77);
	CHECK(r->dispatch_id == 1);
	CHECK(r->start_ns == 1500 && r->end_ns == 5500);
	CHECK(r->grid[0] == 4096ull * 256 && r->grid[1] == 2 && r->grid[2] == 1);
	CHECK(r->workgroup[0] == 256 && r->workgroup[1] == 1 && r->workgroup[2] == 1);
	CHECK(r->local_memory_bytes == 5120);
	CHECK(r->static_local_memory_bytes == 1024 && r->dynamic_local_memory_bytes == 4096);
	CHECK(r->private_memory_bytes == 16);
	CHECK(r->registers == 32);
	CHECK(r->status == 0);
	CHECK(r->stream_id == 13 && r->context_id == 1);
	CHECK(r->graph_id == 5 && r->graph_node_id == 0x100000002ull);

	/* the device and the stream were announced once: a placeholder agent and a queue */
	CHECK(sink.metadata_count == 2);
	const struct record_agent *a = METADATA(0, struct record_agent);
	CHECK(a->header.type == RECORD_AGENT && a->id == 1 && a->type == AGENT_GPU);
	CHECK_STR(text(&sink, a->name_id), "CUDA device 0");
	CHECK(a->vendor_id == 0x10de);
	const struct record_queue *q = METADATA(1, struct record_queue);
	CHECK(q->header.type == RECORD_QUEUE && q->id == 1 && q->agent_id == 1 && q->properties == 13);

	/* a second launch of the same kernel on another stream: new queue, same name */
	k.streamId = 14;
	k.correlationId = 78;
	CHECK(translator_record(&t, (CUpti_Activity *)&k) == 0);
	CHECK(sink.record_count == 2 && sink.metadata_count == 3);
	r = RECORD(1, struct record_kernel);
	CHECK(r->queue_id == 2 && r->dispatch_id == 2 && r->name_id == RECORD(0, struct record_kernel)->name_id);

	/* grids beyond 2^32 work-items keep their size */
	k.gridX = 0x7fffffff;
	k.blockX = 1024;
	CHECK(translator_record(&t, (CUpti_Activity *)&k) == 0);
	CHECK(RECORD(2, struct record_kernel)->grid[0] == 0x7fffffffull * 1024);

	/* a template kernel; and names kept mangled on request */
	k.name = "_ZN2at6native29vectorized_elementwise_kernelILi4EfEEviT0_";
	CHECK(translator_record(&t, (CUpti_Activity *)&k) == 0);
	CHECK_STR(text(&sink, RECORD(3, struct record_kernel)->name_id),
		  "void at::native::vectorized_elementwise_kernel<4, float>(int, float)");
	translator_release(&t);

	setup(&t);
	t.keep_mangled = 1;
	k = make_kernel();
	CHECK(translator_record(&t, (CUpti_Activity *)&k) == 0);
	CHECK_STR(text(&sink, RECORD(0, struct record_kernel)->name_id), "_Z7vecCopyPKfPfi");
	translator_release(&t);
}

static void test_kernel_retry_and_untimed(void)
{
	struct translator t;
	setup(&t);
	CUpti_ActivityKernel10 k = make_kernel();
	sink.refuse_next_emit = 2;
	CHECK(translator_record(&t, (CUpti_Activity *)&k) == -1);
	CHECK(translator_record(&t, (CUpti_Activity *)&k) == -1);
	CHECK(translator_record(&t, (CUpti_Activity *)&k) == 0);
	CHECK(sink.record_count == 1);
	CHECK(RECORD(0, struct record_kernel)->dispatch_id == 1);
	CHECK(sink.metadata_count == 2); /* agent and queue announced once */
	CHECK(translator_record(&t, (CUpti_Activity *)&k) == 0);
	CHECK(RECORD(1, struct record_kernel)->dispatch_id == 2);

	/* no timestamps: counted, not emitted */
	k.start = 0;
	CHECK(translator_record(&t, (CUpti_Activity *)&k) == 0);
	k.start = 5, k.end = 0;
	CHECK(translator_record(&t, (CUpti_Activity *)&k) == 0);
	CHECK(sink.record_count == 2);
	CHECK(sink.dropped[DROPPED_NO_TIMESTAMPS] == 2);

	/* kinds gpuprof does not keep are skipped */
	CUpti_ActivityAPI internal = { .kind = CUPTI_ACTIVITY_KIND_INTERNAL_LAUNCH_API };
	CHECK(translator_record(&t, (CUpti_Activity *)&internal) == 0);
	CHECK(sink.record_count == 2);
	translator_release(&t);
}

static void test_copies(void)
{
	struct translator t;
	setup(&t);
	t.clock_offset_ns = -1000;
	CUpti_ActivityMemcpy6 c;
	memset(&c, 0, sizeof(c));
	c.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
	c.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
	c.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_PINNED;
	c.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
	c.bytes = 1 << 20;
	c.start = 5000, c.end = 9000;
	c.deviceId = 1, c.contextId = 2, c.streamId = 7, c.correlationId = 10;
	CHECK(translator_record(&t, (CUpti_Activity *)&c) == 0);
	const struct record_memory_copy *r = RECORD(0, struct record_memory_copy);
	CHECK(r->header.type == RECORD_MEMORY_COPY);
	CHECK(r->direction == COPY_HOST_TO_DEVICE && r->operation == COPY_OPERATION_COPY);
	CHECK(r->src_agent_id == 0 && r->dst_agent_id == 1);
	CHECK(r->src_memory_kind == MEMORY_KIND_PINNED && r->dst_memory_kind == MEMORY_KIND_DEVICE);
	CHECK(r->bytes == 1 << 20 && r->correlation_id == 10);
	CHECK(r->start_ns == 4000 && r->end_ns == 8000);
	CHECK(r->stream_id == 7 && r->context_id == 2 && r->queue_id == 1);
	CHECK(r->function_id == 0 && r->tid == 0);

	c.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_DTOH;
	c.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
	c.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE;
	CHECK(translator_record(&t, (CUpti_Activity *)&c) == 0);
	r = RECORD(1, struct record_memory_copy);
	CHECK(r->direction == COPY_DEVICE_TO_HOST && r->src_agent_id == 1 && r->dst_agent_id == 0);
	CHECK(r->dst_memory_kind == MEMORY_KIND_PAGEABLE);

	c.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_DTOD;
	CHECK(translator_record(&t, (CUpti_Activity *)&c) == 0);
	r = RECORD(2, struct record_memory_copy);
	CHECK(r->direction == COPY_DEVICE_TO_DEVICE && r->src_agent_id == 1 && r->dst_agent_id == 1);

	c.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOH;
	CHECK(translator_record(&t, (CUpti_Activity *)&c) == 0);
	r = RECORD(3, struct record_memory_copy);
	CHECK(r->direction == COPY_HOST_TO_HOST && r->src_agent_id == 0 && r->dst_agent_id == 0);

	/* peer to peer: device 1 -> device 3, recorded on device 1's stream */
	CUpti_ActivityMemcpyPtoP4 p;
	memset(&p, 0, sizeof(p));
	p.kind = CUPTI_ACTIVITY_KIND_MEMCPY2;
	p.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_PTOP;
	p.srcKind = p.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
	p.bytes = 4096;
	p.start = 20000, p.end = 21000;
	p.deviceId = 1, p.contextId = 2, p.streamId = 7;
	p.srcDeviceId = 1, p.dstDeviceId = 3;
	p.correlationId = 11;
	CHECK(translator_record(&t, (CUpti_Activity *)&p) == 0);
	r = RECORD(4, struct record_memory_copy);
	CHECK(r->direction == COPY_DEVICE_TO_DEVICE && r->src_agent_id == 1 && r->dst_agent_id == 2);
	CHECK(r->bytes == 4096 && r->correlation_id == 11 && r->queue_id == 1);

	CUpti_ActivityMemset4 m;
	memset(&m, 0, sizeof(m));
	m.kind = CUPTI_ACTIVITY_KIND_MEMSET;
	m.value = 0;
	m.bytes = 65536;
	m.start = 30000, m.end = 30500;
	m.deviceId = 1, m.contextId = 2, m.streamId = 8, m.correlationId = 12;
	m.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
	CHECK(translator_record(&t, (CUpti_Activity *)&m) == 0);
	r = RECORD(5, struct record_memory_copy);
	CHECK(r->operation == COPY_OPERATION_FILL && r->direction == COPY_NONE);
	CHECK(r->src_agent_id == 1 && r->dst_agent_id == 1 && r->bytes == 65536);
	CHECK(r->queue_id == 2 && r->stream_id == 8 && r->start_ns == 29000);
	CHECK(sink.record_count == 6);
	CHECK(sink.next_agent == 2 && sink.next_queue == 2);
	translator_release(&t);
}

static void test_allocations(void)
{
	struct translator t;
	setup(&t);
	CUpti_ActivityMemory4 m;
	memset(&m, 0, sizeof(m));
	m.kind = CUPTI_ACTIVITY_KIND_MEMORY2;
	m.memoryOperationType = CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION;
	m.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
	m.correlationId = 3;
	m.address = 0x7f0000200000ull;
	m.bytes = 1 << 24;
	m.timestamp = 123456;
	m.deviceId = 0, m.contextId = 1, m.streamId = 0;
	CHECK(translator_record(&t, (CUpti_Activity *)&m) == 0);
	m.memoryOperationType = CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE;
	m.correlationId = 9;
	m.timestamp = 223456;
	CHECK(translator_record(&t, (CUpti_Activity *)&m) == 0);
	m.memoryOperationType = CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_INVALID;
	CHECK(translator_record(&t, (CUpti_Activity *)&m) == 0);
	CHECK(sink.record_count == 2);
	const struct record_memory_allocation *a = RECORD(0, struct record_memory_allocation);
	CHECK(a->header.type == RECORD_MEMORY_ALLOCATION);
	CHECK(a->operation == ALLOCATION_ALLOCATE && a->memory_kind == MEMORY_KIND_DEVICE);
	CHECK(a->address == 0x7f0000200000ull && a->bytes == 1 << 24 && a->agent_id == 1);
	CHECK(a->start_ns == 123456 && a->end_ns == 123456 && a->correlation_id == 3);
	a = RECORD(1, struct record_memory_allocation);
	CHECK(a->operation == ALLOCATION_FREE && a->start_ns == 223456 && a->correlation_id == 9);
	translator_release(&t);
}

static void test_api_and_sync(void)
{
	struct translator t;
	setup(&t);
	t.clock_offset_ns = 100;
	CUpti_ActivityAPI a = { .kind = CUPTI_ACTIVITY_KIND_RUNTIME, .cbid = 211, .start = 1000,
				.end = 1900, .processId = 42, .threadId = 4242, .correlationId = 77,
				.returnValue = 0 };
	CHECK(translator_record(&t, (CUpti_Activity *)&a) == 0);
	a.kind = CUPTI_ACTIVITY_KIND_DRIVER;
	a.cbid = 307;
	a.correlationId = 78;
	CHECK(translator_record(&t, (CUpti_Activity *)&a) == 0);
	a.cbid = 32;
	a.returnValue = 2; /* CUDA_ERROR_OUT_OF_MEMORY */
	CHECK(translator_record(&t, (CUpti_Activity *)&a) == 0);
	a.cbid = 999;
	CHECK(translator_record(&t, (CUpti_Activity *)&a) == 0);
	a.kind = CUPTI_ACTIVITY_KIND_RUNTIME;
	a.cbid = 211;
	CHECK(translator_record(&t, (CUpti_Activity *)&a) == 0);
	CHECK(sink.record_count == 5);
	const struct record_api_call *r = RECORD(0, struct record_api_call);
	CHECK(r->header.type == RECORD_API_CALL && r->domain == DOMAIN_CUDA_API);
	CHECK_STR(text(&sink, r->function_id), "cudaLaunchKernel");
	CHECK(r->tid == 4242 && r->correlation_id == 77 && r->result == 0);
	CHECK(r->start_ns == 1100 && r->end_ns == 2000);
	r = RECORD(1, struct record_api_call);
	CHECK(r->domain == DOMAIN_CUDA_DRIVER_API);
	CHECK_STR(text(&sink, r->function_id), "cuLaunchKernel");
	r = RECORD(2, struct record_api_call);
	CHECK_STR(text(&sink, r->function_id), "cuMemAlloc");
	CHECK(r->result == 2);
	CHECK_STR(text(&sink, RECORD(3, struct record_api_call)->function_id), "driver function 999");
	CHECK(RECORD(4, struct record_api_call)->function_id == RECORD(0, struct record_api_call)->function_id);

	CUpti_ActivitySynchronization2 s;
	memset(&s, 0, sizeof(s));
	s.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
	s.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE;
	s.start = 5000, s.end = 8000;
	s.correlationId = 90, s.contextId = 1, s.streamId = 13, s.cudaEventId = 0;
	CHECK(translator_record(&t, (CUpti_Activity *)&s) == 0);
	const struct record_synchronization *y = RECORD(5, struct record_synchronization);
	CHECK(y->header.type == RECORD_SYNCHRONIZATION && y->type == SYNC_STREAM);
	CHECK(y->stream_id == 13 && y->correlation_id == 90 && y->start_ns == 5100 && y->end_ns == 8100);
	s.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE;
	s.cudaEventId = 4;
	CHECK(translator_record(&t, (CUpti_Activity *)&s) == 0);
	y = RECORD(6, struct record_synchronization);
	CHECK(y->type == SYNC_EVENT && y->event_id == 4);
	translator_release(&t);
}

static void test_overhead_and_device(void)
{
	struct translator t;
	setup(&t);
	CUpti_ActivityOverhead3 o;
	memset(&o, 0, sizeof(o));
	o.kind = CUPTI_ACTIVITY_KIND_OVERHEAD;
	o.overheadKind = CUPTI_ACTIVITY_OVERHEAD_CUPTI_INSTRUMENTATION;
	o.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
	o.objectId.pt.threadId = 555;
	o.start = 100, o.end = 400;
	o.overheadData = malloc(16); /* the client frees it */
	sink.refuse_next_emit = 1;
	CHECK(translator_record(&t, (CUpti_Activity *)&o) == -1);
	CHECK(o.overheadData != NULL); /* kept until the record is emitted */
	CHECK(translator_record(&t, (CUpti_Activity *)&o) == 0);
	CHECK(o.overheadData == NULL);
	const struct record_overhead *r = RECORD(0, struct record_overhead);
	CHECK(r->header.type == RECORD_OVERHEAD && r->kind == OVERHEAD_INSTRUMENTATION);
	CHECK(r->tid == 555 && r->agent_id == 0 && r->start_ns == 100 && r->end_ns == 400);
	o.overheadKind = CUPTI_ACTIVITY_OVERHEAD_COMMAND_BUFFER_FULL;
	o.objectKind = CUPTI_ACTIVITY_OBJECT_DEVICE;
	o.objectId.dcs.deviceId = 2;
	CHECK(translator_record(&t, (CUpti_Activity *)&o) == 0);
	r = RECORD(1, struct record_overhead);
	CHECK(r->kind == OVERHEAD_COMMAND_BUFFER_FULL && r->tid == 0 && r->agent_id == 1);

	CUpti_ActivityDevice5 d;
	memset(&d, 0, sizeof(d));
	d.kind = CUPTI_ACTIVITY_KIND_DEVICE;
	d.globalMemoryBandwidth = 3352320000ull; /* kB/s */
	d.globalMemorySize = 150ull << 30;
	d.l2CacheSize = 60 << 20;
	d.numThreadsPerWarp = 32;
	d.coreClockRate = 1980000; /* kHz */
	d.numMultiprocessors = 132;
	d.maxSharedMemoryPerBlock = 49152;
	d.maxThreadsPerBlock = 1024;
	d.maxBlockDimX = 1024, d.maxBlockDimY = 1024, d.maxBlockDimZ = 64;
	d.computeCapabilityMajor = 9, d.computeCapabilityMinor = 0;
	d.id = 2;
	for (int i = 0; i < 16; i++)
		d.uuid.bytes[i] = (char)(0xa0 + i);
	d.name = strdup("NVIDIA H200"); /* the client frees it */
	CHECK(translator_record(&t, (CUpti_Activity *)&d) == 0);
	CHECK(d.name == NULL);
	CHECK(sink.describe_calls == 1);
	/* the placeholder for device 2 (from the overhead record), then the full agent */
	CHECK(sink.metadata_count == 2);
	const struct record_agent *a = METADATA(1, struct record_agent);
	CHECK(a->id == 1 && a->type == AGENT_GPU && a->device_index == 2);
	CHECK_STR(text(&sink, a->name_id), "NVIDIA H200");
	CHECK_STR(text(&sink, a->vendor_name_id), "NVIDIA");
	CHECK_STR(text(&sink, a->driver_version_id), "570.86.15");
	CHECK(a->compute_units == 132 && a->max_clock_mhz == 1980);
	CHECK(a->global_memory_bytes == 150ull << 30 && a->local_memory_bytes == 49152);
	CHECK(a->max_workgroup_size == 1024 && a->max_workgroup_dim[2] == 64);
	CHECK(a->compute_major == 9 && a->compute_minor == 0 && a->warp_size == 32);
	CHECK(a->l2_cache_bytes == 60u << 20 && a->memory_bandwidth == 3352320000000ull);
	CHECK(a->uuid[0] == 0xa0 && a->uuid[15] == 0xaf && a->pci_bus == 0x18);
	translator_release(&t);
}

static void test_time_and_names(void)
{
	struct translator t;
	setup(&t);
	t.clock_offset_ns = -5000;
	CHECK(translator_time(&t, 0) == 0);
	CHECK(translator_time(&t, 6000) == 1000);
	CHECK(translator_time(&t, 4000) == 1); /* before the trace clock's origin: clamped */
	t.clock_offset_ns = 7;
	CHECK(translator_time(&t, 1ull << 62) == (1ull << 62) + 7);
	translator_release(&t);

	char out[64];
	translator_api_base_name("cudaLaunchKernel_v7000", out, sizeof(out));
	CHECK_STR(out, "cudaLaunchKernel");
	translator_api_base_name("cudaMemcpy_ptds_v7000", out, sizeof(out));
	CHECK_STR(out, "cudaMemcpy_ptds");
	translator_api_base_name("cuInit", out, sizeof(out));
	CHECK_STR(out, "cuInit");
	translator_api_base_name("cuMemcpyHtoD_v2", out, sizeof(out));
	CHECK_STR(out, "cuMemcpyHtoD");
	translator_api_base_name("odd_v", out, sizeof(out));
	CHECK_STR(out, "odd_v");
	translator_api_base_name("cudaLaunchKernel_v7000", out, 5);
	CHECK_STR(out, "cuda");

	CHECK(translator_demangle("vecCopy") == NULL);
	CHECK(translator_demangle("_Zbroken") == NULL);
	char *d = translator_demangle("_ZN3foo3barIiEEvPT_");
	CHECK_STR(d, "void foo::bar<int>(int*)");
	free(d);
}

/* Collection off from 2000 to 3000 ns of the trace clock, on elsewhere. */
static int paused_2000_3000(void *ctx, uint64_t ns)
{
	return ns < 2000 || ns >= 3000;
}

static void test_collection_control(void)
{
	struct translator t;
	setup(&t);
	t.ops.collected_at = paused_2000_3000;
	t.clock_offset_ns = -1700000000000000000ll;
	uint64_t starts[] = { 1000, 2000, 2999, 3000 };
	for (int i = 0; i < 4; i++) {
		CUpti_ActivityKernel10 k = make_kernel();
		k.start = 1700000000000000000ull + starts[i];
		k.end = k.start + 100;
		k.correlationId = 100 + (uint32_t)i;
		CHECK(translator_record(&t, (CUpti_Activity *)&k) == 0);
	}
	/* the two that began while collection was off are left out, and not as a loss */
	CHECK(sink.record_count == 2);
	CHECK(RECORD(0, struct record_kernel)->correlation_id == 100);
	CHECK(RECORD(1, struct record_kernel)->correlation_id == 103);
	for (int reason = 0; reason < DROPPED_REASON_COUNT; reason++)
		CHECK(sink.dropped[reason] == 0);
	translator_release(&t);
}

static void write_file(const char *path, const char *content)
{
	FILE *f = fopen(path, "w");
	if (f) {
		fputs(content, f);
		fclose(f);
	}
}

static void test_nvidia_proc(void)
{
	char root[] = "/tmp/gpuprof-test-nvidia-XXXXXX";
	CHECK(mkdtemp(root) != NULL);
	char path[256];
	snprintf(path, sizeof(path), "%s/gpus", root);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/gpus/0000:18:00.0", root);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/gpus/0000:2a:00.0", root);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/version", root);
	write_file(path, "NVRM version: NVIDIA UNIX x86_64 Kernel Module  570.86.15  Thu Jan  1 "
			 "00:00:00 UTC 2026\nGCC version:  gcc version 12.2.0\n");
	snprintf(path, sizeof(path), "%s/gpus/0000:18:00.0/information", root);
	write_file(path, "Model: \t\t NVIDIA H200\nIRQ:   \t\t 100\nGPU UUID: \t "
			 "GPU-00000000-0000-0000-0000-000000000000\nBus Location: \t 0000:18:00.0\n");
	snprintf(path, sizeof(path), "%s/gpus/0000:2a:00.0/information", root);
	write_file(path, "Model: \t\t NVIDIA H200\nGPU UUID: \t "
			 "GPU-a0a1a2a3-a4a5-a6a7-a8a9-aaabacadaeaf\nBus Location: \t 0000:2a:00.0\n");

	struct record_agent agent;
	memset(&agent, 0, sizeof(agent));
	for (int i = 0; i < 16; i++)
		agent.uuid[i] = (uint8_t)(0xa0 + i);
	char version[64];
	nvidia_proc_describe(root, &agent, version, sizeof(version));
	CHECK_STR(version, "570.86.15");
	CHECK(agent.pci_domain == 0 && agent.pci_bus == 0x2a && agent.pci_device == 0 &&
	      agent.pci_function == 0);

	agent.uuid[0] = 0x11; /* no such GPU: left as it was */
	agent.pci_bus = 7;
	nvidia_proc_describe(root, &agent, version, sizeof(version));
	CHECK(agent.pci_bus == 7);

	char command[300];
	snprintf(command, sizeof(command), "rm -rf '%s'", root);
	CHECK(system(command) == 0);
	nvidia_proc_describe(root, &agent, version, sizeof(version)); /* no driver at all */
	CHECK_STR(version, "");
}

/* A source line for the instructions of "_Z5chasePKjPj" below offset 0x100. */
static void s_source_line(void *ctx, uint64_t crc, const char *function, uint64_t pc,
			  uint32_t *file_id, uint32_t *line)
{
	*file_id = *line = 0;
	if (crc == 0xc0ffee && !strcmp(function, "_Z5chasePKjPj") && pc < 0x100) {
		*file_id = s_intern(ctx, "/src/chase.cu");
		*line = 40 + (uint32_t)(pc / 0x10);
	}
}

static void test_pc_samples(void)
{
	struct translator t;
	setup(&t);
	t.ops.source_line = s_source_line;
	static const uint32_t index[] = { 3, 7, 9 };
	static char *names[] = { "smsp__pcsamp_warps_issue_stalled_long_scoreboard",
				 "smsp__pcsamp_warps_issue_stalled_selected",
				 "smsp__pcsamp_warps_issue_stalled_long_scoreboard_not_issued" };
	const struct translate_stall_reasons reasons = { 3, index, names };
	CUpti_PCSamplingStallReason first[] = { { 3, 90 }, { 7, 0 }, { 9, 85 } };
	CUpti_PCSamplingStallReason second[] = { { 7, 5 }, { 11, 2 } };
	CUpti_PCSamplingStallReason third[] = { { 7, 1 } };
	CUpti_PCSamplingPCData pcs[3];
	memset(pcs, 0, sizeof(pcs));
	pcs[0] = (CUpti_PCSamplingPCData){ .size = sizeof(pcs[0]), .cubinCrc = 0xc0ffee,
					   .pcOffset = 0x30, .functionName = "_Z5chasePKjPj",
					   .stallReasonCount = 3, .stallReason = first };
	pcs[1] = (CUpti_PCSamplingPCData){ .size = sizeof(pcs[1]), .cubinCrc = 0xc0ffee,
					   .pcOffset = 0x200, .functionName = "_Z5chasePKjPj",
					   .stallReasonCount = 2, .stallReason = second,
					   .correlationId = 12 };
	pcs[2] = (CUpti_PCSamplingPCData){ .size = sizeof(pcs[2]), .cubinCrc = 0xbeef,
					   .pcOffset = 0x10, .functionName = "plain_kernel",
					   .stallReasonCount = 1, .stallReason = third };
	CUpti_PCSamplingData data;
	memset(&data, 0, sizeof(data));
	data.size = sizeof(data);
	data.totalNumPcs = 3;
	data.pPcData = pcs;
	data.totalSamples = 200;
	data.droppedSamples = 4;
	data.nonUsrKernelsTotalSamples = 11;
	data.hardwareBufferFull = 1;

	/* the recorder's buffer fills before each record in turn: the same six records come
	 * out, none twice */
	for (int full_at = 0; full_at <= 6; full_at++) {
		struct translate_pc_cursor cursor = { 0, 0, 0 };
		sink.record_count = 0;
		sink.full_at = full_at + 1;
		int calls = 1;
		while (translator_pc_samples(&t, &data, 0, 17, &reasons, &cursor) == -1)
			calls++;
		CHECK(sink.record_count == 6); /* the totals and five counts: the zero left out */
		CHECK(calls == (full_at < 6 ? 2 : 1));
	}

	const struct record_pc_sampling *totals = RECORD(0, struct record_pc_sampling);
	CHECK(totals->header.type == RECORD_PC_SAMPLING);
	CHECK(totals->samples == 200 && totals->dropped == 4 && totals->other_samples == 11);
	CHECK(totals->buffer_full == 1 && totals->period_log2 == 17);
	CHECK(totals->agent_id == 1); /* CUDA device 0, seen first here */
	const struct record_pc_sample *s = RECORD(1, struct record_pc_sample);
	CHECK(s->header.type == RECORD_PC_SAMPLE && s->header.size == sizeof(*s));
	CHECK_STR(text(&sink, s->function_id), "chase(unsigned int const*, unsigned int*)");
	CHECK_STR(text(&sink, s->reason_id), "smsp__pcsamp_warps_issue_stalled_long_scoreboard");
	CHECK(s->samples == 90 && s->pc_offset == 0x30 && s->cubin_crc == 0xc0ffee);
	CHECK_STR(text(&sink, s->file_id), "/src/chase.cu");
	CHECK(s->line == 43 && s->correlation_id == 0 && s->agent_id == 1);
	s = RECORD(2, struct record_pc_sample);
	CHECK_STR(text(&sink, s->reason_id),
		  "smsp__pcsamp_warps_issue_stalled_long_scoreboard_not_issued");
	CHECK(s->samples == 85 && s->line == 43);
	s = RECORD(3, struct record_pc_sample);
	CHECK_STR(text(&sink, s->reason_id), "smsp__pcsamp_warps_issue_stalled_selected");
	CHECK(s->samples == 5 && s->file_id == 0 && s->line == 0 && s->correlation_id == 12);
	s = RECORD(4, struct record_pc_sample); /* an index the device did not list */
	CHECK_STR(text(&sink, s->reason_id), "stall reason 11");
	CHECK(s->samples == 2);
	s = RECORD(5, struct record_pc_sample);
	CHECK_STR(text(&sink, s->function_id), "plain_kernel");
	CHECK(s->samples == 1 && s->cubin_crc == 0xbeef && s->pc_offset == 0x10);

	/* CUPTI's period for a time at the device's clock: 1000 us at 1,980 MHz is
	 * 1.98e6 cycles, nearest 2^21; the range ends at 2^5 and 2^31 */
	CHECK(translator_pc_period(1000, 1980000) == 21);
	CHECK(translator_pc_period(0.001, 1000000) == 5);
	CHECK(translator_pc_period(1e9, 2000000) == 31);
	translator_release(&t);
}

int main(int argc, char **argv)
{
	static const struct check_test tests[] = {
		CHECK_TEST(kernel), CHECK_TEST(kernel_retry_and_untimed), CHECK_TEST(copies),
		CHECK_TEST(allocations), CHECK_TEST(api_and_sync), CHECK_TEST(overhead_and_device),
		CHECK_TEST(time_and_names), CHECK_TEST(collection_control), CHECK_TEST(nvidia_proc),
		CHECK_TEST(pc_samples),
	};
	int rc = check_main(argc, argv, "test-cupti", tests, sizeof(tests) / sizeof(tests[0]));
	sink_reset(&sink);
	return rc;
}
