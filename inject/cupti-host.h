/* The C functions of libgpuprof-cupti-host.so (src/compute/cupti-host.cpp: CUPTI's
 * profiler host API), found with dlsym by the two that load it: gpuprof
 * (src/compute/host.h) and the CUDA backend (inject/cuda/counters.c). The library's
 * interface alone, as inject/roofline-result.h is the roofline programs'. */
#ifndef GPUPROF_INJECT_CUPTI_HOST_H
#define GPUPROF_INJECT_CUPTI_HOST_H

#include <stddef.h>
#include <stdint.h>

#define GPUPROF_HOST_API __attribute__((visibility("default")))

enum host_metric_type { HOST_METRIC_COUNTER, HOST_METRIC_RATIO, HOST_METRIC_THROUGHPUT };

#ifdef __cplusplus
extern "C" {
#endif
/* The functions of the library, each with this signature (found with dlsym). */
typedef int (*host_chips_fn)(const char *const **names, size_t *count);
/* The chip of CUDA device `device` (GH100 for an H100), NULL without one. */
typedef const char *(*host_device_chip_fn)(int device);
typedef void *(*host_open_fn)(const char *chip);
typedef void (*host_close_fn)(void *host);
typedef int (*host_base_metrics_fn)(void *host, int type, const char *const **names,
				    size_t *count);
/* The passes count metrics take together on chip: 0, or -1 (*refused: the index of the
 * first name the chip does not have, count when none is to blame). */
typedef int (*host_passes_fn)(const char *chip, const char *const *names, size_t count,
			      size_t *passes, size_t *refused);
/* For a collection (the CUDA backend): a host object for the chip of a device and its
 * counter availability image (may be NULL); the configuration image of metrics added to
 * it (malloc()ed); the values of those metrics in range `range` of a decoded counter
 * data image. 0, or -1. */
typedef void *(*host_open_device_fn)(const char *chip, const uint8_t *availability);
typedef int (*host_config_fn)(void *host, const char *const *names, size_t count,
			      uint8_t **image, size_t *size);
typedef int (*host_evaluate_fn)(void *host, const uint8_t *counter_data, size_t size,
				size_t range, const char *const *names, size_t count,
				double *values);
#ifdef __cplusplus
}
#endif

#endif
