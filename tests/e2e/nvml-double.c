/* A test double of NVML for the device metrics tests, loaded by gpuprof through
 * GPUPROF_NVML_LIBRARY instead of libnvidia-ml.so.1: two GPUs with fixed readings that
 * the tests check exactly, one query that GPU 1 does not support, and an energy counter
 * that grows by 5 J at each reading of a GPU (NVML's counts from the driver's start).
 *
 *   GPU i: "Test GPU i", power 100 + i W, temperature 40 + i C, SM clock 1500 MHz,
 *   memory clock 2600 MHz, utilization 75 %, memory bandwidth 30 %, 20 of 80 GiB used,
 *   PCIe 1000 KB/s sent and 2000 KB/s received (GPU 0 only), clock event reasons 4;
 *   memory bus 4096 bits (GPU 0) and 5120 bits (GPU 1), maximum memory clock 2619 MHz. */
#include <stdint.h>
#include <string.h>

typedef int nvmlReturn_t;
typedef struct test_gpu *nvmlDevice_t;
struct test_gpu {
	unsigned index;
	unsigned long long energy_mj;
};
struct utilization { unsigned int gpu, memory; };
struct memory { unsigned long long total, free, used; };

enum { SUCCESS = 0, INVALID_ARGUMENT = 2, NOT_SUPPORTED = 3, UNINITIALIZED = 1 };

static struct test_gpu gpus[2] = { { 0, 1000000 }, { 1, 2000000 } };
static int initialized;

nvmlReturn_t nvmlInit_v2(void)
{
	initialized = 1;
	return SUCCESS;
}

nvmlReturn_t nvmlShutdown(void)
{
	initialized = 0;
	return SUCCESS;
}

const char *nvmlErrorString(nvmlReturn_t rc)
{
	return rc == SUCCESS ? "Success" : "Test error";
}

nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *count)
{
	if (!initialized)
		return UNINITIALIZED;
	*count = 2;
	return SUCCESS;
}

nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t *device)
{
	if (index >= 2)
		return INVALID_ARGUMENT;
	*device = &gpus[index];
	return SUCCESS;
}

/* A text answer into the caller's buffer of length bytes, as NVML gives it. */
static nvmlReturn_t answer_text(char *out, unsigned int length, const char *text)
{
	if (length < strlen(text) + 1)
		return INVALID_ARGUMENT;
	strcpy(out, text);
	return SUCCESS;
}

nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t d, char *name, unsigned int length)
{
	char text[32] = "Test GPU ";
	text[9] = (char)('0' + d->index);
	return answer_text(name, length, text);
}

nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t d, unsigned int *milliwatts)
{
	*milliwatts = 100000 + 1000 * d->index;
	return SUCCESS;
}

nvmlReturn_t nvmlDeviceGetTotalEnergyConsumption(nvmlDevice_t d, unsigned long long *mj)
{
	*mj = d->energy_mj;
	d->energy_mj += 5000;
	return SUCCESS;
}

nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t d, int sensor, unsigned int *celsius)
{
	if (sensor != 0)
		return INVALID_ARGUMENT;
	*celsius = 40 + d->index;
	return SUCCESS;
}

nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t d, int type, unsigned int *mhz)
{
	(void)d;
	if (type != 1 && type != 2) /* SM, memory */
		return INVALID_ARGUMENT;
	*mhz = type == 1 ? 1500 : 2600;
	return SUCCESS;
}

nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t d, struct utilization *u)
{
	(void)d;
	u->gpu = 75;
	u->memory = 30;
	return SUCCESS;
}

nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t d, struct memory *m)
{
	(void)d;
	m->total = 80ull << 30;
	m->used = 20ull << 30;
	m->free = m->total - m->used;
	return SUCCESS;
}

nvmlReturn_t nvmlDeviceGetPcieThroughput(nvmlDevice_t d, int counter, unsigned int *kbps)
{
	if (d->index == 1)
		return NOT_SUPPORTED;
	if (counter != 0 && counter != 1) /* sent, received */
		return INVALID_ARGUMENT;
	*kbps = counter == 0 ? 1000 : 2000;
	return SUCCESS;
}

nvmlReturn_t nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t d, unsigned long long *reasons)
{
	(void)d;
	*reasons = 4;
	return SUCCESS;
}

/* GPU 1's UUID is that of the device of tests/e2e/cuda-spool.c (as NVML writes it, in
 * capitals), so that a workload made from its database finds it here. */
nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t d, char *uuid, unsigned int length)
{
	return answer_text(uuid, length, d->index == 1 ? "GPU-00112233-4455-6670-8192-A3B4C5D6E0F1"
							: "GPU-0badc0de-0000-0000-0000-000000000000");
}

nvmlReturn_t nvmlDeviceGetMemoryBusWidth(nvmlDevice_t d, unsigned int *bits)
{
	*bits = d->index == 1 ? 5120 : 4096;
	return SUCCESS;
}

nvmlReturn_t nvmlDeviceGetMaxClockInfo(nvmlDevice_t d, int type, unsigned int *mhz)
{
	(void)d;
	if (type != 0 && type != 1 && type != 2) /* graphics, SM, memory */
		return INVALID_ARGUMENT;
	*mhz = type == 2 ? 2619 : 1980;
	return SUCCESS;
}
