/* What the two files of the counter collection share (counters.c: the launches, the
 * lock, the values; counters-context.c: CUPTI's range profiler on each context). Nothing
 * of it leaves the CUDA backend. */
#ifndef GPUPROF_INJECT_CUDA_COUNTERS_INTERNAL_H
#define GPUPROF_INJECT_CUDA_COUNTERS_INTERNAL_H

#include <cupti.h>
#include <cupti_range_profiler.h>
#include <stddef.h>
#include <stdint.h>

#include "../cupti-host.h"

/* The metrics asked for, group by group (one group unless multiplexed), and the host
 * library's functions (libgpuprof-cupti-host.so), from counters.c. */
struct counters_group {
	size_t first, count; /* of counters_metrics */
};
extern const char *counters_metrics[];
extern struct counters_group counters_groups[];
extern size_t counters_group_count;
extern struct counters_host {
	void *library;
	host_open_device_fn open_device;
	host_close_fn close;
	host_config_fn config;
	host_evaluate_fn evaluate;
} counters_host;

/* One CUDA context measured: its profiler object, and per group a host object of its
 * own (a host object's configuration only grows: one per group keeps each group's
 * configuration to its metrics), the configuration and counter data images. */
struct counters_context {
	CUcontext ctx;
	int used;                   /* the slot holds a live context */
	uint32_t device;
	CUpti_RangeProfiler_Object *profiler;
	uint8_t *availability;      /* the counter availability image its hosts read */
	struct counters_images {
		void *host;
		uint8_t *config, *data;
		size_t config_size, data_size;
	} *images;
	size_t configured;          /* the group whose configuration is set; group_count:
				     * none yet */
	int broken;                 /* set up failed: its kernels get no counters */
};

/* The context's state, set up (said once where it cannot be) at its first measured
 * kernel; NULL when no slot is left. Under the launch lock. */
struct counters_context *counters_context_of(CUcontext ctx);

/* Starts a range for a kernel of the group: its configuration set where another was,
 * then the range started. 0, or -1 (said; the context is then broken). */
int counters_context_start(struct counters_context *c, size_t group);

/* Stops the range started, decodes it and reads the values of the group's metrics into
 * values: 0, or -1 when the range holds no whole measurement of one kernel (all the
 * passes submitted, one range, none dropped); the counter data is made ready for the
 * next range either way. */
int counters_context_finish(struct counters_context *c, size_t group, double *values);

/* The context is being destroyed (cuCtxDestroy, cudaDeviceReset): its profiler is
 * disabled and its slot freed, so that a new context at the same address starts anew.
 * Under the launch lock. */
void counters_context_destroyed(CUcontext ctx);

/* Says what failed, with CUPTI's words for rc. */
void counters_report(const char *what, CUptiResult rc);

#endif
