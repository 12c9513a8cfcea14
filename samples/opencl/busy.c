/* busy: a busier OpenCL workload for trying gpuprof on: three kernels, transfers in
 * every direction (write, read, copy, fill, map and unmap), two command queues and
 * launches from two threads.
 *
 *   busy [-n ELEMENTS] [-i ITERATIONS]
 *
 * Each of the two threads owns a queue and runs ITERATIONS rounds of:
 *   write A (host to device), fill B, scale(A -> B), add(A, B -> C), copy C -> D
 *   (device to device), square(D), read D (device to host)
 * and, once per thread, maps D for reading and unmaps it. So a run records, per
 * thread: 3*ITERATIONS kernels, ITERATIONS each of write, fill, copy and read, and
 * one map and one unmap. Exits 1 when a result is wrong. */
#define CL_TARGET_OPENCL_VERSION 300
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS /* clCreateCommandQueue: tested on purpose */
#include <CL/cl.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *source =
	"__kernel void scale(__global const float *a, __global float *b, float f)\n"
	"{ size_t i = get_global_id(0); b[i] = a[i] * f; }\n"
	"__kernel void add(__global const float *a, __global const float *b, __global float *c)\n"
	"{ size_t i = get_global_id(0); c[i] = a[i] + b[i]; }\n"
	"__kernel void square(__global float *d)\n"
	"{ size_t i = get_global_id(0); d[i] = d[i] * d[i]; }\n";

#define CHECK(call) \
	do { \
		cl_int rc_ = (call); \
		if (rc_ != CL_SUCCESS) { \
			fprintf(stderr, "busy: %s failed: %d\n", #call, rc_); \
			exit(1); \
		} \
	} while (0)

static cl_context context;
static cl_device_id device;
static cl_program program;
static size_t n = 65536;
static int iterations = 4;

struct worker {
	int index;
	int failed;
};

static void *work(void *arg)
{
	struct worker *w = arg;
	cl_int rc;
	cl_command_queue queue = clCreateCommandQueue(context, device, 0, &rc);
	CHECK(rc);
	cl_kernel scale = clCreateKernel(program, "scale", &rc);
	CHECK(rc);
	cl_kernel add = clCreateKernel(program, "add", &rc);
	CHECK(rc);
	cl_kernel square = clCreateKernel(program, "square", &rc);
	CHECK(rc);
	size_t bytes = n * sizeof(float);
	cl_mem a = clCreateBuffer(context, CL_MEM_READ_WRITE, bytes, NULL, &rc);
	CHECK(rc);
	cl_mem b = clCreateBuffer(context, CL_MEM_READ_WRITE, bytes, NULL, &rc);
	CHECK(rc);
	cl_mem c = clCreateBuffer(context, CL_MEM_READ_WRITE, bytes, NULL, &rc);
	CHECK(rc);
	cl_mem d = clCreateBuffer(context, CL_MEM_READ_WRITE, bytes, NULL, &rc);
	CHECK(rc);
	float *host = malloc(bytes);
	float factor = 2.0f, zero = 0.0f;
	for (size_t i = 0; i < n; i++)
		host[i] = (float)(i % 100) + (float)w->index;
	CHECK(clSetKernelArg(scale, 0, sizeof(a), &a));
	CHECK(clSetKernelArg(scale, 1, sizeof(b), &b));
	CHECK(clSetKernelArg(scale, 2, sizeof(factor), &factor));
	CHECK(clSetKernelArg(add, 0, sizeof(a), &a));
	CHECK(clSetKernelArg(add, 1, sizeof(b), &b));
	CHECK(clSetKernelArg(add, 2, sizeof(c), &c));
	CHECK(clSetKernelArg(square, 0, sizeof(d), &d));
	size_t global = n, local = 64;
	for (int it = 0; it < iterations; it++) {
		CHECK(clEnqueueWriteBuffer(queue, a, CL_FALSE, 0, bytes, host, 0, NULL, NULL));
		CHECK(clEnqueueFillBuffer(queue, b, &zero, sizeof(zero), 0, bytes, 0, NULL, NULL));
		CHECK(clEnqueueNDRangeKernel(queue, scale, 1, NULL, &global, &local, 0, NULL, NULL));
		CHECK(clEnqueueNDRangeKernel(queue, add, 1, NULL, &global, &local, 0, NULL, NULL));
		CHECK(clEnqueueCopyBuffer(queue, c, d, 0, 0, bytes, 0, NULL, NULL));
		CHECK(clEnqueueNDRangeKernel(queue, square, 1, NULL, &global, NULL, 0, NULL, NULL));
		float *out = malloc(bytes);
		CHECK(clEnqueueReadBuffer(queue, d, CL_TRUE, 0, bytes, out, 0, NULL, NULL));
		for (size_t i = 0; i < n; i++) {
			float expect = host[i] * 3.0f;
			if (out[i] != expect * expect)
				w->failed = 1;
		}
		free(out);
	}
	float *mapped = clEnqueueMapBuffer(queue, d, CL_TRUE, CL_MAP_READ, 0, bytes, 0, NULL,
					   NULL, &rc);
	CHECK(rc);
	if (mapped[1] != (host[1] * 3.0f) * (host[1] * 3.0f))
		w->failed = 1;
	CHECK(clEnqueueUnmapMemObject(queue, d, mapped, 0, NULL, NULL));
	CHECK(clFinish(queue));
	free(host);
	clReleaseMemObject(a);
	clReleaseMemObject(b);
	clReleaseMemObject(c);
	clReleaseMemObject(d);
	clReleaseKernel(scale);
	clReleaseKernel(add);
	clReleaseKernel(square);
	clReleaseCommandQueue(queue);
	return NULL;
}

int main(int argc, char **argv)
{
	int opt;
	while ((opt = getopt(argc, argv, "n:i:h")) != -1) {
		switch (opt) {
		case 'n': n = strtoul(optarg, NULL, 10); break;
		case 'i': iterations = atoi(optarg); break;
		default:
			fprintf(stderr, "usage: busy [-n ELEMENTS] [-i ITERATIONS]\n");
			return opt == 'h' ? 0 : 2;
		}
	}
	n = (n + 63) / 64 * 64;
	cl_platform_id platform;
	cl_int rc;
	CHECK(clGetPlatformIDs(1, &platform, NULL));
	CHECK(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, NULL));
	context = clCreateContext(NULL, 1, &device, NULL, NULL, &rc);
	CHECK(rc);
	program = clCreateProgramWithSource(context, 1, &source, NULL, &rc);
	CHECK(rc);
	CHECK(clBuildProgram(program, 1, &device, "", NULL, NULL));
	pthread_t threads[2];
	struct worker workers[2] = { { 0, 0 }, { 1, 0 } };
	for (int i = 0; i < 2; i++)
		pthread_create(&threads[i], NULL, work, &workers[i]);
	for (int i = 0; i < 2; i++)
		pthread_join(threads[i], NULL);
	clReleaseProgram(program);
	clReleaseContext(context);
	if (workers[0].failed || workers[1].failed) {
		fprintf(stderr, "busy: wrong results\n");
		return 1;
	}
	printf("busy: 2 threads x %d iterations on %zu elements: ok\n", iterations, n);
	return 0;
}
