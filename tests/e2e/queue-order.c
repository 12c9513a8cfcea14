/* Commands held back while others complete, for the collection of completed commands
 * (inject/opencl/opencl-commands.c reads an in-order queue's commands up to the first
 * that has not completed):
 *   - on an in-order queue, a kernel waiting on a user event, then AFTER kernels;
 *   - on an out-of-order queue (where the device has one), a kernel waiting on the same
 *     event, then AFTER kernels free to run before it;
 *   - QUEUES more in-order queues (more than the collector keeps lists for), a kernel on
 *     each waiting on a second user event.
 * WAIT_MS later, AFTER more kernels on each of the first two queues; WAIT_MS later again
 * the events are set complete, then every queue is finished. Prints "ooo=0|1", then
 * "done" with the number of kernels enqueued.
 *
 *   queue-order [AFTER [QUEUES [WAIT_MS]]]   (defaults 50 300 300) */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "cl-check.h"

static const char *source = "__kernel void held(__global int *x) { x[0] += 1; }\n"
			    "__kernel void after(__global int *x) { x[1] = 2; }\n"
			    "__kernel void many(__global int *x) { x[2] = 3; }\n";

static cl_command_queue make_queue(cl_context context, cl_device_id device,
				   cl_command_queue_properties properties)
{
	cl_queue_properties list[] = { CL_QUEUE_PROPERTIES, properties, 0 };
	cl_int rc;
	cl_command_queue q = clCreateCommandQueueWithProperties(context, device,
								 properties ? list : NULL, &rc);
	CHECK(rc);
	return q;
}

int main(int argc, char **argv)
{
	int after = argc > 1 ? atoi(argv[1]) : 50;
	int queues = argc > 2 ? atoi(argv[2]) : 300;
	int wait_ms = argc > 3 ? atoi(argv[3]) : 300;
	cl_platform_id platform;
	cl_device_id device;
	cl_int rc;
	CHECK(clGetPlatformIDs(1, &platform, NULL));
	CHECK(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, NULL));
	cl_command_queue_properties supported = 0;
	CHECK(clGetDeviceInfo(device, CL_DEVICE_QUEUE_ON_HOST_PROPERTIES, sizeof(supported),
			      &supported, NULL));
	int ooo = (supported & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE) != 0;
	printf("ooo=%d\n", ooo);
	fflush(stdout);
	cl_context context = clCreateContext(NULL, 1, &device, NULL, NULL, &rc);
	CHECK(rc);
	cl_program program = clCreateProgramWithSource(context, 1, &source, NULL, &rc);
	CHECK(rc);
	CHECK(clBuildProgram(program, 1, &device, "", NULL, NULL));
	cl_kernel held = clCreateKernel(program, "held", &rc);
	CHECK(rc);
	cl_kernel later = clCreateKernel(program, "after", &rc);
	CHECK(rc);
	cl_kernel many = clCreateKernel(program, "many", &rc);
	CHECK(rc);
	int zero[4] = { 0 };
	cl_mem buffer = clCreateBuffer(context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
				       sizeof(zero), zero, &rc);
	CHECK(rc);
	CHECK(clSetKernelArg(held, 0, sizeof(buffer), &buffer));
	CHECK(clSetKernelArg(later, 0, sizeof(buffer), &buffer));
	CHECK(clSetKernelArg(many, 0, sizeof(buffer), &buffer));
	cl_event gate = clCreateUserEvent(context, &rc);
	CHECK(rc);
	cl_event gate2 = clCreateUserEvent(context, &rc);
	CHECK(rc);
	size_t one = 1;
	int enqueued = 0;

	cl_command_queue in_order = make_queue(context, device, 0);
	CHECK(clEnqueueNDRangeKernel(in_order, held, 1, NULL, &one, &one, 1, &gate, NULL));
	enqueued++;
	for (int i = 0; i < after; i++, enqueued++)
		CHECK(clEnqueueNDRangeKernel(in_order, later, 1, NULL, &one, &one, 0, NULL, NULL));
	cl_command_queue out_of_order = NULL;
	if (ooo) {
		out_of_order = make_queue(context, device, CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE);
		CHECK(clEnqueueNDRangeKernel(out_of_order, held, 1, NULL, &one, &one, 1, &gate, NULL));
		enqueued++;
		for (int i = 0; i < after; i++, enqueued++)
			CHECK(clEnqueueNDRangeKernel(out_of_order, later, 1, NULL, &one, &one, 0, NULL,
						     NULL));
		CHECK(clFlush(out_of_order));
	}
	cl_command_queue *more = calloc((size_t)queues, sizeof(*more));
	for (int q = 0; q < queues; q++, enqueued++) {
		more[q] = make_queue(context, device, 0);
		CHECK(clEnqueueNDRangeKernel(more[q], many, 1, NULL, &one, &one, 1, &gate2, NULL));
		CHECK(clFlush(more[q]));
	}
	CHECK(clFlush(in_order));

	struct timespec pause = { wait_ms / 1000, (long)(wait_ms % 1000) * 1000000L };
	nanosleep(&pause, NULL); /* the collector passes over the held commands meanwhile */
	/* as many again, behind what the collector found done and what it did not */
	for (int i = 0; i < after; i++, enqueued++)
		CHECK(clEnqueueNDRangeKernel(in_order, later, 1, NULL, &one, &one, 0, NULL, NULL));
	for (int i = 0; out_of_order && i < after; i++, enqueued++)
		CHECK(clEnqueueNDRangeKernel(out_of_order, later, 1, NULL, &one, &one, 0, NULL, NULL));
	if (out_of_order)
		CHECK(clFlush(out_of_order));
	nanosleep(&pause, NULL);
	CHECK(clSetUserEventStatus(gate, CL_COMPLETE));
	CHECK(clSetUserEventStatus(gate2, CL_COMPLETE));
	CHECK(clFinish(in_order));
	if (out_of_order)
		CHECK(clFinish(out_of_order));
	for (int q = 0; q < queues; q++) {
		CHECK(clFinish(more[q]));
		CHECK(clReleaseCommandQueue(more[q]));
	}
	free(more);
	printf("done %d\n", enqueued);
	return 0;
}
