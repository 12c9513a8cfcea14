/* What the smaller OpenCL samples share: failing loudly, the device by index, a
 * program built from source, and the command-line flags they take. */
#ifndef GPUPROF_SAMPLES_OPENCL_COMMON_H
#define GPUPROF_SAMPLES_OPENCL_COMMON_H

#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CHECK(call) \
	do { \
		cl_int rc_ = (call); \
		if (rc_ != CL_SUCCESS) { \
			fprintf(stderr, "%s failed: %d\n", #call, rc_); \
			exit(1); \
		} \
	} while (0)

/* The index-th device over all platforms. */
static inline cl_device_id sample_device(int index)
{
	cl_platform_id platforms[8];
	cl_uint platform_count = 0;
	CHECK(clGetPlatformIDs(8, platforms, &platform_count));
	for (cl_uint p = 0; p < platform_count; p++) {
		cl_device_id devices[16];
		cl_uint count = 0;
		if (clGetDeviceIDs(platforms[p], CL_DEVICE_TYPE_ALL, 16, devices, &count) != CL_SUCCESS)
			continue;
		if (index < (int)count)
			return devices[index];
		index -= (int)count;
	}
	fprintf(stderr, "no OpenCL device with that index\n");
	exit(1);
}

/* A context, an in-order queue and the program of source on device 0. */
struct sample {
	cl_device_id device;
	cl_context context;
	cl_command_queue queue;
	cl_program program;
};

static inline void sample_open(struct sample *s, const char *source)
{
	cl_int rc;
	s->device = sample_device(0);
	s->context = clCreateContext(NULL, 1, &s->device, NULL, NULL, &rc);
	CHECK(rc);
	s->queue = clCreateCommandQueueWithProperties(s->context, s->device, NULL, &rc);
	CHECK(rc);
	s->program = clCreateProgramWithSource(s->context, 1, &source, NULL, &rc);
	CHECK(rc);
	CHECK(clBuildProgram(s->program, 1, &s->device, "", NULL, NULL));
}

static inline void sample_close(struct sample *s)
{
	clReleaseProgram(s->program);
	clReleaseCommandQueue(s->queue);
	clReleaseContext(s->context);
}

/* Whether argv holds flag; the number after name, or fallback. */
static inline int sample_flag(int argc, char **argv, const char *flag)
{
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], flag))
			return 1;
	return 0;
}

static inline unsigned long sample_value(int argc, char **argv, const char *name,
					 unsigned long fallback)
{
	for (int i = 1; i + 1 < argc; i++)
		if (!strcmp(argv[i], name))
			return strtoul(argv[i + 1], NULL, 10);
	return fallback;
}

static inline double sample_now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

#endif
