/* launchbound: kernels so short that launching them takes longer than running them
 * (seed 001: the GPU starves). LAUNCHES kernels each scale ELEMENTS floats, launched
 * back to back and waited for once; the device idles between them while the host
 * launches the next. --fixed does the same work in one launch over LAUNCHES x ELEMENTS
 * floats.
 *
 *   launchbound [--fixed] [-n ELEMENTS] [-i LAUNCHES]
 *
 * Prints the wall time. Exits 1 when OpenCL fails or a result is wrong. */
#include "common.h"

static const char *source =
	"__kernel void scale(__global float *x, uint offset)\n"
	"{ x[offset + get_global_id(0)] *= 2.0f; }\n";

int main(int argc, char **argv)
{
	int fixed = sample_flag(argc, argv, "--fixed");
	cl_uint n = (cl_uint)sample_value(argc, argv, "-n", 64);
	cl_uint launches = (cl_uint)sample_value(argc, argv, "-i", 2000);
	if (!n || !launches) {
		fprintf(stderr, "usage: launchbound [--fixed] [-n ELEMENTS] [-i LAUNCHES]\n");
		return 2;
	}
	struct sample s;
	sample_open(&s, source);
	cl_int rc;
	cl_kernel kernel = clCreateKernel(s.program, "scale", &rc);
	CHECK(rc);
	size_t total = (size_t)n * launches, bytes = total * sizeof(float);
	float *host = malloc(bytes);
	for (size_t i = 0; i < total; i++)
		host[i] = 1.0f;
	cl_mem x = clCreateBuffer(s.context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, bytes, host,
				  &rc);
	CHECK(rc);
	CHECK(clSetKernelArg(kernel, 0, sizeof(x), &x));
	double start = sample_now_ms();
	if (fixed) {
		cl_uint offset = 0;
		CHECK(clSetKernelArg(kernel, 1, sizeof(offset), &offset));
		CHECK(clEnqueueNDRangeKernel(s.queue, kernel, 1, NULL, &total, NULL, 0, NULL, NULL));
	} else {
		size_t global = n;
		for (cl_uint i = 0; i < launches; i++) {
			cl_uint offset = i * n;
			CHECK(clSetKernelArg(kernel, 1, sizeof(offset), &offset));
			CHECK(clEnqueueNDRangeKernel(s.queue, kernel, 1, NULL, &global, NULL, 0, NULL,
						     NULL));
		}
	}
	CHECK(clFinish(s.queue));
	double ms = sample_now_ms() - start;
	CHECK(clEnqueueReadBuffer(s.queue, x, CL_TRUE, 0, bytes, host, 0, NULL, NULL));
	int bad = 0;
	for (size_t i = 0; i < total; i++)
		bad |= host[i] != 2.0f;
	clReleaseMemObject(x);
	clReleaseKernel(kernel);
	sample_close(&s);
	free(host);
	if (bad) {
		fprintf(stderr, "launchbound: a result is wrong\n");
		return 1;
	}
	printf("launchbound%s: %u x %u elements in %.3f ms\n", fixed ? " --fixed" : "",
	       fixed ? 1 : launches, fixed ? (cl_uint)total : n, ms);
	return 0;
}
