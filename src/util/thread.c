/* Threads with a bounded stack (see thread.h). */
#include "util/thread.h"

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
