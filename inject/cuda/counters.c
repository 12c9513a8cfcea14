/* Hardware counters per kernel (gpuprof trace --pmc, gpuprof compute profile), with
 * CUPTI's range profiler: auto ranges (one range per kernel) and kernel replay (CUPTI
 * runs a kernel once per pass the metrics need, saving and restoring the memory it
 * writes), so one run of the program gives every metric. Under iteration multiplexing
 * (GPUPROF_PMC_MULTIPLEX) nothing is replayed: the metrics come in groups of one pass, and
 * the successive dispatches of a kernel each collect the next group.
 *
 * The launch callbacks of the runtime and driver APIs (cuda.c subscribes to both: a
 * runtime launch fires no driver callback) bracket each kernel that the filters keep: on
 * entry the profiler starts, on exit it stops, decodes the one range and the host API
 * (libgpuprof-cupti-host.so, beside this library) turns the counters into the metrics'
 * values. The values wait in a list until the recorder's writer thread translates them
 * (counters_collect()), after the device records that give the device its agent.
 * Launches are serialised while counters are collected, as every kernel-replay profiler
 * does: a kernel runs alone on the device while it is measured. */
#include "counters.h"

#include <cupti.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_target.h>

#include <dlfcn.h>
#include <libgen.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "../cupti-host.h"
#include "core/clock.h"
#include "core/kernel-filter.h"
#include "runtime/recorder.h"
#include "util/hash.h"
#include "util/strbuf.h"

#define MAX_CONTEXTS 64
#define MAX_METRICS 512

/* The metrics asked for (GPUPROF_PMC: comma-separated, in groups separated by ';' under
 * iteration multiplexing), group by group. */
static char *metric_text;
static const char *metrics[MAX_METRICS];
static size_t metric_count;
static struct group {
	size_t first, count; /* of metrics */
} groups[MAX_METRICS];
static size_t group_count;
/* GPUPROF_PMC_MULTIPLEX: each dispatch of a kernel collects the next group, in turn, with
 * no replay; dispatches are of one kernel by name, or by name and launch size. Without
 * it there is one group, every pass of which kernel replay makes. */
static enum { MULTIPLEX_NONE, MULTIPLEX_KERNEL, MULTIPLEX_LAUNCH } multiplex;
static struct kernel_filter filter;

static struct {
	void *library;
	host_open_device_fn open_device;
	host_config_fn config;
	host_evaluate_fn evaluate;
} host;

/* One CUDA context being profiled. */
struct context {
	CUcontext ctx;
	uint32_t device;
	CUpti_RangeProfiler_Object *profiler;
	void *host;                 /* the host API's object for the device's chip */
	uint8_t *availability;      /* the counter availability image it was made with */
	struct images {
		uint8_t *config, *data; /* configuration and counter data images */
		size_t config_size, data_size;
	} *images;                  /* one per group */
	int broken;                 /* set up failed: its kernels get no counters */
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER; /* held from a launch's entry to
							    its exit */
static struct context contexts[MAX_CONTEXTS];
static int context_count;

/* Dispatches per kernel name (for --kernel-iteration-range) and per multiplexing key
 * (the name, with the launch size under MULTIPLEX_LAUNCH): open addressing. */
struct name_count {
	char *name;
	uint64_t seen;
};
struct name_table {
	struct name_count *slots;
	size_t size, used;
};
static struct name_table names, keys;

/* Values waiting for the writer thread. */
struct pending {
	struct pending *next;
	uint64_t correlation_id;
	uint32_t device;
	size_t group;
	size_t done; /* emitted so far */
	double values[];
};
static pthread_mutex_t pending_lock = PTHREAD_MUTEX_INITIALIZER;
static struct pending *pending_head, **pending_tail = &pending_head;

/* The launch calls measured, oldest first, until their kernels' records come (without
 * times: kernel replay), under pending_lock; at most MAX_WINDOWS, the oldest let go. */
struct window {
	struct window *next;
	uint64_t correlation_id, start_ns, end_ns;
};
#define MAX_WINDOWS 65536
static struct window *windows_head, **windows_tail = &windows_head;
static size_t window_count;

/* The launching calls the thread is inside (a runtime launch may call the driver's), the
 * level of the one being measured plus one (0: none; the lock is then held), the group of
 * metrics it collects, and the outermost call: its function, its correlation id (the
 * kernel's record carries it: the counters go under it), whether a driver launch fired
 * inside it. */
static _Thread_local int depth, measuring, inner_driver, outer_collected;
static _Thread_local size_t measured_group;
static _Thread_local CUpti_CallbackId outer_cbid;
static _Thread_local uint64_t outer_id;
static _Thread_local uint64_t measured_since; /* trace clock, at the measured call's entry */
/* Per runtime launching function, whether the driver fires a launch callback inside it
 * (CUDA 13's __cudaLaunchKernel on an H200 does, under the same id; CUPTI's samples show
 * none on older drivers): NESTS_UNKNOWN until one of its calls has returned. */
enum { NESTS_UNKNOWN, NESTS_YES, NESTS_NO };
static _Atomic unsigned char nests[CUPTI_RUNTIME_TRACE_CBID_SIZE];

static int nesting(CUpti_CallbackId cbid)
{
	return cbid < CUPTI_RUNTIME_TRACE_CBID_SIZE
		       ? atomic_load_explicit(&nests[cbid], memory_order_relaxed) : NESTS_NO;
}

static void learn_nesting(CUpti_CallbackId cbid, int value)
{
	unsigned char unknown = NESTS_UNKNOWN;
	if (cbid < CUPTI_RUNTIME_TRACE_CBID_SIZE)
		atomic_compare_exchange_strong(&nests[cbid], &unknown, (unsigned char)value);
}

/* Says what failed, with CUPTI's words for rc. */
static void report(const char *what, CUptiResult rc)
{
	const char *message = NULL;
	cuptiGetResultString(rc, &message);
	recorder_report("counters: %s: %s", what, message ? message : "CUPTI error");
}

static int load_host(void)
{
	Dl_info self;
	struct strbuf path = STRBUF_INIT;
	if (!dladdr((void *)load_host, &self) || !self.dli_fname) {
		recorder_report("counters: cannot find libgpuprof-cupti-host.so: no counters are "
				"collected");
		return -1;
	}
	char *copy = strdup(self.dli_fname);
	strbuf_addf(&path, "%s/libgpuprof-cupti-host.so", copy ? dirname(copy) : ".");
	free(copy);
	host.library = dlopen(path.buf, RTLD_NOW | RTLD_LOCAL);
	if (host.library) {
		*(void **)&host.open_device = dlsym(host.library, "gpuprof_host_open_device");
		*(void **)&host.config = dlsym(host.library, "gpuprof_host_config");
		*(void **)&host.evaluate = dlsym(host.library, "gpuprof_host_evaluate");
	}
	if (!host.open_device || !host.config || !host.evaluate) {
		recorder_report("counters: cannot load %s (%s): no counters are collected",
				path.buf, host.library ? "not this gpuprof's" : dlerror());
		strbuf_release(&path);
		return -1;
	}
	strbuf_release(&path);
	return 0;
}

int counters_configure(void)
{
	const char *list = getenv("GPUPROF_PMC");
	if (!list || !*list)
		return 0;
	metric_text = strdup(list);
	for (char *save = NULL, *group = strtok_r(metric_text, ";", &save); group;
	     group = strtok_r(NULL, ";", &save)) {
		groups[group_count].first = metric_count;
		for (char *inner = NULL, *name = strtok_r(group, ",", &inner);
		     name && metric_count < MAX_METRICS; name = strtok_r(NULL, ",", &inner))
			metrics[metric_count++] = name;
		groups[group_count].count = metric_count - groups[group_count].first;
		if (groups[group_count].count)
			group_count++;
	}
	const char *mode = getenv("GPUPROF_PMC_MULTIPLEX");
	if (mode && !strcmp(mode, "kernel"))
		multiplex = MULTIPLEX_KERNEL;
	else if (mode && !strcmp(mode, "kernel_launch_params"))
		multiplex = MULTIPLEX_LAUNCH;
	if (!multiplex && group_count > 1) { /* one group, replayed */
		groups[0].count = metric_count;
		group_count = 1;
	}
	struct error err;
	if (kernel_filter_init(&filter, getenv("GPUPROF_KERNEL_INCLUDE_REGEX"),
			       getenv("GPUPROF_KERNEL_EXCLUDE_REGEX"),
			       getenv("GPUPROF_KERNEL_ITERATION_RANGE"), &err)) {
		recorder_report("counters: %s: no counters are collected", err.message);
		return -1;
	}
	if (load_host())
		return -1;
	return 1;
}

/* CUPTI's profiler, started at the first context measured: 0, or -1 (said once). Not
 * at the injection's start, which runs inside the program's first cuInit: there
 * cuptiProfilerInitialize fails (CUPTI_ERROR_UNKNOWN on an H200, CUDA 13.0). */
static int profiler_started(void)
{
	static int state; /* 0: not tried; 1: started; -1: failed */
	if (!state) {
		CUpti_Profiler_Initialize_Params init = {
			CUpti_Profiler_Initialize_Params_STRUCT_SIZE };
		CUptiResult rc = cuptiProfilerInitialize(&init);
		state = rc == CUPTI_SUCCESS ? 1 : -1;
		if (state < 0)
			report("cannot start CUPTI's profiler; no counters are collected", rc);
	}
	return state > 0 ? 0 : -1;
}

/* Makes the counter data image of a group ready for the next range and hands the
 * group's images to the profiler: 0, or -1. */
static int arm(struct context *c, size_t group)
{
	struct images *i = &c->images[group];
	CUpti_RangeProfiler_CounterDataImage_Initialize_Params init = {
		CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE };
	init.pRangeProfilerObject = c->profiler;
	init.counterDataSize = i->data_size;
	init.pCounterData = i->data;
	CUptiResult rc = cuptiRangeProfilerCounterDataImageInitialize(&init);
	if (rc != CUPTI_SUCCESS) {
		report("cannot initialise the counter data", rc);
		return -1;
	}
	CUpti_RangeProfiler_SetConfig_Params set = { CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE };
	set.pRangeProfilerObject = c->profiler;
	set.configSize = i->config_size;
	set.pConfig = i->config;
	set.counterDataImageSize = i->data_size;
	set.pCounterDataImage = i->data;
	set.range = CUPTI_AutoRange;
	set.replayMode = CUPTI_KernelReplay;
	set.maxRangesPerPass = 1;
	set.numNestingLevels = 1;
	set.minNestingLevel = 1;
	set.passIndex = 0;
	set.targetNestingLevel = 1;
	rc = cuptiRangeProfilerSetConfig(&set);
	if (rc != CUPTI_SUCCESS) {
		report("cannot configure the range profiler", rc);
		return -1;
	}
	return 0;
}

/* Enables the range profiler on a context the first time one of its kernels is
 * measured. */
static int set_up(struct context *c)
{
	if (profiler_started())
		return -1;
	CUptiResult rc = cuptiGetDeviceId(c->ctx, &c->device);
	if (rc != CUPTI_SUCCESS) {
		report("cannot tell the device of a context", rc);
		return -1;
	}
	CUpti_Device_GetChipName_Params chip = { CUpti_Device_GetChipName_Params_STRUCT_SIZE };
	chip.deviceIndex = c->device;
	if ((rc = cuptiDeviceGetChipName(&chip)) != CUPTI_SUCCESS) {
		report("cannot tell the device's chip", rc);
		return -1;
	}
	CUpti_Profiler_GetCounterAvailability_Params avail = {
		CUpti_Profiler_GetCounterAvailability_Params_STRUCT_SIZE };
	avail.ctx = c->ctx;
	uint8_t *availability = NULL;
	if (cuptiProfilerGetCounterAvailability(&avail) == CUPTI_SUCCESS &&
	    (availability = malloc(avail.counterAvailabilityImageSize))) {
		avail.pCounterAvailabilityImage = availability;
		if (cuptiProfilerGetCounterAvailability(&avail) != CUPTI_SUCCESS) {
			free(availability);
			availability = NULL;
		}
	}
	/* the host object reads the availability image from then on (freed here, it was
	 * read after its free: a segmentation fault in the first configuration on an H200):
	 * it lives as long as the context's profiler */
	c->availability = availability;
	c->host = host.open_device(chip.pChipName, availability);
	c->images = calloc(group_count, sizeof(*c->images));
	int configured = c->host != NULL && c->images != NULL;
	for (size_t g = 0; configured && g < group_count; g++)
		configured = host.config(c->host, metrics + groups[g].first, groups[g].count,
					 &c->images[g].config, &c->images[g].config_size) == 0;
	if (!configured) {
		recorder_report("counters: the metrics asked for cannot be collected on %s (one is "
				"not this chip's; `gpuprof compute profile --list-available-metrics "
				"--chip %s` lists them)", chip.pChipName, chip.pChipName);
		return -1;
	}
	CUpti_RangeProfiler_Enable_Params enable = { CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE };
	enable.ctx = c->ctx;
	if ((rc = cuptiRangeProfilerEnable(&enable)) != CUPTI_SUCCESS) {
		report(rc == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES
		       ? "the driver does not let this user read the GPU's counters (NVIDIA's "
			 "RmProfilingAdminOnly: run as root, or set the driver option "
			 "NVreg_RestrictProfilingToAdminUsers=0)"
		       : "cannot enable the range profiler", rc);
		return -1;
	}
	c->profiler = enable.pRangeProfilerObject;
	for (size_t g = 0; g < group_count; g++) {
		CUpti_RangeProfiler_GetCounterDataSize_Params size = {
			CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE };
		size.pRangeProfilerObject = c->profiler;
		size.pMetricNames = metrics + groups[g].first;
		size.numMetrics = groups[g].count;
		size.maxNumOfRanges = 1;
		size.maxNumRangeTreeNodes = 1;
		if ((rc = cuptiRangeProfilerGetCounterDataSize(&size)) != CUPTI_SUCCESS) {
			report("cannot size the counter data", rc);
			return -1;
		}
		c->images[g].data_size = size.counterDataSize;
		if (!(c->images[g].data = malloc(size.counterDataSize)))
			return -1;
	}
	return 0;
}

static struct context *context_of(CUcontext ctx)
{
	for (int i = 0; i < context_count; i++)
		if (contexts[i].ctx == ctx)
			return &contexts[i];
	if (context_count == MAX_CONTEXTS)
		return NULL;
	struct context *c = &contexts[context_count++];
	memset(c, 0, sizeof(*c));
	c->ctx = ctx;
	c->broken = set_up(c) != 0;
	return c;
}

/* The slot of a name in table t (added if new), NULL without memory. */
static struct name_count *name_slot(struct name_table *t, const char *name)
{
	if (2 * (t->used + 1) > t->size) {
		size_t size = t->size ? 2 * t->size : 64;
		struct name_count *grown = calloc(size, sizeof(*grown));
		if (!grown)
			return NULL;
		for (size_t i = 0; i < t->size; i++) {
			if (!t->slots[i].name)
				continue;
			size_t j = hash_string(t->slots[i].name) & (size - 1);
			while (grown[j].name)
				j = (j + 1) & (size - 1);
			grown[j] = t->slots[i];
		}
		free(t->slots);
		t->slots = grown;
		t->size = size;
	}
	size_t j = hash_string(name) & (t->size - 1);
	while (t->slots[j].name && strcmp(t->slots[j].name, name))
		j = (j + 1) & (t->size - 1);
	if (!t->slots[j].name) {
		if (!(t->slots[j].name = strdup(name)))
			return NULL;
		t->used++;
	}
	return &t->slots[j];
}

/* What a launch launches: its kernel's (mangled) name, as CUPTI gives it to launch
 * callbacks of both domains, and its size: threads in the grid and in a block, dynamic
 * shared memory per block. */
struct launch {
	const char *symbol;
	uint64_t grid_threads, block_threads, shared_bytes;
};

static void set_size(struct launch *l, unsigned grid_x, unsigned grid_y, unsigned grid_z,
		     unsigned block_x, unsigned block_y, unsigned block_z, uint64_t shared)
{
	l->block_threads = (uint64_t)block_x * block_y * block_z;
	l->grid_threads = l->block_threads * grid_x * grid_y * grid_z;
	l->shared_bytes = shared;
}

/* Whether the function launches one kernel (not a graph, not on several devices). */
static int launches_kernel(CUpti_CallbackDomain domain, CUpti_CallbackId cbid)
{
	if (domain == CUPTI_CB_DOMAIN_RUNTIME_API)
		switch (cbid) {
		case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000:
		case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000:
		case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_v9000:
		case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_ptsz_v9000:
		case CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000:
		case CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_ptsz_v13000:
		case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060:
		case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_ptsz_v11060:
			return 1;
		default:
			return 0;
		}
	switch (cbid) {
	case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel:
	case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz:
	case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx:
	case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz:
	case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel:
	case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz:
		return 1;
	default:
		return 0;
	}
}

/* The launch's size from its parameters; 0 when the function launches no single kernel
 * whose size CUPTI's parameters give (a graph, several devices at once): not measured.
 * cuda_runtime_api_meta.h has no parameters for some launching functions (CUDA 13's
 * __cudaLaunchKernel, what <<<>>> calls): without them the kernel is measured, its
 * size unknown (0). */
static int launch_of(CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
		     const CUpti_CallbackData *data, struct launch *l)
{
	memset(l, 0, sizeof(*l));
	l->symbol = data->symbolName;
	const void *params = data->functionParams;
	if (!launches_kernel(domain, cbid))
		return 0;
	if (!params)
		return 1;
	if (domain == CUPTI_CB_DOMAIN_RUNTIME_API) {
		/* __cudaLaunchKernel takes the arguments of cudaLaunchKernel, a kernel handle
		 * for the function */
		const cudaLaunchKernel_v7000_params *k = params;
		const cudaLaunchKernelExC_v11060_params *ex = params;
		if (cbid == CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060 ||
		    cbid == CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_ptsz_v11060) {
			if (ex->config)
				set_size(l, ex->config->gridDim.x, ex->config->gridDim.y,
					 ex->config->gridDim.z, ex->config->blockDim.x,
					 ex->config->blockDim.y, ex->config->blockDim.z,
					 ex->config->dynamicSmemBytes);
		} else {
			set_size(l, k->gridDim.x, k->gridDim.y, k->gridDim.z, k->blockDim.x,
				 k->blockDim.y, k->blockDim.z, k->sharedMem);
		}
		return 1;
	}
	const cuLaunchKernel_params *k = params;
	const cuLaunchCooperativeKernel_params *co = params;
	const CUlaunchConfig *config;
	switch (cbid) {
	case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx:
	case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz:
		if ((config = ((const cuLaunchKernelEx_params *)params)->config))
			set_size(l, config->gridDimX, config->gridDimY, config->gridDimZ,
				 config->blockDimX, config->blockDimY, config->blockDimZ,
				 config->sharedMemBytes);
		break;
	case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel:
	case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz:
		set_size(l, co->gridDimX, co->gridDimY, co->gridDimZ, co->blockDimX, co->blockDimY,
			 co->blockDimZ, co->sharedMemBytes);
		break;
	default: /* cuLaunchKernel */
		set_size(l, k->gridDimX, k->gridDimY, k->gridDimZ, k->blockDimX, k->blockDimY,
			 k->blockDimZ, k->sharedMemBytes);
	}
	return 1;
}

/* Whether the filters keep this launch (counting its iterations), and the group of
 * metrics it collects into *group: under multiplexing, the next of its kernel's. */
static int wanted(const struct launch *l, size_t *group)
{
	*group = 0;
	if (!kernel_filter_active(&filter) && !multiplex)
		return 1;
	const char *mangled = l->symbol;
	if (!mangled)
		return 0;
	char *demangled = translator_demangle(mangled);
	const char *name = demangled ? demangled : mangled;
	int keep = kernel_filter_name(&filter, name);
	if (keep && filter.range_count) {
		struct name_count *n = name_slot(&names, name);
		keep = n && kernel_filter_iteration(&filter, ++n->seen);
	}
	if (keep && multiplex) {
		struct strbuf key = STRBUF_INIT;
		strbuf_addstr(&key, name);
		if (multiplex == MULTIPLEX_LAUNCH)
			strbuf_addf(&key, "\n%llu %llu %llu", (unsigned long long)l->grid_threads,
				    (unsigned long long)l->block_threads,
				    (unsigned long long)l->shared_bytes);
		struct name_count *n = key.failed ? NULL : name_slot(&keys, key.buf);
		keep = n != NULL;
		if (n)
			*group = n->seen++ % group_count;
		strbuf_release(&key);
	}
	free(demangled);
	return keep;
}

/* The counters of the range just measured (of a group's metrics), queued for the
 * writer thread. */
static void add_window(uint64_t correlation_id, uint64_t start_ns, uint64_t end_ns)
{
	struct window *w = malloc(sizeof(*w));
	if (!w)
		return;
	*w = (struct window){ NULL, correlation_id, start_ns, end_ns };
	pthread_mutex_lock(&pending_lock);
	*windows_tail = w;
	windows_tail = &w->next;
	if (++window_count > MAX_WINDOWS) { /* kernels whose records never came */
		struct window *oldest = windows_head;
		windows_head = oldest->next;
		window_count--;
		free(oldest);
	}
	pthread_mutex_unlock(&pending_lock);
}

int counters_launch_window(uint64_t correlation_id, uint64_t *start_ns, uint64_t *end_ns)
{
	static atomic_int said;
	pthread_mutex_lock(&pending_lock);
	struct window **at = &windows_head;
	while (*at && (*at)->correlation_id != correlation_id)
		at = &(*at)->next;
	struct window *w = *at;
	if (w) {
		*at = w->next;
		if (windows_tail == &w->next)
			windows_tail = at;
		window_count--;
		*start_ns = w->start_ns;
		*end_ns = w->end_ns;
		free(w);
	}
	pthread_mutex_unlock(&pending_lock);
	if (w && !atomic_exchange(&said, 1))
		recorder_report("counters: CUPTI gives the kernels measured under kernel replay "
				"no device times: each is placed at its launch call, from its "
				"entry to its return (its replays included)");
	return w != NULL;
}

static void finish(struct context *c, size_t group, uint64_t correlation_id)
{
	add_window(correlation_id, measured_since, clock_now_ns());
	const struct group *g = &groups[group];
	struct images *i = &c->images[group];
	CUpti_RangeProfiler_Stop_Params stop = { CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE };
	stop.pRangeProfilerObject = c->profiler;
	CUptiResult rc = cuptiRangeProfilerStop(&stop);
	CUpti_RangeProfiler_DecodeData_Params decode = {
		CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE };
	decode.pRangeProfilerObject = c->profiler;
	if (rc == CUPTI_SUCCESS)
		rc = cuptiRangeProfilerDecodeData(&decode);
	struct pending *p = malloc(sizeof(*p) + g->count * sizeof(double));
	if (rc != CUPTI_SUCCESS || decode.numOfRangeDropped || !p ||
	    host.evaluate(c->host, i->data, i->data_size, 0, metrics + g->first, g->count,
			  p->values)) {
		if (rc != CUPTI_SUCCESS)
			report("cannot read a kernel's counters", rc);
		recorder_count_dropped(DROPPED_COUNTERS, 1);
		free(p);
	} else {
		p->next = NULL;
		p->correlation_id = correlation_id;
		p->device = c->device;
		p->group = group;
		p->done = 0;
		pthread_mutex_lock(&pending_lock);
		*pending_tail = p;
		pending_tail = &p->next;
		pthread_mutex_unlock(&pending_lock);
	}
}

/* Starts measuring the launch entered (the lock then stays held until it returns): 1, or
 * 0 when it is not measured. */
static int start(const CUpti_CallbackData *data, const struct launch *l)
{
	if (!recorder_collecting()) /* outside the capture range: its kernel is not kept */
		return 0;
	if (!data->context) { /* none current yet: no profiler to start */
		recorder_count_dropped(DROPPED_COUNTERS, 1);
		return 0;
	}
	pthread_mutex_lock(&lock);
	struct context *c = context_of(data->context);
	size_t group;
	if (c && !c->broken && wanted(l, &group)) {
		CUpti_RangeProfiler_Start_Params begin = {
			CUpti_RangeProfiler_Start_Params_STRUCT_SIZE };
		begin.pRangeProfilerObject = c->profiler;
		int armed = arm(c, group) == 0; /* it said why not */
		CUptiResult rc = armed ? cuptiRangeProfilerStart(&begin) : CUPTI_SUCCESS;
		if (armed && rc == CUPTI_SUCCESS) {
			measured_group = group;
			measured_since = clock_now_ns();
			return 1;
		}
		if (armed)
			report("cannot start the range profiler", rc);
		c->broken = 1;
	}
	if (c && c->broken)
		recorder_count_dropped(DROPPED_COUNTERS, 1);
	pthread_mutex_unlock(&lock);
	return 0;
}

void counters_callback(CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
		       const CUpti_CallbackData *data)
{
	struct launch l;
	if (!launch_of(domain, cbid, data, &l)) /* a copy, a fill, a graph: not measured */
		return;
	if (data->callbackSite == CUPTI_API_ENTER) {
		int level = depth++;
		if (level == 0) {
			outer_cbid = domain == CUPTI_CB_DOMAIN_RUNTIME_API ? cbid : (CUpti_CallbackId)-1;
			outer_id = data->correlationId;
			inner_driver = 0;
			outer_collected = recorder_collecting();
		} else if (domain == CUPTI_CB_DOMAIN_DRIVER_API) {
			inner_driver = 1;
			learn_nesting(outer_cbid, NESTS_YES);
		}
		/* the innermost launching call is measured, as NVIDIA's callback profiling
		 * does: the driver's where one fires inside the runtime's */
		if (measuring ||
		    (domain == CUPTI_CB_DOMAIN_RUNTIME_API && nesting(cbid) != NESTS_NO))
			return;
		if (start(data, &l))
			measuring = level + 1;
		return;
	}
	if (depth == 0)
		return;
	int level = --depth;
	if (measuring == level + 1) {
		measuring = 0;
		finish(context_of(data->context), measured_group, outer_id);
		pthread_mutex_unlock(&lock);
	}
	if (level == 0 && domain == CUPTI_CB_DOMAIN_RUNTIME_API && !inner_driver &&
	    nesting(cbid) == NESTS_UNKNOWN) {
		/* the driver fires no launch callback inside this function: its calls are
		 * measured from now on, this first one was not (a loss where it was kept) */
		learn_nesting(cbid, NESTS_NO);
		if (outer_collected)
			recorder_count_dropped(DROPPED_COUNTERS, 1);
	}
}

int counters_collect(struct translator *t)
{
	for (;;) {
		pthread_mutex_lock(&pending_lock);
		struct pending *p = pending_head;
		pthread_mutex_unlock(&pending_lock);
		if (!p)
			return 0;
		const struct group *g = &groups[p->group];
		if (translator_counters(t, p->correlation_id, p->device, metrics + g->first,
					p->values, g->count, &p->done))
			return 1; /* the recorder's buffer is full: resume at p->done */
		pthread_mutex_lock(&pending_lock);
		pending_head = p->next;
		if (!pending_head)
			pending_tail = &pending_head;
		pthread_mutex_unlock(&pending_lock);
		free(p);
	}
}
