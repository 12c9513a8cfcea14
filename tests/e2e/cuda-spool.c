/* cuda-spool: writes the spool a small CUDA program would leave, without a GPU. CUPTI
 * activity records are built here as CUPTI fills them, go through the CUDA backend's
 * translation (inject/cuda/translate.c) and are written with the spool writer, so that
 * tests/e2e/test_cuda_cpu.py checks the whole path from CUPTI records to the outputs.
 *
 *   cuda-spool PATH [--counters] [--pc-sampling]
 *
 * The program it imitates, on one thread (tid 777) of process 4242: cudaMalloc,
 * cudaMemcpy (host to device, 4 MiB), cudaMemset, three cudaLaunchKernel of vecCopy on
 * stream 13, one cuLaunchKernel from another thread (tid 778), cudaStreamSynchronize,
 * cudaFree. CUPTI also reports one interval of instrumentation overhead. The recorder
 * adds what NVTX calls on thread 777 would give: a range "train" from 790 to 900 us
 * around the three launches, "step" nested in it from 805 to 815 us around the second,
 * and a mark "checkpoint" at 830 us. With --counters, the CUDA backend's counter
 * collection adds what it reads for the four kernels (gpuprof trace --pmc): for launch i
 * of vecCopy (correlation 4 + i), dram__bytes_read.sum = 4194304 + i and
 * smsp__inst_executed.sum = 1000 * (i + 1); for the cuLaunchKernel one (correlation 7),
 * dram__bytes_read.sum with no value (NaN) and smsp__inst_executed.sum = 0.5.
 * With --pc-sampling, the CUDA backend's PC sampling hands over two buffers of device 0
 * sampled every 2^17 cycles (inject/cuda/pc-sampling.c), in continuous mode:
 *   vecCopy (module 0x1234, with lines: offsets below 0x100 are vcopy.cu:12 until 0x60,
 *   vcopy.cu:14 after), first buffer: 0x40 long_scoreboard 600 (590 of them not
 *   issued), selected 20; 0x50 math_pipe_throttle 50; totals 700 taken, 20 lost, 30
 *   not the program's. Second buffer: 0x80 selected 200, wait 30; and chase (module
 *   0x9999, no lines) 0x10 long_scoreboard 100; totals 400 taken, 20 lost, 30 not the
 *   program's. Counted once each: 1000 samples, long_scoreboard 700, selected 220,
 *   math_pipe_throttle 50, wait 30; vcopy.cu:12 670, vcopy.cu:14 230, chase 100. */
#include <cupti.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../inject/cuda/translate.h"
#include "core/record.h"
#include "core/spool.h"

#define BASE 1700000000000000000ull /* CUPTI's clock: CLOCK_REALTIME */
#define START 1000000000ull         /* the trace clock when recording began */

static unsigned char chunk[1 << 16];
static uint32_t used, count;
static uint32_t next_string = 1, next_agent = 1, next_queue = 1;
static char *strings[256];

static int emit(void *ctx, const void *record)
{
	const struct record_header *h = record;
	memcpy(chunk + used, record, h->size);
	used += h->size;
	count++;
	return 0;
}

static void emit_metadata(void *ctx, const void *record)
{
	emit(ctx, record);
}

static uint32_t intern(void *ctx, const char *text)
{
	for (uint32_t i = 1; i < next_string; i++)
		if (!strcmp(strings[i], text))
			return i;
	strings[next_string] = strdup(text);
	unsigned char buffer[512] = { 0 };
	struct record_string *s = (void *)buffer;
	size_t len = strlen(text);
	s->header = (struct record_header){ RECORD_PADDED((uint32_t)(sizeof(*s) + len)),
					    RECORD_STRING, 0 };
	s->id = next_string;
	s->length = (uint32_t)len;
	memcpy(s->text, text, len);
	emit(ctx, s);
	return next_string++;
}

static void count_dropped(void *ctx, uint32_t reason, uint64_t records)
{
}

static uint32_t new_agent(void *ctx)
{
	return next_agent++;
}

static uint32_t new_queue(void *ctx)
{
	return next_queue++;
}

static const char *api_name(void *ctx, uint32_t domain, uint32_t cbid)
{
	if (domain == CUPTI_CB_DOMAIN_DRIVER_API)
		return cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel ? "cuLaunchKernel" : NULL;
	switch (cbid) {
	case CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020: return "cudaMalloc_v3020";
	case CUPTI_RUNTIME_TRACE_CBID_cudaFree_v3020: return "cudaFree_v3020";
	case CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020: return "cudaMemcpy_v3020";
	case CUPTI_RUNTIME_TRACE_CBID_cudaMemset_v3020: return "cudaMemset_v3020";
	case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000: return "cudaLaunchKernel_v7000";
	case CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020:
		return "cudaStreamSynchronize_v3020";
	}
	return NULL;
}

static struct translator t;

static void translate(void *record)
{
	if (translator_record(&t, record) != 0) {
		fprintf(stderr, "cuda-spool: translation refused a record\n");
		exit(1);
	}
}

/* A runtime (or driver) API call [at, at + length) in microseconds after BASE. */
static void api(int driver, uint32_t cbid, uint32_t tid, uint32_t correlation, uint64_t at_us,
		uint64_t length_us)
{
	CUpti_ActivityAPI a = {
		.kind = driver ? CUPTI_ACTIVITY_KIND_DRIVER : CUPTI_ACTIVITY_KIND_RUNTIME,
		.cbid = cbid, .start = BASE + at_us * 1000, .end = BASE + (at_us + length_us) * 1000,
		.processId = 4242, .threadId = tid, .correlationId = correlation,
	};
	translate(&a);
}

/* A marker as the recorder writes it, at microseconds after START. */
static void marker(uint64_t id, uint64_t parent, uint32_t kind, const char *text,
		   uint64_t start_us, uint64_t end_us)
{
	union {
		struct record_marker m;
		unsigned char bytes[128];
	} u;
	memset(&u, 0, sizeof(u));
	size_t length = strlen(text);
	u.m = (struct record_marker){
		.header = { RECORD_PADDED((uint32_t)(sizeof(u.m) + length)), RECORD_MARKER, 0 },
		.id = id, .parent_id = parent, .start_ns = START + start_us * 1000, .tid = 777,
		.kind = kind, .length = (uint32_t)length,
	};
	memcpy(u.m.text, text, length);
	emit(NULL, &u);
	if (kind == MARKER_MARK)
		return;
	struct record_marker_end e = {
		.header = { sizeof(e), RECORD_MARKER_END, 0 }, .id = id,
		.end_ns = START + end_us * 1000, .tid = 777,
	};
	emit(NULL, &e);
}

static void kernel(uint32_t correlation, uint64_t at_us)
{
	CUpti_ActivityKernel10 k;
	memset(&k, 0, sizeof(k));
	k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
	k.registersPerThread = 16;
	k.start = BASE + at_us * 1000;
	k.end = k.start + 40000;
	k.deviceId = 0, k.contextId = 1, k.streamId = 13;
	k.gridX = 4096, k.gridY = k.gridZ = 1;
	k.blockX = 256, k.blockY = k.blockZ = 1;
	k.staticSharedMemory = 0, k.dynamicSharedMemory = 1024;
	k.correlationId = correlation;
	k.name = "_Z7vecCopyPKfPfj";
	translate(&k);
}

/* The lines of the module 0x1234 (the backend asks CUPTI, from the module's binary). */
static void source_line(void *ctx, uint64_t crc, const char *function, uint64_t pc,
			uint32_t *file_id, uint32_t *line)
{
	*file_id = *line = 0;
	if (crc == 0x1234 && pc < 0x100) {
		*file_id = intern(ctx, "/home/user/vcopy.cu");
		*line = pc < 0x60 ? 12 : 14;
	}
}

static const uint32_t reason_index[] = { 1, 2, 3, 4, 5 };
static char *reason_name[] = { "smsp__pcsamp_warps_issue_stalled_long_scoreboard",
			       "smsp__pcsamp_warps_issue_stalled_long_scoreboard_not_issued",
			       "smsp__pcsamp_warps_issue_stalled_selected",
			       "smsp__pcsamp_warps_issue_stalled_math_pipe_throttle",
			       "smsp__pcsamp_warps_issue_stalled_wait" };

static int pc_buffer(CUpti_PCSamplingPCData *pcs, size_t n, uint64_t taken)
{
	const struct translate_stall_reasons reasons = { 5, reason_index, reason_name };
	CUpti_PCSamplingData d;
	memset(&d, 0, sizeof(d));
	d.size = sizeof(d);
	d.totalNumPcs = n;
	d.pPcData = pcs;
	d.totalSamples = taken;
	d.droppedSamples = 20;
	d.nonUsrKernelsTotalSamples = 30;
	struct translate_pc_cursor cursor = { 0, 0, 0 };
	return translator_pc_samples(&t, &d, 0, 17, &reasons, &cursor);
}

static int pc_sampling(void)
{
	CUpti_PCSamplingStallReason a[] = { { 1, 600 }, { 2, 590 }, { 3, 20 } };
	CUpti_PCSamplingStallReason b[] = { { 4, 50 } };
	CUpti_PCSamplingStallReason c[] = { { 3, 200 }, { 5, 30 } };
	CUpti_PCSamplingStallReason d[] = { { 1, 100 } };
	CUpti_PCSamplingPCData first[] = {
		{ .size = sizeof(first[0]), .cubinCrc = 0x1234, .pcOffset = 0x40,
		  .functionName = "_Z7vecCopyPKfPfj", .stallReasonCount = 3, .stallReason = a },
		{ .size = sizeof(first[0]), .cubinCrc = 0x1234, .pcOffset = 0x50,
		  .functionName = "_Z7vecCopyPKfPfj", .stallReasonCount = 1, .stallReason = b },
	};
	CUpti_PCSamplingPCData second[] = {
		{ .size = sizeof(second[0]), .cubinCrc = 0x1234, .pcOffset = 0x80,
		  .functionName = "_Z7vecCopyPKfPfj", .stallReasonCount = 2, .stallReason = c },
		{ .size = sizeof(second[0]), .cubinCrc = 0x9999, .pcOffset = 0x10,
		  .functionName = "_Z5chasePKjPj", .stallReasonCount = 1, .stallReason = d },
	};
	return pc_buffer(first, 2, 700) || pc_buffer(second, 2, 400);
}

/* What the CUDA backend adds to a device record: its driver's versions (inject/cuda/cuda.c) */
static void describe_device(void *ctx, struct record_agent *agent)
{
	agent->driver_version_id = intern(ctx, "580.65.06 (CUDA 13.0)");
}

int main(int argc, char **argv)
{
	int counters = 0, sampling = 0;
	for (int i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "--counters"))
			counters = 1;
		else if (!strcmp(argv[i], "--pc-sampling"))
			sampling = 1;
		else
			argc = 0;
	}
	if (argc < 2) {
		fprintf(stderr, "usage: cuda-spool PATH [--counters] [--pc-sampling]\n");
		return 2;
	}
	int fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || spool_write_header(fd, NULL) < 0) {
		perror(argv[1]);
		return 1;
	}
	const struct translate_ops ops = {
		.intern = intern, .emit = emit, .emit_metadata = emit_metadata,
		.count_dropped = count_dropped, .new_agent_id = new_agent,
		.new_queue_id = new_queue, .api_name = api_name, .describe_device = describe_device,
		.source_line = source_line,
	};
	translator_init(&t, &ops);
	t.clock_offset_ns = (int64_t)START - (int64_t)BASE;

	struct record_process process = {
		.header = { sizeof(process), RECORD_PROCESS, 0 },
		.pid = 4242, .ppid = 1, .start_ns = START, .realtime_ns = BASE,
		.hostname_id = intern(NULL, "gpu-host"), .command_id = intern(NULL, "./vcopy"),
		.rank = -1, .size = -1,
	};
	emit(NULL, &process);
	struct record_agent host = {
		.header = { sizeof(host), RECORD_AGENT, 0 }, .id = 0, .type = AGENT_CPU,
		.name_id = intern(NULL, "host CPU"), .vendor_name_id = intern(NULL, ""),
		.driver_version_id = intern(NULL, ""), .compute_units = 8,
	};
	emit(NULL, &host);

	CUpti_ActivityDevice5 d;
	memset(&d, 0, sizeof(d));
	d.kind = CUPTI_ACTIVITY_KIND_DEVICE;
	d.globalMemoryBandwidth = 4800000000ull;
	d.globalMemorySize = 150ull << 30;
	d.l2CacheSize = 60 << 20;
	d.numThreadsPerWarp = 32;
	d.coreClockRate = 1980000;
	d.numMultiprocessors = 132;
	d.maxSharedMemoryPerBlock = 49152;
	d.maxThreadsPerBlock = 1024;
	d.maxBlockDimX = d.maxBlockDimY = 1024, d.maxBlockDimZ = 64;
	d.computeCapabilityMajor = 9;
	for (int i = 0; i < 16; i++)
		d.uuid.bytes[i] = (char)(0x10 * (i % 16) + i % 7);
	d.name = strdup("NVIDIA H200");
	translate(&d);

	uint32_t main_tid = 777, other_tid = 778;
	api(0, CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020, main_tid, 1, 100, 50);
	CUpti_ActivityMemory4 m;
	memset(&m, 0, sizeof(m));
	m.kind = CUPTI_ACTIVITY_KIND_MEMORY2;
	m.memoryOperationType = CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION;
	m.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
	m.correlationId = 1;
	m.address = 0x7f0000200000ull;
	m.bytes = 4 << 20;
	m.timestamp = BASE + 140000;
	translate(&m);

	api(0, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020, main_tid, 2, 200, 400);
	CUpti_ActivityMemcpy6 c;
	memset(&c, 0, sizeof(c));
	c.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
	c.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
	c.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE;
	c.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
	c.bytes = 4 << 20;
	c.start = BASE + 250000, c.end = BASE + 580000;
	c.contextId = 1, c.streamId = 7, c.correlationId = 2;
	translate(&c);

	api(0, CUPTI_RUNTIME_TRACE_CBID_cudaMemset_v3020, main_tid, 3, 700, 20);
	CUpti_ActivityMemset4 s;
	memset(&s, 0, sizeof(s));
	s.kind = CUPTI_ACTIVITY_KIND_MEMSET;
	s.bytes = 4 << 20;
	s.start = BASE + 710000, s.end = BASE + 712000;
	s.contextId = 1, s.streamId = 7, s.correlationId = 3;
	s.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
	translate(&s);

	for (uint32_t i = 0; i < 3; i++) {
		api(0, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, main_tid, 4 + i, 800 + 10 * i, 5);
		kernel(4 + i, 803 + 50 * i);
	}
	api(1, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, other_tid, 7, 820, 4);
	kernel(7, 960);
	static const char *const metrics[] = { "dram__bytes_read.sum", "smsp__inst_executed.sum" };
	for (uint32_t i = 0; counters && i < 4; i++) {
		double values[2] = { i < 3 ? 4194304.0 + i : NAN, i < 3 ? 1000.0 * (i + 1) : 0.5 };
		size_t done = 0;
		if (translator_counters(&t, 4 + i, 0, metrics, values, 2, &done) || done != 2) {
			fprintf(stderr, "cuda-spool: counters refused\n");
			return 1;
		}
	}
	if (sampling && pc_sampling()) {
		fprintf(stderr, "cuda-spool: PC samples refused\n");
		return 1;
	}
	marker(1, 0, MARKER_PUSH_POP, "train", 790, 900);
	marker(2, 1, MARKER_PUSH_POP, "step", 805, 815);
	marker(3, 1, MARKER_MARK, "checkpoint", 830, 830);

	CUpti_ActivityOverhead3 o;
	memset(&o, 0, sizeof(o));
	o.kind = CUPTI_ACTIVITY_KIND_OVERHEAD;
	o.overheadKind = CUPTI_ACTIVITY_OVERHEAD_CUPTI_INSTRUMENTATION;
	o.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
	o.objectId.pt.threadId = main_tid;
	o.start = BASE + 790000, o.end = BASE + 799000;
	translate(&o);

	api(0, CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020, main_tid, 8, 850, 160);
	CUpti_ActivitySynchronization2 y;
	memset(&y, 0, sizeof(y));
	y.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
	y.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE;
	y.start = BASE + 851000, y.end = BASE + 1009000;
	y.correlationId = 8, y.contextId = 1, y.streamId = 13;
	translate(&y);

	api(0, CUPTI_RUNTIME_TRACE_CBID_cudaFree_v3020, main_tid, 9, 1100, 30);
	m.memoryOperationType = CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE;
	m.correlationId = 9;
	m.timestamp = BASE + 1110000;
	translate(&m);

	struct record_process_end end = {
		.header = { sizeof(end), RECORD_PROCESS_END, 0 }, .end_ns = START + 2000000,
	};
	emit(NULL, &end);
	if (spool_write_chunk(fd, chunk, used, count, NULL) < 0 || close(fd) < 0) {
		perror(argv[1]);
		return 1;
	}
	translator_release(&t);
	return 0;
}
