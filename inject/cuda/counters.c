/* Hardware counters per kernel (gpuprof trace --pmc, gpuprof compute profile), with
 * CUPTI's range profiler: auto ranges (one range per kernel) and kernel replay (CUPTI
 * runs a kernel once per pass the metrics need, saving and restoring the memory it
 * writes), so one run of the program gives every metric.
 *
 * The launch callbacks of the driver API bracket each kernel that the filters keep: on
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
#include <stdlib.h>
#include <string.h>

#include "compute/host.h"
#include "core/kernel-filter.h"
#include "core/recorder.h"
#include "util/hash.h"
#include "util/strbuf.h"

#define MAX_CONTEXTS 64
#define MAX_METRICS 512

/* The metrics asked for (GPUPROF_PMC, comma-separated). */
static char *metric_text;
static const char *metrics[MAX_METRICS];
static size_t metric_count;
static struct kernel_filter filter;
/* The driver's, found at run time: the library must load whatever the driver's version */
static CUresult (*func_get_name)(const char **name, CUfunction function);

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
	uint8_t *config, *data;     /* configuration and counter data images */
	size_t config_size, data_size;
	int broken;                 /* set up failed: its kernels get no counters */
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER; /* held from a launch's entry to
							    its exit */
static struct context contexts[MAX_CONTEXTS];
static int context_count;

/* Iterations per kernel name, for --kernel-iteration-range: open addressing. */
struct name_count {
	char *name;
	uint64_t seen;
};
static struct name_count *names;
static size_t name_slots, name_count;

/* Values waiting for the writer thread. */
struct pending {
	struct pending *next;
	uint64_t correlation_id;
	uint32_t device;
	size_t done; /* emitted so far */
	double values[];
};
static pthread_mutex_t pending_lock = PTHREAD_MUTEX_INITIALIZER;
static struct pending *pending_head, **pending_tail = &pending_head;

/* The launches the thread is inside (a launch may make another), and whether the
 * outermost is being measured (the lock is then held). */
static _Thread_local int depth, measuring;

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
	for (char *save = NULL, *name = strtok_r(metric_text, ",", &save);
	     name && metric_count < MAX_METRICS; name = strtok_r(NULL, ",", &save))
		metrics[metric_count++] = name;
	struct error err;
	if (kernel_filter_init(&filter, getenv("GPUPROF_KERNEL_INCLUDE_REGEX"),
			       getenv("GPUPROF_KERNEL_EXCLUDE_REGEX"),
			       getenv("GPUPROF_KERNEL_ITERATION_RANGE"), &err)) {
		recorder_report("counters: %s: no counters are collected", err.message);
		return -1;
	}
	if (kernel_filter_active(&filter)) {
		void *driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
		if (driver)
			*(void **)&func_get_name = dlsym(driver, "cuFuncGetName");
		if (!func_get_name) {
			recorder_report("counters: this CUDA driver cannot name a kernel at its "
					"launch (no cuFuncGetName), so the kernel filters cannot "
					"choose what to measure: no counters are collected");
			return -1;
		}
	}
	if (load_host())
		return -1;
	CUpti_Profiler_Initialize_Params init = { CUpti_Profiler_Initialize_Params_STRUCT_SIZE };
	CUptiResult rc = cuptiProfilerInitialize(&init);
	if (rc != CUPTI_SUCCESS) {
		report("cannot start CUPTI's profiler; no counters are collected", rc);
		return -1;
	}
	return 1;
}

/* Makes a counter data image ready for the next range and hands both images to the
 * profiler: 0, or -1. */
static int arm(struct context *c)
{
	CUpti_RangeProfiler_CounterDataImage_Initialize_Params init = {
		CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE };
	init.pRangeProfilerObject = c->profiler;
	init.counterDataSize = c->data_size;
	init.pCounterData = c->data;
	CUptiResult rc = cuptiRangeProfilerCounterDataImageInitialize(&init);
	if (rc != CUPTI_SUCCESS) {
		report("cannot initialise the counter data", rc);
		return -1;
	}
	CUpti_RangeProfiler_SetConfig_Params set = { CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE };
	set.pRangeProfilerObject = c->profiler;
	set.configSize = c->config_size;
	set.pConfig = c->config;
	set.counterDataImageSize = c->data_size;
	set.pCounterDataImage = c->data;
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
	c->host = host.open_device(chip.pChipName, availability);
	free(availability);
	if (!c->host || host.config(c->host, metrics, metric_count, &c->config, &c->config_size)) {
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
	CUpti_RangeProfiler_GetCounterDataSize_Params size = {
		CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE };
	size.pRangeProfilerObject = c->profiler;
	size.pMetricNames = metrics;
	size.numMetrics = metric_count;
	size.maxNumOfRanges = 1;
	size.maxNumRangeTreeNodes = 1;
	if ((rc = cuptiRangeProfilerGetCounterDataSize(&size)) != CUPTI_SUCCESS) {
		report("cannot size the counter data", rc);
		return -1;
	}
	c->data_size = size.counterDataSize;
	c->data = malloc(c->data_size);
	if (!c->data)
		return -1;
	return arm(c);
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

/* The slot of a kernel name in names (added if new), NULL without memory. */
static struct name_count *name_slot(const char *name)
{
	if (2 * (name_count + 1) > name_slots) {
		size_t slots = name_slots ? 2 * name_slots : 64;
		struct name_count *grown = calloc(slots, sizeof(*grown));
		if (!grown)
			return NULL;
		for (size_t i = 0; i < name_slots; i++) {
			if (!names[i].name)
				continue;
			size_t j = hash_string(names[i].name) & (slots - 1);
			while (grown[j].name)
				j = (j + 1) & (slots - 1);
			grown[j] = names[i];
		}
		free(names);
		names = grown;
		name_slots = slots;
	}
	size_t j = hash_string(name) & (name_slots - 1);
	while (names[j].name && strcmp(names[j].name, name))
		j = (j + 1) & (name_slots - 1);
	if (!names[j].name) {
		if (!(names[j].name = strdup(name)))
			return NULL;
		name_count++;
	}
	return &names[j];
}

/* Whether the filters keep this launch of the kernel (counting its iterations). */
static int wanted(CUfunction function)
{
	if (!kernel_filter_active(&filter))
		return 1;
	const char *mangled = NULL;
	if (!function || func_get_name(&mangled, function) != CUDA_SUCCESS || !mangled)
		return 0;
	char *demangled = translator_demangle(mangled);
	const char *name = demangled ? demangled : mangled;
	int keep = kernel_filter_name(&filter, name);
	if (keep && filter.range_count) {
		struct name_count *n = name_slot(name);
		keep = n && kernel_filter_iteration(&filter, ++n->seen);
	}
	free(demangled);
	return keep;
}

static CUfunction launched_function(CUpti_CallbackId cbid, const void *params)
{
	switch (cbid) {
	case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel:
	case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz:
		return ((const cuLaunchKernel_params *)params)->f;
	case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx:
	case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz:
		return ((const cuLaunchKernelEx_params *)params)->f;
	case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel:
	case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz:
		return ((const cuLaunchCooperativeKernel_params *)params)->f;
	}
	return NULL;
}

const CUpti_CallbackId counters_launch_callbacks[] = {
	CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz,
	CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz,
	CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel,
	CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz,
};
const size_t counters_launch_callback_count =
	sizeof(counters_launch_callbacks) / sizeof(counters_launch_callbacks[0]);

/* The counters of the range just measured, queued for the writer thread. */
static void finish(struct context *c, uint64_t correlation_id)
{
	CUpti_RangeProfiler_Stop_Params stop = { CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE };
	stop.pRangeProfilerObject = c->profiler;
	CUptiResult rc = cuptiRangeProfilerStop(&stop);
	CUpti_RangeProfiler_DecodeData_Params decode = {
		CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE };
	decode.pRangeProfilerObject = c->profiler;
	if (rc == CUPTI_SUCCESS)
		rc = cuptiRangeProfilerDecodeData(&decode);
	struct pending *p = malloc(sizeof(*p) + metric_count * sizeof(double));
	if (rc != CUPTI_SUCCESS || decode.numOfRangeDropped || !p ||
	    host.evaluate(c->host, c->data, c->data_size, 0, metrics, metric_count, p->values)) {
		if (rc != CUPTI_SUCCESS)
			report("cannot read a kernel's counters", rc);
		recorder_count_dropped(DROPPED_COUNTERS, 1);
		free(p);
	} else {
		p->next = NULL;
		p->correlation_id = correlation_id;
		p->device = c->device;
		p->done = 0;
		pthread_mutex_lock(&pending_lock);
		*pending_tail = p;
		pending_tail = &p->next;
		pthread_mutex_unlock(&pending_lock);
	}
	if (arm(c))
		c->broken = 1;
}

void counters_callback(CUpti_CallbackId cbid, const CUpti_CallbackData *data)
{
	if (data->callbackSite == CUPTI_API_ENTER) {
		if (depth++)
			return;
		pthread_mutex_lock(&lock);
		struct context *c = context_of(data->context);
		if (c && !c->broken && wanted(launched_function(cbid, data->functionParams))) {
			CUpti_RangeProfiler_Start_Params start = {
				CUpti_RangeProfiler_Start_Params_STRUCT_SIZE };
			start.pRangeProfilerObject = c->profiler;
			CUptiResult rc = cuptiRangeProfilerStart(&start);
			if (rc == CUPTI_SUCCESS) {
				measuring = 1; /* the lock stays held until the launch returns */
				return;
			}
			report("cannot start the range profiler", rc);
			c->broken = 1;
		}
		if (c && c->broken)
			recorder_count_dropped(DROPPED_COUNTERS, 1);
		pthread_mutex_unlock(&lock);
		return;
	}
	if (depth == 0 || --depth || !measuring)
		return;
	measuring = 0;
	finish(context_of(data->context), data->correlationId);
	pthread_mutex_unlock(&lock);
}

int counters_collect(struct translator *t)
{
	for (;;) {
		pthread_mutex_lock(&pending_lock);
		struct pending *p = pending_head;
		pthread_mutex_unlock(&pending_lock);
		if (!p)
			return 0;
		if (translator_counters(t, p->correlation_id, p->device, metrics, p->values,
					metric_count, &p->done))
			return 1; /* the recorder's buffer is full: resume at p->done */
		pthread_mutex_lock(&pending_lock);
		pending_head = p->next;
		if (!pending_head)
			pending_tail = &pending_head;
		pthread_mutex_unlock(&pending_lock);
		free(p);
	}
}
