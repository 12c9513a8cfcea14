/* Threads with a bounded stack (see thread.h). */
#include "util/thread.h"

#include <sched.h>
#include <unistd.h>

int thread_cpus(void)
{
	cpu_set_t set;
	if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0)
		return CPU_COUNT(&set);
	long online = sysconf(_SC_NPROCESSORS_ONLN);
	return online > 0 ? (int)online : 1;
}

int thread_create(pthread_t *thread, void *(*run)(void *), void *arg)
{
	pthread_attr_t attr;
	int rc = pthread_attr_init(&attr);
	if (rc)
		return rc;
	rc = pthread_attr_setstacksize(&attr, THREAD_STACK_BYTES);
	if (rc == 0)
		rc = pthread_create(thread, &attr, run, arg);
	pthread_attr_destroy(&attr);
	return rc;
}
