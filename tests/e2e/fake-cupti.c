/* A stand-in for CUPTI (built as libcupti.so.13, found first through LD_LIBRARY_PATH), so
 * that the CUDA backend runs for real without a GPU: it keeps the subscriber's callback
 * and which callbacks are enabled, hands activity records over in buffers the backend
 * gives, and answers the profiler and PC sampling calls as CUPTI's documentation says.
 * tests/e2e/cupti-replay.c drives it through the fake_cupti_* functions below, replaying
 * what CUPTI does during a program's run: each API call's callbacks (only those enabled
 * fire: a runtime launch fires no driver callback), its activity records, its PC
 * sampling buffers. The profiler is fake-cupti-profiler.c's. Not part of gpuprof. */
#include <cupti.h>
#include <cupti_pcsampling.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_target.h>

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fake-cupti-internal.h"
#include "fake-cupti.h"

#define MAX_CBID 1024
#define MAX_RECORDS (1u << 20) /* bytes of activity records waiting for a flush */

static CUpti_CallbackFunc callback;
static void *callback_data;
static unsigned char enabled[CUPTI_CB_DOMAIN_SIZE][MAX_CBID];
static CUpti_BuffersCallbackRequestFunc request;
static CUpti_BuffersCallbackCompleteFunc complete;
static unsigned char records[MAX_RECORDS]; /* each: its size (u64), then the record */
static size_t records_used;
static pthread_mutex_t records_lock = PTHREAD_MUTEX_INITIALIZER; /* the replay's threads */
static unsigned get_data_refused;
static const struct fake_pc_buffer *pc_buffers;
static size_t pc_buffer_count, pc_buffer_next;

/* CUPTI's names of the functions the replays call (the others have none here). */
#define RUNTIME(name) { CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_##name, #name }
#define DRIVER(name) { CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_##name, #name }
static const struct {
	CUpti_CallbackDomain domain;
	CUpti_CallbackId cbid;
	const char *name;
} names[] = {
	RUNTIME(cudaMalloc_v3020), RUNTIME(cudaMemcpy_v3020), RUNTIME(cudaMemset_v3020),
	RUNTIME(cudaLaunchKernel_v7000), RUNTIME(cudaLaunchKernel_ptsz_v7000),
	RUNTIME(cudaLaunchHostFunc_v10000), RUNTIME(cudaGraphLaunch_v10000),
	RUNTIME(cudaLaunchKernelExC_v11060), RUNTIME(__cudaLaunchKernel_v13000),
	RUNTIME(cudaStreamSynchronize_v3020), RUNTIME(cudaProfilerStart_v4000),
	RUNTIME(cudaGraphInstantiate_v12000), RUNTIME(cudaGraphAddKernelNode_v10000),
	RUNTIME(cudaProfilerStop_v4000), DRIVER(cuLaunchKernel), DRIVER(cuMemcpyHtoD_v2),
	DRIVER(cuCtxSynchronize), DRIVER(cuProfilerStart), DRIVER(cuProfilerStop),
};

const char *fake_cupti_name_of(CUpti_CallbackDomain domain, CUpti_CallbackId cbid)
{
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (names[i].domain == domain && names[i].cbid == cbid)
			return names[i].name;
	return NULL;
}

/* ---- the replay's side ------------------------------------------------------------ */

int fake_cupti_api(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, CUpti_ApiCallbackSite site,
		   uint32_t correlation_id, const char *symbol, const void *params, CUcontext context)
{
	/* the call's work runs between its entry and exit callbacks */
	fake_profiler_call(domain, cbid, site, context);
	if (!callback || domain >= CUPTI_CB_DOMAIN_SIZE || cbid >= MAX_CBID || !enabled[domain][cbid])
		return 0;
	/* the callback's function name as cuptiGetCallbackName gives it, CUPTI's version
	 * suffix included (cudaLaunchKernel_v7000): gpuprof names the function without */
	CUpti_CallbackData data = {
		.callbackSite = site,
		.functionName = fake_cupti_name_of(domain, cbid),
		.functionParams = params,
		.correlationId = correlation_id,
		.symbolName = symbol,
		.context = context,
	};
	callback(callback_data, domain, cbid, &data);
	return 1;
}

void fake_cupti_resource(CUpti_CallbackId cbid, CUcontext context)
{
	if (cbid == CUPTI_CBID_RESOURCE_CONTEXT_CREATED)
		fake_profiler_context(context, 1);
	if (callback && enabled[CUPTI_CB_DOMAIN_RESOURCE][cbid]) {
		CUpti_ResourceData data = { .context = context };
		callback(callback_data, CUPTI_CB_DOMAIN_RESOURCE, cbid, &data);
	}
	/* the context is gone once its destruction's callbacks returned */
	if (cbid == CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING)
		fake_profiler_context(context, 0);
}

void fake_cupti_graph_node(CUpti_CallbackId cbid, uint64_t node, uint64_t original, int kernel)
{
	if (!callback || !enabled[CUPTI_CB_DOMAIN_RESOURCE][cbid])
		return;
	CUpti_GraphData graph = {
		.node = (CUgraphNode)(uintptr_t)node,
		.originalNode = (CUgraphNode)(uintptr_t)original,
		.nodeType = kernel ? CU_GRAPH_NODE_TYPE_KERNEL : CU_GRAPH_NODE_TYPE_MEMCPY,
	};
	CUpti_ResourceData data = { .resourceDescriptor = &graph };
	callback(callback_data, CUPTI_CB_DOMAIN_RESOURCE, cbid, &data);
}

/* A graph node's id: the stand-in's node handles are their ids. */
CUptiResult cuptiGetGraphNodeId(CUgraphNode node, uint64_t *id)
{
	*id = (uint64_t)(uintptr_t)node;
	return node ? CUPTI_SUCCESS : CUPTI_ERROR_INVALID_PARAMETER;
}

/* The activity kinds enabled: CUPTI records only those. */
#define MAX_KINDS 128
static unsigned char kinds[MAX_KINDS];

void fake_cupti_activity(const void *record, size_t size)
{
	CUpti_ActivityKind kind = ((const CUpti_Activity *)record)->kind;
	if ((unsigned)kind >= MAX_KINDS || !kinds[kind])
		return;
	size_t padded = (size + 7) & ~(size_t)7;
	pthread_mutex_lock(&records_lock);
	if (records_used + 8 + padded > MAX_RECORDS)
		abort(); /* a replay larger than the fake holds: a broken test */
	uint64_t n = padded;
	memcpy(records + records_used, &n, 8);
	memset(records + records_used + 8, 0, padded);
	memcpy(records + records_used + 8, record, size);
	records_used += 8 + padded;
	pthread_mutex_unlock(&records_lock);
}

unsigned fake_cupti_get_data_refused(void)
{
	return get_data_refused;
}

void fake_cupti_pc_sampling(const struct fake_pc_buffer *buffers, size_t count)
{
	pc_buffers = buffers;
	pc_buffer_count = count;
	pc_buffer_next = 0;
}

/* ---- CUPTI's interface ------------------------------------------------------------ */

CUptiResult cuptiGetVersion(uint32_t *version)
{
	*version = CUPTI_API_VERSION;
	return CUPTI_SUCCESS;
}

CUptiResult cuptiGetResultString(CUptiResult result, const char **str)
{
	*str = result == CUPTI_SUCCESS ? "CUPTI_SUCCESS" : "CUPTI_ERROR (fake)";
	return CUPTI_SUCCESS;
}

CUptiResult cuptiSubscribe_v2(CUpti_SubscriberHandle *subscriber, CUpti_CallbackFunc function,
			      void *userdata, CUpti_SubscriberParams *params)
{
	callback = function;
	callback_data = userdata;
	*subscriber = (CUpti_SubscriberHandle)&callback;
	return CUPTI_SUCCESS;
}

CUptiResult cuptiEnableCallback(uint32_t enable, CUpti_SubscriberHandle subscriber,
				CUpti_CallbackDomain domain, CUpti_CallbackId cbid)
{
	if (domain >= CUPTI_CB_DOMAIN_SIZE || cbid >= MAX_CBID)
		return CUPTI_ERROR_INVALID_PARAMETER;
	enabled[domain][cbid] = enable != 0;
	return CUPTI_SUCCESS;
}

CUptiResult cuptiEnableDomain(uint32_t enable, CUpti_SubscriberHandle subscriber,
			      CUpti_CallbackDomain domain)
{
	if (domain >= CUPTI_CB_DOMAIN_SIZE)
		return CUPTI_ERROR_INVALID_PARAMETER;
	memset(enabled[domain], enable != 0, MAX_CBID);
	return CUPTI_SUCCESS;
}

CUptiResult cuptiGetCallbackName(CUpti_CallbackDomain domain, uint32_t cbid, const char **name)
{
	*name = fake_cupti_name_of(domain, cbid);
	return *name ? CUPTI_SUCCESS : CUPTI_ERROR_INVALID_PARAMETER;
}

CUptiResult cuptiSetThreadIdType(CUpti_ActivityThreadIdType type)
{
	return CUPTI_SUCCESS;
}

CUptiResult cuptiGetTimestamp(uint64_t *timestamp)
{
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	*timestamp = (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
	return CUPTI_SUCCESS;
}

CUptiResult cuptiGetDeviceId(CUcontext context, uint32_t *device)
{
	*device = 0;
	return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityEnable(CUpti_ActivityKind kind)
{
	if ((unsigned)kind >= MAX_KINDS)
		return CUPTI_ERROR_INVALID_KIND;
	kinds[kind] = 1;
	return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityEnableAndDump(CUpti_ActivityKind kind)
{
	return cuptiActivityEnable(kind);
}

CUptiResult cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc requested,
					   CUpti_BuffersCallbackCompleteFunc completed)
{
	request = requested;
	complete = completed;
	return CUPTI_SUCCESS;
}

/* Every record waiting goes into buffers the backend gives, as many as it takes. */
CUptiResult cuptiActivityFlushAll(uint32_t flag)
{
	size_t done = 0;
	pthread_mutex_lock(&records_lock);
	while (done < records_used && request) {
		uint8_t *buffer = NULL;
		size_t size = 0, max_records = 0, valid = 0;
		request(&buffer, &size, &max_records);
		if (!buffer) {
			pthread_mutex_unlock(&records_lock);
			return CUPTI_ERROR_OUT_OF_MEMORY;
		}
		while (done < records_used) {
			uint64_t n;
			memcpy(&n, records + done, 8);
			if (valid + 8 + n > size)
				break;
			memcpy(buffer + valid, records + done, 8 + n);
			valid += 8 + n;
			done += 8 + n;
		}
		complete(NULL, 0, buffer, size, valid);
	}
	records_used = 0;
	pthread_mutex_unlock(&records_lock);
	return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityGetNextRecord(uint8_t *buffer, size_t valid, CUpti_Activity **record)
{
	size_t at = *record ? (size_t)((uint8_t *)*record - buffer) - 8 : 0;
	if (*record) {
		uint64_t n;
		memcpy(&n, buffer + at, 8);
		at += 8 + n;
	}
	if (at >= valid)
		return CUPTI_ERROR_MAX_LIMIT_REACHED;
	*record = (CUpti_Activity *)(buffer + at + 8);
	return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityGetNumDroppedRecords(CUcontext context, uint32_t stream, size_t *dropped)
{
	*dropped = 0;
	return CUPTI_SUCCESS;
}

CUptiResult cuptiGetCubinCrc(CUpti_GetCubinCrcParams *params)
{
	return CUPTI_ERROR_NOT_SUPPORTED;
}

CUptiResult cuptiGetSassToSourceCorrelation(CUpti_GetSassToSourceCorrelationParams *params)
{
	return CUPTI_ERROR_NOT_SUPPORTED;
}

/* ---- PC sampling: two stall reasons; GetData only where the context is current -------- */

static const char *const stall_names[] = { "smsp__pcsamp_warps_issue_stalled_long_scoreboard",
					   "smsp__pcsamp_warps_issue_stalled_selected" };

CUptiResult cuptiPCSamplingGetNumStallReasons(CUpti_PCSamplingGetNumStallReasonsParams *params)
{
	*params->numStallReasons = 2;
	return CUPTI_SUCCESS;
}

CUptiResult cuptiPCSamplingGetStallReasons(CUpti_PCSamplingGetStallReasonsParams *params)
{
	for (size_t i = 0; i < params->numStallReasons && i < 2; i++) {
		params->stallReasonIndex[i] = (uint32_t)(10 + i);
		snprintf(params->stallReasons[i], CUPTI_STALL_REASON_STRING_SIZE, "%s", stall_names[i]);
	}
	return CUPTI_SUCCESS;
}

CUptiResult cuptiPCSamplingSetConfigurationAttribute(CUpti_PCSamplingConfigurationInfoParams *params)
{
	return CUPTI_SUCCESS;
}

CUptiResult cuptiPCSamplingGetConfigurationAttribute(CUpti_PCSamplingConfigurationInfoParams *params)
{
	for (size_t i = 0; i < params->numAttributes; i++)
		if (params->pPCSamplingConfigurationInfo[i].attributeType ==
		    CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SAMPLING_PERIOD)
			params->pPCSamplingConfigurationInfo[i].attributeData.samplingPeriodData
				.samplingPeriod = 17;
	return CUPTI_SUCCESS;
}

CUptiResult cuptiPCSamplingEnable(CUpti_PCSamplingEnableParams *params)
{
	return CUPTI_SUCCESS;
}

CUptiResult cuptiPCSamplingDisable(CUpti_PCSamplingDisableParams *params)
{
	return CUPTI_SUCCESS;
}

/* Hands over the next buffer the replay set, with its totals and remainingNumPcs as
 * given; refused, as a call on a thread where the context is not current, otherwise. */
CUptiResult cuptiPCSamplingGetData(CUpti_PCSamplingGetDataParams *params)
{
	CUresult (*current)(CUcontext *) = (CUresult(*)(CUcontext *))dlsym(RTLD_DEFAULT,
									  "cuCtxGetCurrent");
	CUcontext context = NULL;
	if (!current || current(&context) != CUDA_SUCCESS || context != params->ctx) {
		get_data_refused++;
		return CUPTI_ERROR_INVALID_CONTEXT;
	}
	CUpti_PCSamplingData *d = params->pcSamplingData;
	d->totalNumPcs = d->remainingNumPcs = 0;
	d->totalSamples = d->droppedSamples = d->nonUsrKernelsTotalSamples = 0;
	if (pc_buffer_next == pc_buffer_count)
		return CUPTI_SUCCESS;
	const struct fake_pc_buffer *b = &pc_buffers[pc_buffer_next++];
	d->totalSamples = b->total_samples;
	d->droppedSamples = b->dropped_samples;
	d->nonUsrKernelsTotalSamples = b->other_samples;
	d->remainingNumPcs = b->remaining;
	d->rangeId = b->range_id;
	for (size_t i = 0; i < b->pc_count && i < d->collectNumPcs; i++) {
		CUpti_PCSamplingPCData *pc = &d->pPcData[i];
		pc->pcOffset = b->pcs[i].offset;
		pc->functionName = (char *)b->pcs[i].function;
		pc->cubinCrc = 0x1234;
		pc->stallReasonCount = 1;
		pc->stallReason[0].pcSamplingStallReasonIndex = b->pcs[i].reason;
		pc->stallReason[0].samples = b->pcs[i].samples;
		d->totalNumPcs++;
	}
	return CUPTI_SUCCESS;
}
