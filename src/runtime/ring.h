/* The byte ring through which a thread hands its records to the recorder's writer
 * thread without a lock (runtime/recorder.c keeps one per thread, and one for the
 * metadata). */
#ifndef GPUPROF_RUNTIME_RING_H
#define GPUPROF_RUNTIME_RING_H

#include <stdatomic.h>
#include <stdint.h>

/* A single-producer, single-consumer byte ring. The producer is the thread that owns
 * it (or whoever holds metadata_lock, for the metadata ring); the consumer is the
 * writer thread. head and tail count bytes since the ring was created; records are
 * whole between tail and head and may wrap around the end of `data`. */
struct ring {
	_Atomic uint64_t head;
	_Atomic uint64_t tail;
	_Atomic uint64_t dropped_records; /* since the writer last reported them */
	_Atomic uint64_t dropped_bytes;
	_Atomic int owned;     /* 1 while a live thread produces into it */
	_Atomic int wake_sent; /* the producer asked the writer to drain early */
	uint64_t capacity;     /* bytes, a power of two */
	unsigned char *data;
	struct ring *next;     /* registry list; rings are never freed */
};

/* Allocates the ring's `capacity` bytes (a power of two): 0, or -1 without memory. */
int ring_init(struct ring *r, uint64_t capacity);

/* Producer side: copies one record in, or returns -1 (counting it as dropped when
 * count_drop is set). Past half full it writes to wake_fd (when >= 0), once until the
 * writer drains it, so that the writer drains early. */
int ring_put(struct ring *r, const void *record, uint32_t size, int count_drop, int wake_fd);

/* Consumer side (the writer): every whole record in the ring, in place, as up to two
 * pieces (*second where they wrap around the end of data, else 0 bytes): their bytes.
 * They stay the consumer's until ring_release(). */
uint64_t ring_peek(struct ring *r, const unsigned char **first, uint64_t *first_size,
		   const unsigned char **second);
/* Gives the `size` bytes peeked back to the producer; *lost_records and *lost_bytes
 * take the drops counted since the last call. */
void ring_release(struct ring *r, uint64_t size, uint64_t *lost_records, uint64_t *lost_bytes);

#endif
