/* NVML, loaded at run time (dlopen of libnvidia-ml.so.1, or the library named in
 * GPUPROF_NVML_LIBRARY): never linked, so gpuprof runs where there is no NVIDIA driver.
 * The few functions used are declared in nvml.c, not taken from a CUDA header. */
#ifndef GPUPROF_METRICS_NVML_H
#define GPUPROF_METRICS_NVML_H

#include "util/strbuf.h"

/* What is read from each GPU; nvml_metric_name() and nvml_metric_unit() name them. */
enum gpu_metric {
	GPU_POWER, GPU_ENERGY, GPU_TEMPERATURE, GPU_SM_CLOCK, GPU_MEMORY_CLOCK,
	GPU_UTILIZATION, GPU_MEMORY_UTILIZATION, GPU_MEMORY_USED, GPU_MEMORY_USED_PERCENT,
	GPU_PCIE_TX, GPU_PCIE_RX, GPU_THROTTLE_REASONS, GPU_METRIC_COUNT
};

struct nvml;

/* Loads and initialises NVML; NULL with the reason in why when it cannot. */
struct nvml *nvml_open(struct strbuf *why);
unsigned nvml_device_count(const struct nvml *n);
/* The GPU's name ("NVIDIA H100 80GB HBM3"), "" when NVML does not say. */
const char *nvml_device_name(const struct nvml *n, unsigned device);
/* Reads one metric: 0 with *value set, 1 when the GPU or the driver does not support it
 * (it will not later either), -1 when this reading failed. */
int nvml_read(struct nvml *n, unsigned device, enum gpu_metric metric, double *value);
/* The memory bus width in bits and the maximum memory clock in MHz of the GPU whose UUID
 * is uuid (hex digits in groups of 8-4-4-4-12, as the database keeps it; NVML's "GPU-"
 * before it optional); each 0 when NVML has no such GPU here or does not say. */
void nvml_memory(const struct nvml *n, const char *uuid, unsigned *bus_bits,
		 unsigned *max_clock_mhz);
void nvml_close(struct nvml *n);

const char *nvml_metric_name(enum gpu_metric metric);
const char *nvml_metric_unit(enum gpu_metric metric);

#endif
