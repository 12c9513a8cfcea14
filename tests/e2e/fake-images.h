/* The images the stand-ins for CUPTI (fake-cupti-profiler.c) and its host library
 * (fake-cupti-host.c) pass each other through the CUDA backend, as CUPTI's own do: a
 * configuration image says how many metrics its host object was given (a host object's
 * configuration only grows, as CUPTI's does); a counter data image is sized for so many
 * metrics and, once decoded, holds the ranges measured. Not part of gpuprof. */
#ifndef GPUPROF_TESTS_FAKE_IMAGES_H
#define GPUPROF_TESTS_FAKE_IMAGES_H

#include <stdint.h>

#define FAKE_CONFIG_MAGIC 0x464e4f43u /* "CONF" */
#define FAKE_DATA_MAGIC 0x41544144u   /* "DATA" */

struct fake_config_image {
	uint32_t magic;
	uint32_t metrics;     /* every metric added to the host object so far */
};

/* GetCounterDataSize's answer for so many metrics. */
#define FAKE_DATA_SIZE(metrics) (64u + 16u * (metrics))

struct fake_data_image {
	uint32_t magic;       /* set by CounterDataImageInitialize */
	uint32_t metrics;     /* what it is sized for */
	uint32_t ranges;      /* decoded: ranges measured into it (0 once initialised) */
	uint32_t measured;    /* decoded: the number of the range (1, 2, ...) */
	uint32_t polluted;    /* decoded: copies or fills that ran inside the range */
	uint32_t partial;     /* decoded: not every pass was submitted */
};

#endif
