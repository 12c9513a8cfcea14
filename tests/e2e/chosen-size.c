/* chosen-size: kernels launched with and without a local size, for the test that a
 * work-group size the runtime chose is not written as 0.
 *
 *   chosen-size   launches free_size() over 64 work-items with no local size (the
 *                 runtime chooses), then given_size() with 8, and waits; exits 1 when
 *                 OpenCL fails */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>

#include <stdio.h>

static const char *source =
	"__kernel void free_size(__global int *x) { x[get_global_id(0)] += 1; }\n"
	"__kernel void given_size(__global int *x) { x[get_global_id(0)] += 2; }\n";

int main(void)
{
	cl_platform_id platform;
	cl_device_id device;
	cl_int rc;
	if (clGetPlatformIDs(1, &platform, NULL) ||
	    clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, NULL)) {
		fprintf(stderr, "chosen-size: no OpenCL device\n");
		return 1;
	}
	cl_context context = clCreateContext(NULL, 1, &device, NULL, NULL, &rc);
	cl_command_queue queue = clCreateCommandQueueWithProperties(context, device, NULL, &rc);
	cl_program program = clCreateProgramWithSource(context, 1, &source, NULL, &rc);
	if (clBuildProgram(program, 1, &device, "", NULL, NULL)) {
		fprintf(stderr, "chosen-size: the kernels do not build\n");
		return 1;
	}
	cl_mem x = clCreateBuffer(context, CL_MEM_READ_WRITE, 64 * sizeof(cl_int), NULL, &rc);
	size_t global = 64, local = 8;
	const char *names[] = { "free_size", "given_size" };
	for (int i = 0; i < 2; i++) {
		cl_kernel kernel = clCreateKernel(program, names[i], &rc);
		rc |= clSetKernelArg(kernel, 0, sizeof(x), &x);
		rc |= clEnqueueNDRangeKernel(queue, kernel, 1, NULL, &global, i ? &local : NULL, 0,
					     NULL, NULL);
		rc |= clFinish(queue);
		clReleaseKernel(kernel);
		if (rc) {
			fprintf(stderr, "chosen-size: %s failed (%d)\n", names[i], rc);
			return 1;
		}
	}
	clReleaseMemObject(x);
	clReleaseProgram(program);
	clReleaseCommandQueue(queue);
	clReleaseContext(context);
	return 0;
}
