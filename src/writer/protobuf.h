/* A minimal protocol-buffers encoder into a growable byte buffer: varints, fixed64,
 * length-delimited fields and nested messages whose length is filled in when they are
 * closed. Enough for the Perfetto writer; no reflection, no schema. */
#ifndef GPUPROF_WRITER_PROTOBUF_H
#define GPUPROF_WRITER_PROTOBUF_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "util/strbuf.h"

enum { PB_VARINT = 0, PB_FIXED64 = 1, PB_LEN = 2 };

struct pb {
	uint8_t *buf;
	size_t len, alloc;
};

static inline void pb_reserve(struct pb *pb, size_t extra)
{
	if (pb->len + extra > pb->alloc) {
		pb->alloc = pb->alloc ? pb->alloc * 2 : 4096;
		if (pb->alloc < pb->len + extra)
			pb->alloc = pb->len + extra;
		pb->buf = xrealloc(pb->buf, pb->alloc);
	}
}

static inline size_t pb_varint_size(uint64_t v)
{
	size_t n = 1;
	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

/* The caller reserved 10 bytes. */
static inline void pb_raw_varint(struct pb *pb, uint64_t v)
{
	while (v >= 0x80) {
		pb->buf[pb->len++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	pb->buf[pb->len++] = (uint8_t)v;
}

static inline void pb_varint(struct pb *pb, uint32_t field, uint64_t v)
{
	pb_reserve(pb, 20);
	pb_raw_varint(pb, (uint64_t)field << 3 | PB_VARINT);
	pb_raw_varint(pb, v);
}

/* int64 fields: negative values take ten bytes, as protobuf encodes them. */
static inline void pb_int64(struct pb *pb, uint32_t field, int64_t v)
{
	pb_varint(pb, field, (uint64_t)v);
}

static inline void pb_fixed64(struct pb *pb, uint32_t field, uint64_t v)
{
	pb_reserve(pb, 18);
	pb_raw_varint(pb, (uint64_t)field << 3 | PB_FIXED64);
	for (int i = 0; i < 8; i++)
		pb->buf[pb->len++] = (uint8_t)(v >> (8 * i));
}

static inline void pb_bytes(struct pb *pb, uint32_t field, const void *data, size_t size)
{
	pb_reserve(pb, 20 + size);
	pb_raw_varint(pb, (uint64_t)field << 3 | PB_LEN);
	pb_raw_varint(pb, size);
	memcpy(pb->buf + pb->len, data, size);
	pb->len += size;
}

static inline void pb_string(struct pb *pb, uint32_t field, const char *s)
{
	pb_bytes(pb, field, s, strlen(s));
}

/* Opens a nested message; returns where its length goes, for pb_close(). One byte is
 * kept for the length, and the contents moved when it needs more. */
static inline size_t pb_open(struct pb *pb, uint32_t field)
{
	pb_reserve(pb, 11);
	pb_raw_varint(pb, (uint64_t)field << 3 | PB_LEN);
	pb->buf[pb->len++] = 0;
	return pb->len;
}

static inline void pb_close(struct pb *pb, size_t start)
{
	size_t size = pb->len - start, extra = pb_varint_size(size) - 1;
	if (extra) {
		pb_reserve(pb, extra);
		memmove(pb->buf + start + extra, pb->buf + start, size);
	}
	size_t at = start - 1;
	uint64_t v = size;
	while (v >= 0x80) {
		pb->buf[at++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	pb->buf[at] = (uint8_t)v;
	pb->len += extra;
}

#endif
