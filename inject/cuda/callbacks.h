/* CUPTI's API functions of both domains, by their callback ids, for the parts of the CUDA
 * backend that subscribe to some of them by name (cuda.c: launches, allocations;
 * graphs.c: the calls that copy graph nodes). */
#ifndef GPUPROF_INJECT_CUDA_CALLBACKS_H
#define GPUPROF_INJECT_CUDA_CALLBACKS_H

#include <cupti.h>
#include <stdint.h>

/* The runtime's and the driver's, as indexes; MAX_CBID is above both domains' CBID_SIZE
 * in CUPTI 13. */
enum { CALLBACK_RUNTIME, CALLBACK_DRIVER, CALLBACK_DOMAINS };
#define CALLBACK_MAX_CBID 1024

/* Calls visit for every function CUPTI names in both domains (index d, its callback id
 * and name); visit returns 1 to have its callback enabled. Returns how many were. */
static inline int callback_each(CUpti_SubscriberHandle subscriber,
				int (*visit)(int d, uint32_t cbid, const char *name, void *arg),
				void *arg)
{
	static const CUpti_CallbackDomain domains[CALLBACK_DOMAINS] = {
		[CALLBACK_RUNTIME] = CUPTI_CB_DOMAIN_RUNTIME_API,
		[CALLBACK_DRIVER] = CUPTI_CB_DOMAIN_DRIVER_API };
	static const uint32_t sizes[CALLBACK_DOMAINS] = {
		[CALLBACK_RUNTIME] = CUPTI_RUNTIME_TRACE_CBID_SIZE,
		[CALLBACK_DRIVER] = CUPTI_DRIVER_TRACE_CBID_SIZE };
	int enabled = 0;
	for (int d = 0; d < CALLBACK_DOMAINS; d++)
		for (uint32_t cbid = 1; cbid < sizes[d] && cbid < CALLBACK_MAX_CBID; cbid++) {
			const char *name = NULL;
			if (cuptiGetCallbackName(domains[d], cbid, &name) == CUPTI_SUCCESS && name &&
			    visit(d, cbid, name, arg) &&
			    cuptiEnableCallback(1, subscriber, domains[d], cbid) == CUPTI_SUCCESS)
				enabled++;
		}
	return enabled;
}

#endif
