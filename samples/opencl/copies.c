/* copies: a copy-heavy loop: CHUNKS chunks of BYTES bytes, each written to the device,
 * doubled by a kernel and read back, all on one in-order queue: many small copies, and
 * copies that wait for kernels and kernels that wait for copies. --fixed writes the
 * whole data at once, runs one kernel over it and reads it back once.
 *
 *   copies [--fixed] [-s BYTES] [-i CHUNKS]
 *
 * Prints the wall time. Exits 1 when OpenCL fails or a result is wrong. */
#include "common.h"

/* a kernel that computes as long as a chunk takes to copy: rounds of v * one + zero,
 * which the compiler cannot fold (one and zero come at run time) and which leave v */
static const char *source =
	"__kernel void twice(__global float *x, float one, float zero, uint rounds)\n"
	"{ size_t i = get_global_id(0); float v = x[i];\n"
	"  for (uint r = 0; r < rounds; r++) v = v * one + zero;\n"
	"  x[i] = 2.0f * v; }\n";

int main(int argc, char **argv)
{
	int fixed = sample_flag(argc, argv, "--fixed");
	size_t chunk = sample_value(argc, argv, "-s", 16384);
	size_t chunks = sample_value(argc, argv, "-i", 300);
	chunk -= chunk % sizeof(float);
	if (!chunk || !chunks) {
		fprintf(stderr, "usage: copies [--fixed] [-s BYTES] [-i CHUNKS]\n");
		return 2;
	}
	struct sample s;
	sample_open(&s, source);
	cl_int rc;
	cl_kernel kernel = clCreateKernel(s.program, "twice", &rc);
	CHECK(rc);
	size_t bytes = chunk * chunks, floats = bytes / sizeof(float);
	float *host = malloc(bytes);
	for (size_t i = 0; i < floats; i++)
		host[i] = (float)(i % 1000);
	cl_mem x = clCreateBuffer(s.context, CL_MEM_READ_WRITE, bytes, NULL, &rc);
	CHECK(rc);
	float one = 1.0f, zero = 0.0f;
	cl_uint rounds = 16;
	CHECK(clSetKernelArg(kernel, 0, sizeof(x), &x));
	CHECK(clSetKernelArg(kernel, 1, sizeof(one), &one));
	CHECK(clSetKernelArg(kernel, 2, sizeof(zero), &zero));
	CHECK(clSetKernelArg(kernel, 3, sizeof(rounds), &rounds));
	double start = sample_now_ms();
	size_t step = fixed ? bytes : chunk;
	for (size_t at = 0; at < bytes; at += step) {
		size_t offset = at / sizeof(float), global = step / sizeof(float);
		CHECK(clEnqueueWriteBuffer(s.queue, x, CL_FALSE, at, step, (char *)host + at, 0, NULL,
					   NULL));
		CHECK(clEnqueueNDRangeKernel(s.queue, kernel, 1, &offset, &global, NULL, 0, NULL,
					     NULL));
		CHECK(clEnqueueReadBuffer(s.queue, x, CL_FALSE, at, step, (char *)host + at, 0, NULL,
					  NULL));
	}
	CHECK(clFinish(s.queue));
	double ms = sample_now_ms() - start;
	int bad = 0;
	for (size_t i = 0; i < floats; i++)
		bad |= host[i] != 2.0f * (float)(i % 1000);
	clReleaseMemObject(x);
	clReleaseKernel(kernel);
	sample_close(&s);
	free(host);
	if (bad) {
		fprintf(stderr, "copies: a result is wrong\n");
		return 1;
	}
	printf("copies%s: %zu bytes in %zu chunk%s in %.3f ms\n", fixed ? " --fixed" : "", bytes,
	       fixed ? (size_t)1 : chunks, fixed || chunks == 1 ? "" : "s", ms);
	return 0;
}
