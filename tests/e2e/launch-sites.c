/* launch-sites: two functions of the program launch kernels of their own, a known number
 * of times, and copy a known number of times: light() launches `light` N times, heavy()
 * launches `heavy` (twice light's work per item) N/2 times, and reads its buffer back
 * once after each launch; with --threads, each runs on a thread of its own; with --fork,
 * a child made by fork() at the start does the same. What gpuprof trace
 * --launch-stacks attributes to each is checked against these counts.
 *
 *   launch-sites [-n N] [--threads] [--fork] */
#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../samples/opencl/common.h"

static const char *source =
	"__kernel void light(__global float *x, uint rounds)\n"
	"{ size_t i = get_global_id(0); float v = x[i];\n"
	"  for (uint r = 0; r < rounds; r++) v = v * 0.5f + 1.0f;\n"
	"  x[i] = v; }\n"
	"__kernel void heavy(__global float *x, uint rounds)\n"
	"{ size_t i = get_global_id(0); float v = x[i];\n"
	"  for (uint r = 0; r < 2 * rounds; r++) v = v * 0.5f + 1.0f;\n"
	"  x[i] = v; }\n";

#define ITEMS 16384

static struct sample s;
static unsigned long launches;

struct site {
	cl_command_queue queue;
	cl_kernel kernel;
	cl_mem buffer;
};

static void site_open(struct site *w, const char *name)
{
	cl_int rc;
	w->queue = clCreateCommandQueueWithProperties(s.context, s.device, NULL, &rc);
	CHECK(rc);
	w->kernel = clCreateKernel(s.program, name, &rc);
	CHECK(rc);
	w->buffer = clCreateBuffer(s.context, CL_MEM_READ_WRITE, ITEMS * sizeof(float), NULL, &rc);
	CHECK(rc);
	cl_uint rounds = 64;
	CHECK(clSetKernelArg(w->kernel, 0, sizeof(w->buffer), &w->buffer));
	CHECK(clSetKernelArg(w->kernel, 1, sizeof(rounds), &rounds));
}

static void site_close(struct site *w)
{
	clReleaseMemObject(w->buffer);
	clReleaseKernel(w->kernel);
	clReleaseCommandQueue(w->queue);
}

__attribute__((noinline)) static void light(struct site *w)
{
	size_t global = ITEMS;
	for (unsigned long i = 0; i < launches; i++)
		CHECK(clEnqueueNDRangeKernel(w->queue, w->kernel, 1, NULL, &global, NULL, 0, NULL,
					     NULL));
	CHECK(clFinish(w->queue));
}

__attribute__((noinline)) static void heavy(struct site *w)
{
	size_t global = ITEMS;
	static float back[ITEMS];
	for (unsigned long i = 0; i < launches / 2; i++) {
		CHECK(clEnqueueNDRangeKernel(w->queue, w->kernel, 1, NULL, &global, NULL, 0, NULL,
					     NULL));
		CHECK(clEnqueueReadBuffer(w->queue, w->buffer, CL_TRUE, 0, sizeof(back), back, 0,
					  NULL, NULL));
	}
	CHECK(clFinish(w->queue));
}

static void *light_thread(void *arg)
{
	light(arg);
	return NULL;
}

static void *heavy_thread(void *arg)
{
	heavy(arg);
	return NULL;
}

static void run(int threads)
{
	struct site a, b;
	site_open(&a, "light");
	site_open(&b, "heavy");
	if (threads) {
		pthread_t t[2];
		pthread_create(&t[0], NULL, light_thread, &a);
		pthread_create(&t[1], NULL, heavy_thread, &b);
		pthread_join(t[0], NULL);
		pthread_join(t[1], NULL);
	} else {
		light(&a);
		heavy(&b);
	}
	site_close(&a);
	site_close(&b);
}

int main(int argc, char **argv)
{
	launches = sample_value(argc, argv, "-n", 20);
	int threads = sample_flag(argc, argv, "--threads");
	/* before OpenCL starts: a child cannot use the runtime its parent started (its
	 * threads stay behind) */
	pid_t child = sample_flag(argc, argv, "--fork") ? fork() : -1;
	sample_open(&s, source);
	run(threads);
	sample_close(&s);
	if (child == 0)
		_exit(0);
	if (child > 0) {
		int status = 0;
		waitpid(child, &status, 0);
		if (!WIFEXITED(status) || WEXITSTATUS(status))
			return 1;
	}
	printf("launch-sites: %lu light, %lu heavy launches\n", launches, launches / 2);
	return 0;
}
