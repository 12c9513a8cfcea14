/* CHECK(call) for the OpenCL test programs: an OpenCL call that fails ends the program
 * with status 1, saying where and with which error. */
#ifndef GPUPROF_TESTS_CL_CHECK_H
#define GPUPROF_TESTS_CL_CHECK_H

#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(call) \
	do { \
		cl_int rc_ = (call); \
		if (rc_ != CL_SUCCESS) { \
			fprintf(stderr, "%s:%d: %s failed: %d\n", __FILE__, __LINE__, #call, rc_); \
			exit(1); \
		} \
	} while (0)

#endif
