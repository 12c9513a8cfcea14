/* The perf event that call-stack sampling opens (runtime/sampler.c), in one place, so that
 * `gpuprof avail` tries exactly what the recorder will: each thread's CPU time
 * (task-clock, a software event: no hardware PMU), user space only (allowed at
 * perf_event_paranoid 2), one sample per 1/frequency second of it, inherited by the
 * threads started later, removed on exec,
 * timed on the trace clock, copying the user registers in mask and `stack` bytes of
 * the stack. */
#ifndef GPUPROF_CORE_SAMPLE_EVENT_H
#define GPUPROF_CORE_SAMPLE_EVENT_H

#include <linux/perf_event.h>
#include <string.h>
#include <time.h>

static inline void sample_event_attr(struct perf_event_attr *a, unsigned frequency,
				     unsigned long long registers, unsigned stack)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->type = PERF_TYPE_SOFTWARE;
	a->config = PERF_COUNT_SW_TASK_CLOCK;
	/* a period of CPU time, not a frequency the kernel adapts the period to: task-clock
	 * counts nanoseconds, so the period is exact from the first sample, and a thread
	 * that starts later (its event inherited with the period of one that rarely ran)
	 * is sampled at the rate from its start, not after the kernel's adjustment (a
	 * thread of 0.3 s of CPU time got 39 to 70 % of its samples so) */
	a->sample_period = frequency ? 1000000000u / frequency : 1000000000u;
	a->sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_REGS_USER |
			 PERF_SAMPLE_STACK_USER;
	a->sample_regs_user = registers;
	a->sample_stack_user = stack;
	a->exclude_kernel = 1;
	a->exclude_hv = 1;
	a->inherit = 1;
	a->inherit_thread = 1;
	a->remove_on_exec = 1;
	a->use_clockid = 1;
	a->clockid = CLOCK_MONOTONIC; /* the trace clock */
	a->sample_id_all = 1; /* a lost-samples record says when and on which thread */
}

#endif
