/* Every kind of enqueued command and object the OpenCL trace covers, for exact counts:
 * images, sub-buffers, user events, markers and barriers (1.1 and 1.2), native kernels,
 * migration, SVM, compiled and linked programs, __local arguments, write maps, many
 * mappings at once and event reference counts. Prints what the device supports, as
 * "native=0|1 svm=0|1", then what it checked. */
#define CL_TARGET_OPENCL_VERSION 300
#define CL_USE_DEPRECATED_OPENCL_1_1_APIS
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cl-check.h"

#define MAPPINGS 1100 /* more than were once followed at a time */

static void native(void *args)
{
	(*(int *)args)++;
}

int main(void)
{
	cl_platform_id platform;
	cl_device_id device;
	cl_int rc;
	CHECK(clGetPlatformIDs(1, &platform, NULL));
	CHECK(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, NULL));
	cl_device_exec_capabilities exec = 0;
	cl_device_svm_capabilities svm = 0;
	CHECK(clGetDeviceInfo(device, CL_DEVICE_EXECUTION_CAPABILITIES, sizeof(exec), &exec, NULL));
	if (clGetDeviceInfo(device, CL_DEVICE_SVM_CAPABILITIES, sizeof(svm), &svm, NULL))
		svm = 0;
	int has_native = (exec & CL_EXEC_NATIVE_KERNEL) != 0;
	int has_svm = (svm & CL_DEVICE_SVM_COARSE_GRAIN_BUFFER) != 0;
	printf("native=%d svm=%d\n", has_native, has_svm);
	cl_context context = clCreateContext(NULL, 1, &device, NULL, NULL, &rc);
	CHECK(rc);
	cl_command_queue queue = clCreateCommandQueueWithProperties(context, device, NULL, &rc);
	CHECK(rc);

	/* buffers: one with properties, a sub-buffer written, a write map, migration */
	cl_mem buffer = clCreateBufferWithProperties(context, NULL, CL_MEM_READ_WRITE, 4096, NULL,
						     &rc);
	CHECK(rc);
	cl_buffer_region region = { 1024, 1024 };
	cl_mem sub = clCreateSubBuffer(buffer, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION,
				       &region, &rc);
	CHECK(rc);
	char host[4096] = { 0 };
	CHECK(clEnqueueWriteBuffer(queue, sub, CL_TRUE, 0, 1024, host, 0, NULL, NULL));
	void *mapped = clEnqueueMapBuffer(queue, buffer, CL_TRUE, CL_MAP_WRITE, 0, 2048, 0, NULL,
					  NULL, &rc);
	CHECK(rc);
	memset(mapped, 1, 2048);
	CHECK(clEnqueueUnmapMemObject(queue, buffer, mapped, 0, NULL, NULL));
	CHECK(clEnqueueMigrateMemObjects(queue, 1, &buffer, CL_MIGRATE_MEM_OBJECT_HOST, 0, NULL,
					 NULL));
	CHECK(clEnqueueMigrateMemObjects(queue, 1, &buffer, 0, 0, NULL, NULL));

	/* many mappings open at once, then unmapped */
	static void *maps[MAPPINGS];
	for (int i = 0; i < MAPPINGS; i++) {
		maps[i] = clEnqueueMapBuffer(queue, buffer, CL_TRUE, CL_MAP_READ, (size_t)(i % 64) * 64,
					     64, 0, NULL, NULL, &rc);
		CHECK(rc);
	}
	for (int i = 0; i < MAPPINGS; i++)
		CHECK(clEnqueueUnmapMemObject(queue, buffer, maps[i], 0, NULL, NULL));
	CHECK(clFinish(queue));

	/* images: 16 x 16 RGBA bytes, 1024 bytes */
	cl_image_format format = { CL_RGBA, CL_UNSIGNED_INT8 };
	cl_image_desc desc = { .image_type = CL_MEM_OBJECT_IMAGE2D, .image_width = 16,
			       .image_height = 16 };
	cl_mem image = clCreateImage(context, CL_MEM_READ_WRITE, &format, &desc, NULL, &rc);
	CHECK(rc);
	cl_mem image2 = clCreateImage(context, CL_MEM_READ_WRITE, &format, &desc, NULL, &rc);
	CHECK(rc);
	size_t origin[3] = { 0, 0, 0 }, whole[3] = { 16, 16, 1 };
	cl_uint color[4] = { 1, 2, 3, 4 };
	CHECK(clEnqueueWriteImage(queue, image, CL_TRUE, origin, whole, 0, 0, host, 0, NULL, NULL));
	CHECK(clEnqueueReadImage(queue, image, CL_TRUE, origin, whole, 0, 0, host, 0, NULL, NULL));
	CHECK(clEnqueueCopyImage(queue, image, image2, origin, origin, whole, 0, NULL, NULL));
	CHECK(clEnqueueFillImage(queue, image2, color, origin, whole, 0, NULL, NULL));
	CHECK(clEnqueueCopyImageToBuffer(queue, image, buffer, origin, whole, 0, 0, NULL, NULL));
	CHECK(clEnqueueCopyBufferToImage(queue, buffer, image2, 0, origin, whole, 0, NULL, NULL));
	size_t row_pitch = 0;
	void *pixels = clEnqueueMapImage(queue, image, CL_TRUE, CL_MAP_READ, origin, whole,
					 &row_pitch, NULL, 0, NULL, NULL, &rc);
	CHECK(rc);
	CHECK(clEnqueueUnmapMemObject(queue, image, pixels, 0, NULL, NULL));

	/* a user event gates a write; markers and barriers of both versions */
	cl_event user = clCreateUserEvent(context, &rc);
	CHECK(rc);
	cl_event written;
	CHECK(clEnqueueWriteBuffer(queue, buffer, CL_FALSE, 0, 64, host, 1, &user, &written));
	cl_uint references = 0;
	CHECK(clGetEventInfo(written, CL_EVENT_REFERENCE_COUNT, sizeof(references), &references,
			     NULL));
	printf("references=%u\n", references);
	CHECK(clSetUserEventStatus(user, CL_COMPLETE));
	cl_event marker;
	CHECK(clEnqueueMarker(queue, &marker));
	CHECK(clEnqueueBarrier(queue));
	CHECK(clEnqueueMarkerWithWaitList(queue, 1, &written, NULL));
	CHECK(clEnqueueBarrierWithWaitList(queue, 0, NULL, NULL));
	CHECK(clFinish(queue));
	CHECK(clReleaseEvent(written));
	CHECK(clReleaseEvent(marker));
	CHECK(clReleaseEvent(user));

	/* a program compiled and linked; a kernel whose __local argument changes size */
	const char *source = "__kernel void stage(__global int *out, __local int *scratch)"
			     "{ scratch[get_local_id(0)] = 1; out[get_global_id(0)] = "
			     "scratch[get_local_id(0)]; }";
	cl_program compiled = clCreateProgramWithSource(context, 1, &source, NULL, &rc);
	CHECK(rc);
	CHECK(clCompileProgram(compiled, 1, &device, "", 0, NULL, NULL, NULL, NULL));
	cl_program linked = clLinkProgram(context, 1, &device, "", 1, &compiled, NULL, NULL, &rc);
	CHECK(rc);
	cl_kernel stage = clCreateKernel(linked, "stage", &rc);
	CHECK(rc);
	size_t global = 64, local = 16;
	CHECK(clSetKernelArg(stage, 0, sizeof(buffer), &buffer));
	CHECK(clSetKernelArg(stage, 1, 64, NULL));
	CHECK(clEnqueueNDRangeKernel(queue, stage, 1, NULL, &global, &local, 0, NULL, NULL));
	CHECK(clSetKernelArg(stage, 1, 4096, NULL));
	CHECK(clEnqueueNDRangeKernel(queue, stage, 1, NULL, &global, &local, 0, NULL, NULL));

	int calls = 0;
	if (has_native)
		CHECK(clEnqueueNativeKernel(queue, native, &calls, sizeof(calls), 0, NULL, NULL, 0,
					    NULL, NULL));
	if (has_svm) {
		void *a = clSVMAlloc(context, CL_MEM_READ_WRITE, 4096, 0);
		void *b = clSVMAlloc(context, CL_MEM_READ_WRITE, 4096, 0);
		CHECK(clEnqueueSVMMap(queue, CL_TRUE, CL_MAP_WRITE, a, 4096, 0, NULL, NULL));
		memset(a, 7, 4096);
		CHECK(clEnqueueSVMUnmap(queue, a, 0, NULL, NULL));
		CHECK(clEnqueueSVMMemcpy(queue, CL_TRUE, b, a, 4096, 0, NULL, NULL));
		int zero = 0;
		CHECK(clEnqueueSVMMemFill(queue, b, &zero, sizeof(zero), 4096, 0, NULL, NULL));
		CHECK(clFinish(queue));
		void *pointers[1] = { b };
		CHECK(clEnqueueSVMFree(queue, 1, pointers, NULL, NULL, 0, NULL, NULL));
		CHECK(clFinish(queue));
		clSVMFree(context, a);
	}
	CHECK(clFinish(queue));
	clReleaseKernel(stage);
	clReleaseProgram(linked);
	clReleaseProgram(compiled);
	clReleaseMemObject(image);
	clReleaseMemObject(image2);
	clReleaseMemObject(sub);
	clReleaseMemObject(buffer);
	clReleaseCommandQueue(queue);
	clReleaseContext(context);
	printf("done\n");
	return 0;
}
