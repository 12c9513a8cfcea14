/* The trace clock: CLOCK_MONOTONIC in nanoseconds, one domain per node. */
#ifndef GPUPROF_CORE_CLOCK_H
#define GPUPROF_CORE_CLOCK_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static inline uint64_t clock_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static inline uint64_t clock_realtime_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The trace-clock time a process began, from the text of its /proc/PID/stat (its start
 * time, in clock ticks since boot: steps of 10 ms); now when it cannot be told. */
static inline uint64_t clock_process_start_ns(char *stat, uint64_t now)
{
	char *p = stat ? strrchr(stat, ')') : NULL;
	unsigned long long ticks = 0;
	/* after the command: fields 3 to 21, then starttime */
	for (int field = 3; p && field <= 22; field++) {
		p = strchr(p + 1, ' ');
		if (p && field == 22)
			ticks = strtoull(p + 1, NULL, 10);
	}
	struct timespec boot;
	long hz = sysconf(_SC_CLK_TCK);
	if (!ticks || hz <= 0 || clock_gettime(CLOCK_BOOTTIME, &boot) < 0)
		return now;
	uint64_t boot_ns = (uint64_t)boot.tv_sec * 1000000000u + (uint64_t)boot.tv_nsec;
	uint64_t started = (uint64_t)ticks * (1000000000u / (uint64_t)hz);
	uint64_t age = boot_ns > started ? boot_ns - started : 0;
	return now > age ? now - age : now;
}

#endif
