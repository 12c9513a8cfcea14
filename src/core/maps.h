/* The ELF files a process maps, from its /proc/PID/maps: what the sampler records of its
 * own process (runtime/sampler.c) and gpuprof dump of another's, alike. */
#ifndef GPUPROF_CORE_MAPS_H
#define GPUPROF_CORE_MAPS_H

#include <stdint.h>

/* Calls each() once per file, in the order of the maps: its lowest and highest address
 * (a run of mappings of one file merged), the file offset mapped at the lowest, its path;
 * and once for the kernel's vDSO (path "[vdso]", offset 0). Mappings of no file are left
 * out. 0, or -1 when maps_path cannot be read. */
typedef void (*maps_module_fn)(void *arg, uint64_t start, uint64_t end, uint64_t offset,
			       const char *path);
int maps_modules(const char *maps_path, maps_module_fn each, void *arg);

#endif
