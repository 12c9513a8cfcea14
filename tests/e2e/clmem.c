/* clmem: an OpenCL program whose device memory follows a known pattern, for the memory
 * tests. Buffers, each made by clCreateBuffer in a function of its own (its allocation
 * site):
 *
 *   leaky()   2 MiB, never released (a leak)
 *   site_a()  4 MiB    site_b()  8 MiB                     held 14 MiB
 *   release the first 4 MiB                                held 10 MiB
 *   site_a()  4 MiB    site_b()  16 MiB                    held 30 MiB: the peak, of
 *             which site_b() holds 24 MiB in 2 buffers, site_a() 4, leaky() 2
 *   release both of site_b()'s and the second of site_a()'s held 2 MiB
 *   an image of 256 x 256 RGBA float (1 MiB) made and released
 *   svm()     1 MiB of shared virtual memory, freed (where the device has SVM)
 *
 *   clmem [retain]   retain: the 16 MiB buffer is retained once more before its
 *                    release, and released again last (its memory goes at the second)
 *   clmem loop N     N buffers of 4 KiB made and released in turn, from churn() (for
 *                    bench/alloc-stacks.sh); prints the loop's wall seconds
 *   clmem views      memory that is not the device's own or is freed by a queue: a
 *                    1 MiB buffer and a 1-D image made from it (the buffer's memory);
 *                    a 2 MiB buffer of the program's memory (CL_MEM_USE_HOST_PTR); then,
 *                    where the device has SVM, 70 allocations of 64 KiB freed by one
 *                    clEnqueueSVMFree (device memory peaks at 1 MiB + 70 x 64 KiB), and
 *                    three of 64 KiB given to clEnqueueSVMFree: with a free_func that
 *                    keeps it (freed by clSVMFree afterwards), with one that frees it by
 *                    clSVMFree, and with a wait list that makes the call fail (freed by
 *                    clSVMFree afterwards); last two buffers of 4 KiB, the first with a
 *                    destructor callback of the program's that releases the second: both
 *                    go in the first's clReleaseMemObject; everything released by the end
 *
 * Prints "clmem: peak 31457280 bytes" and whether SVM was used. Exits 1 when OpenCL
 * fails. */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cl-check.h"

#define MIB (1024 * 1024)

static cl_context context;

__attribute__((noinline, noipa)) static cl_mem leaky(void)
{
	cl_int rc;
	cl_mem m = clCreateBuffer(context, CL_MEM_READ_WRITE, 2 * MIB, NULL, &rc);
	CHECK(rc);
	return m;
}

__attribute__((noinline, noipa)) static cl_mem site_a(void)
{
	cl_int rc;
	cl_mem m = clCreateBuffer(context, CL_MEM_READ_WRITE, 4 * MIB, NULL, &rc);
	CHECK(rc);
	return m;
}

__attribute__((noinline, noipa)) static cl_mem site_b(size_t mib)
{
	cl_int rc;
	cl_mem m = clCreateBuffer(context, CL_MEM_READ_WRITE, mib * MIB, NULL, &rc);
	CHECK(rc);
	return m;
}

__attribute__((noinline)) static void image(void)
{
	cl_image_format format = { CL_RGBA, CL_FLOAT };
	cl_image_desc desc;
	memset(&desc, 0, sizeof(desc));
	desc.image_type = CL_MEM_OBJECT_IMAGE2D;
	desc.image_width = desc.image_height = 256;
	cl_int rc;
	cl_mem m = clCreateImage(context, CL_MEM_READ_WRITE, &format, &desc, NULL, &rc);
	CHECK(rc);
	CHECK(clReleaseMemObject(m));
}

__attribute__((noinline)) static int svm(void)
{
	void *p = clSVMAlloc(context, CL_MEM_READ_WRITE, MIB, 0);
	if (p)
		clSVMFree(context, p);
	return p != NULL;
}

__attribute__((noinline, noipa)) static void churn(long n)
{
	for (long i = 0; i < n; i++) {
		cl_int rc;
		cl_mem m = clCreateBuffer(context, CL_MEM_READ_WRITE, 4096, NULL, &rc);
		CHECK(rc);
		CHECK(clReleaseMemObject(m));
	}
}

static void *kept_by_free_func;

static void CL_CALLBACK keep(cl_command_queue queue, cl_uint count, void *pointers[], void *user)
{
	(void)queue, (void)user;
	if (count == 1)
		kept_by_free_func = pointers[0];
}

static void CL_CALLBACK release(cl_command_queue queue, cl_uint count, void *pointers[],
				void *user)
{
	(void)queue, (void)user;
	for (cl_uint i = 0; i < count; i++)
		clSVMFree(context, pointers[i]);
}

static void CL_CALLBACK release_other(cl_mem object, void *other)
{
	(void)object;
	CHECK(clReleaseMemObject(other));
}

/* the three pointers given to clEnqueueSVMFree one at a time */
static void svm_frees(cl_command_queue queue)
{
	void *one[1] = { clSVMAlloc(context, CL_MEM_READ_WRITE, 64 * 1024, 0) };
	CHECK(clEnqueueSVMFree(queue, 1, one, keep, NULL, 0, NULL, NULL));
	CHECK(clFinish(queue));
	if (kept_by_free_func != one[0])
		return (void)fprintf(stderr, "clmem: free_func not called\n"), exit(1);
	clSVMFree(context, kept_by_free_func);
	void *two[1] = { clSVMAlloc(context, CL_MEM_READ_WRITE, 64 * 1024, 0) };
	CHECK(clEnqueueSVMFree(queue, 1, two, release, NULL, 0, NULL, NULL));
	CHECK(clFinish(queue));
	void *three[1] = { clSVMAlloc(context, CL_MEM_READ_WRITE, 64 * 1024, 0) };
	if (clEnqueueSVMFree(queue, 1, three, NULL, NULL, 1, NULL, NULL) == CL_SUCCESS)
		return (void)fprintf(stderr, "clmem: a wait list of 1 and NULL taken\n"), exit(1);
	clSVMFree(context, three[0]);
}

static void views(cl_device_id device)
{
	cl_int rc;
	cl_mem buffer = clCreateBuffer(context, CL_MEM_READ_WRITE, MIB, NULL, &rc);
	CHECK(rc);
	cl_image_format format = { CL_RGBA, CL_FLOAT };
	cl_image_desc desc;
	memset(&desc, 0, sizeof(desc));
	desc.image_type = CL_MEM_OBJECT_IMAGE1D_BUFFER;
	desc.image_width = MIB / 16; /* 16 bytes a pixel */
	desc.buffer = buffer;
	cl_mem image = clCreateImage(context, CL_MEM_READ_WRITE, &format, &desc, NULL, &rc);
	CHECK(rc);
	void *host = calloc(1, 2 * MIB);
	cl_mem wrapped = clCreateBuffer(context, CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, 2 * MIB,
					host, &rc);
	CHECK(rc);
	void *first = clSVMAlloc(context, CL_MEM_READ_WRITE, 64 * 1024, 0);
	if (first) {
		cl_command_queue queue = clCreateCommandQueueWithProperties(context, device, NULL,
									     &rc);
		CHECK(rc);
		void *pointers[70] = { first };
		for (int i = 1; i < 70; i++)
			if (!(pointers[i] = clSVMAlloc(context, CL_MEM_READ_WRITE, 64 * 1024, 0)))
				return (void)fprintf(stderr, "clmem: clSVMAlloc failed\n"), exit(1);
		CHECK(clEnqueueSVMFree(queue, 70, pointers, NULL, NULL, 0, NULL, NULL));
		CHECK(clFinish(queue));
		svm_frees(queue);
		CHECK(clReleaseCommandQueue(queue));
	}
	CHECK(clReleaseMemObject(image));
	CHECK(clReleaseMemObject(buffer));
	CHECK(clReleaseMemObject(wrapped));
	free(host);
	cl_mem first_4k = clCreateBuffer(context, CL_MEM_READ_WRITE, 4096, NULL, &rc);
	CHECK(rc);
	cl_mem second_4k = clCreateBuffer(context, CL_MEM_READ_WRITE, 4096, NULL, &rc);
	CHECK(rc);
	CHECK(clSetMemObjectDestructorCallback(first_4k, release_other, second_4k));
	CHECK(clReleaseMemObject(first_4k));
	printf("clmem: views, svm %s\n", first ? "used" : "not available");
}

int main(int argc, char **argv)
{
	int retain = argc > 1 && !strcmp(argv[1], "retain");
	cl_platform_id platform;
	cl_device_id device;
	cl_int rc;
	CHECK(clGetPlatformIDs(1, &platform, NULL));
	CHECK(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, NULL));
	context = clCreateContext(NULL, 1, &device, NULL, NULL, &rc);
	CHECK(rc);
	if (argc > 1 && !strcmp(argv[1], "views")) {
		views(device);
		return 0;
	}
	if (argc > 2 && !strcmp(argv[1], "loop")) {
		struct timespec a, b;
		clock_gettime(CLOCK_MONOTONIC, &a);
		churn(atol(argv[2]));
		clock_gettime(CLOCK_MONOTONIC, &b);
		printf("clmem: loop %.6f s\n", (double)(b.tv_sec - a.tv_sec) +
						 (double)(b.tv_nsec - a.tv_nsec) / 1e9);
		return 0;
	}
	cl_mem leak = leaky();
	cl_mem a1 = site_a();
	cl_mem b1 = site_b(8);
	CHECK(clReleaseMemObject(a1));
	cl_mem a2 = site_a();
	cl_mem b2 = site_b(16);
	if (retain)
		CHECK(clRetainMemObject(b2));
	CHECK(clReleaseMemObject(b2));
	CHECK(clReleaseMemObject(b1));
	CHECK(clReleaseMemObject(a2));
	image();
	int used_svm = svm();
	if (retain)
		CHECK(clReleaseMemObject(b2));
	printf("clmem: peak %d bytes, svm %s\n", 30 * MIB, used_svm ? "used" : "not available");
	(void)leak;
	return 0;
}
