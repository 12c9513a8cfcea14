/* Hashing for the open-addressing tables (interned names, statistics, tracks). */
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

/* A 64-bit mix of an integer (splitmix64's finalizer). */
static inline uint64_t hash_int(uint64_t x)
{
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

#endif
