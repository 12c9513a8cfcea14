/* A stand-in for libgpuprof-cupti-host.so for tests/e2e/cupti-replay (the image layouts:
 * fake-images.h). As CUPTI's host API: a host object per open, whose configuration only
 * grows as metrics are added; a configuration image says how many it holds. Metric i of
 * the r-th range measured evaluates to 1000 * r + i, plus 500000 where a copy or fill
 * ran inside the range, so that each kernel's counters say which measurement they came
 * from and whether another thread's work was counted in it. Not part of gpuprof. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../inject/cupti-host.h"
#include "fake-images.h"

struct host {
	uint32_t metrics;
};

GPUPROF_HOST_API void *gpuprof_host_open_device(const char *chip, const uint8_t *availability)
{
	return calloc(1, sizeof(struct host));
}

GPUPROF_HOST_API void gpuprof_host_close(void *host)
{
	free(host);
}

GPUPROF_HOST_API int gpuprof_host_config(void *host, const char *const *names, size_t count,
					 uint8_t **image, size_t *size)
{
	struct host *h = host;
	h->metrics += (uint32_t)count; /* added to what it holds */
	struct fake_config_image *c = malloc(sizeof(*c));
	if (!c)
		return -1;
	c->magic = FAKE_CONFIG_MAGIC;
	c->metrics = h->metrics;
	*image = (uint8_t *)c;
	*size = sizeof(*c);
	return 0;
}

GPUPROF_HOST_API int gpuprof_host_evaluate(void *host, const uint8_t *counter_data, size_t size,
					   size_t range, const char *const *names, size_t count,
					   double *values)
{
	struct fake_data_image d;
	if (size < sizeof(d))
		return -1;
	memcpy(&d, counter_data, sizeof(d));
	if (d.magic != FAKE_DATA_MAGIC || range >= d.ranges)
		return -1;
	for (size_t i = 0; i < count; i++)
		values[i] = 1000.0 * d.measured + (double)i + (d.polluted ? 500000.0 : 0.0);
	return 0;
}
