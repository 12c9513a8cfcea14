/* qsort for arrays that may be empty: C leaves qsort(NULL, 0, ...) undefined, and an
 * empty array here is often a NULL pointer. And a sort of pointers in place, for arrays
 * that grow with a run (glibc's qsort allocates a copy of the array). */
#ifndef GPUPROF_UTIL_SORT_H
#define GPUPROF_UTIL_SORT_H

#include <stdlib.h>

static inline void sort_array(void *base, size_t count, size_t size,
			      int (*compare)(const void *, const void *))
{
	if (count > 1)
		qsort(base, count, size, compare);
}

/* items sorted in place by compare (given pointers to two items, as qsort's), which
 * must order every two distinct items (the sort is not stable): no memory is taken. */
void sort_pointers(const void **items, size_t count, int (*compare)(const void *, const void *));

#endif
