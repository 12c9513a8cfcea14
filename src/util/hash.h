/* String hashing for the open-addressing tables (interned names, statistics). */
#ifndef GPUPROF_UTIL_HASH_H
#define GPUPROF_UTIL_HASH_H

#include <stdint.h>

/* 64-bit FNV-1a of a NUL-terminated string. */
static inline uint64_t hash_string(const char *s)
{
	uint64_t h = 1469598103934665603ull;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

#endif
