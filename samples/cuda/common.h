/* Error checking shared by the CUDA samples: a failed CUDA call ends the program with
 * the call, the error and exit status 1. */
#ifndef GPUPROF_SAMPLES_CUDA_COMMON_H
#define GPUPROF_SAMPLES_CUDA_COMMON_H

#include <cstdio>
#include <cstdlib>
#include <cstring>

#define CUDA_CHECK(call) \
	do { \
		cudaError_t rc_ = (call); \
		if (rc_ != cudaSuccess) { \
			std::fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call, \
				     cudaGetErrorString(rc_)); \
			std::exit(1); \
		} \
	} while (0)

/* The value of "-x N" style options; fallback when absent. */
static inline long option_value(int argc, char **argv, const char *name, long fallback)
{
	for (int i = 1; i + 1 < argc; i++)
		if (!std::strcmp(argv[i], name))
			return std::strtol(argv[i + 1], nullptr, 0);
	return fallback;
}

static inline bool option_flag(int argc, char **argv, const char *name)
{
	for (int i = 1; i < argc; i++)
		if (!std::strcmp(argv[i], name))
			return true;
	return false;
}

#endif
