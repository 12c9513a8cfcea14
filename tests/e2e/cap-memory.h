/* For the test programs that run out of memory on purpose: caps the process's address
 * space (RLIMIT_AS) `headroom` bytes above what it maps now, so that malloc() fails soon
 * after. Returns setrlimit's result. */
#ifndef GPUPROF_TESTS_CAP_MEMORY_H
#define GPUPROF_TESTS_CAP_MEMORY_H

#include <stdio.h>
#include <sys/resource.h>
#include <unistd.h>

static inline int cap_address_space(unsigned long long headroom)
{
	unsigned long long pages = 0;
	FILE *f = fopen("/proc/self/statm", "r");
	if (f && fscanf(f, "%llu", &pages) != 1)
		pages = 0;
	if (f)
		fclose(f);
	struct rlimit cap;
	cap.rlim_cur = cap.rlim_max = pages * (unsigned long long)sysconf(_SC_PAGESIZE) + headroom;
	return setrlimit(RLIMIT_AS, &cap);
}

#endif
