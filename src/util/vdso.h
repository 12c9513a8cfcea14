/* The vDSO: the kernel's code mapped into every process ([vdso] in /proc/PID/maps:
 * clock_gettime, gettimeofday), an ELF image in memory with no file behind it. A sample
 * taken there is unwound with the image of the process that reads the samples, when
 * its build-id says it is the same kernel's. */
#ifndef GPUPROF_UTIL_VDSO_H
#define GPUPROF_UTIL_VDSO_H

#include <stddef.h>

/* This process's vDSO image and its size in bytes (the extent its headers give); NULL
 * when there is none. */
const void *vdso_image(size_t *size);

/* The GNU build-id of this process's vDSO as hexadecimal into out (size > 40 for the
 * usual 20 bytes); 0, or -1 when it has none. */
int vdso_build_id(char *out, size_t size);

#endif
