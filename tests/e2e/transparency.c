/* transparency: checks that an application which did not ask for queue profiling sees
 * no sign of it under gpuprof, and that one which did ask still gets its timestamps.
 * Prints one line per check and exits 1 when any differs from plain OpenCL. */
#define CL_TARGET_OPENCL_VERSION 300
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS /* clCreateCommandQueue: tested on purpose */
#include <CL/cl.h>

#include <stdio.h>

static int failures;

static void expect(int ok, const char *what)
{
	printf("%s: %s\n", ok ? "ok" : "FAILED", what);
	failures += !ok;
}

int main(void)
{
	cl_platform_id platform;
	cl_device_id device;
	cl_int rc;
	if (clGetPlatformIDs(1, &platform, NULL) ||
	    clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, NULL))
		return 3;
	cl_context context = clCreateContext(NULL, 1, &device, NULL, NULL, &rc);
	int pattern = 7;
	cl_mem buffer = clCreateBuffer(context, CL_MEM_READ_WRITE, 4096, NULL, &rc);

	/* 1.2 API, no profiling asked */
	cl_command_queue plain = clCreateCommandQueue(context, device, 0, &rc);
	cl_command_queue_properties props = 0;
	clGetCommandQueueInfo(plain, CL_QUEUE_PROPERTIES, sizeof(props), &props, NULL);
	expect(!(props & CL_QUEUE_PROFILING_ENABLE), "queue without profiling reports none");
	cl_event event;
	clEnqueueFillBuffer(plain, buffer, &pattern, sizeof(pattern), 0, 4096, 0, NULL, &event);
	clWaitForEvents(1, &event);
	cl_ulong t = 0;
	rc = clGetEventProfilingInfo(event, CL_PROFILING_COMMAND_START, sizeof(t), &t, NULL);
	expect(rc == CL_PROFILING_INFO_NOT_AVAILABLE, "its events have no profiling info");
	clReleaseEvent(event);

	/* 2.0 API with a properties array, no profiling asked */
	cl_queue_properties asked[] = { CL_QUEUE_PROPERTIES, 0, 0 };
	cl_command_queue modern = clCreateCommandQueueWithProperties(context, device, asked, &rc);
	props = 0;
	clGetCommandQueueInfo(modern, CL_QUEUE_PROPERTIES, sizeof(props), &props, NULL);
	expect(!(props & CL_QUEUE_PROFILING_ENABLE), "properties-array queue reports none");
	cl_queue_properties seen[8] = { 0 };
	size_t size = 0;
	rc = clGetCommandQueueInfo(modern, CL_QUEUE_PROPERTIES_ARRAY, sizeof(seen), seen, &size);
	expect(rc == CL_SUCCESS && size == sizeof(asked) && seen[0] == CL_QUEUE_PROPERTIES &&
		       seen[1] == 0 && seen[2] == 0,
	       "the properties array is the one the application passed");

	/* profiling asked for: timestamps available and ordered */
	cl_command_queue profiled = clCreateCommandQueue(context, device, CL_QUEUE_PROFILING_ENABLE,
							  &rc);
	props = 0;
	clGetCommandQueueInfo(profiled, CL_QUEUE_PROPERTIES, sizeof(props), &props, NULL);
	expect((props & CL_QUEUE_PROFILING_ENABLE) != 0, "a profiling queue reports profiling");
	clEnqueueFillBuffer(profiled, buffer, &pattern, sizeof(pattern), 0, 4096, 0, NULL, &event);
	clWaitForEvents(1, &event);
	cl_ulong start = 0, end = 0;
	rc = clGetEventProfilingInfo(event, CL_PROFILING_COMMAND_START, sizeof(start), &start, NULL);
	rc |= clGetEventProfilingInfo(event, CL_PROFILING_COMMAND_END, sizeof(end), &end, NULL);
	expect(rc == CL_SUCCESS && start && end >= start, "its events have timestamps");
	clReleaseEvent(event);

	clReleaseCommandQueue(plain);
	clReleaseCommandQueue(modern);
	clReleaseCommandQueue(profiled);
	clReleaseMemObject(buffer);
	clReleaseContext(context);
	return failures ? 1 : 0;
}
