/* The library hot-template loads with dlopen(): in_library(S) spins for S seconds of the
 * calling thread's CPU time. */
#include <time.h>

static volatile double sink;

__attribute__((noinline)) static void library_work(long n)
{
	for (long i = 0; i < n; i++)
		sink += (double)i * 0.25;
}

__attribute__((visibility("default"), noinline)) void in_library(double seconds)
{
	struct timespec t;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	double until = (double)t.tv_sec + (double)t.tv_nsec / 1e9 + seconds;
	do {
		library_work(100000);
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	} while ((double)t.tv_sec + (double)t.tv_nsec / 1e9 < until);
}
