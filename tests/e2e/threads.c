/* threads: THREADS threads launching KERNELS kernels each, spread over QUEUES command
 * queues (thread i uses queue i % QUEUES, with a kernel object of its own), all at once.
 *
 *   threads THREADS KERNELS QUEUES */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static cl_context context;
static cl_program program;
static cl_mem buffer;
static cl_command_queue queues[64];
static int kernels, queue_count;
static pthread_barrier_t start;

static void *work(void *arg)
{
	int index = (int)(size_t)arg;
	cl_int rc;
	cl_kernel kernel = clCreateKernel(program, "bump", &rc);
	if (rc != CL_SUCCESS || clSetKernelArg(kernel, 0, sizeof(buffer), &buffer))
		exit(3);
	cl_command_queue queue = queues[index % queue_count];
	size_t global = 64;
	pthread_barrier_wait(&start);
	for (int i = 0; i < kernels; i++)
		if (clEnqueueNDRangeKernel(queue, kernel, 1, NULL, &global, NULL, 0, NULL, NULL))
			exit(3);
	clFinish(queue);
	clReleaseKernel(kernel);
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: threads THREADS KERNELS QUEUES\n");
		return 2;
	}
	int threads = atoi(argv[1]);
	kernels = atoi(argv[2]);
	queue_count = atoi(argv[3]);
	if (threads < 1 || threads > 1024 || queue_count < 1 || queue_count > 64)
		return 2;
	cl_platform_id platform;
	cl_device_id device;
	cl_int rc;
	if (clGetPlatformIDs(1, &platform, NULL) ||
	    clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, NULL))
		return 3;
	context = clCreateContext(NULL, 1, &device, NULL, NULL, &rc);
	const char *source = "__kernel void bump(__global int *x) { atomic_inc(&x[0]); }";
	program = clCreateProgramWithSource(context, 1, &source, NULL, &rc);
	if (clBuildProgram(program, 1, &device, "", NULL, NULL))
		return 3;
	buffer = clCreateBuffer(context, CL_MEM_READ_WRITE, 64 * sizeof(int), NULL, &rc);
	for (int q = 0; q < queue_count; q++)
		queues[q] = clCreateCommandQueueWithProperties(context, device, NULL, &rc);
	pthread_t *ids = calloc((size_t)threads, sizeof(*ids));
	pthread_barrier_init(&start, NULL, (unsigned)threads);
	for (int t = 0; t < threads; t++)
		pthread_create(&ids[t], NULL, work, (void *)(size_t)t);
	for (int t = 0; t < threads; t++)
		pthread_join(ids[t], NULL);
	free(ids);
	printf("threads: %d x %d kernels on %d queues\n", threads, kernels, queue_count);
	return 0;
}
