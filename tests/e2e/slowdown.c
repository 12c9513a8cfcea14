/* slowdown: two kernels run ITERATIONS times each, every iteration inside a marker range
 * "step" (push/pop); --slower K gives the kernel "varied" K times the work, the kernel
 * "steady" stays the same. What gpuprof diff is tested on.
 *
 *   slowdown [--slower K] [-i ITERATIONS] */
#include "../../samples/opencl/common.h"
#include "gpuprof/markers.h"

static const char *source =
	"__kernel void steady(__global float *x, uint rounds)\n"
	"{ size_t i = get_global_id(0); float v = x[i];\n"
	"  for (uint r = 0; r < rounds; r++) v = v * 0.5f + 1.0f;\n"
	"  x[i] = v; }\n"
	"__kernel void varied(__global float *x, uint rounds)\n"
	"{ size_t i = get_global_id(0); float v = x[i];\n"
	"  for (uint r = 0; r < rounds; r++) v = v * 0.5f + 1.0f;\n"
	"  x[i] = v; }\n";

int main(int argc, char **argv)
{
	cl_uint slower = (cl_uint)sample_value(argc, argv, "--slower", 1);
	unsigned long iterations = sample_value(argc, argv, "-i", 60);
	struct sample s;
	sample_open(&s, source);
	cl_int rc;
	size_t global = 64, local = 64; /* one work-group: one of the CPU device's threads */
	cl_mem x = clCreateBuffer(s.context, CL_MEM_READ_WRITE, global * sizeof(float), NULL, &rc);
	CHECK(rc);
	cl_kernel kernels[2];
	cl_uint rounds[2] = { 16384, 16384 * slower };
	for (int k = 0; k < 2; k++) {
		kernels[k] = clCreateKernel(s.program, k ? "varied" : "steady", &rc);
		CHECK(rc);
		CHECK(clSetKernelArg(kernels[k], 0, sizeof(x), &x));
		CHECK(clSetKernelArg(kernels[k], 1, sizeof(cl_uint), &rounds[k]));
	}
	for (unsigned long i = 0; i < iterations; i++) {
		gpuprof_range_push("step");
		for (int k = 0; k < 2; k++)
			CHECK(clEnqueueNDRangeKernel(s.queue, kernels[k], 1, NULL, &global, &local, 0, NULL,
						     NULL));
		CHECK(clFinish(s.queue));
		gpuprof_range_pop();
	}
	for (int k = 0; k < 2; k++)
		clReleaseKernel(kernels[k]);
	clReleaseMemObject(x);
	sample_close(&s);
	printf("slowdown: %lu iterations, varied x%u\n", iterations, slower);
	return 0;
}
