/* qsort for arrays that may be empty: C leaves qsort(NULL, 0, ...) undefined, and an
 * empty array here is often a NULL pointer. */
#ifndef GPUPROF_UTIL_SORT_H
#define GPUPROF_UTIL_SORT_H

#include <stdlib.h>

static inline void sort_array(void *base, size_t count, size_t size,
			      int (*compare)(const void *, const void *))
{
	if (count > 1)
		qsort(base, count, size, compare);
}

#endif
