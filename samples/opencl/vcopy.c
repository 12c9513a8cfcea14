/* vcopy: copies one vector into another on an OpenCL device, the OpenCL twin of the
 * ROCm profiler samples' vcopy.
 *
 *   vcopy [-n ELEMENTS] [-b WORKGROUP] [-i ITERATIONS] [-d DEVICE]
 *
 * Writes the input once, runs the vecCopy kernel ITERATIONS times and reads the
 * output back: ITERATIONS kernels, one host-to-device and one device-to-host copy of
 * ELEMENTS floats each. Exits 1 when the copy is wrong or OpenCL fails. */
#include <unistd.h>

#include "common.h"

static const char *source =
	"__kernel void vecCopy(__global const float *in, __global float *out, uint n)\n"
	"{\n"
	"    size_t i = get_global_id(0);\n"
	"    if (i < n)\n"
	"        out[i] = in[i];\n"
	"}\n";

int main(int argc, char **argv)
{
	unsigned long n = 1048576, block = 256, iterations = 1;
	int device_index = 0, opt;
	while ((opt = getopt(argc, argv, "n:b:i:d:h")) != -1) {
		switch (opt) {
		case 'n': n = strtoul(optarg, NULL, 10); break;
		case 'b': block = strtoul(optarg, NULL, 10); break;
		case 'i': iterations = strtoul(optarg, NULL, 10); break;
		case 'd': device_index = atoi(optarg); break;
		default:
			fprintf(stderr, "usage: vcopy [-n ELEMENTS] [-b WORKGROUP] [-i ITERATIONS] "
					"[-d DEVICE]\n");
			return opt == 'h' ? 0 : 2;
		}
	}
	if (!n || !block) {
		fprintf(stderr, "vcopy: -n and -b must be positive\n");
		return 2;
	}
	cl_int rc;
	cl_device_id device = sample_device(device_index);
	char name[256] = "";
	clGetDeviceInfo(device, CL_DEVICE_NAME, sizeof(name), name, NULL);
	printf("vcopy testing on %s\n", name);
	cl_context context = clCreateContext(NULL, 1, &device, NULL, NULL, &rc);
	CHECK(rc);
	cl_command_queue queue = clCreateCommandQueueWithProperties(context, device, NULL, &rc);
	CHECK(rc);
	cl_program program = clCreateProgramWithSource(context, 1, &source, NULL, &rc);
	CHECK(rc);
	CHECK(clBuildProgram(program, 1, &device, "", NULL, NULL));
	cl_kernel kernel = clCreateKernel(program, "vecCopy", &rc);
	CHECK(rc);

	size_t bytes = n * sizeof(float);
	float *in = malloc(bytes), *out = malloc(bytes);
	if (!in || !out) {
		fprintf(stderr, "vcopy: out of memory\n");
		return 1;
	}
	for (unsigned long i = 0; i < n; i++)
		in[i] = (float)i;
	printf("Finished allocating vectors on the CPU\n");
	cl_mem d_in = clCreateBuffer(context, CL_MEM_READ_ONLY, bytes, NULL, &rc);
	CHECK(rc);
	cl_mem d_out = clCreateBuffer(context, CL_MEM_WRITE_ONLY, bytes, NULL, &rc);
	CHECK(rc);
	CHECK(clEnqueueWriteBuffer(queue, d_in, CL_TRUE, 0, bytes, in, 0, NULL, NULL));
	printf("Finished copying vectors to the device\n");

	cl_uint count = (cl_uint)n;
	CHECK(clSetKernelArg(kernel, 0, sizeof(d_in), &d_in));
	CHECK(clSetKernelArg(kernel, 1, sizeof(d_out), &d_out));
	CHECK(clSetKernelArg(kernel, 2, sizeof(count), &count));
	size_t local = block, global = (n + block - 1) / block * block;
	printf("Total threads: %lu, Grid Size: %zu block Size:%zu\n", n, global / local, local);
	for (unsigned long i = 0; i < iterations; i++)
		CHECK(clEnqueueNDRangeKernel(queue, kernel, 1, NULL, &global, &local, 0, NULL, NULL));
	CHECK(clFinish(queue));
	printf("Finished executing kernel\n");
	CHECK(clEnqueueReadBuffer(queue, d_out, CL_TRUE, 0, bytes, out, 0, NULL, NULL));
	printf("Finished copying the output vector from the device to the host\n");
	int bad = memcmp(in, out, bytes) != 0;

	clReleaseMemObject(d_in);
	clReleaseMemObject(d_out);
	clReleaseKernel(kernel);
	clReleaseProgram(program);
	clReleaseCommandQueue(queue);
	clReleaseContext(context);
	free(in);
	free(out);
	if (bad) {
		fprintf(stderr, "vcopy: output differs from input\n");
		return 1;
	}
	printf("Releasing memory\n");
	return 0;
}
