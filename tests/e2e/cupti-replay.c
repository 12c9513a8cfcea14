/* cupti-replay: runs the real CUDA backend (libgpuprof-cuda.so) against fake-cupti.c and
 * fake-cuda.c, standing in for the CUDA driver that loads it and for CUPTI that calls it
 * back, and replays what CUPTI does while a small CUDA program runs, as CUPTI's
 * documentation and its samples' outputs show it:
 *
 *   cupti-replay LIBRARY launches|counters|pc-sampling|backward
 *
 * LIBRARY is the backend to load (CUDA_INJECTION64_PATH's, or a copy beside a stand-in
 * host library). The program's thread makes context 0x1000 current and creates it; then,
 * each from a function of its own (so that each launch stack is told apart):
 *   copy_in()        cudaMemcpy, correlation 1: a copy record, host to device
 *   chevrons()       __cudaLaunchKernel (what <<<>>> calls in CUDA 13), 2: vecCopy, with
 *                    a cuLaunchKernel inside it under the same id, 2, as an H200 showed
 *                    it (CUDA 13.0, driver 580.159); without parameters (CUDA's
 *                    cuda_runtime_api_meta.h has no structure for them: whether CUPTI
 *                    passes any is not known, and the backend must not depend on it)
 *   runtime_launch() cudaLaunchKernel, 3: vecCopy, inside the marker range "step"
 *   fill()           cudaMemset, 4: a memset record
 *   driver_launch()  cuLaunchKernel (the driver's own entry), 5: chase
 *   graph_launch()   cudaGraphLaunch, 6: two kernels "step" with correlation 6, graph 1
 *   host_function()  cudaLaunchHostFunc, 7: host work, no device record
 *   ex_launch()      cudaLaunchKernelExC, 8: vecCopy
 *   nested_launch()  cudaLaunchKernel 9 with a cuLaunchKernel 10 inside it, as older
 *                    drivers showed it: the kernel carries the runtime's id, 9
 * all inside the marker range "train" (pushed when markers are traced). The other runtime
 * launches fire their runtime callbacks only.
 * counters: GPUPROF_PMC names two metrics, the stand-in host library evaluates them; the
 * records of the kernels measured come without times (kernel replay, as on an H200).
 * pc-sampling: GPUPROF_PC_SAMPLING=period=17; CUPTI hands one range over in two buffers
 * (remainingNumPcs 1, then 0), each with the range's totals (1000 samples, 20 dropped,
 * 30 of other kernels), vecCopy 0x40 long_scoreboard 600 then 0x80 selected 200; it
 * answers only where the context is current.
 * backward: as PyTorch does a backward pass on CUDA: the program's thread opens the
 * range "torch.autograd.backward" (domain "torch") and waits while another thread (the
 * autograd engine's) launches vecCopy with cudaLaunchKernel, 11, in no range of its own;
 * then the program's thread launches vecCopy, 12, in no range.
 * capture: a capture range of cudaProfilerStart/Stop, then one of the driver's
 * cuProfilerStart/Stop, as torch.cuda.profiler.start/stop and nsys's
 * --capture-range=cudaProfilerApi use them: cudaLaunchKernel "before" 21 (outside);
 * cudaProfilerStart 22; "inside" 23, and "late" 24, whose record starts on the device
 * after the range ended (launched inside, it ran after cudaProfilerStop); a copy 25;
 * cudaProfilerStop 26; "after" 27; cuProfilerStart 28; cuLaunchKernel "driver" 29;
 * cuProfilerStop 30; "last" 31.
 * capture-nvtx: cudaLaunchKernel "before" 41; the range "step" (default domain) around
 * "inside" 42, which starts on the device after the range's end; "after" 43; the range
 * "step" of the domain "torch" around "torch_step" 44.
 * The counter scenarios (GPUPROF_PMC: two metrics), against the strict profiler of
 * fake-cupti-profiler.c, each on context 0x1000 but where said, with cuLaunchKernel
 * "chase" (measured at its own call):
 *   counters-multiplex  two groups (the two metrics; then sm__cycles_elapsed.avg) under
 *                  --pmc-multiplex kernel: 51 to 54 collect groups 0, 1, 0, 1
 *   counters-reset  61; the context destroyed (cudaDeviceReset) and a new one made at the
 *                  same address: 62; a second context 0x2000 made current: 63
 *   counters-threads  61 on the program's thread, whose kernel runs 50 ms; meanwhile
 *                  another thread calls cudaMemcpy 72 and cudaGraphLaunch 73 (two kernels)
 *   counters-captured  81 into a stream being captured (no kernel runs, no record); 82
 *   counters-partial  91 whose kernel replay fails to submit every pass; 92
 *   counters-exit-context  95, whose exit callback has no context current (CUPTI's
 *                  context may change from a call's entry to its exit)
 * graphs: a CUDA graph captured and replayed, as torch.cuda.graphs and torch.compile's
 * reduce-overhead mode do: capture_forward() (in the range "forward") launches "step"
 * 111 and "other" 112 into a stream being captured, each making its node (1001, 1002:
 * GRAPHNODE_CREATED inside the launch call) and running nothing; add_node() adds "extra"
 * (node 1003) with cudaGraphAddKernelNode 113, and a copy's node 1004; instantiate()
 * (cudaGraphInstantiate 114) makes the copies 2001 to 2004 (GRAPHNODE_CREATED then
 * GRAPHNODE_CLONED of each); replay() (in the range "replay") calls cudaGraphLaunch 115
 * twice (115, 116), whose kernels carry the copies' node ids; then the graph is
 * instantiated again from the first copies (3001 to 3003, copies of copies) and launched
 * once, 117. Each launch has its graph's record whole (recorded where CUPTI was asked
 * for it: --cuda-graph-trace graph) and its kernels'.
 * allocations: cudaMalloc 141 of 4 MiB in alloc_weights(), 142 of 8 MiB in
 * alloc_activations(), cudaFree 143 of the 8 MiB, cudaMalloc 144 of 1 MiB in
 * alloc_leak(), never freed: each with CUPTI's memory record under its call's id (the
 * calls made from those functions themselves, their allocation sites).
 * nccl: NCCL's calls through the stand-in libnccl.so.2, launching where NCCL does (see
 * nccl()).
 * Prints what the fake saw: ranges started, configurations set, profiler calls refused,
 * GetData calls refused. */
#include <cupti.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fake-cupti.h"

#define CONTEXT ((CUcontext)0x1000)

static struct {
	__typeof__(fake_cupti_api) *api;
	__typeof__(fake_cupti_resource) *resource;
	__typeof__(fake_cupti_activity) *activity;
	__typeof__(fake_cupti_ranges_started) *ranges_started;
	__typeof__(fake_cupti_get_data_refused) *get_data_refused;
	__typeof__(fake_cupti_pc_sampling) *pc_sampling;
	__typeof__(fake_cupti_set_configs) *set_configs;
	__typeof__(fake_cupti_profiler_refused) *refused;
	__typeof__(fake_cupti_driver_init) *driver_init;
	__typeof__(fake_cupti_fail_next_replay) *fail_next_replay;
	__typeof__(fake_cupti_graph_node) *graph_node;
	void (*capture)(int on);
} fake;
static int (*range_push)(const char *text, uint32_t domain_id);
static int (*range_pop)(void);
static uint32_t (*intern)(const char *text);

static uint64_t cupti_now(void)
{
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	return (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
}

/* A kernel's record; one measured since the last (a range started: kernel replay) has
 * no times, as an H200 gave them (CUDA 13.0, driver 580.159). A graph's kernel carries
 * its graph's id and its node's (0, 0: none). */
static void graph_kernel(uint32_t correlation, const char *name, uint32_t graph, uint64_t node)
{
	static pthread_mutex_t seen_lock = PTHREAD_MUTEX_INITIALIZER; /* the replay's threads */
	static unsigned ranges_seen;
	CUpti_ActivityKernel10 k;
	memset(&k, 0, sizeof(k));
	k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
	pthread_mutex_lock(&seen_lock);
	unsigned started = fake.ranges_started();
	if (started == ranges_seen) {
		k.start = cupti_now() + 1000000;
		k.end = k.start + 40000;
	}
	ranges_seen = started;
	pthread_mutex_unlock(&seen_lock);
	k.deviceId = 0, k.contextId = 1, k.streamId = 13;
	k.gridX = 4096, k.gridY = k.gridZ = 1;
	k.blockX = 256, k.blockY = k.blockZ = 1;
	k.correlationId = correlation;
	k.name = name;
	k.graphId = graph;
	k.graphNodeId = node;
	fake.activity(&k, sizeof(k));
}

static void kernel(uint32_t correlation, const char *name)
{
	graph_kernel(correlation, name, 0, 0);
}

/* A memset's record, 4 KiB on the device. */
static void fill_record(uint32_t correlation)
{
	CUpti_ActivityMemset4 m;
	memset(&m, 0, sizeof(m));
	m.kind = CUPTI_ACTIVITY_KIND_MEMSET;
	m.bytes = 4096;
	m.start = cupti_now() + 500000;
	m.end = m.start + 1000;
	m.streamId = 13;
	m.correlationId = correlation;
	m.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
	fake.activity(&m, sizeof(m));
}

/* A copy's record, 1 MiB from pageable host memory to the device. */
static void copy_record(uint32_t correlation)
{
	CUpti_ActivityMemcpy6 c;
	memset(&c, 0, sizeof(c));
	c.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
	c.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
	c.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE;
	c.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
	c.bytes = 1 << 20;
	c.start = cupti_now() + 500000;
	c.end = c.start + 100000;
	c.streamId = 13;
	c.correlationId = correlation;
	fake.activity(&c, sizeof(c));
}

/* One API call: its entry callback, the real function (nothing here), its exit. */
static void call(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, uint32_t correlation,
		 const char *symbol, const void *params)
{
	fake.api(domain, cbid, CUPTI_API_ENTER, correlation, symbol, params, CONTEXT);
	fake.api(domain, cbid, CUPTI_API_EXIT, correlation, symbol, params, CONTEXT);
}

#define RUNTIME(id) CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_##id
#define VECCOPY "_Z7vecCopyPKfPfj"

static const cudaLaunchKernel_v7000_params launch_params = {
	.gridDim = { 4096, 1, 1 }, .blockDim = { 256, 1, 1 } };

__attribute__((noinline)) static void copy_in(void)
{
	call(RUNTIME(cudaMemcpy_v3020), 1, NULL, NULL);
	copy_record(1);
}

__attribute__((noinline)) static void chevrons(void)
{
	cuLaunchKernel_params inner = { .gridDimX = 4096, .gridDimY = 1, .gridDimZ = 1,
					.blockDimX = 256, .blockDimY = 1, .blockDimZ = 1 };
	fake.api(RUNTIME(__cudaLaunchKernel_v13000), CUPTI_API_ENTER, 2, VECCOPY, NULL,
		 CONTEXT);
	call(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, 2, VECCOPY,
	     &inner);
	fake.api(RUNTIME(__cudaLaunchKernel_v13000), CUPTI_API_EXIT, 2, VECCOPY, NULL,
		 CONTEXT);
	kernel(2, VECCOPY);
}

__attribute__((noinline)) static void runtime_launch(void)
{
	if (range_push)
		range_push("step", 0);
	call(RUNTIME(cudaLaunchKernel_v7000), 3, VECCOPY, &launch_params);
	kernel(3, VECCOPY);
	if (range_pop)
		range_pop();
}

__attribute__((noinline)) static void fill(void)
{
	call(RUNTIME(cudaMemset_v3020), 4, NULL, NULL);
	fill_record(4);
}

__attribute__((noinline)) static void driver_launch(void)
{
	cuLaunchKernel_params params = { .gridDimX = 64, .gridDimY = 1, .gridDimZ = 1,
					 .blockDimX = 128, .blockDimY = 1, .blockDimZ = 1 };
	call(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, 5, "_Z5chasePj",
	     &params);
	kernel(5, "_Z5chasePj");
}

__attribute__((noinline)) static void graph_launch(void)
{
	call(RUNTIME(cudaGraphLaunch_v10000), 6, NULL, NULL);
	graph_kernel(6, "_Z4stepv", 1, 0x100000001);
	graph_kernel(6, "_Z4stepv", 1, 0x100000002);
}

__attribute__((noinline)) static void host_function(void)
{
	call(RUNTIME(cudaLaunchHostFunc_v10000), 7, NULL, NULL);
}

__attribute__((noinline)) static void ex_launch(void)
{
	cudaLaunchConfig_t config = { .gridDim = { 32, 1, 1 }, .blockDim = { 64, 1, 1 } };
	cudaLaunchKernelExC_v11060_params params = { .config = &config };
	call(RUNTIME(cudaLaunchKernelExC_v11060), 8, VECCOPY, &params);
	kernel(8, VECCOPY);
}

__attribute__((noinline)) static void nested_launch(void)
{
	cuLaunchKernel_params inner = { .gridDimX = 4096, .gridDimY = 1, .gridDimZ = 1,
					.blockDimX = 256, .blockDimY = 1, .blockDimZ = 1 };
	fake.api(RUNTIME(cudaLaunchKernel_v7000), CUPTI_API_ENTER, 9, VECCOPY, &launch_params,
		 CONTEXT);
	call(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, 10, VECCOPY,
	     &inner);
	fake.api(RUNTIME(cudaLaunchKernel_v7000), CUPTI_API_EXIT, 9, VECCOPY, &launch_params,
		 CONTEXT);
	kernel(9, VECCOPY);
}

__attribute__((noinline)) static void *autograd_engine(void *unused)
{
	call(RUNTIME(cudaLaunchKernel_v7000), 11, VECCOPY, &launch_params);
	kernel(11, VECCOPY);
	return NULL;
}

static void backward(void)
{
	pthread_t engine;
	if (range_push)
		range_push("torch.autograd.backward", intern("torch"));
	if (pthread_create(&engine, NULL, autograd_engine, NULL) == 0)
		pthread_join(engine, NULL);
	if (range_pop)
		range_pop();
	call(RUNTIME(cudaLaunchKernel_v7000), 12, VECCOPY, &launch_params);
	kernel(12, VECCOPY);
}

static const struct fake_pc first_pcs[] = { { 0x40, VECCOPY, 10, 600 } };
static const struct fake_pc last_pcs[] = { { 0x80, VECCOPY, 11, 200 } };
static const struct fake_pc_buffer pc_buffers[] = {
	{ 1000, 20, 30, 1, 1, first_pcs, 1 },
	{ 1000, 20, 30, 0, 1, last_pcs, 1 },
};

/* A kernel's record that began on the device `late` ns from now. */
static void kernel_at(uint32_t correlation, const char *name, uint64_t late)
{
	CUpti_ActivityKernel10 k;
	memset(&k, 0, sizeof(k));
	k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
	k.start = cupti_now() + late;
	k.end = k.start + 40000;
	k.deviceId = 0, k.contextId = 1, k.streamId = 13;
	k.gridX = 64, k.gridY = k.gridZ = 1;
	k.blockX = 128, k.blockY = k.blockZ = 1;
	k.correlationId = correlation;
	k.name = name;
	fake.activity(&k, sizeof(k));
}

static void capture(void)
{
	cuLaunchKernel_params driver = { .gridDimX = 64, .gridDimY = 1, .gridDimZ = 1,
					 .blockDimX = 128, .blockDimY = 1, .blockDimZ = 1 };
	call(RUNTIME(cudaLaunchKernel_v7000), 21, "_Z6beforev", &launch_params);
	kernel_at(21, "_Z6beforev", 1000);
	call(RUNTIME(cudaProfilerStart_v4000), 22, NULL, NULL);
	call(RUNTIME(cudaLaunchKernel_v7000), 23, "_Z6insidev", &launch_params);
	kernel_at(23, "_Z6insidev", 1000);
	call(RUNTIME(cudaLaunchKernel_v7000), 24, "_Z4latev", &launch_params);
	call(RUNTIME(cudaMemcpy_v3020), 25, NULL, NULL);
	copy_record(25);
	call(RUNTIME(cudaProfilerStop_v4000), 26, NULL, NULL);
	kernel_at(24, "_Z4latev", 2000000); /* on the device 2 ms after the stop */
	call(RUNTIME(cudaLaunchKernel_v7000), 27, "_Z5afterv", &launch_params);
	kernel_at(27, "_Z5afterv", 1000);
	call(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuProfilerStart, 28, NULL, NULL);
	call(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, 29, "_Z6driverv",
	     &driver);
	kernel_at(29, "_Z6driverv", 1000);
	call(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuProfilerStop, 30, NULL, NULL);
	call(RUNTIME(cudaLaunchKernel_v7000), 31, "_Z4lastv", &launch_params);
	kernel_at(31, "_Z4lastv", 1000);
}

static void capture_nvtx(void)
{
	call(RUNTIME(cudaLaunchKernel_v7000), 41, "_Z6beforev", &launch_params);
	kernel_at(41, "_Z6beforev", 1000);
	range_push("step", 0);
	call(RUNTIME(cudaLaunchKernel_v7000), 42, "_Z6insidev", &launch_params);
	range_pop();
	kernel_at(42, "_Z6insidev", 2000000);
	call(RUNTIME(cudaLaunchKernel_v7000), 43, "_Z5afterv", &launch_params);
	kernel_at(43, "_Z5afterv", 1000);
	range_push("step", intern("torch"));
	call(RUNTIME(cudaLaunchKernel_v7000), 44, "_Z10torch_stepv", &launch_params);
	kernel_at(44, "_Z10torch_stepv", 1000);
	range_pop();
}

/* cuLaunchKernel of "chase" on ctx, its exit callback seen with exit_ctx current, its
 * kernel's record after it (none where it was captured). */
static void chase_on(CUcontext ctx, CUcontext exit_ctx, uint32_t correlation, int recorded)
{
	cuLaunchKernel_params params = { .gridDimX = 64, .gridDimY = 1, .gridDimZ = 1,
					 .blockDimX = 128, .blockDimY = 1, .blockDimZ = 1 };
	fake.api(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,
		 CUPTI_API_ENTER, correlation, "_Z5chasePj", &params, ctx);
	fake.api(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,
		 CUPTI_API_EXIT, correlation, "_Z5chasePj", &params, exit_ctx);
	if (recorded)
		kernel(correlation, "_Z5chasePj");
}

static void chase(uint32_t correlation)
{
	chase_on(CONTEXT, CONTEXT, correlation, 1);
}

static pthread_mutex_t meanwhile_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t meanwhile_cond = PTHREAD_COND_INITIALIZER;
static int measuring_now, measured_recorded;

/* The other thread of counters-threads: its copy and graph launch while the program's
 * thread measures its kernel; their records once the measured kernel's is written (as
 * CUPTI gives a kernel measured under replay no times, so the replay's records tell
 * which is which by order). */
static void *meanwhile(void *unused)
{
	pthread_mutex_lock(&meanwhile_lock);
	while (!measuring_now)
		pthread_cond_wait(&meanwhile_cond, &meanwhile_lock);
	pthread_mutex_unlock(&meanwhile_lock);
	call(RUNTIME(cudaMemcpy_v3020), 72, NULL, NULL);
	call(RUNTIME(cudaGraphLaunch_v10000), 73, NULL, NULL);
	pthread_mutex_lock(&meanwhile_lock);
	while (!measured_recorded)
		pthread_cond_wait(&meanwhile_cond, &meanwhile_lock);
	pthread_mutex_unlock(&meanwhile_lock);
	copy_record(72);
	graph_kernel(73, "_Z4stepv", 1, 0x100000001);
	graph_kernel(73, "_Z4stepv", 1, 0x100000002);
	return NULL;
}

/* A launch into a stream being captured: its node made inside it, nothing run. */
static void captured_launch(uint32_t correlation, uint64_t node, const char *name)
{
	fake.capture(1);
	fake.api(RUNTIME(cudaLaunchKernel_v7000), CUPTI_API_ENTER, correlation, name,
		 &launch_params, CONTEXT);
	fake.graph_node(CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED, node, 0, 1);
	fake.api(RUNTIME(cudaLaunchKernel_v7000), CUPTI_API_EXIT, correlation, name,
		 &launch_params, CONTEXT);
	fake.capture(0);
}

__attribute__((noinline)) static void capture_forward(void)
{
	if (range_push)
		range_push("forward", 0);
	captured_launch(111, 1001, "_Z4stepv");
	captured_launch(112, 1002, "_Z5otherv");
	if (range_pop)
		range_pop();
}

__attribute__((noinline)) static void add_node(void)
{
	fake.api(RUNTIME(cudaGraphAddKernelNode_v10000), CUPTI_API_ENTER, 113, NULL, NULL, CONTEXT);
	fake.graph_node(CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED, 1003, 0, 1);
	fake.graph_node(CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED, 1004, 0, 0);
	fake.api(RUNTIME(cudaGraphAddKernelNode_v10000), CUPTI_API_EXIT, 113, NULL, NULL, CONTEXT);
}

/* cudaGraphInstantiate: each node copied (its copy made, then said to be a copy). */
__attribute__((noinline)) static void instantiate(uint32_t correlation, uint64_t first,
						  uint64_t from, int nodes)
{
	fake.api(RUNTIME(cudaGraphInstantiate_v12000), CUPTI_API_ENTER, correlation, NULL, NULL,
		 CONTEXT);
	for (int i = 0; i < nodes; i++) {
		fake.graph_node(CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED, first + i, 0, i < 3);
		fake.graph_node(CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED, first + i, from + i, i < 3);
	}
	fake.api(RUNTIME(cudaGraphInstantiate_v12000), CUPTI_API_EXIT, correlation, NULL, NULL,
		 CONTEXT);
}

/* A graph launch's execution whole (CUPTI_ACTIVITY_KIND_GRAPH_TRACE: recorded where
 * enabled), 200 us from 1 ms on. */
static void graph_trace(uint32_t correlation, uint32_t graph)
{
	CUpti_ActivityGraphTrace2 g;
	memset(&g, 0, sizeof(g));
	g.kind = CUPTI_ACTIVITY_KIND_GRAPH_TRACE;
	g.correlationId = correlation;
	g.start = cupti_now() + 1000000;
	g.end = g.start + 200000;
	g.graphId = graph;
	g.contextId = 1, g.streamId = 13, g.endContextId = 1;
	fake.activity(&g, sizeof(g));
}

__attribute__((noinline)) static void replay(uint32_t correlation, uint64_t first)
{
	if (range_push)
		range_push("replay", 0);
	call(RUNTIME(cudaGraphLaunch_v10000), correlation, NULL, NULL);
	graph_trace(correlation, 1);
	graph_kernel(correlation, "_Z4stepv", 1, first);
	graph_kernel(correlation, "_Z5otherv", 1, first + 1);
	graph_kernel(correlation, "_Z5extrav", 1, first + 2);
	if (range_pop)
		range_pop();
}

static void graphs(void)
{
	capture_forward();
	add_node();
	instantiate(114, 2001, 1001, 4);
	replay(115, 2001);
	replay(116, 2001);
	instantiate(118, 3001, 2001, 3);
	replay(117, 3001);
}

static void counter_scenario(const char *scenario)
{
	if (!strcmp(scenario, "counters-multiplex")) {
		for (uint32_t c = 51; c <= 54; c++)
			chase(c);
	} else if (!strcmp(scenario, "counters-reset")) {
		chase(61);
		fake.resource(CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING, CONTEXT);
		fake.resource(CUPTI_CBID_RESOURCE_CONTEXT_CREATED, CONTEXT);
		chase(62);
		CUcontext second = (CUcontext)0x2000;
		fake.resource(CUPTI_CBID_RESOURCE_CONTEXT_CREATED, second);
		chase_on(second, second, 63, 1);
	} else if (!strcmp(scenario, "counters-threads")) {
		pthread_t other;
		if (pthread_create(&other, NULL, meanwhile, NULL))
			exit(104);
		cuLaunchKernel_params params = { .gridDimX = 64, .gridDimY = 1, .gridDimZ = 1,
						 .blockDimX = 128, .blockDimY = 1, .blockDimZ = 1 };
		fake.api(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,
			 CUPTI_API_ENTER, 71, "_Z5chasePj", &params, CONTEXT);
		pthread_mutex_lock(&meanwhile_lock);
		measuring_now = 1;
		pthread_cond_broadcast(&meanwhile_cond);
		pthread_mutex_unlock(&meanwhile_lock);
		struct timespec run = { 0, 50000000 }; /* the kernel runs 50 ms */
		nanosleep(&run, NULL);
		fake.api(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,
			 CUPTI_API_EXIT, 71, "_Z5chasePj", &params, CONTEXT);
		kernel(71, "_Z5chasePj");
		pthread_mutex_lock(&meanwhile_lock);
		measured_recorded = 1;
		pthread_cond_broadcast(&meanwhile_cond);
		pthread_mutex_unlock(&meanwhile_lock);
		pthread_join(other, NULL);
	} else if (!strcmp(scenario, "counters-captured")) {
		fake.capture(1);
		chase_on(CONTEXT, CONTEXT, 81, 0);
		fake.capture(0);
		chase(82);
	} else if (!strcmp(scenario, "counters-partial")) {
		fake.fail_next_replay();
		chase(91);
		chase(92);
	} else if (!strcmp(scenario, "counters-exit-context")) {
		chase_on(CONTEXT, NULL, 95, 1);
	}
}

/* CUPTI's record of an allocation or a release (CUPTI_ACTIVITY_KIND_MEMORY2), now. */
static void memory_record(uint32_t correlation, uint64_t address, uint64_t bytes, int allocated)
{
	CUpti_ActivityMemory4 m;
	memset(&m, 0, sizeof(m));
	m.kind = CUPTI_ACTIVITY_KIND_MEMORY2;
	m.memoryOperationType = allocated ? CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION
					  : CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE;
	m.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
	m.correlationId = correlation;
	m.address = address;
	m.bytes = bytes;
	m.timestamp = cupti_now();
	m.contextId = 1;
	fake.activity(&m, sizeof(m));
}

#define MIB (1024 * 1024)

__attribute__((noinline)) static void alloc_weights(void)
{
	fake.api(RUNTIME(cudaMalloc_v3020), CUPTI_API_ENTER, 141, NULL, NULL, CONTEXT);
	fake.api(RUNTIME(cudaMalloc_v3020), CUPTI_API_EXIT, 141, NULL, NULL, CONTEXT);
	memory_record(141, 0x70000000, 4 * MIB, 1);
}

__attribute__((noinline)) static void alloc_activations(void)
{
	fake.api(RUNTIME(cudaMalloc_v3020), CUPTI_API_ENTER, 142, NULL, NULL, CONTEXT);
	fake.api(RUNTIME(cudaMalloc_v3020), CUPTI_API_EXIT, 142, NULL, NULL, CONTEXT);
	memory_record(142, 0x80000000, 8 * MIB, 1);
}

__attribute__((noinline)) static void alloc_leak(void)
{
	fake.api(RUNTIME(cudaMalloc_v3020), CUPTI_API_ENTER, 144, NULL, NULL, CONTEXT);
	fake.api(RUNTIME(cudaMalloc_v3020), CUPTI_API_EXIT, 144, NULL, NULL, CONTEXT);
	memory_record(144, 0x90000000, MIB, 1);
}

static void allocations(void)
{
	alloc_weights();
	alloc_activations();
	call(RUNTIME(cudaFree_v3020), 143, NULL, NULL);
	memory_record(143, 0x80000000, 8 * MIB, 0);
	alloc_leak();
}

static void *symbol(void *library, const char *name)
{
	void *s = dlsym(library, name);
	if (!s) {
		fprintf(stderr, "cupti-replay: no %s: %s\n", name, dlerror());
		exit(103);
	}
	return s;
}

/* NCCL's calls, through --nccl-trace's interposer (preloaded) over the stand-in
 * libnccl.so.2 (fake-nccl.c), each launching as NCCL does: an all-reduce outside a group
 * in its call (correlation 201), a group of two all-reduces at its ncclGroupEnd (202);
 * then a compute launch outside any call (203). */
#define NCCL_KERNEL "ncclDevKernel_AllReduce_Sum_f32_RING_LL"
static uint32_t nccl_correlation = 201;

static void nccl_launch(void)
{
	call(RUNTIME(cudaLaunchKernel_v7000), nccl_correlation, NCCL_KERNEL, &launch_params);
	kernel(nccl_correlation, NCCL_KERNEL);
	nccl_correlation++;
}

static void nccl(void)
{
	typedef struct {
		char internal[128];
	} unique_id;
	void *library = dlopen("libnccl.so.2", RTLD_NOW | RTLD_GLOBAL);
	if (!library) {
		fprintf(stderr, "cupti-replay: %s\n", dlerror());
		exit(103);
	}
	*(void (**)(void))symbol(library, "fake_nccl_launch") = nccl_launch;
	int (*init)(void **, int, unique_id, int);
	int (*all_reduce)(const void *, void *, size_t, int, int, void *, void *);
	int (*group_start)(void), (*group_end)(void);
	*(void **)&init = symbol(RTLD_DEFAULT, "ncclCommInitRank");
	*(void **)&all_reduce = symbol(RTLD_DEFAULT, "ncclAllReduce");
	*(void **)&group_start = symbol(RTLD_DEFAULT, "ncclGroupStart");
	*(void **)&group_end = symbol(RTLD_DEFAULT, "ncclGroupEnd");
	void *comm;
	unique_id id = { "replay" };
	static float data[1024];
	enum { FLOAT32 = 7, SUM = 0 };
	if (init(&comm, 4, id, 0))
		exit(104);
	all_reduce(data, data, 1024, FLOAT32, SUM, comm, NULL);
	group_start();
	all_reduce(data, data, 256, FLOAT32, SUM, comm, NULL);
	all_reduce(data, data, 256, FLOAT32, SUM, comm, NULL);
	group_end();
	call(RUNTIME(cudaLaunchKernel_v7000), 203, VECCOPY, &launch_params);
	kernel(203, VECCOPY);
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: cupti-replay LIBRARY "
				"launches|counters|counters-*|pc-sampling|backward|capture|"
				"capture-counters|capture-nvtx|graphs|allocations|nccl\n");
		return 2;
	}
	const char *scenario = argv[2];
	if (!strncmp(scenario, "counters", 8) || !strcmp(scenario, "capture-counters"))
		setenv("GPUPROF_PMC", "dram__bytes_read.sum,smsp__inst_executed.sum", 1);
	if (!strcmp(scenario, "counters-multiplex")) {
		setenv("GPUPROF_PMC", "dram__bytes_read.sum,smsp__inst_executed.sum;"
				      "sm__cycles_elapsed.avg", 1);
		setenv("GPUPROF_PMC_MULTIPLEX", "kernel", 1);
	}
	else if (!strcmp(scenario, "pc-sampling"))
		setenv("GPUPROF_PC_SAMPLING", "period=17", 1);
	void *driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
	void *backend = driver ? dlopen(argv[1], RTLD_NOW) : NULL;
	void *cupti = backend ? dlopen("libcupti.so.13", RTLD_NOW | RTLD_NOLOAD) : NULL;
	if (!cupti) {
		fprintf(stderr, "cupti-replay: %s\n", dlerror());
		return 101;
	}
	*(void **)&fake.api = symbol(cupti, "fake_cupti_api");
	*(void **)&fake.resource = symbol(cupti, "fake_cupti_resource");
	*(void **)&fake.activity = symbol(cupti, "fake_cupti_activity");
	*(void **)&fake.ranges_started = symbol(cupti, "fake_cupti_ranges_started");
	*(void **)&fake.get_data_refused = symbol(cupti, "fake_cupti_get_data_refused");
	*(void **)&fake.pc_sampling = symbol(cupti, "fake_cupti_pc_sampling");
	*(void **)&fake.set_configs = symbol(cupti, "fake_cupti_set_configs");
	*(void **)&fake.refused = symbol(cupti, "fake_cupti_profiler_refused");
	*(void **)&fake.driver_init = symbol(cupti, "fake_cupti_driver_init");
	*(void **)&fake.fail_next_replay = symbol(cupti, "fake_cupti_fail_next_replay");
	*(void **)&fake.graph_node = symbol(cupti, "fake_cupti_graph_node");
	*(void **)&fake.capture = symbol(driver, "fake_cuda_capture");
	CUresult (*set_current)(CUcontext) = (CUresult(*)(CUcontext))symbol(driver,
									   "cuCtxSetCurrent");
	int (*initialize)(void) = (int (*)(void))symbol(backend, "InitializeInjection");
	fake.driver_init(1); /* the driver calls it inside cuInit */
	initialize();
	fake.driver_init(0);
	void *recorder = dlopen("libgpuprof-recorder.so", RTLD_NOW | RTLD_NOLOAD);
	if (recorder && getenv("GPUPROF_TRACE") && strstr(getenv("GPUPROF_TRACE"), "marker")) {
		*(void **)&range_push = symbol(recorder, "recorder_range_push");
		*(void **)&range_pop = symbol(recorder, "recorder_range_pop");
		*(void **)&intern = symbol(recorder, "recorder_intern");
	}

	if (!strcmp(scenario, "pc-sampling"))
		fake.pc_sampling(pc_buffers, sizeof(pc_buffers) / sizeof(pc_buffers[0]));
	set_current(CONTEXT);
	fake.resource(CUPTI_CBID_RESOURCE_CONTEXT_CREATED, CONTEXT);
	CUpti_ActivityDevice5 d;
	memset(&d, 0, sizeof(d));
	d.kind = CUPTI_ACTIVITY_KIND_DEVICE;
	d.numMultiprocessors = 132;
	d.numThreadsPerWarp = 32;
	d.computeCapabilityMajor = 9;
	d.name = strdup("NVIDIA H100"); /* the client frees it, as CUPTI says */
	fake.activity(&d, sizeof(d));

	if (!strcmp(scenario, "backward")) {
		backward();
		return 0;
	}
	if (!strcmp(scenario, "capture-nvtx")) {
		if (!range_push) {
			fprintf(stderr, "cupti-replay: capture-nvtx needs markers traced\n");
			return 2;
		}
		capture_nvtx();
		return 0;
	}
	if (!strncmp(scenario, "capture", 7)) {
		capture();
		printf("ranges started %u\n", fake.ranges_started());
		return 0;
	}
	if (!strcmp(scenario, "allocations")) {
		allocations();
		return 0;
	}
	if (!strcmp(scenario, "nccl")) {
		nccl();
		return 0;
	}
	if (!strcmp(scenario, "graphs")) {
		graphs();
		return 0;
	}
	if (!strncmp(scenario, "counters-", 9)) {
		counter_scenario(scenario);
		printf("ranges started %u, configurations set %u, profiler calls refused %u\n",
		       fake.ranges_started(), fake.set_configs(), fake.refused());
		return 0;
	}
	if (range_push)
		range_push("train", 0);
	copy_in();
	chevrons();
	runtime_launch();
	fill();
	driver_launch();
	graph_launch();
	host_function();
	ex_launch();
	nested_launch();
	if (range_pop)
		range_pop();
	printf("ranges started %u, configurations set %u, profiler calls refused %u, GetData "
	       "refused %u\n", fake.ranges_started(), fake.set_configs(), fake.refused(),
	       fake.get_data_refused());
	return 0;
}
