/* launches: the launch-bound workload of the overhead benchmark. Launches N tiny
 * kernels on one queue and prints the time the loop took (from the first launch until
 * every kernel finished), in ns, on stdout.
 *
 *   launches N plain   the application as written: no profiling, no events
 *   launches N floor   what any OpenCL tracer must at least do: a profiling queue and,
 *                      per launch, one event created, its timestamps read, released */
#define CL_TARGET_OPENCL_VERSION 300
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#include <CL/cl.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *source = "__kernel void empty(__global int *x) { if (x[0] == 42) x[1] = 1; }";

static unsigned long long now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

int main(int argc, char **argv)
{
	if (argc != 3 || (strcmp(argv[2], "plain") && strcmp(argv[2], "floor"))) {
		fprintf(stderr, "usage: launches N plain|floor\n");
		return 2;
	}
	int n = atoi(argv[1]);
	int floor = !strcmp(argv[2], "floor");
	cl_platform_id platform;
	cl_device_id device;
	cl_int rc;
	if (clGetPlatformIDs(1, &platform, NULL) ||
	    clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, NULL))
		return 3;
	cl_context context = clCreateContext(NULL, 1, &device, NULL, NULL, &rc);
	cl_command_queue queue = clCreateCommandQueue(
		context, device, floor ? CL_QUEUE_PROFILING_ENABLE : 0, &rc);
	cl_program program = clCreateProgramWithSource(context, 1, &source, NULL, &rc);
	if (clBuildProgram(program, 1, &device, "", NULL, NULL))
		return 3;
	cl_kernel kernel = clCreateKernel(program, "empty", &rc);
	int zero[4] = { 0 };
	cl_mem buffer = clCreateBuffer(context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
				       sizeof(zero), zero, &rc);
	clSetKernelArg(kernel, 0, sizeof(buffer), &buffer);
	size_t global = 1, local = 1;
	/* warm up: the first launch compiles the kernel for the work-group size */
	clEnqueueNDRangeKernel(queue, kernel, 1, NULL, &global, &local, 0, NULL, NULL);
	clFinish(queue);

	cl_event *events = floor ? calloc((size_t)n, sizeof(*events)) : NULL;
	unsigned long long start = now_ns(), checksum = 0;
	for (int i = 0; i < n; i++)
		clEnqueueNDRangeKernel(queue, kernel, 1, NULL, &global, &local, 0, NULL,
				       floor ? &events[i] : NULL);
	clFinish(queue);
	for (int i = 0; floor && i < n; i++) {
		cl_ulong t[2] = { 0, 0 };
		clGetEventProfilingInfo(events[i], CL_PROFILING_COMMAND_START, sizeof(t[0]), &t[0], NULL);
		clGetEventProfilingInfo(events[i], CL_PROFILING_COMMAND_END, sizeof(t[1]), &t[1], NULL);
		checksum += t[1] - t[0];
		clReleaseEvent(events[i]);
	}
	unsigned long long elapsed = now_ns() - start;
	printf("%llu\n", elapsed);
	fprintf(stderr, "launches: %d kernels, %s, %.3f ms (device time %llu ns)\n", n, argv[2],
		elapsed / 1e6, checksum);
	free(events);
	clReleaseMemObject(buffer);
	clReleaseKernel(kernel);
	clReleaseProgram(program);
	clReleaseCommandQueue(queue);
	clReleaseContext(context);
	return 0;
}
