/* The OpenCL work of the loading tests (private-opencl, own-handle): vcopy kernels run
 * through a table of OpenCL functions, however the program found them. */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <stdio.h>

struct clwork_api {
	__typeof__(&clGetPlatformIDs) GetPlatformIDs;
	__typeof__(&clGetDeviceIDs) GetDeviceIDs;
	__typeof__(&clCreateContext) CreateContext;
	__typeof__(&clCreateCommandQueueWithProperties) CreateCommandQueueWithProperties;
	__typeof__(&clCreateProgramWithSource) CreateProgramWithSource;
	__typeof__(&clBuildProgram) BuildProgram;
	__typeof__(&clCreateKernel) CreateKernel;
	__typeof__(&clCreateBuffer) CreateBuffer;
	__typeof__(&clSetKernelArg) SetKernelArg;
	__typeof__(&clEnqueueNDRangeKernel) EnqueueNDRangeKernel;
	__typeof__(&clEnqueueReadBuffer) EnqueueReadBuffer;
	__typeof__(&clFinish) Finish;
	__typeof__(&clReleaseMemObject) ReleaseMemObject;
	__typeof__(&clReleaseKernel) ReleaseKernel;
	__typeof__(&clReleaseProgram) ReleaseProgram;
	__typeof__(&clReleaseCommandQueue) ReleaseCommandQueue;
	__typeof__(&clReleaseContext) ReleaseContext;
};

#define CLWORK_FUNCTIONS(X) \
	X(GetPlatformIDs) X(GetDeviceIDs) X(CreateContext) X(CreateCommandQueueWithProperties) \
	X(CreateProgramWithSource) X(BuildProgram) X(CreateKernel) X(CreateBuffer) \
	X(SetKernelArg) X(EnqueueNDRangeKernel) X(EnqueueReadBuffer) X(Finish) \
	X(ReleaseMemObject) X(ReleaseKernel) X(ReleaseProgram) X(ReleaseCommandQueue) \
	X(ReleaseContext)

/* Runs `kernels` copies of 1024 floats and one read back; 0 on success. */
static int clwork_run(const struct clwork_api *cl, int kernels)
{
	static const char *source =
		"__kernel void vcopy(__global const float *a, __global float *b)"
		"{ size_t i = get_global_id(0); b[i] = a[i]; }";
	cl_platform_id platform;
	cl_device_id device;
	cl_int rc = cl->GetPlatformIDs(1, &platform, NULL);
	rc |= cl->GetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, NULL);
	if (rc) {
		fprintf(stderr, "no OpenCL device (%d)\n", rc);
		return 1;
	}
	cl_context context = cl->CreateContext(NULL, 1, &device, NULL, NULL, &rc);
	cl_command_queue queue = cl->CreateCommandQueueWithProperties(context, device, NULL, &rc);
	cl_program program = cl->CreateProgramWithSource(context, 1, &source, NULL, &rc);
	rc = cl->BuildProgram(program, 1, &device, "", NULL, NULL);
	cl_kernel kernel = cl->CreateKernel(program, "vcopy", &rc);
	size_t n = 1024;
	float host[1024];
	cl_mem a = cl->CreateBuffer(context, CL_MEM_READ_WRITE, n * sizeof(float), NULL, &rc);
	cl_mem b = cl->CreateBuffer(context, CL_MEM_READ_WRITE, n * sizeof(float), NULL, &rc);
	cl->SetKernelArg(kernel, 0, sizeof(a), &a);
	cl->SetKernelArg(kernel, 1, sizeof(b), &b);
	for (int i = 0; i < kernels && rc == CL_SUCCESS; i++)
		rc = cl->EnqueueNDRangeKernel(queue, kernel, 1, NULL, &n, NULL, 0, NULL, NULL);
	rc |= cl->EnqueueReadBuffer(queue, b, CL_TRUE, 0, sizeof(host), host, 0, NULL, NULL);
	cl->Finish(queue);
	cl->ReleaseMemObject(a);
	cl->ReleaseMemObject(b);
	cl->ReleaseKernel(kernel);
	cl->ReleaseProgram(program);
	cl->ReleaseCommandQueue(queue);
	cl->ReleaseContext(context);
	if (rc)
		fprintf(stderr, "OpenCL failed (%d)\n", rc);
	else
		printf("clwork: %d kernels\n", kernels);
	return rc != CL_SUCCESS;
}
