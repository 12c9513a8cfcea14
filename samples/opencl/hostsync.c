/* hostsync: the host-synchronisation example of the ROCm profiling guides (seed 004), for
 * OpenCL. A copy kernel runs ITERATIONS times over ELEMENTS floats; by default the host
 * waits for the device (clFinish) after every launch, which leaves the device idle
 * between kernels. --fixed waits once, after the loop, and the kernels run back to back.
 *
 *   hostsync [--fixed] [-n ELEMENTS] [-i ITERATIONS]
 *
 * Prints the loop's wall time. Exits 1 when OpenCL fails or the copy is wrong. */
#include "common.h"

static const char *source =
	"__kernel void mycopy(__global float *dst, __global const float *src, uint n)\n"
	"{ size_t i = get_global_id(0); if (i < n) dst[i] = src[i]; }\n";

int main(int argc, char **argv)
{
	int fixed = sample_flag(argc, argv, "--fixed");
	cl_uint n = (cl_uint)sample_value(argc, argv, "-n", 1048576);
	unsigned long iterations = sample_value(argc, argv, "-i", 200);
	if (!n || !iterations) {
		fprintf(stderr, "usage: hostsync [--fixed] [-n ELEMENTS] [-i ITERATIONS]\n");
		return 2;
	}
	struct sample s;
	sample_open(&s, source);
	cl_int rc;
	cl_kernel kernel = clCreateKernel(s.program, "mycopy", &rc);
	CHECK(rc);
	size_t bytes = n * sizeof(float);
	float *host = malloc(bytes);
	for (cl_uint i = 0; i < n; i++)
		host[i] = (float)i;
	cl_mem src = clCreateBuffer(s.context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, bytes,
				    host, &rc);
	CHECK(rc);
	cl_mem dst = clCreateBuffer(s.context, CL_MEM_WRITE_ONLY, bytes, NULL, &rc);
	CHECK(rc);
	CHECK(clSetKernelArg(kernel, 0, sizeof(dst), &dst));
	CHECK(clSetKernelArg(kernel, 1, sizeof(src), &src));
	CHECK(clSetKernelArg(kernel, 2, sizeof(n), &n));
	size_t global = n;
	double start = sample_now_ms();
	for (unsigned long i = 0; i < iterations; i++) {
		CHECK(clEnqueueNDRangeKernel(s.queue, kernel, 1, NULL, &global, NULL, 0, NULL, NULL));
		if (!fixed)
			CHECK(clFinish(s.queue));
	}
	CHECK(clFinish(s.queue));
	double ms = sample_now_ms() - start;
	memset(host, 0, bytes);
	CHECK(clEnqueueReadBuffer(s.queue, dst, CL_TRUE, 0, bytes, host, 0, NULL, NULL));
	int bad = 0;
	for (cl_uint i = 0; i < n; i++)
		bad |= host[i] != (float)i;
	clReleaseMemObject(src);
	clReleaseMemObject(dst);
	clReleaseKernel(kernel);
	sample_close(&s);
	free(host);
	if (bad) {
		fprintf(stderr, "hostsync: the copy is wrong\n");
		return 1;
	}
	printf("hostsync%s: %lu kernels in %.3f ms\n", fixed ? " --fixed" : "", iterations, ms);
	return 0;
}
