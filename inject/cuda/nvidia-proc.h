/* What the NVIDIA kernel driver says about its GPUs under /proc/driver/nvidia, for the
 * device facts CUPTI does not give: PCI location and driver version. */
#ifndef GPUPROF_INJECT_CUDA_NVIDIA_PROC_H
#define GPUPROF_INJECT_CUDA_NVIDIA_PROC_H

#include <stddef.h>

#include "core/record.h"

/* Fills the agent's PCI location from the GPU directory under `root` (normally
 * "/proc/driver/nvidia") whose information file names the agent's UUID, and writes the
 * driver version into `version` ("" when unknown). Leaves fields it cannot find as
 * they are. */
void nvidia_proc_describe(const char *root, struct record_agent *agent, char *version,
			  size_t version_size);

#endif
