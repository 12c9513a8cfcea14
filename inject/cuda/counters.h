/* Hardware counters per kernel in the CUDA backend (see counters.c). */
#ifndef GPUPROF_INJECT_CUDA_COUNTERS_H
#define GPUPROF_INJECT_CUDA_COUNTERS_H

#include <cupti.h>

#include "translate.h"

/* Reads GPUPROF_PMC and the kernel filters and starts CUPTI's profiler: 1 when counters
 * are to be collected, 0 when none were asked for, -1 when they cannot be (said on
 * stderr; the trace goes on without them). */
int counters_configure(void);

/* At each entry and exit of an API function that launches work, runtime or driver:
 * the kernel launches that the filters keep are measured, from the innermost launching
 * call's entry to its exit (the driver's inside a runtime launch), under the outermost
 * call's correlation id (the kernel record's); every launching call (a kernel, a graph,
 * a copy, a fill) waits while another thread's kernel is measured. */
void counters_callback(CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
		       const CUpti_CallbackData *data);

/* CUPTI's resource callbacks: a context being destroyed has its profiler disabled. */
void counters_resource(CUpti_CallbackId cbid, const void *data);

/* Emits the values read so far, on the recorder's writer thread: 0, or 1 when its
 * buffer filled first (call again). */
int counters_collect(struct translator *t);

/* The trace-clock window of the launch call in which the kernel of correlation_id was
 * measured (kernel replay gives it no times of its own): 1, once; 0 when none. */
int counters_launch_window(uint64_t correlation_id, uint64_t *start_ns, uint64_t *end_ns);

#endif
