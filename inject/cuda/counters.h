/* Hardware counters per kernel in the CUDA backend (see counters.c). */
#ifndef GPUPROF_INJECT_CUDA_COUNTERS_H
#define GPUPROF_INJECT_CUDA_COUNTERS_H

#include <cupti.h>

#include "translate.h"

/* Reads GPUPROF_PMC and the kernel filters and starts CUPTI's profiler: 1 when counters
 * are to be collected, 0 when none were asked for, -1 when they cannot be (said on
 * stderr; the trace goes on without them). */
int counters_configure(void);

/* The driver API launches to subscribe to, and what to do at each (entry and exit). */
extern const CUpti_CallbackId counters_launch_callbacks[];
extern const size_t counters_launch_callback_count;
void counters_callback(CUpti_CallbackId cbid, const CUpti_CallbackData *data);

/* Emits the values read so far, on the recorder's writer thread: 0, or 1 when its
 * buffer filled first (call again). */
int counters_collect(struct translator *t);

#endif
