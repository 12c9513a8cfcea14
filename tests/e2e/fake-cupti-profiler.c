/* The stand-in's profiler (part of libcupti.so.13 for tests/e2e/cupti-replay): CUPTI 13's
 * range profiler held to the call order and object lifetimes cupti_range_profiler.h and
 * NVIDIA's samples give, and to what an H200 did:
 *   - cuptiProfilerInitialize fails inside the driver's initialisation (the injection's
 *     start, inside cuInit: CUPTI_ERROR_UNKNOWN on an H200, CUDA 13.0);
 *   - the counter availability image is given in two calls (its size, then the image),
 *     for a live context;
 *   - Enable makes one object per live context (a second Enable of one is refused);
 *     Disable ends it; a context destroyed under its object leaves the object dead: any
 *     call with it is refused;
 *   - SetConfig needs a counter data image initialised and sized for the configuration's
 *     metrics (a configuration holds every metric its host object was given); Start needs
 *     a configuration, and a counter data image initialised since its last decode; Stop a
 *     started range; DecodeData a stopped one;
 *   - in a range (auto range, kernel replay), each kernel that runs on the context is a
 *     range (maxRangesPerPass: the most kept; the others dropped), a copy or fill that
 *     runs meanwhile pollutes it, a launch into a stream being captured runs nothing; a
 *     replay may fail (not every pass submitted).
 * Every refusal is counted and said on stderr (fake_cupti_profiler_refused()). Not part of
 * gpuprof. */
#include <cupti.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_target.h>
#include <cuda.h>

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "fake-cupti-internal.h"
#include "fake-cupti.h"
#include "fake-images.h"

#define MAX_CONTEXTS 16
#define MAX_OBJECTS 16

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int initialized, in_driver_init, fail_next_replay;
static unsigned ranges_started, set_configs, refused, availability_images;
static CUcontext live[MAX_CONTEXTS];

struct object {
	int live;            /* enabled and not disabled */
	int dead;            /* its context was destroyed under it */
	CUcontext ctx;
	uint32_t config_metrics; /* of the configuration set; 0: none */
	uint8_t *data;       /* the counter data image set with it */
	size_t data_size;
	size_t max_ranges;
	int started, stopped;
	unsigned kernels, polluted, partial, number;
};
static struct object objects[MAX_OBJECTS];

/* What the program's launching calls run, per thread, and on which context: set at a
 * call's entry (an inner call's overrides its caller's), run at the exit of the
 * innermost. */
enum { RUNS_NOTHING, RUNS_KERNEL, RUNS_GRAPH, RUNS_COPY };
static __thread int pending_run;
static __thread CUcontext pending_context;

static CUptiResult refuse(CUptiResult rc, const char *call, const char *why)
{
	refused++;
	fprintf(stderr, "fake-cupti: %s refused: %s\n", call, why);
	return rc;
}

static int context_alive(CUcontext ctx)
{
	for (int i = 0; i < MAX_CONTEXTS; i++)
		if (ctx && live[i] == ctx)
			return 1;
	return 0;
}

/* The object behind a handle, NULL (refused, said) when it is not a live one. */
static struct object *object_of(CUpti_RangeProfiler_Object *handle, const char *call,
				CUptiResult *rc)
{
	struct object *o = (struct object *)(void *)handle;
	if (o < objects || o >= objects + MAX_OBJECTS || !o->live) {
		*rc = refuse(CUPTI_ERROR_INVALID_PARAMETER, call, "not a range profiler object");
		return NULL;
	}
	if (o->dead) {
		*rc = refuse(CUPTI_ERROR_INVALID_CONTEXT, call, "its context was destroyed");
		return NULL;
	}
	return o;
}

/* ---- the replay's side ------------------------------------------------------------ */

void fake_cupti_driver_init(int inside)
{
	in_driver_init = inside;
}

void fake_cupti_fail_next_replay(void)
{
	fail_next_replay = 1;
}

/* A count, read under the lock (the replay's threads). */
static unsigned read_locked(const unsigned *count)
{
	pthread_mutex_lock(&lock);
	unsigned n = *count;
	pthread_mutex_unlock(&lock);
	return n;
}

unsigned fake_cupti_ranges_started(void)
{
	return read_locked(&ranges_started);
}

unsigned fake_cupti_set_configs(void)
{
	return read_locked(&set_configs);
}

unsigned fake_cupti_profiler_refused(void)
{
	return read_locked(&refused);
}

unsigned fake_cupti_availability_images(void)
{
	return read_locked(&availability_images);
}

void fake_profiler_context(CUcontext context, int alive)
{
	pthread_mutex_lock(&lock);
	for (int i = 0; i < MAX_CONTEXTS; i++) {
		if (alive && !live[i]) {
			live[i] = context;
			break;
		}
		if (!alive && live[i] == context)
			live[i] = NULL;
	}
	if (!alive)
		for (int i = 0; i < MAX_OBJECTS; i++)
			if (objects[i].live && objects[i].ctx == context)
				objects[i].dead = 1;
	pthread_mutex_unlock(&lock);
}

/* What a launching function runs, by its CUPTI name. */
static int runs(CUpti_CallbackDomain domain, CUpti_CallbackId cbid)
{
	const char *name = fake_cupti_name_of(domain, cbid);
	if (!name)
		return RUNS_NOTHING;
	while (*name == '_')
		name++;
	if (strstr(name, "HostFunc"))
		return RUNS_NOTHING;
	if (!strncmp(name, "cudaGraphLaunch", 15) || !strncmp(name, "cuGraphLaunch", 13))
		return RUNS_GRAPH;
	if (!strncmp(name, "cudaLaunch", 10) || !strncmp(name, "cuLaunch", 8))
		return RUNS_KERNEL;
	if (!strncmp(name, "cudaMem", 7) || !strncmp(name, "cuMem", 5))
		return RUNS_COPY;
	return RUNS_NOTHING;
}

/* Whether the driver stand-in captures the launches (fake-cuda.c). */
static int capturing(void)
{
	CUresult (*is_capturing)(CUstream, CUstreamCaptureStatus *) =
		(CUresult(*)(CUstream, CUstreamCaptureStatus *))dlsym(RTLD_DEFAULT,
								      "cuStreamIsCapturing");
	CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
	return is_capturing && is_capturing(NULL, &status) == CUDA_SUCCESS &&
	       status != CU_STREAM_CAPTURE_STATUS_NONE;
}

void fake_profiler_call(CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
			CUpti_ApiCallbackSite site, CUcontext context)
{
	int what = runs(domain, cbid);
	if (site == CUPTI_API_ENTER) {
		if (what != RUNS_NOTHING) {
			pending_run = what;
			pending_context = context;
		}
		return;
	}
	if (what == RUNS_NOTHING || pending_run == RUNS_NOTHING)
		return;
	what = pending_run;
	pending_run = RUNS_NOTHING;
	if (capturing()) /* captured into a graph: nothing runs */
		return;
	pthread_mutex_lock(&lock);
	for (int i = 0; i < MAX_OBJECTS; i++) {
		struct object *o = &objects[i];
		if (!o->live || o->dead || !o->started || o->ctx != pending_context)
			continue;
		if (what == RUNS_COPY)
			o->polluted++;
		else
			o->kernels += what == RUNS_GRAPH ? 2 : 1;
	}
	pthread_mutex_unlock(&lock);
}

/* ---- CUPTI's interface ------------------------------------------------------------ */

CUptiResult cuptiDeviceGetChipName(CUpti_Device_GetChipName_Params *params)
{
	if (!initialized)
		return refuse(CUPTI_ERROR_NOT_INITIALIZED, "cuptiDeviceGetChipName",
			      "before cuptiProfilerInitialize (a segmentation fault on an H200)");
	params->pChipName = "GH100";
	return CUPTI_SUCCESS;
}

CUptiResult cuptiProfilerInitialize(CUpti_Profiler_Initialize_Params *params)
{
	if (in_driver_init)
		return refuse(CUPTI_ERROR_UNKNOWN, "cuptiProfilerInitialize",
			      "inside the driver's initialisation (as on an H200)");
	initialized = 1;
	return CUPTI_SUCCESS;
}

#define AVAILABILITY_SIZE 32

CUptiResult cuptiProfilerGetCounterAvailability(CUpti_Profiler_GetCounterAvailability_Params *params)
{
	if (!initialized)
		return refuse(CUPTI_ERROR_NOT_INITIALIZED, "cuptiProfilerGetCounterAvailability",
			      "before cuptiProfilerInitialize");
	if (!context_alive(params->ctx))
		return refuse(CUPTI_ERROR_INVALID_CONTEXT, "cuptiProfilerGetCounterAvailability",
			      "not a live context");
	if (!params->pCounterAvailabilityImage) {
		params->counterAvailabilityImageSize = AVAILABILITY_SIZE;
		return CUPTI_SUCCESS;
	}
	if (params->counterAvailabilityImageSize < AVAILABILITY_SIZE)
		return refuse(CUPTI_ERROR_INVALID_PARAMETER, "cuptiProfilerGetCounterAvailability",
			      "an image smaller than its size");
	memset(params->pCounterAvailabilityImage, 0xa5, AVAILABILITY_SIZE);
	availability_images++;
	return CUPTI_SUCCESS;
}

CUptiResult cuptiRangeProfilerEnable(CUpti_RangeProfiler_Enable_Params *params)
{
	if (!initialized)
		return refuse(CUPTI_ERROR_NOT_INITIALIZED, "cuptiRangeProfilerEnable",
			      "before cuptiProfilerInitialize");
	pthread_mutex_lock(&lock);
	CUptiResult rc = CUPTI_SUCCESS;
	struct object *o = NULL;
	if (!context_alive(params->ctx))
		rc = refuse(CUPTI_ERROR_INVALID_CONTEXT, "cuptiRangeProfilerEnable",
			    "not a live context");
	for (int i = 0; rc == CUPTI_SUCCESS && i < MAX_OBJECTS; i++) {
		if (objects[i].live && !objects[i].dead && objects[i].ctx == params->ctx)
			rc = refuse(CUPTI_ERROR_INVALID_OPERATION, "cuptiRangeProfilerEnable",
				    "the context has one enabled");
		else if (!objects[i].live && !o)
			o = &objects[i];
	}
	if (rc == CUPTI_SUCCESS && o) {
		memset(o, 0, sizeof(*o));
		o->live = 1;
		o->ctx = params->ctx;
		params->pRangeProfilerObject = (CUpti_RangeProfiler_Object *)(void *)o;
	} else if (rc == CUPTI_SUCCESS) {
		rc = CUPTI_ERROR_OUT_OF_MEMORY;
	}
	pthread_mutex_unlock(&lock);
	return rc;
}

CUptiResult cuptiRangeProfilerDisable(CUpti_RangeProfiler_Disable_Params *params)
{
	pthread_mutex_lock(&lock);
	struct object *o = (struct object *)(void *)params->pRangeProfilerObject;
	CUptiResult rc = CUPTI_SUCCESS;
	if (o < objects || o >= objects + MAX_OBJECTS || !o->live)
		rc = refuse(CUPTI_ERROR_INVALID_PARAMETER, "cuptiRangeProfilerDisable",
			    "not a range profiler object");
	else
		o->live = 0;
	pthread_mutex_unlock(&lock);
	return rc;
}

CUptiResult cuptiRangeProfilerGetCounterDataSize(CUpti_RangeProfiler_GetCounterDataSize_Params *params)
{
	CUptiResult rc = CUPTI_SUCCESS;
	pthread_mutex_lock(&lock);
	if (object_of(params->pRangeProfilerObject, "cuptiRangeProfilerGetCounterDataSize", &rc))
		params->counterDataSize = FAKE_DATA_SIZE(params->numMetrics);
	pthread_mutex_unlock(&lock);
	return rc;
}

CUptiResult cuptiRangeProfilerCounterDataImageInitialize(
	CUpti_RangeProfiler_CounterDataImage_Initialize_Params *params)
{
	CUptiResult rc = CUPTI_SUCCESS;
	pthread_mutex_lock(&lock);
	if (object_of(params->pRangeProfilerObject, "cuptiRangeProfilerCounterDataImageInitialize",
		      &rc)) {
		if (params->counterDataSize < FAKE_DATA_SIZE(0) || !params->pCounterData) {
			rc = refuse(CUPTI_ERROR_INVALID_PARAMETER,
				    "cuptiRangeProfilerCounterDataImageInitialize", "no image");
		} else {
			struct fake_data_image d = {
				FAKE_DATA_MAGIC,
				(uint32_t)((params->counterDataSize - FAKE_DATA_SIZE(0)) / 16), 0, 0,
				0, 0 };
			memset(params->pCounterData, 0, params->counterDataSize);
			memcpy(params->pCounterData, &d, sizeof(d));
		}
	}
	pthread_mutex_unlock(&lock);
	return rc;
}

CUptiResult cuptiRangeProfilerSetConfig(CUpti_RangeProfiler_SetConfig_Params *params)
{
	CUptiResult rc = CUPTI_SUCCESS;
	pthread_mutex_lock(&lock);
	struct object *o = object_of(params->pRangeProfilerObject, "cuptiRangeProfilerSetConfig", &rc);
	struct fake_config_image c;
	struct fake_data_image d;
	if (!o) {
	} else if (o->started) {
		rc = refuse(CUPTI_ERROR_INVALID_OPERATION, "cuptiRangeProfilerSetConfig",
			    "a range is started");
	} else if (params->configSize < sizeof(c) || !params->pConfig ||
		   (memcpy(&c, params->pConfig, sizeof(c)), c.magic != FAKE_CONFIG_MAGIC)) {
		rc = refuse(CUPTI_ERROR_INVALID_PARAMETER, "cuptiRangeProfilerSetConfig",
			    "not a configuration image");
	} else if (params->counterDataImageSize < sizeof(d) || !params->pCounterDataImage ||
		   (memcpy(&d, params->pCounterDataImage, sizeof(d)), d.magic != FAKE_DATA_MAGIC)) {
		rc = refuse(CUPTI_ERROR_INVALID_PARAMETER, "cuptiRangeProfilerSetConfig",
			    "a counter data image not initialised");
	} else if (d.metrics != c.metrics) {
		rc = refuse(CUPTI_ERROR_INVALID_PARAMETER, "cuptiRangeProfilerSetConfig",
			    "a counter data image not sized for the configuration's metrics");
	} else if (params->range != CUPTI_AutoRange || params->replayMode != CUPTI_KernelReplay ||
		   params->maxRangesPerPass < 1 || params->numNestingLevels != 1) {
		rc = refuse(CUPTI_ERROR_INVALID_PARAMETER, "cuptiRangeProfilerSetConfig",
			    "not auto range and kernel replay, one level");
	} else {
		o->config_metrics = c.metrics;
		o->data = params->pCounterDataImage;
		o->data_size = params->counterDataImageSize;
		o->max_ranges = params->maxRangesPerPass;
		set_configs++;
	}
	pthread_mutex_unlock(&lock);
	return rc;
}

CUptiResult cuptiRangeProfilerStart(CUpti_RangeProfiler_Start_Params *params)
{
	CUptiResult rc = CUPTI_SUCCESS;
	pthread_mutex_lock(&lock);
	struct object *o = object_of(params->pRangeProfilerObject, "cuptiRangeProfilerStart", &rc);
	struct fake_data_image d;
	if (o && (!o->config_metrics || o->started || o->stopped))
		rc = refuse(CUPTI_ERROR_INVALID_OPERATION, "cuptiRangeProfilerStart",
			    !o->config_metrics ? "no configuration set" : "a range not decoded");
	else if (o && (memcpy(&d, o->data, sizeof(d)), d.magic != FAKE_DATA_MAGIC || d.ranges))
		rc = refuse(CUPTI_ERROR_INVALID_OPERATION, "cuptiRangeProfilerStart",
			    "the counter data image holds a decoded range: initialise it again");
	if (o && rc == CUPTI_SUCCESS) {
		o->started = 1;
		o->kernels = o->polluted = 0;
		o->partial = fail_next_replay;
		fail_next_replay = 0;
		o->number = ++ranges_started;
	}
	pthread_mutex_unlock(&lock);
	return rc;
}

CUptiResult cuptiRangeProfilerStop(CUpti_RangeProfiler_Stop_Params *params)
{
	CUptiResult rc = CUPTI_SUCCESS;
	pthread_mutex_lock(&lock);
	struct object *o = object_of(params->pRangeProfilerObject, "cuptiRangeProfilerStop", &rc);
	if (o && !o->started) {
		rc = refuse(CUPTI_ERROR_INVALID_OPERATION, "cuptiRangeProfilerStop",
			    "no range started");
	} else if (o) {
		o->started = 0;
		o->stopped = 1;
		params->passIndex = 0;
		params->targetNestingLevel = 1;
		params->isAllPassSubmitted = !o->partial;
	}
	pthread_mutex_unlock(&lock);
	return rc;
}

CUptiResult cuptiRangeProfilerDecodeData(CUpti_RangeProfiler_DecodeData_Params *params)
{
	CUptiResult rc = CUPTI_SUCCESS;
	pthread_mutex_lock(&lock);
	struct object *o = object_of(params->pRangeProfilerObject, "cuptiRangeProfilerDecodeData", &rc);
	if (o && !o->stopped) {
		rc = refuse(CUPTI_ERROR_INVALID_OPERATION, "cuptiRangeProfilerDecodeData",
			    "no range stopped");
	} else if (o) {
		struct fake_data_image d;
		memcpy(&d, o->data, sizeof(d));
		d.ranges = o->kernels < o->max_ranges ? o->kernels : (uint32_t)o->max_ranges;
		d.measured = o->number;
		d.polluted = o->polluted;
		d.partial = o->partial;
		memcpy(o->data, &d, sizeof(d));
		params->numOfRangeDropped = o->kernels > d.ranges ? o->kernels - d.ranges : 0;
		o->stopped = 0;
	}
	pthread_mutex_unlock(&lock);
	return rc;
}

CUptiResult cuptiRangeProfilerGetCounterDataInfo(CUpti_RangeProfiler_GetCounterDataInfo_Params *params)
{
	struct fake_data_image d;
	if (params->counterDataImageSize < sizeof(d) || !params->pCounterDataImage)
		return refuse(CUPTI_ERROR_INVALID_PARAMETER, "cuptiRangeProfilerGetCounterDataInfo",
			      "no image");
	memcpy(&d, params->pCounterDataImage, sizeof(d));
	if (d.magic != FAKE_DATA_MAGIC)
		return refuse(CUPTI_ERROR_INVALID_PARAMETER, "cuptiRangeProfilerGetCounterDataInfo",
			      "not a counter data image");
	params->numTotalRanges = d.ranges;
	return CUPTI_SUCCESS;
}
