/* shared-queue: two threads enqueue ITERATIONS kernels each onto one in-order queue they
 * share, which runs them one after the other; --own gives each thread its own queue.
 *
 *   shared-queue [--own] [-i ITERATIONS] */
#include <pthread.h>

#include "../../samples/opencl/common.h"

static const char *source =
	"__kernel void work(__global float *x, uint rounds)\n"
	"{ size_t i = get_global_id(0); float v = x[i];\n"
	"  for (uint r = 0; r < rounds; r++) v = v * 0.5f + 1.0f;\n"
	"  x[i] = v; }\n";

static struct sample s;
static unsigned long iterations;

struct worker {
	cl_command_queue queue;
	cl_kernel kernel;
	cl_mem buffer;
};

static void *run(void *arg)
{
	struct worker *w = arg;
	size_t global = 65536;
	for (unsigned long i = 0; i < iterations; i++)
		CHECK(clEnqueueNDRangeKernel(w->queue, w->kernel, 1, NULL, &global, NULL, 0, NULL,
					     NULL));
	CHECK(clFinish(w->queue));
	return NULL;
}

int main(int argc, char **argv)
{
	int own = sample_flag(argc, argv, "--own");
	iterations = sample_value(argc, argv, "-i", 20);
	sample_open(&s, source);
	struct worker workers[2];
	pthread_t threads[2];
	cl_int rc;
	cl_uint rounds = 64;
	for (int t = 0; t < 2; t++) {
		workers[t].queue = s.queue;
		if (own) {
			workers[t].queue = clCreateCommandQueueWithProperties(s.context, s.device, NULL,
									      &rc);
			CHECK(rc);
		}
		workers[t].kernel = clCreateKernel(s.program, "work", &rc);
		CHECK(rc);
		workers[t].buffer = clCreateBuffer(s.context, CL_MEM_READ_WRITE, 65536 * sizeof(float),
						   NULL, &rc);
		CHECK(rc);
		CHECK(clSetKernelArg(workers[t].kernel, 0, sizeof(cl_mem), &workers[t].buffer));
		CHECK(clSetKernelArg(workers[t].kernel, 1, sizeof(rounds), &rounds));
	}
	for (int t = 0; t < 2; t++)
		pthread_create(&threads[t], NULL, run, &workers[t]);
	for (int t = 0; t < 2; t++)
		pthread_join(threads[t], NULL);
	for (int t = 0; t < 2; t++) {
		clReleaseMemObject(workers[t].buffer);
		clReleaseKernel(workers[t].kernel);
		if (own)
			clReleaseCommandQueue(workers[t].queue);
	}
	sample_close(&s);
	printf("shared-queue%s: 2 threads x %lu kernels\n", own ? " --own" : "", iterations);
	return 0;
}
