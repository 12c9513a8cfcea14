/* A stand-in for libgpuprof-cupti-host.so for tests/e2e/cupti-replay: the counter data
 * image fake-cupti.c fills holds the number of the range measured (1, 2, ...), and metric
 * i of range r evaluates to 1000 * r + i, so that each kernel's counters say which
 * measurement they came from. Not part of gpuprof. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../inject/cupti-host.h"

static int host_object;

GPUPROF_HOST_API void *gpuprof_host_open_device(const char *chip, const uint8_t *availability)
{
	return &host_object;
}

GPUPROF_HOST_API int gpuprof_host_config(void *host, const char *const *names, size_t count,
					 uint8_t **image, size_t *size)
{
	*image = calloc(1, 8);
	*size = 8;
	return *image ? 0 : -1;
}

GPUPROF_HOST_API int gpuprof_host_evaluate(void *host, const uint8_t *counter_data, size_t size,
					   size_t range, const char *const *names, size_t count,
					   double *values)
{
	unsigned measured;
	memcpy(&measured, counter_data, sizeof(measured));
	for (size_t i = 0; i < count; i++)
		values[i] = 1000.0 * measured + (double)i;
	return 0;
}
