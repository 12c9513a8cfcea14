/* The records' byte ring (see ring.h). head and tail only grow; the producer moves head
 * after its copy (release), the consumer tail once it wrote the bytes out in place
 * (release). */
#include "runtime/ring.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int ring_init(struct ring *r, uint64_t capacity)
{
	r->data = malloc(capacity);
	if (!r->data)
		return -1;
	r->capacity = capacity;
	return 0;
}

int ring_put(struct ring *r, const void *record, uint32_t size, int count_drop, int wake_fd)
{
	uint64_t head = atomic_load_explicit(&r->head, memory_order_relaxed);
	uint64_t tail = atomic_load_explicit(&r->tail, memory_order_acquire);
	if (r->capacity - (head - tail) < size) {
		if (!count_drop)
			return -1;
		atomic_fetch_add_explicit(&r->dropped_records, 1, memory_order_relaxed);
		atomic_fetch_add_explicit(&r->dropped_bytes, size, memory_order_relaxed);
		return -1;
	}
	uint64_t at = head & (r->capacity - 1);
	uint64_t first = r->capacity - at < size ? r->capacity - at : size;
	memcpy(r->data + at, record, first);
	memcpy(r->data, (const unsigned char *)record + first, size - first);
	atomic_store_explicit(&r->head, head + size, memory_order_release);
	if (head + size - tail > r->capacity / 2 &&
	    !atomic_load_explicit(&r->wake_sent, memory_order_relaxed) && wake_fd >= 0) {
		atomic_store_explicit(&r->wake_sent, 1, memory_order_relaxed);
		uint64_t one = 1;
		ssize_t ignored = write(wake_fd, &one, sizeof(one));
		(void)ignored;
	}
	return 0;
}

uint64_t ring_peek(struct ring *r, const unsigned char **first, uint64_t *first_size,
		   const unsigned char **second)
{
	uint64_t head = atomic_load_explicit(&r->head, memory_order_acquire);
	uint64_t tail = atomic_load_explicit(&r->tail, memory_order_relaxed);
	uint64_t size = head - tail, at = tail & (r->capacity - 1);
	*first = r->data + at;
	*first_size = r->capacity - at < size ? r->capacity - at : size;
	*second = r->data;
	return size;
}

void ring_release(struct ring *r, uint64_t size, uint64_t *lost_records, uint64_t *lost_bytes)
{
	if (size)
		atomic_store_explicit(&r->tail, atomic_load_explicit(&r->tail, memory_order_relaxed) +
						       size, memory_order_release);
	atomic_store_explicit(&r->wake_sent, 0, memory_order_relaxed);
	*lost_records = atomic_exchange(&r->dropped_records, 0);
	*lost_bytes = atomic_exchange(&r->dropped_bytes, 0);
}
