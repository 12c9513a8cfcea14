/* clwait: a host thread that waits for the device, for the wall-clock sampling tests.
 *
 *   clwait [LOOPS]
 *
 * Builds a kernel that loops LOOPS times (default 400,000,000) in a single work-item,
 * enqueues it, and waits for it in clFinish(), called from wait_for_device(). Prints the
 * wall seconds clFinish took. Exits 1 when OpenCL fails. */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static const char *source =
	"__kernel void spin(__global float *out, int loops)\n"
	"{ float x = out[0]; for (int i = 0; i < loops; i++) x = x * 0.999999f + 0.5f;\n"
	"  out[0] = x; }\n";

static double wall_seconds(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

__attribute__((noinline)) cl_int wait_for_device(cl_command_queue queue)
{
	return clFinish(queue);
}

int main(int argc, char **argv)
{
	cl_int loops = argc > 1 ? atoi(argv[1]) : 400000000, rc;
	cl_platform_id platform;
	cl_device_id device;
	if (clGetPlatformIDs(1, &platform, NULL) ||
	    clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, NULL)) {
		fprintf(stderr, "clwait: no OpenCL device\n");
		return 1;
	}
	cl_context context = clCreateContext(NULL, 1, &device, NULL, NULL, &rc);
	cl_command_queue queue = clCreateCommandQueueWithProperties(context, device, NULL, &rc);
	cl_program program = clCreateProgramWithSource(context, 1, &source, NULL, &rc);
	if (clBuildProgram(program, 1, &device, "", NULL, NULL)) {
		fprintf(stderr, "clwait: the kernel does not build\n");
		return 1;
	}
	cl_kernel kernel = clCreateKernel(program, "spin", &rc);
	float zero = 0;
	cl_mem out = clCreateBuffer(context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof(zero),
				    &zero, &rc);
	clSetKernelArg(kernel, 0, sizeof(out), &out);
	clSetKernelArg(kernel, 1, sizeof(loops), &loops);
	size_t one = 1;
	rc = clEnqueueNDRangeKernel(queue, kernel, 1, NULL, &one, &one, 0, NULL, NULL);
	double start = wall_seconds();
	rc |= wait_for_device(queue);
	double waited = wall_seconds() - start;
	clReleaseMemObject(out);
	clReleaseKernel(kernel);
	clReleaseProgram(program);
	clReleaseCommandQueue(queue);
	clReleaseContext(context);
	if (rc) {
		fprintf(stderr, "clwait: OpenCL failed (%d)\n", rc);
		return 1;
	}
	printf("clwait: clFinish waited %.6f s\n", waited);
	return 0;
}
