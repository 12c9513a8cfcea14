/* CUPTI's range profiler on each CUDA context measured (see counters-internal.h), in the
 * order NVIDIA's callback_profiling sample and CUPTI 13's cupti_range_profiler.h give:
 * cuptiProfilerInitialize once, at the first context measured (inside cuInit, where the
 * injection starts, it fails on an H200); per context the counter availability image,
 * a host object and configuration image per group, Enable, the counter data images
 * sized and initialised; the configuration set once, and again only when a kernel
 * collects another group (multiplexing); per kernel Start, Stop, DecodeData, the range
 * count checked, the values evaluated, the counter data initialised again. A context
 * being destroyed has its profiler disabled. */
#include "counters-internal.h"

#include <cupti_profiler_target.h>
#include <cupti_target.h>

#include <stdlib.h>
#include <string.h>

#include "runtime/recorder.h"

#define MAX_CONTEXTS 64

static struct counters_context contexts[MAX_CONTEXTS];

void counters_report(const char *what, CUptiResult rc)
{
	const char *message = NULL;
	cuptiGetResultString(rc, &message);
	recorder_report("counters: %s: %s", what, message ? message : "CUPTI error");
}

/* CUPTI's profiler, started at the first context measured: 0, or -1 (said once). */
static int profiler_started(void)
{
	static int state; /* 0: not tried; 1: started; -1: failed */
	if (!state) {
		CUpti_Profiler_Initialize_Params init = {
			CUpti_Profiler_Initialize_Params_STRUCT_SIZE };
		CUptiResult rc = cuptiProfilerInitialize(&init);
		state = rc == CUPTI_SUCCESS ? 1 : -1;
		if (state < 0)
			counters_report("cannot start CUPTI's profiler; no counters are collected", rc);
	}
	return state > 0 ? 0 : -1;
}

/* Makes a group's counter data image ready for a range: 0, or -1 (said). */
static int initialize_data(struct counters_context *c, size_t group)
{
	struct counters_images *i = &c->images[group];
	CUpti_RangeProfiler_CounterDataImage_Initialize_Params init = {
		CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE };
	init.pRangeProfilerObject = c->profiler;
	init.counterDataSize = i->data_size;
	init.pCounterData = i->data;
	CUptiResult rc = cuptiRangeProfilerCounterDataImageInitialize(&init);
	if (rc != CUPTI_SUCCESS) {
		counters_report("cannot initialise the counter data", rc);
		return -1;
	}
	return 0;
}

/* The counter availability image of the context (NULL where CUPTI gives none: the host
 * objects then take every counter as available). */
static uint8_t *availability_of(CUcontext ctx)
{
	CUpti_Profiler_GetCounterAvailability_Params avail = {
		CUpti_Profiler_GetCounterAvailability_Params_STRUCT_SIZE };
	avail.ctx = ctx;
	uint8_t *image = NULL;
	if (cuptiProfilerGetCounterAvailability(&avail) == CUPTI_SUCCESS &&
	    (image = malloc(avail.counterAvailabilityImageSize))) {
		avail.pCounterAvailabilityImage = image;
		if (cuptiProfilerGetCounterAvailability(&avail) != CUPTI_SUCCESS) {
			free(image);
			image = NULL;
		}
	}
	return image;
}

/* Enables the range profiler on a context the first time one of its kernels is
 * measured: 0, or -1 (said). */
static int set_up(struct counters_context *c)
{
	if (profiler_started())
		return -1;
	CUptiResult rc = cuptiGetDeviceId(c->ctx, &c->device);
	if (rc != CUPTI_SUCCESS) {
		counters_report("cannot tell the device of a context", rc);
		return -1;
	}
	CUpti_Device_GetChipName_Params chip = { CUpti_Device_GetChipName_Params_STRUCT_SIZE };
	chip.deviceIndex = c->device;
	if ((rc = cuptiDeviceGetChipName(&chip)) != CUPTI_SUCCESS) {
		counters_report("cannot tell the device's chip", rc);
		return -1;
	}
	/* the host objects read the availability image as long as they live (freed early,
	 * it was read after its free: a segmentation fault in the first configuration on
	 * an H200): it lives as long as the context's profiler */
	c->availability = availability_of(c->ctx);
	c->images = calloc(counters_group_count, sizeof(*c->images));
	c->configured = counters_group_count;
	int configured = c->images != NULL;
	for (size_t g = 0; configured && g < counters_group_count; g++) {
		struct counters_images *i = &c->images[g];
		i->host = counters_host.open_device(chip.pChipName, c->availability);
		configured = i->host &&
			     counters_host.config(i->host, counters_metrics + counters_groups[g].first,
						  counters_groups[g].count, &i->config,
						  &i->config_size) == 0;
	}
	if (!configured) {
		recorder_report("counters: the metrics asked for cannot be collected on %s (one is "
				"not this chip's; `gpuprof compute profile --list-available-metrics "
				"--chip %s` lists them)", chip.pChipName, chip.pChipName);
		return -1;
	}
	CUpti_RangeProfiler_Enable_Params enable = { CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE };
	enable.ctx = c->ctx;
	if ((rc = cuptiRangeProfilerEnable(&enable)) != CUPTI_SUCCESS) {
		counters_report(rc == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES
				? "the driver does not let this user read the GPU's counters (NVIDIA's "
				  "RmProfilingAdminOnly: run as root, or set the driver option "
				  "NVreg_RestrictProfilingToAdminUsers=0)"
				: "cannot enable the range profiler", rc);
		return -1;
	}
	c->profiler = enable.pRangeProfilerObject;
	for (size_t g = 0; g < counters_group_count; g++) {
		CUpti_RangeProfiler_GetCounterDataSize_Params size = {
			CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE };
		size.pRangeProfilerObject = c->profiler;
		size.pMetricNames = counters_metrics + counters_groups[g].first;
		size.numMetrics = counters_groups[g].count;
		size.maxNumOfRanges = 1;
		size.maxNumRangeTreeNodes = 1;
		if ((rc = cuptiRangeProfilerGetCounterDataSize(&size)) != CUPTI_SUCCESS) {
			counters_report("cannot size the counter data", rc);
			return -1;
		}
		c->images[g].data_size = size.counterDataSize;
		if (!(c->images[g].data = malloc(size.counterDataSize)) || initialize_data(c, g))
			return -1;
	}
	return 0;
}

/* Frees what a context's state holds, its profiler disabled first. */
static void release(struct counters_context *c)
{
	if (c->profiler) {
		CUpti_RangeProfiler_Disable_Params disable = {
			CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE };
		disable.pRangeProfilerObject = c->profiler;
		cuptiRangeProfilerDisable(&disable);
	}
	for (size_t g = 0; c->images && g < counters_group_count; g++) {
		if (c->images[g].host)
			counters_host.close(c->images[g].host);
		free(c->images[g].config);
		free(c->images[g].data);
	}
	free(c->images);
	free(c->availability);
	memset(c, 0, sizeof(*c));
}

struct counters_context *counters_context_of(CUcontext ctx)
{
	struct counters_context *free_slot = NULL;
	for (int i = 0; i < MAX_CONTEXTS; i++) {
		if (contexts[i].used && contexts[i].ctx == ctx)
			return &contexts[i];
		if (!contexts[i].used && !free_slot)
			free_slot = &contexts[i];
	}
	if (!free_slot)
		return NULL;
	struct counters_context *c = free_slot;
	memset(c, 0, sizeof(*c));
	c->ctx = ctx;
	c->used = 1;
	c->broken = set_up(c) != 0;
	return c;
}

void counters_context_destroyed(CUcontext ctx)
{
	for (int i = 0; i < MAX_CONTEXTS; i++)
		if (contexts[i].used && contexts[i].ctx == ctx)
			release(&contexts[i]);
}

int counters_context_start(struct counters_context *c, size_t group)
{
	struct counters_images *i = &c->images[group];
	CUptiResult rc = CUPTI_SUCCESS;
	if (c->configured != group) {
		CUpti_RangeProfiler_SetConfig_Params set = {
			CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE };
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
		if ((rc = cuptiRangeProfilerSetConfig(&set)) != CUPTI_SUCCESS) {
			counters_report("cannot configure the range profiler", rc);
			c->broken = 1;
			return -1;
		}
		c->configured = group;
	}
	CUpti_RangeProfiler_Start_Params begin = { CUpti_RangeProfiler_Start_Params_STRUCT_SIZE };
	begin.pRangeProfilerObject = c->profiler;
	if ((rc = cuptiRangeProfilerStart(&begin)) != CUPTI_SUCCESS) {
		counters_report("cannot start the range profiler", rc);
		c->broken = 1;
		return -1;
	}
	return 0;
}

int counters_context_finish(struct counters_context *c, size_t group, double *values)
{
	const struct counters_group *g = &counters_groups[group];
	struct counters_images *i = &c->images[group];
	CUpti_RangeProfiler_Stop_Params stop = { CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE };
	stop.pRangeProfilerObject = c->profiler;
	CUptiResult rc = cuptiRangeProfilerStop(&stop);
	CUpti_RangeProfiler_DecodeData_Params decode = {
		CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE };
	decode.pRangeProfilerObject = c->profiler;
	if (rc == CUPTI_SUCCESS)
		rc = cuptiRangeProfilerDecodeData(&decode);
	CUpti_RangeProfiler_GetCounterDataInfo_Params info = {
		CUpti_RangeProfiler_GetCounterDataInfo_Params_STRUCT_SIZE };
	info.pCounterDataImage = i->data;
	info.counterDataImageSize = i->data_size;
	if (rc == CUPTI_SUCCESS)
		rc = cuptiRangeProfilerGetCounterDataInfo(&info);
	if (rc != CUPTI_SUCCESS)
		counters_report("cannot read a kernel's counters", rc);
	/* one kernel's range, every pass of it: a kernel replay that could not submit them
	 * all, a range dropped, or none (the launch ran nothing) is no measurement */
	int whole = rc == CUPTI_SUCCESS && stop.isAllPassSubmitted && !decode.numOfRangeDropped &&
		    info.numTotalRanges == 1 &&
		    counters_host.evaluate(i->host, i->data, i->data_size, 0,
					   counters_metrics + g->first, g->count, values) == 0;
	if (initialize_data(c, group))
		c->broken = 1;
	return whole ? 0 : -1;
}
