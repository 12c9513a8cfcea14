/* An in-place sort of pointers (see sort.h). */
#include "util/sort.h"

#include <stdint.h>

/* Below this many, insertion sort. */
#define SMALL 16

static void swap(const void **items, size_t a, size_t b)
{
	const void *t = items[a];
	items[a] = items[b];
	items[b] = t;
}

static void insertion(const void **items, size_t n, int (*compare)(const void *, const void *))
{
	for (size_t i = 1; i < n; i++)
		for (size_t j = i; j > 0 && compare(&items[j - 1], &items[j]) > 0; j--)
			swap(items, j - 1, j);
}

static void sift_down(const void **items, size_t root, size_t n,
		      int (*compare)(const void *, const void *))
{
	for (;;) {
		size_t child = 2 * root + 1;
		if (child >= n)
			return;
		if (child + 1 < n && compare(&items[child], &items[child + 1]) < 0)
			child++;
		if (compare(&items[root], &items[child]) >= 0)
			return;
		swap(items, root, child);
		root = child;
	}
}

static void heap(const void **items, size_t n, int (*compare)(const void *, const void *))
{
	for (size_t i = n / 2; i-- > 0;)
		sift_down(items, i, n, compare);
	for (size_t i = n; i-- > 1;) {
		swap(items, 0, i);
		sift_down(items, 0, i, compare);
	}
}

/* Quicksort with the median of three as pivot, the smaller part first; heapsort past a
 * depth of twice log2(n), so that no input takes quadratic time. */
static void intro(const void **items, size_t n, int depth,
		  int (*compare)(const void *, const void *))
{
	while (n > SMALL) {
		if (depth-- == 0) {
			heap(items, n, compare);
			return;
		}
		size_t mid = n / 2;
		if (compare(&items[mid], &items[0]) < 0)
			swap(items, mid, 0);
		if (compare(&items[n - 1], &items[0]) < 0)
			swap(items, n - 1, 0);
		if (compare(&items[n - 1], &items[mid]) < 0)
			swap(items, n - 1, mid);
		swap(items, mid, n - 2); /* the pivot, out of the way */
		size_t i = 0, j = n - 2;
		for (;;) {
			while (compare(&items[++i], &items[n - 2]) < 0)
				;
			while (j > 0 && compare(&items[--j], &items[n - 2]) > 0)
				;
			if (i >= j)
				break;
			swap(items, i, j);
		}
		swap(items, i, n - 2);
		if (i < n - 1 - i) {
			intro(items, i, depth, compare);
			items += i + 1;
			n -= i + 1;
		} else {
			intro(items + i + 1, n - i - 1, depth, compare);
			n = i;
		}
	}
	insertion(items, n, compare);
}

void sort_pointers(const void **items, size_t count, int (*compare)(const void *, const void *))
{
	int depth = 0;
	for (size_t n = count; n > 1; n >>= 1)
		depth += 2;
	if (count > 1)
		intro(items, count, depth, compare);
}
