/* markers: the cost of one gpuprof_range_push/gpuprof_range_pop pair, in ns, in
 * whatever environment it runs: bench/run.sh runs it alone (no profiler: the calls
 * return at once) and under `gpuprof trace --marker-trace` (each pair is recorded).
 *
 *   markers PAIRS */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "gpuprof/markers.h"

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

int main(int argc, char **argv)
{
	long pairs = argc > 1 ? atol(argv[1]) : 1000000;
	gpuprof_range_push("warm-up"); /* the first call finds (or not) the recorder */
	gpuprof_range_pop();
	double start = now();
	for (long i = 0; i < pairs; i++) {
		gpuprof_range_push("step");
		gpuprof_range_pop();
	}
	printf("%.1f\n", (now() - start) / (double)pairs);
	return 0;
}
