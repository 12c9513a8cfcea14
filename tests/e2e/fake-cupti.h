/* What tests/e2e/fake-cupti.c (a stand-in for CUPTI) offers the replay that drives it. */
#ifndef GPUPROF_TESTS_FAKE_CUPTI_H
#define GPUPROF_TESTS_FAKE_CUPTI_H

#include <cupti.h>
#include <stddef.h>
#include <stdint.h>

/* One instruction's samples with one stall reason (index 10 or 11). */
struct fake_pc {
	uint64_t offset;
	const char *function;
	uint32_t reason, samples;
};

/* What one cuptiPCSamplingGetData call hands over. */
struct fake_pc_buffer {
	uint64_t total_samples, dropped_samples, other_samples;
	size_t remaining;           /* remainingNumPcs after this call */
	uint64_t range_id;
	const struct fake_pc *pcs;
	size_t pc_count;
};

/* Calls the subscriber's callback for an API call's entry or exit, as CUPTI would: only
 * when that callback is enabled (returns whether it fired). */
int fake_cupti_api(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, CUpti_ApiCallbackSite site,
		   uint32_t correlation_id, const char *symbol, const void *params,
		   CUcontext context);
/* Calls the subscriber's resource callback, when enabled: CONTEXT_CREATED makes the
 * context live (before it), DESTROY_STARTING ends it (after it). */
void fake_cupti_resource(CUpti_CallbackId cbid, CUcontext context);
/* Calls the resource callback GRAPHNODE_CREATED (node; original 0) or GRAPHNODE_CLONED
 * (node copied from original), when enabled: a kernel node, or a copy's. The node
 * handles are the nodes' ids. */
void fake_cupti_graph_node(CUpti_CallbackId cbid, uint64_t node, uint64_t original, int kernel);
/* Queues an activity record, handed over at the next cuptiActivityFlushAll. */
void fake_cupti_activity(const void *record, size_t size);
/* Ranges the profiler started; GetData calls refused for want of a current context. */
unsigned fake_cupti_ranges_started(void);
unsigned fake_cupti_get_data_refused(void);
/* The profiler (fake-cupti-profiler.c): configurations set, calls refused for their order
 * or an object's lifetime, counter availability images given. */
unsigned fake_cupti_set_configs(void);
unsigned fake_cupti_profiler_refused(void);
unsigned fake_cupti_availability_images(void);
/* Inside (1) or out of (0) the driver's initialisation, where the injection starts. */
void fake_cupti_driver_init(int inside);
/* The next range's kernel replay fails to submit every pass. */
void fake_cupti_fail_next_replay(void);
/* The buffers PC sampling's GetData hands over, in turn (kept by the caller). */
void fake_cupti_pc_sampling(const struct fake_pc_buffer *buffers, size_t count);

#endif
