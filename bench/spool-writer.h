/* Writing a synthetic spool, for the benchmarks' generators (make-spool.c,
 * make-ranks.c): records gathered into chunks of 1 MiB, strings by id. */
#ifndef GPUPROF_BENCH_SPOOL_WRITER_H
#define GPUPROF_BENCH_SPOOL_WRITER_H

#include <string.h>

#include "core/record.h"
#include "core/spool.h"

#define CHUNK (1 << 20)

static unsigned char chunk[CHUNK];
static size_t used;
static unsigned count;

static void put(int fd, const void *record)
{
	const struct record_header *h = record;
	if (used + h->size > CHUNK) {
		spool_write_chunk(fd, chunk, (uint32_t)used, count, NULL);
		used = count = 0;
	}
	memcpy(chunk + used, record, h->size);
	used += h->size;
	count++;
}

static void put_string(int fd, uint32_t id, const char *text)
{
	unsigned char buffer[256] = { 0 };
	struct record_string *s = (void *)buffer;
	size_t len = strlen(text);
	s->header = (struct record_header){ RECORD_PADDED((uint32_t)(sizeof(*s) + len)), RECORD_STRING, 0 };
	s->id = id;
	s->length = (uint32_t)len;
	memcpy(s->text, text, len);
	put(fd, s);
}

/* The last chunk. */
static void put_end(int fd)
{
	spool_write_chunk(fd, chunk, (uint32_t)used, count, NULL);
	used = count = 0;
}

#endif
