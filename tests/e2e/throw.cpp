// throw: a C++ OpenCL program that launches KERNELS kernels, waits for the recorder's
// flush, and dies of an exception nobody catches (std::terminate, then abort).
//
//   throw KERNELS
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <thread>

int main(int argc, char **argv)
{
	int kernels = argc > 1 ? std::atoi(argv[1]) : 1;
	cl_platform_id platform;
	cl_device_id device;
	cl_int rc;
	if (clGetPlatformIDs(1, &platform, nullptr) ||
	    clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, nullptr))
		return 3;
	cl_context context = clCreateContext(nullptr, 1, &device, nullptr, nullptr, &rc);
	cl_command_queue queue = clCreateCommandQueueWithProperties(context, device, nullptr, &rc);
	const char *source = "__kernel void thrown(__global int *x) { x[get_global_id(0)] = 1; }";
	cl_program program = clCreateProgramWithSource(context, 1, &source, nullptr, &rc);
	if (clBuildProgram(program, 1, &device, "", nullptr, nullptr))
		return 3;
	cl_kernel kernel = clCreateKernel(program, "thrown", &rc);
	cl_mem buffer = clCreateBuffer(context, CL_MEM_READ_WRITE, 64 * sizeof(int), nullptr, &rc);
	clSetKernelArg(kernel, 0, sizeof(buffer), &buffer);
	size_t global = 64;
	for (int i = 0; i < kernels; i++)
		clEnqueueNDRangeKernel(queue, kernel, 1, nullptr, &global, nullptr, 0, nullptr, nullptr);
	clFinish(queue);
	std::printf("throw: %d kernels done\n", kernels);
	std::fflush(stdout);
	std::this_thread::sleep_for(std::chrono::milliseconds(400));
	throw std::runtime_error("nobody catches this");
}
