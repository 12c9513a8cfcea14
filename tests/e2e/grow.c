/* grow: an OpenCL program (it asks for the platforms, so that gpuprof records it) that
 * then takes memory step by step and touches every page: `grow MIB STEPS MS` takes MIB
 * MiB in STEPS equal steps, MS milliseconds apart, then holds it for MS milliseconds. */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void sleep_ms(long ms)
{
	struct timespec t = { ms / 1000, (ms % 1000) * 1000000 };
	nanosleep(&t, NULL);
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: grow MIB STEPS MS\n");
		return 2;
	}
	long mib = atol(argv[1]), steps = atol(argv[2]), ms = atol(argv[3]);
	cl_uint platforms = 0;
	if (clGetPlatformIDs(0, NULL, &platforms) != CL_SUCCESS)
		return 1;
	size_t step = (size_t)mib << 20;
	step /= (size_t)steps;
	char **blocks = calloc((size_t)steps, sizeof(*blocks));
	for (long i = 0; i < steps; i++) {
		blocks[i] = malloc(step);
		if (!blocks[i])
			return 1;
		memset(blocks[i], 1, step);
		sleep_ms(ms);
	}
	sleep_ms(ms);
	printf("grow: %ld MiB in %ld steps\n", mib, steps);
	for (long i = 0; i < steps; i++)
		free(blocks[i]);
	free(blocks);
	return 0;
}
