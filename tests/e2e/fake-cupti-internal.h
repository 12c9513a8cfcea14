/* What the two files of the stand-in for CUPTI share (fake-cupti.c: callbacks, activity,
 * PC sampling; fake-cupti-profiler.c: the profiler). Not part of gpuprof. */
#ifndef GPUPROF_TESTS_FAKE_CUPTI_INTERNAL_H
#define GPUPROF_TESTS_FAKE_CUPTI_INTERNAL_H

#include <cupti.h>

/* CUPTI's name of a runtime or driver function, NULL where the stand-in has none. */
const char *fake_cupti_name_of(CUpti_CallbackDomain domain, CUpti_CallbackId cbid);

/* An API call of the program enters (before its entry callback) or returns (before its
 * exit callback): what it launches runs on the device meanwhile, into the ranges the
 * profiler has started on its context. */
void fake_profiler_call(CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
			CUpti_ApiCallbackSite site, CUcontext context);

/* A context created, or destroyed (after its DESTROY_STARTING callbacks). */
void fake_profiler_context(CUcontext context, int alive);

#endif
