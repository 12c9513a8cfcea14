/* The spool: the append-only, crash-safe file each recorded process writes
 * (specified in docs/FORMAT.md). A file header is followed by chunks; each chunk is
 * written with one write() call and carries its length and a CRC-32 of its payload, so
 * a reader keeps every complete chunk of a process that died mid-write. */
#ifndef GPUPROF_CORE_SPOOL_H
#define GPUPROF_CORE_SPOOL_H

#include <stddef.h>
#include <stdint.h>

#include "core/record.h"
#include "util/error.h"

#define SPOOL_MAGIC "GPUPSPL\n"
#define SPOOL_VERSION 3
#define SPOOL_MIN_READER_VERSION 2 /* the oldest reader version that can read this file */
#define SPOOL_OLDEST_READABLE 3    /* older spools have shorter records: refused */
#define SPOOL_CHUNK_MAGIC 0x4b4e4843u /* "CHNK" */

struct spool_file_header {
	char magic[8];                /* SPOOL_MAGIC */
	uint16_t version;             /* SPOOL_VERSION of the writer */
	uint16_t min_reader_version;  /* readers older than this must refuse the file */
	uint32_t header_size;         /* bytes; readers skip what they do not know */
	uint64_t features;            /* feature bits; none defined in version 1 */
	uint64_t reserved;
};

struct spool_chunk_header {
	uint32_t magic;        /* SPOOL_CHUNK_MAGIC */
	uint32_t payload_size; /* bytes of records that follow */
	uint32_t crc32;        /* CRC-32 (IEEE) of the payload */
	uint32_t record_count;
};

uint32_t spool_crc32(const void *data, size_t len);
/* The CRC of the bytes before these (crc) and these together. */
uint32_t spool_crc32_more(uint32_t crc, const void *data, size_t len);

/* Writes the file header into a freshly created file. */
int spool_write_header(int fd, struct error *err);
/* Writes one chunk (header and payload) with a single write() where possible. */
int spool_write_chunk(int fd, const void *payload, uint32_t size, uint32_t count,
		      struct error *err);
/* The same with a payload in two pieces, one after the other (a ring's bytes where they
 * wrap around its end; the second may be empty): the chunk as one write, with no copy of
 * its own. */
int spool_write_chunk2(int fd, const void *first, uint32_t first_size, const void *second,
		       uint32_t second_size, uint32_t count, struct error *err);

/* Reading. The whole file is mapped; records are checked chunk by chunk. */
struct spool_reader {
	const char *path;
	const unsigned char *data;
	size_t size;
	size_t offset;          /* next chunk */
	const unsigned char *chunk_end;
	const unsigned char *cursor; /* next record in the current chunk */
	uint16_t version;
	size_t truncated_bytes; /* bytes of an incomplete last chunk, ignored */
};

int spool_reader_open(struct spool_reader *reader, const char *path, struct error *err);
/* Returns 1 and sets *record, 0 at the end, -1 on corruption (err says where). */
int spool_reader_next(struct spool_reader *reader, const struct record_header **record,
		      struct error *err);
/* The length of the file up to the end of its last whole chunk, found from the chunk
 * headers alone: a writer appending later chunks cuts the file there first. An
 * incomplete last chunk (or a tail of zeros) is left out; a corrupt one is not, so that
 * nothing after it is lost. */
size_t spool_reader_whole_length(const struct spool_reader *reader);
void spool_reader_release(struct spool_reader *reader);

/* 1 when the first bytes at path are a spool's magic, 0 otherwise. */
int spool_is_spool(const char *path);

#endif
