/* NVML through dlopen (see nvml.h). */
#include "metrics/nvml.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* The NVML API as documented in NVIDIA's nvml.h (CUDA 12/13 drivers). */
typedef int nvml_return;
typedef void *nvml_device;
enum {
	NVML_SUCCESS = 0, NVML_ERROR_NOT_SUPPORTED = 3, NVML_ERROR_NO_PERMISSION = 4,
	NVML_ERROR_FUNCTION_NOT_FOUND = 13,
	NVML_TEMPERATURE_GPU = 0, NVML_CLOCK_SM = 1, NVML_CLOCK_MEM = 2,
	NVML_PCIE_UTIL_TX_BYTES = 0, NVML_PCIE_UTIL_RX_BYTES = 1,
	NAME_SIZE = 96, /* NVML_DEVICE_NAME_V2_BUFFER_SIZE */
	UUID_SIZE = 96, /* NVML_DEVICE_UUID_V2_BUFFER_SIZE */
};
struct nvml_utilization { unsigned int gpu, memory; };
struct nvml_memory { unsigned long long total, free, used; };

#define MAX_DEVICES 64

struct nvml {
	void *library;
	nvml_return (*init)(void);
	nvml_return (*shutdown)(void);
	const char *(*error_string)(nvml_return);
	nvml_return (*device_count)(unsigned int *);
	nvml_return (*device_by_index)(unsigned int, nvml_device *);
	nvml_return (*device_name)(nvml_device, char *, unsigned int);
	nvml_return (*power)(nvml_device, unsigned int *);
	nvml_return (*energy)(nvml_device, unsigned long long *);
	nvml_return (*temperature)(nvml_device, int, unsigned int *);
	nvml_return (*clock)(nvml_device, int, unsigned int *);
	nvml_return (*utilization)(nvml_device, struct nvml_utilization *);
	nvml_return (*memory)(nvml_device, struct nvml_memory *);
	nvml_return (*pcie)(nvml_device, int, unsigned int *);
	nvml_return (*throttle)(nvml_device, unsigned long long *);
	nvml_return (*uuid)(nvml_device, char *, unsigned int);
	nvml_return (*bus_width)(nvml_device, unsigned int *);
	nvml_return (*max_clock)(nvml_device, int, unsigned int *);
	unsigned count;
	nvml_device devices[MAX_DEVICES];
	char names[MAX_DEVICES][NAME_SIZE];
};

static const struct {
	const char *name, *unit;
} metrics[GPU_METRIC_COUNT] = {
	[GPU_POWER] = { "power", "W" },
	[GPU_ENERGY] = { "energy", "J" },
	[GPU_TEMPERATURE] = { "temperature", "C" },
	[GPU_SM_CLOCK] = { "SM clock", "MHz" },
	[GPU_MEMORY_CLOCK] = { "memory clock", "MHz" },
	[GPU_UTILIZATION] = { "utilization", "%" },
	[GPU_MEMORY_UTILIZATION] = { "memory bandwidth utilization", "%" },
	[GPU_MEMORY_USED] = { "memory used", "bytes" },
	[GPU_MEMORY_USED_PERCENT] = { "memory used %", "%" },
	[GPU_PCIE_TX] = { "PCIe sent", "bytes/s" },
	[GPU_PCIE_RX] = { "PCIe received", "bytes/s" },
	[GPU_THROTTLE_REASONS] = { "clock event reasons", "bitmask" },
};

const char *nvml_metric_name(enum gpu_metric metric)
{
	return metrics[metric].name;
}

const char *nvml_metric_unit(enum gpu_metric metric)
{
	return metrics[metric].unit;
}

static void *symbol(struct nvml *n, const char *name, const char *fallback)
{
	void *f = dlsym(n->library, name);
	return f || !fallback ? f : dlsym(n->library, fallback);
}

struct nvml *nvml_open(struct strbuf *why)
{
	const char *path = getenv("GPUPROF_NVML_LIBRARY");
	if (!path || !*path)
		path = "libnvidia-ml.so.1";
	void *library = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!library) {
		const char *error = dlerror();
		strbuf_addf(why, "NVML cannot be loaded (%s): no NVIDIA driver here",
			    error ? error : path);
		return NULL;
	}
	struct nvml *n = xcalloc(1, sizeof(*n));
	n->library = library;
	*(void **)&n->init = symbol(n, "nvmlInit_v2", "nvmlInit");
	*(void **)&n->shutdown = symbol(n, "nvmlShutdown", NULL);
	*(void **)&n->error_string = symbol(n, "nvmlErrorString", NULL);
	*(void **)&n->device_count = symbol(n, "nvmlDeviceGetCount_v2", "nvmlDeviceGetCount");
	*(void **)&n->device_by_index = symbol(n, "nvmlDeviceGetHandleByIndex_v2",
					       "nvmlDeviceGetHandleByIndex");
	*(void **)&n->device_name = symbol(n, "nvmlDeviceGetName", NULL);
	*(void **)&n->power = symbol(n, "nvmlDeviceGetPowerUsage", NULL);
	*(void **)&n->energy = symbol(n, "nvmlDeviceGetTotalEnergyConsumption", NULL);
	*(void **)&n->temperature = symbol(n, "nvmlDeviceGetTemperature", NULL);
	*(void **)&n->clock = symbol(n, "nvmlDeviceGetClockInfo", NULL);
	*(void **)&n->utilization = symbol(n, "nvmlDeviceGetUtilizationRates", NULL);
	*(void **)&n->memory = symbol(n, "nvmlDeviceGetMemoryInfo", NULL);
	*(void **)&n->pcie = symbol(n, "nvmlDeviceGetPcieThroughput", NULL);
	*(void **)&n->throttle = symbol(n, "nvmlDeviceGetCurrentClocksEventReasons",
					"nvmlDeviceGetCurrentClocksThrottleReasons");
	*(void **)&n->uuid = symbol(n, "nvmlDeviceGetUUID", NULL);
	*(void **)&n->bus_width = symbol(n, "nvmlDeviceGetMemoryBusWidth", NULL);
	*(void **)&n->max_clock = symbol(n, "nvmlDeviceGetMaxClockInfo", NULL);
	nvml_return rc = -1;
	if (!n->init || !n->shutdown || !n->device_count || !n->device_by_index) {
		strbuf_addf(why, "'%s' lacks the NVML functions gpuprof needs", path);
	} else if ((rc = n->init()) != NVML_SUCCESS) {
		strbuf_addf(why, "NVML did not start: %s",
			    n->error_string ? n->error_string(rc) : "error");
	} else if ((rc = n->device_count(&n->count)) != NVML_SUCCESS || !n->count) {
		strbuf_addstr(why, "NVML sees no GPU");
		n->shutdown();
		rc = -1;
	}
	if (rc != NVML_SUCCESS) {
		dlclose(library);
		free(n);
		return NULL;
	}
	if (n->count > MAX_DEVICES)
		n->count = MAX_DEVICES;
	for (unsigned i = 0; i < n->count; i++)
		if (n->device_by_index(i, &n->devices[i]) != NVML_SUCCESS)
			n->devices[i] = NULL;
		else if (!n->device_name || n->device_name(n->devices[i], n->names[i], NAME_SIZE))
			n->names[i][0] = '\0';
		else
			n->names[i][NAME_SIZE - 1] = '\0';
	return n;
}

unsigned nvml_device_count(const struct nvml *n)
{
	return n->count;
}

const char *nvml_device_name(const struct nvml *n, unsigned device)
{
	return n->names[device];
}

int nvml_read(struct nvml *n, unsigned device, enum gpu_metric metric, double *value)
{
	nvml_device d = n->devices[device];
	unsigned int u = 0;
	unsigned long long ull = 0;
	struct nvml_utilization utilization;
	struct nvml_memory memory;
	nvml_return rc = NVML_ERROR_FUNCTION_NOT_FOUND;
	if (!d)
		return 1;
	switch (metric) {
	case GPU_POWER:
		if (n->power && (rc = n->power(d, &u)) == NVML_SUCCESS)
			*value = u / 1000.0; /* mW */
		break;
	case GPU_ENERGY:
		if (n->energy && (rc = n->energy(d, &ull)) == NVML_SUCCESS)
			*value = (double)ull / 1000.0; /* mJ since the driver loaded */
		break;
	case GPU_TEMPERATURE:
		if (n->temperature && (rc = n->temperature(d, NVML_TEMPERATURE_GPU, &u)) == NVML_SUCCESS)
			*value = u;
		break;
	case GPU_SM_CLOCK:
	case GPU_MEMORY_CLOCK:
		if (n->clock && (rc = n->clock(d, metric == GPU_SM_CLOCK ? NVML_CLOCK_SM : NVML_CLOCK_MEM,
					       &u)) == NVML_SUCCESS)
			*value = u;
		break;
	case GPU_UTILIZATION:
	case GPU_MEMORY_UTILIZATION:
		if (n->utilization && (rc = n->utilization(d, &utilization)) == NVML_SUCCESS)
			*value = metric == GPU_UTILIZATION ? utilization.gpu : utilization.memory;
		break;
	case GPU_MEMORY_USED:
	case GPU_MEMORY_USED_PERCENT:
		if (n->memory && (rc = n->memory(d, &memory)) == NVML_SUCCESS)
			*value = metric == GPU_MEMORY_USED ? (double)memory.used
				 : memory.total ? 100.0 * (double)memory.used / (double)memory.total : 0;
		break;
	case GPU_PCIE_TX:
	case GPU_PCIE_RX:
		if (n->pcie && (rc = n->pcie(d, metric == GPU_PCIE_TX ? NVML_PCIE_UTIL_TX_BYTES
						: NVML_PCIE_UTIL_RX_BYTES, &u)) == NVML_SUCCESS)
			*value = u * 1024.0; /* KB/s */
		break;
	case GPU_THROTTLE_REASONS:
		if (n->throttle && (rc = n->throttle(d, &ull)) == NVML_SUCCESS)
			*value = (double)ull;
		break;
	case GPU_METRIC_COUNT:
		break;
	}
	if (rc == NVML_SUCCESS)
		return 0;
	return rc == NVML_ERROR_NOT_SUPPORTED || rc == NVML_ERROR_FUNCTION_NOT_FOUND ||
	       rc == NVML_ERROR_NO_PERMISSION ? 1 : -1;
}

void nvml_memory(const struct nvml *n, const char *uuid, unsigned *bus_bits,
		 unsigned *max_clock_mhz)
{
	*bus_bits = *max_clock_mhz = 0;
	if (!n->uuid || !uuid || !*uuid)
		return;
	if (!strncasecmp(uuid, "GPU-", 4))
		uuid += 4;
	for (unsigned i = 0; i < n->count; i++) {
		char text[UUID_SIZE];
		nvml_device d = n->devices[i];
		if (!d || n->uuid(d, text, sizeof(text)) != NVML_SUCCESS)
			continue;
		text[sizeof(text) - 1] = '\0';
		if (strcasecmp(strncasecmp(text, "GPU-", 4) ? text : text + 4, uuid))
			continue;
		unsigned int value;
		if (n->bus_width && n->bus_width(d, &value) == NVML_SUCCESS)
			*bus_bits = value;
		if (n->max_clock && n->max_clock(d, NVML_CLOCK_MEM, &value) == NVML_SUCCESS)
			*max_clock_mhz = value;
		return;
	}
}

void nvml_close(struct nvml *n)
{
	if (!n)
		return;
	n->shutdown();
	dlclose(n->library);
	free(n);
}
