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
 * the kernel launches that the filters keep are measured, from the outermost launching
 * call's entry to its exit, under that call's correlation id. */
void counters_callback(CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
		       const CUpti_CallbackData *data);

/* Emits the values read so far, on the recorder's writer thread: 0, or 1 when its
 * buffer filled first (call again). */
int counters_collect(struct translator *t);

#endif
