/* The CUDA backend: loaded by the CUDA driver itself while it initialises
 * (CUDA_INJECTION64_PATH names this library, the driver calls InitializeInjection()),
 * so any CUDA program, PyTorch included, is traced without relinking or preloading.
 *
 * It uses CUPTI's activity API only: kernels with CONCURRENT_KERNEL (never the KERNEL
 * kind, which serialises them), copies, memsets, allocations, runtime and driver API
 * calls, synchronisations, CUPTI's own overhead, and the device records. CUPTI writes
 * records into buffers from a preallocated pool (request_buffer(), on the application's
 * threads: a pop from a list); full buffers come back through buffer_completed(), which
 * only queues them. The recorder's writer thread translates queued buffers before each
 * flush (collect()), asks CUPTI for its completed buffers every flush period, and forces
 * out the rest at exit. Nothing is formatted or written on the application's threads. */
#include <cupti.h>

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/record.h"
#include "runtime/recorder.h"
#include "callbacks.h"
#include "counters.h"
#include "graphs.h"
#include "nvidia-proc.h"
#include "pc-sampling.h"
#include "translate.h"
#include "util/strbuf.h"

#define EXPORT __attribute__((visibility("default")))

#define BUFFER_SIZE (4u << 20)     /* NVIDIA advises 1 to 10 MB */
#define PREALLOCATED_BUFFERS 4
#define MAX_BUFFERS 64             /* 256 MiB; beyond it CUPTI drops and counts */
#define NVIDIA_PROC "/proc/driver/nvidia"
/* The record layouts of translate.c are CUPTI 13.0's; 13.1 kept them, 13.2 changed the
 * kernel, device and context records (Kernel11, Device6, Context4). */
#define NEWEST_SAME_LAYOUTS 130199u
#define CUPTI_FLUSH_PERIOD_NS 100000000u /* asking CUPTI for complete buffers costs */

/* ---- configuration ---------------------------------------------------------------- */

static struct {
	int kernel, memory_copy, runtime_api, driver_api, memory_allocation, markers, nccl, mangled;
} trace;

static int has_token(const char *list, const char *token)
{
	size_t n = strlen(token);
	for (const char *p = list; p && *p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL)
		if (!strncmp(p, token, n) && (p[n] == ',' || p[n] == '\0'))
			return 1;
	return 0;
}

static void read_config(void)
{
	const char *list = getenv("GPUPROF_TRACE");
	const char *mangled = getenv("GPUPROF_MANGLED_KERNELS");
	trace.mangled = mangled && !strcmp(mangled, "1");
	if (!list) { /* loaded by hand: what --runtime-trace records */
		trace.kernel = trace.memory_copy = trace.runtime_api = trace.memory_allocation = 1;
		return;
	}
	trace.kernel = has_token(list, "kernel");
	trace.memory_copy = has_token(list, "memory_copy");
	trace.runtime_api = has_token(list, "cuda_api");
	trace.driver_api = has_token(list, "cuda_driver_api");
	trace.memory_allocation = has_token(list, "memory_allocation");
	trace.markers = has_token(list, "marker");
	trace.nccl = has_token(list, "nccl");
}

/* ---- buffers -------------------------------------------------------------------------- */

struct completed {
	uint8_t *buffer;
	size_t valid;
};

static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static uint8_t *free_buffers[MAX_BUFFERS];
static int free_count, allocated_count;
static struct completed queue[MAX_BUFFERS]; /* completed buffers, oldest first */
static int queue_head, queue_count;

static void CUPTIAPI request_buffer(uint8_t **buffer, size_t *size, size_t *max_records)
{
	uint8_t *b = NULL;
	pthread_mutex_lock(&pool_lock);
	if (free_count)
		b = free_buffers[--free_count];
	else if (allocated_count < MAX_BUFFERS && (b = aligned_alloc(8, BUFFER_SIZE)))
		allocated_count++;
	pthread_mutex_unlock(&pool_lock);
	*buffer = b; /* NULL: CUPTI drops the records and counts them */
	*size = b ? BUFFER_SIZE : 0;
	*max_records = 0;
}

static void release_buffer(uint8_t *buffer)
{
	pthread_mutex_lock(&pool_lock);
	free_buffers[free_count++] = buffer;
	pthread_mutex_unlock(&pool_lock);
}

static void CUPTIAPI buffer_completed(CUcontext context, uint32_t stream, uint8_t *buffer,
				      size_t size, size_t valid)
{
	if (!buffer)
		return;
	pthread_mutex_lock(&pool_lock);
	queue[(queue_head + queue_count++) % MAX_BUFFERS] = (struct completed){ buffer, valid };
	pthread_mutex_unlock(&pool_lock);
	recorder_wake();
}

static void preallocate(void)
{
	pthread_mutex_lock(&pool_lock);
	while (allocated_count < PREALLOCATED_BUFFERS) {
		uint8_t *b = aligned_alloc(8, BUFFER_SIZE);
		if (!b)
			break;
		free_buffers[free_count++] = b;
		allocated_count++;
	}
	pthread_mutex_unlock(&pool_lock);
}

/* ---- translation into the recorder ------------------------------------------------------ */

static uint32_t op_intern(void *ctx, const char *text)
{
	return recorder_intern(text);
}

static int op_emit(void *ctx, const void *record)
{
	return recorder_try_emit(record);
}

static void op_emit_metadata(void *ctx, const void *record)
{
	recorder_emit_metadata(record);
}

static void op_count_dropped(void *ctx, uint32_t reason, uint64_t records)
{
	recorder_count_dropped(reason, records);
}

static uint32_t op_new_agent_id(void *ctx)
{
	return recorder_new_agent_id();
}

static uint32_t op_new_queue_id(void *ctx)
{
	return recorder_new_queue_id();
}

static const char *op_api_name(void *ctx, uint32_t domain, uint32_t cbid)
{
	const char *name = NULL;
	if (cuptiGetCallbackName((CUpti_CallbackDomain)domain, cbid, &name) != CUPTI_SUCCESS)
		return NULL;
	return name;
}

/* The device's driver version: the kernel module's, then the CUDA version the driver
 * supports as nvidia-smi shows them both, "580.65.06 (CUDA 13.0)" (the CUDA part from the
 * driver already loaded: cuDriverGetVersion needs no context). */
static void op_describe_device(void *ctx, struct record_agent *agent)
{
	char version[160];
	nvidia_proc_describe(NVIDIA_PROC, agent, version, sizeof(version) - 32);
	int (*driver_version)(int *) = NULL;
	void *driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
	if (driver)
		*(void **)&driver_version = dlsym(driver, "cuDriverGetVersion");
	int cuda = 0;
	if (driver_version && driver_version(&cuda) == 0 && cuda > 0)
		snprintf(version + strlen(version), 32, "%s(CUDA %d.%d)", version[0] ? " " : "",
			 cuda / 1000, cuda % 1000 / 10);
	if (driver)
		dlclose(driver);
	if (version[0])
		agent->driver_version_id = recorder_intern(version);
}

static struct translator translator;
static _Atomic int cupti_usable; /* 0 in a fork()ed child: CUPTI is the parent's */
static uint64_t last_flush_ns;
static uint8_t *current;          /* the buffer being translated */
static size_t current_valid;
static CUpti_Activity *cursor;    /* its last record done with; NULL before the first */

/* The offset from CUPTI's clock (CLOCK_REALTIME by default) to the trace clock, taken
 * from the tightest of a few bracketed readings. */
static void measure_clock_offset(void)
{
	uint64_t best = UINT64_MAX;
	for (int i = 0; i < 5; i++) {
		uint64_t before = clock_now_ns(), cupti = 0;
		if (cuptiGetTimestamp(&cupti) != CUPTI_SUCCESS)
			return;
		uint64_t after = clock_now_ns();
		if (after - before < best) {
			best = after - before;
			translator.clock_offset_ns = (int64_t)(before + (after - before) / 2) -
						     (int64_t)cupti;
		}
	}
}

/* Translates the queued buffers; returns 1 when the recorder's buffer filled up first
 * (the writer drains it and calls again: translation resumes at the same record). */
static int translate_queued(void)
{
	for (;;) {
		if (!current) {
			pthread_mutex_lock(&pool_lock);
			if (queue_count) {
				current = queue[queue_head].buffer;
				current_valid = queue[queue_head].valid;
				queue_head = (queue_head + 1) % MAX_BUFFERS;
				queue_count--;
			}
			pthread_mutex_unlock(&pool_lock);
			if (!current)
				return 0;
			cursor = NULL;
		}
		CUpti_Activity *record = cursor;
		while (cuptiActivityGetNextRecord(current, current_valid, &record) == CUPTI_SUCCESS) {
			if (translator_record(&translator, record) < 0)
				return 1; /* record stays the next one: cursor was not advanced */
			cursor = record;
		}
		release_buffer(current);
		current = NULL;
	}
}

static int collect(int final)
{
	if (!atomic_load(&cupti_usable))
		return 0;
	if (!current) { /* not resuming after a full buffer */
		uint64_t now = clock_now_ns();
		if (final) {
			cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
		} else if (now - last_flush_ns >= CUPTI_FLUSH_PERIOD_NS) {
			cuptiActivityFlushAll(0); /* only buffers whose records are all complete */
			last_flush_ns = now;
		}
		measure_clock_offset();
	}
	if (translate_queued() || counters_collect(&translator) ||
	    pc_sampling_collect(&translator, final))
		return 1;
	size_t dropped = 0;
	if (cuptiActivityGetNumDroppedRecords(NULL, 0, &dropped) == CUPTI_SUCCESS && dropped)
		recorder_count_dropped(DROPPED_BY_TRACER, dropped);
	return 0;
}

/* ---- launches ------------------------------------------------------------------------ */

/* The callbacks of the API functions that launch device work, in both domains: a program
 * that launches with <<<>>>, cudaLaunchKernel, cudaMemcpy or cudaGraphLaunch reaches the
 * driver through internal entry points, so no driver callback fires for it and its
 * kernel's activity record carries the runtime call's correlation id; one that calls the
 * driver itself (cuLaunchKernel: Triton, JITs) is seen in the driver domain. Each
 * launching call, whichever domain, is where its work's stack, launch point and counters
 * are taken, under its own correlation id (docs/CUDA.md says why). */
enum { RUNTIME = CALLBACK_RUNTIME, DRIVER = CALLBACK_DRIVER, LAUNCH_DOMAINS = CALLBACK_DOMAINS };
#define MAX_CBID CALLBACK_MAX_CBID

static struct {
	uint8_t launches[LAUNCH_DOMAINS][MAX_CBID]; /* what the function launches: kernels or
						      * copies (LAUNCHES_*), 0: nothing */
	uint8_t allocates[LAUNCH_DOMAINS][MAX_CBID]; /* 1: it allocates device memory */
	_Atomic uint32_t names[LAUNCH_DOMAINS][MAX_CBID]; /* its name's string id, once */
	int points[LAUNCH_DOMAINS]; /* a launch point is recorded (no API record, no stack) */
} launch;

static int counting;      /* counters are collected (--pmc) */
static int controlled;    /* collection is paused and resumed (--selected-regions,
			   * --collection-period): each launch notes whether it was on */
static int profiler_api;  /* cudaProfilerStart/Stop resume and pause collection
			   * (--selected-regions) */
static int pc_sampling;   /* PC sampling (--pc-sampling-*) */
static int launch_stacks; /* each launch's call stack is taken (--launch-stacks) */
static int graphs;        /* where graph nodes are made is recorded (graphs.h) */

enum { LAUNCHES_NOTHING, LAUNCHES_KERNELS, LAUNCHES_COPIES };

/* What an API function, by its name (cuptiGetCallbackName's, or the callback's),
 * launches on the device: kernels (a kernel, a graph of them) or copies (a copy, a
 * fill), else nothing. */
static int launches_work(const char *function)
{
	static const struct {
		const char *prefix;
		int what;
	} prefixes[] = {
		{ "cudaLaunch", LAUNCHES_KERNELS }, { "cudaGraphLaunch", LAUNCHES_KERNELS },
		{ "cuLaunch", LAUNCHES_KERNELS },   { "cuGraphLaunch", LAUNCHES_KERNELS },
		{ "cudaMemcpy", LAUNCHES_COPIES },  { "cudaMemset", LAUNCHES_COPIES },
		{ "cuMemcpy", LAUNCHES_COPIES },    { "cuMemset", LAUNCHES_COPIES },
	};
	if (!function)
		return LAUNCHES_NOTHING;
	while (*function == '_') /* __cudaLaunchKernel: what <<<>>> calls in CUDA 13 */
		function++;
	if (strstr(function, "HostFunc")) /* cudaLaunchHostFunc: work of the host's */
		return LAUNCHES_NOTHING;
	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (!strncmp(function, prefixes[i].prefix, strlen(prefixes[i].prefix)))
			return prefixes[i].what;
	return LAUNCHES_NOTHING;
}

/* A launching function: what is traced; while counters are collected every launch,
 * which must wait for a kernel measured on another thread. */
static int launch_visit(int d, uint32_t cbid, const char *name, void *arg)
{
	(void)arg;
	int what = launches_work(name);
	if (!(what == LAUNCHES_KERNELS && trace.kernel) &&
	    !(what == LAUNCHES_COPIES && trace.memory_copy) &&
	    !(what != LAUNCHES_NOTHING && counting))
		return 0;
	launch.launches[d][cbid] = (uint8_t)what; /* (read once its callback is enabled) */
	return 1;
}

/* Subscribes to the callbacks of every function of both domains that launches what is
 * traced (kernels, copies): 0, or -1 when CUPTI names none (then nothing is
 * subscribed). */
static int subscribe_launches(CUpti_SubscriberHandle subscriber)
{
	int found = callback_each(subscriber, launch_visit, NULL);
	if (!found)
		recorder_report("CUPTI names no API function that launches work: no launch stacks, "
				"counters or kernel ranges in this process");
	return found ? 0 : -1;
}

/* Whether collection was on at each launch: its changes, by the correlation id of the
 * first launch that saw each (CUPTI hands the ids out in increasing order), so that a
 * kernel launched inside a capture range is kept though it ran on the device after the
 * range ended, and one launched outside is not, though it ran inside. */
static pthread_mutex_t state_lock = PTHREAD_MUTEX_INITIALIZER;
static struct launch_state {
	uint64_t correlation_id;
	int on;
} *launch_states;
static size_t launch_state_count, launch_state_slots;

static void note_launch_state(uint64_t correlation_id, int on)
{
	pthread_mutex_lock(&state_lock);
	size_t n = launch_state_count;
	if (!n || (launch_states[n - 1].on != on && launch_states[n - 1].correlation_id < correlation_id)) {
		if (n == launch_state_slots) { /* each change is a capture range's edge: few */
			size_t slots = n ? 2 * n : 256;
			struct launch_state *grown = realloc(launch_states, slots * sizeof(*grown));
			if (grown) {
				launch_states = grown;
				launch_state_slots = slots;
			}
		}
		if (n < launch_state_slots) /* (without memory: the change is not kept) */
			launch_states[launch_state_count++] = (struct launch_state){ correlation_id, on };
	}
	pthread_mutex_unlock(&state_lock);
}

static int op_launch_collected(void *ctx, uint64_t correlation_id)
{
	pthread_mutex_lock(&state_lock);
	size_t lo = 0, hi = launch_state_count; /* the last change at or before the id */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (launch_states[mid].correlation_id <= correlation_id)
			lo = mid + 1;
		else
			hi = mid;
	}
	int on = lo ? launch_states[lo - 1].on : -1;
	pthread_mutex_unlock(&state_lock);
	return on;
}

/* The launching calls open on this thread, and the correlation id of the outermost: a
 * runtime launch calls the driver's, whose callback carries the same id. */
static _Thread_local unsigned launches_open;
static _Thread_local uint32_t launch_open_id;
static _Thread_local uint32_t launch_open_name; /* the outermost's function (graphs) */

/* A launching function's name as the API trace names it (CUPTI's version suffix cut);
 * out of line, so that its buffer is not in the frame a launch stack copies. */
static __attribute__((noinline)) uint32_t launch_name(const char *function)
{
	char base[256];
	translator_api_base_name(function ? function : "", base, sizeof(base));
	return recorder_intern(base);
}

/* The string id of a launching or allocating function's name, interned once. */
static uint32_t call_name(int d, CUpti_CallbackId cbid, const CUpti_CallbackData *call)
{
	uint32_t name = atomic_load(&launch.names[d][cbid]);
	if (!name)
		atomic_store(&launch.names[d][cbid], name = launch_name(call->functionName));
	return name;
}

/* At each launching call, on the launching thread: on entry, before the real function
 * runs, its call stack or its launch point, keyed by the correlation id its work's
 * activity records carry, once per id (a call the runtime makes to the driver for the
 * same launch records nothing more); counters bracket the kernel from entry to exit. */
static void on_launch(int d, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
		      const CUpti_CallbackData *call)
{
	int nested = 0, on = recorder_collecting();
	if (call->callbackSite == CUPTI_API_ENTER) {
		nested = launches_open++ && call->correlationId == launch_open_id;
		if (launches_open == 1) {
			launch_open_id = call->correlationId;
			if (graphs) /* a node captured inside it is made by it */
				launch_open_name = call_name(d, cbid, call);
		}
		if (controlled && !nested)
			note_launch_state(call->correlationId, on);
	} else if (launches_open) {
		launches_open--;
	}
	/* what launches while collection is off is not kept, nor what is not traced: no
	 * stack taken for it */
	int traced = launch.launches[d][cbid] == LAUNCHES_KERNELS ? trace.kernel : trace.memory_copy;
	if (call->callbackSite == CUPTI_API_ENTER && !nested && on && traced &&
	    (launch_stacks || launch.points[d])) {
		uint32_t name = call_name(d, cbid, call);
		uint32_t record_domain = d == RUNTIME ? DOMAIN_CUDA_API : DOMAIN_CUDA_DRIVER_API;
		if (launch_stacks)
			recorder_launch_stack(record_domain, name, call->correlationId, 0);
		else
			recorder_launch(record_domain, name, call->correlationId);
	}
	if (counting)
		counters_callback(domain, cbid, call);
}

/* At an allocating call's entry, before the real function runs: its stack, under the
 * correlation id its allocation record carries (a runtime call reaches the driver
 * through internal entry points: no driver callback fires inside it). */
static void on_allocation(int d, CUpti_CallbackId cbid, const CUpti_CallbackData *call)
{
	if (call->callbackSite != CUPTI_API_ENTER || !recorder_collecting())
		return;
	recorder_launch_stack(d == RUNTIME ? DOMAIN_CUDA_API : DOMAIN_CUDA_DRIVER_API,
			      call_name(d, cbid, call),
			      call->correlationId, 0);
}

/* A function that allocates device memory (cudaMalloc*, cuMemAlloc*). */
static int allocation_visit(int d, uint32_t cbid, const char *name, void *arg)
{
	(void)arg;
	if (strncmp(name, "cudaMalloc", 10) && strncmp(name, "cuMemAlloc", 10))
		return 0;
	launch.allocates[d][cbid] = 1;
	return 1;
}

/* cudaProfilerStart/Stop and the driver's cuProfilerStart/Stop (what
 * torch.cuda.profiler.start/stop call): 1 a start, -1 a stop, 0 neither. */
static int profiler_call(CUpti_CallbackDomain domain, CUpti_CallbackId cbid)
{
	if (domain == CUPTI_CB_DOMAIN_RUNTIME_API)
		return cbid == CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStart_v4000 ? 1
		       : cbid == CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStop_v4000 ? -1 : 0;
	if (domain == CUPTI_CB_DOMAIN_DRIVER_API)
		return cbid == CUPTI_DRIVER_TRACE_CBID_cuProfilerStart ? 1
		       : cbid == CUPTI_DRIVER_TRACE_CBID_cuProfilerStop ? -1 : 0;
	return 0;
}

/* Every callback subscribed to: the launches, cudaProfilerStart/Stop, and CUPTI's
 * resources for PC sampling. */
static void CUPTIAPI on_callback(void *userdata, CUpti_CallbackDomain domain,
				 CUpti_CallbackId cbid, const void *data)
{
	if (!atomic_load(&cupti_usable))
		return;
	if (domain == CUPTI_CB_DOMAIN_RESOURCE) {
		if (pc_sampling)
			pc_sampling_resource(cbid, data);
		if (counting)
			counters_resource(cbid, data);
		if (graphs && (cbid == CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED ||
			       cbid == CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED))
			graphs_resource(cbid, data, launches_open ? launch_open_name : 0);
		return;
	}
	if (graphs && graphs_api(domain, cbid, data))
		return;
	int profiler = profiler_api ? profiler_call(domain, cbid) : 0;
	if (profiler) {
		if (((const CUpti_CallbackData *)data)->callbackSite == CUPTI_API_ENTER) {
			if (profiler > 0)
				recorder_resume();
			else
				recorder_pause();
		}
		return;
	}
	int d = domain == CUPTI_CB_DOMAIN_RUNTIME_API ? RUNTIME
		: domain == CUPTI_CB_DOMAIN_DRIVER_API ? DRIVER : -1;
	if (d >= 0 && cbid < MAX_CBID && launch.launches[d][cbid])
		on_launch(d, domain, cbid, data);
	else if (d >= 0 && cbid < MAX_CBID && launch.allocates[d][cbid])
		on_allocation(d, cbid, data);
}

/* ---- start and end --------------------------------------------------------------------- */

/* The child of a fork() has none of CUPTI's threads: it must not call CUPTI, and the
 * buffers queued so far hold the parent's records, which the parent writes. */
static void after_fork_child(void)
{
	atomic_store(&cupti_usable, 0);
	queue_count = 0;
	current = NULL;
	pc_sampling_after_fork();
}

static void at_exit(void)
{
	recorder_stop();
}

static int enable(CUpti_ActivityKind kind, const char *what)
{
	CUptiResult rc = kind == CUPTI_ACTIVITY_KIND_DEVICE ? cuptiActivityEnableAndDump(kind)
							     : cuptiActivityEnable(kind);
	if (rc == CUPTI_SUCCESS)
		return 0;
	const char *message = NULL;
	cuptiGetResultString(rc, &message);
	recorder_report("cannot trace %s: %s", what, message ? message : "CUPTI error");
	return -1;
}

static CUpti_SubscriberHandle subscriber;

/* Returns 0 when CUPTI is ours; otherwise says why in one line. */
static int subscribe(void)
{
	uint32_t version = 0;
	if (cuptiGetVersion(&version) != CUPTI_SUCCESS || version < CUPTI_API_VERSION / 100 * 100 ||
	    version > NEWEST_SAME_LAYOUTS) {
		recorder_report("CUPTI API version %u has record layouts this gpuprof was not built "
				"for (CUPTI %u to %u): CUDA is not traced in this process; rebuild "
				"gpuprof against this CUDA toolkit", version,
				CUPTI_API_VERSION / 100 * 100, NEWEST_SAME_LAYOUTS);
		return -1;
	}
	char holder[64] = "";
	CUpti_SubscriberParams params = {
		.structSize = CUpti_SubscriberParams_STRUCT_SIZE,
		.subscriberName = "gpuprof",
		.oldSubscriberName = holder,
		.oldSubscriberSize = sizeof(holder),
	};
	CUptiResult rc = cuptiSubscribe_v2(&subscriber, on_callback, NULL, &params);
	if (rc == CUPTI_SUCCESS)
		return 0;
	if (rc == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
		recorder_report("CUPTI is already in use by %s: this process runs without gpuprof "
				"tracing its CUDA work", holder[0] ? holder : "another tool");
	} else {
		const char *message = NULL;
		cuptiGetResultString(rc, &message);
		recorder_report("cannot start CUPTI (%s): this process runs without gpuprof "
				"tracing its CUDA work", message ? message : "unknown error");
	}
	return -1;
}

static int op_collected_at(void *ctx, uint64_t ns)
{
	return recorder_collected_at(ns);
}

static int op_launch_window(void *ctx, uint64_t correlation_id, uint64_t *start_ns,
			    uint64_t *end_ns)
{
	return counters_launch_window(correlation_id, start_ns, end_ns);
}

static void start(void)
{
	read_config();
	int sampling = pc_sampling_configure();
	if (!trace.kernel && !trace.memory_copy && !trace.runtime_api && !trace.driver_api &&
	    !trace.memory_allocation && !sampling)
		return;
	if (subscribe())
		return;
	static const struct translate_ops ops = {
		.intern = op_intern,
		.emit = op_emit,
		.emit_metadata = op_emit_metadata,
		.count_dropped = op_count_dropped,
		.new_agent_id = op_new_agent_id,
		.new_queue_id = op_new_queue_id,
		.api_name = op_api_name,
		.describe_device = op_describe_device,
		.collected_at = op_collected_at,
		.source_line = pc_sampling_source_line,
		.launch_window = op_launch_window,
		.launch_collected = op_launch_collected,
	};
	translator_init(&translator, &ops);
	translator.keep_mangled = trace.mangled;
	if (!recorder_ready())
		return;
	cuptiSetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM); /* gettid(), as elsewhere */
	preallocate();
	if (cuptiActivityRegisterCallbacks(request_buffer, buffer_completed) != CUPTI_SUCCESS) {
		recorder_report("cannot register CUPTI buffers: CUDA is not traced in this process");
		return;
	}
	measure_clock_offset();
	atomic_store(&cupti_usable, 1);
	recorder_add_collector(collect);
	pthread_atfork(NULL, NULL, after_fork_child);
	atexit(at_exit);
	enable(CUPTI_ACTIVITY_KIND_DEVICE, "device properties");
	enable(CUPTI_ACTIVITY_KIND_OVERHEAD, "CUPTI's overhead");
	if (trace.kernel)
		enable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, "kernels");
	const char *graph_trace = getenv("GPUPROF_CUDA_GRAPH_TRACE");
	translator.graph_spans = trace.kernel && graph_trace && !strcmp(graph_trace, "graph") &&
				 enable(CUPTI_ACTIVITY_KIND_GRAPH_TRACE, "CUDA graphs whole") == 0;
	if (trace.memory_copy) {
		enable(CUPTI_ACTIVITY_KIND_MEMCPY, "memory copies");
		enable(CUPTI_ACTIVITY_KIND_MEMCPY2, "peer-to-peer copies");
		enable(CUPTI_ACTIVITY_KIND_MEMSET, "memsets");
	}
	if (trace.memory_allocation)
		enable(CUPTI_ACTIVITY_KIND_MEMORY2, "memory allocations");
	if (trace.runtime_api)
		enable(CUPTI_ACTIVITY_KIND_RUNTIME, "CUDA runtime API calls");
	if (trace.driver_api)
		enable(CUPTI_ACTIVITY_KIND_DRIVER, "CUDA driver API calls");
	if (trace.runtime_api || trace.driver_api)
		enable(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, "synchronisations");
	int launching = trace.kernel || trace.memory_copy;
	const char *selected = getenv("GPUPROF_SELECTED_REGIONS");
	const char *periods = getenv("GPUPROF_COLLECTION_PERIOD");
	const char *capture = getenv("GPUPROF_CAPTURE_RANGE");
	profiler_api = selected && !strcmp(selected, "1");
	controlled = launching && (profiler_api || (periods && *periods) || (capture && *capture));
	if (profiler_api) {
		static const struct {
			CUpti_CallbackDomain domain;
			CUpti_CallbackId cbid;
		} calls[] = {
			{ CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStart_v4000 },
			{ CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStop_v4000 },
			{ CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuProfilerStart },
			{ CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuProfilerStop },
		};
		int refused = 0;
		for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]); i++)
			refused |= cuptiEnableCallback(1, subscriber, calls[i].domain,
						       calls[i].cbid) != CUPTI_SUCCESS;
		if (refused)
			recorder_report("--selected-regions: cudaProfilerStart/Stop cannot be "
					"followed (CUPTI refused their callbacks): only the markers' "
					"resume and pause apply");
	}
	launch_stacks = launching && recorder_launch_stacks();
	counting = trace.kernel && counters_configure() == 1;
	translator.counted = counting && !translator.graph_spans;
	/* a launch point where nothing else says where a launch began, so that the marker
	 * ranges (--marker-trace, --torch-trace) take their kernels, counted kernels name
	 * their thread, and NCCL's calls (--nccl-trace) the kernels they launched */
	int points = launching && (trace.markers || counting || trace.nccl);
	launch.points[RUNTIME] = points && !trace.runtime_api;
	launch.points[DRIVER] = points && !trace.driver_api;
	if (counting && cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_RESOURCE,
					    CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING) != CUPTI_SUCCESS)
		recorder_report("counters: CUPTI does not say when a context is destroyed: a "
				"context made after one is destroyed may get no counters");
	if (sampling) {
		static const CUpti_CallbackId resources[] = {
			CUPTI_CBID_RESOURCE_CONTEXT_CREATED,
			CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING,
			CUPTI_CBID_RESOURCE_MODULE_LOADED,
			CUPTI_CBID_RESOURCE_MODULE_UNLOAD_STARTING,
		};
		pc_sampling = 1;
		for (size_t i = 0; i < sizeof(resources) / sizeof(resources[0]); i++)
			cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_RESOURCE, resources[i]);
	}
	if ((launch_stacks || launch.points[RUNTIME] || launch.points[DRIVER] || counting ||
	     controlled) && subscribe_launches(subscriber)) {
		launch_stacks = counting = controlled = 0;
		launch.points[RUNTIME] = launch.points[DRIVER] = 0;
	}
	/* each allocation's stack (GPUPROF_ALLOCATION_STACKS) */
	if (trace.memory_allocation && recorder_allocation_stacks())
		callback_each(subscriber, allocation_visit, NULL);
	/* where a graph's kernels were captured: their stack, or their marker range */
	graphs = trace.kernel && (launch_stacks || trace.markers) &&
		 graphs_configure(subscriber, launch_stacks) == 0;
}

/* This library lives in the program: running out of memory never ends it. */
__attribute__((constructor)) static void in_program(void)
{
	strbuf_fail_softly();
}

/* Called by the CUDA driver while it initialises, once per process. Returns nonzero:
 * whatever happens here, the application goes on. */
EXPORT int InitializeInjection(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	int saved = errno;
	pthread_once(&once, start);
	errno = saved;
	return 1;
}
