/* Spool file writing and reading (see spool.h and docs/FORMAT.md). */
#include "core/spool.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>
#include <zlib.h>
#ifdef HAVE_ISAL
#include <isa-l/crc.h>
#endif

uint32_t spool_crc32_more(uint32_t crc, const void *data, size_t len)
{
#ifdef HAVE_ISAL
	/* zlib's value, with the CPU's carry-less multiplication where it has one */
	return crc32_gzip_refl(crc, data, len);
#else
	const Bytef *p = data;
	while (len > 0) { /* zlib takes uInt lengths */
		uInt n = len > (1u << 30) ? 1u << 30 : (uInt)len;
		crc = (uint32_t)crc32(crc, p, n);
		p += n;
		len -= n;
	}
	return crc;
#endif
}

uint32_t spool_crc32(const void *data, size_t len)
{
	return spool_crc32_more(0, data, len);
}

static int write_all(int fd, struct iovec *iov, int count, struct error *err)
{
	while (count > 0) {
		ssize_t n = writev(fd, iov, count);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return error_set(err, "%s", strerror(errno));
		}
		while (count > 0 && (size_t)n >= iov->iov_len) {
			n -= (ssize_t)iov->iov_len;
			iov++;
			count--;
		}
		if (count > 0) {
			iov->iov_base = (char *)iov->iov_base + n;
			iov->iov_len -= (size_t)n;
		}
	}
	return 0;
}

int spool_write_header(int fd, struct error *err)
{
	struct spool_file_header header = {
		.version = SPOOL_VERSION,
		.min_reader_version = SPOOL_MIN_READER_VERSION,
		.header_size = sizeof(header),
	};
	memcpy(header.magic, SPOOL_MAGIC, sizeof(header.magic));
	struct iovec iov = { &header, sizeof(header) };
	return write_all(fd, &iov, 1, err);
}

int spool_write_chunk(int fd, const void *payload, uint32_t size, uint32_t count,
		      struct error *err)
{
	return spool_write_chunk2(fd, payload, size, NULL, 0, count, err);
}

int spool_write_chunk2(int fd, const void *first, uint32_t first_size, const void *second,
		       uint32_t second_size, uint32_t count, struct error *err)
{
	uint32_t size = first_size + second_size;
	struct spool_chunk_header chunk = {
		.magic = SPOOL_CHUNK_MAGIC,
		.payload_size = size,
		.crc32 = spool_crc32_more(spool_crc32(first, first_size), second, second_size),
		.record_count = count,
	};
	struct iovec iov[3] = { { &chunk, sizeof(chunk) }, { (void *)first, first_size },
				{ (void *)second, second_size } };
	/* A chunk written in part (a full disk) is cut off again, so that the spool stays a
	 * sequence of whole chunks that later ones can follow. */
	off_t before = lseek(fd, 0, SEEK_END);
	/* Nor is one written past the file-size limit (ulimit -f): the kernel would answer
	 * with SIGXFSZ to the whole process, which ends the program that is recorded. */
	struct rlimit limit;
	if (before >= 0 && getrlimit(RLIMIT_FSIZE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY &&
	    (uint64_t)before + sizeof(chunk) + size > (uint64_t)limit.rlim_cur)
		return error_set(err, "the file size limit (ulimit -f, %llu bytes) is reached",
				 (unsigned long long)limit.rlim_cur);
	if (write_all(fd, iov, second_size ? 3 : 2, err) == 0)
		return 0;
	if (before >= 0 && ftruncate(fd, before) < 0)
		error_set(err, "%s (and the incomplete chunk could not be removed: %s)", err->message,
			  strerror(errno));
	return -1;
}

int spool_is_spool(const char *path)
{
	char magic[8];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	ssize_t n = read(fd, magic, sizeof(magic));
	close(fd);
	return n == (ssize_t)sizeof(magic) && !memcmp(magic, SPOOL_MAGIC, sizeof(magic));
}

int spool_reader_open(struct spool_reader *reader, const char *path, struct error *err)
{
	memset(reader, 0, sizeof(*reader));
	reader->path = path;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return error_set(err, "cannot open '%s': %s", path, strerror(errno));
	struct stat st;
	if (fstat(fd, &st) < 0) {
		int e = errno;
		close(fd);
		return error_set(err, "cannot read '%s': %s", path, strerror(e));
	}
	if ((size_t)st.st_size < sizeof(struct spool_file_header)) {
		close(fd);
		return error_set(err, "'%s' is not a gpuprof spool (%lld bytes, shorter than a "
				 "spool header)", path, (long long)st.st_size);
	}
	void *map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (map == MAP_FAILED)
		return error_set(err, "cannot map '%s': %s", path, strerror(errno));
	reader->data = map;
	reader->size = (size_t)st.st_size;
	const struct spool_file_header *header = map;
	if (memcmp(header->magic, SPOOL_MAGIC, sizeof(header->magic))) {
		spool_reader_release(reader);
		return error_set(err, "'%s' is not a gpuprof spool (bad magic)", path);
	}
	if (header->min_reader_version > SPOOL_VERSION) {
		int need = header->min_reader_version;
		spool_reader_release(reader);
		return error_set(err, "'%s' needs a newer gpuprof (spool format %d, this "
				 "gpuprof reads up to %d)", path, need, SPOOL_VERSION);
	}
	if (header->version < SPOOL_OLDEST_READABLE) {
		int version = header->version;
		spool_reader_release(reader);
		return error_set(err, "'%s' is in spool format %d, which this gpuprof no longer "
				 "reads (it reads %d to %d): convert it with the gpuprof that "
				 "recorded it", path, version, SPOOL_OLDEST_READABLE, SPOOL_VERSION);
	}
	if (header->header_size < sizeof(*header) || header->header_size > reader->size) {
		unsigned size = header->header_size;
		spool_reader_release(reader);
		return error_set(err, "'%s' is corrupt: bad header size %u", path, size);
	}
	reader->version = header->version;
	reader->offset = header->header_size;
	return 0;
}

/* Moves to the next chunk; 1 when one is ready, 0 at the end, -1 on corruption. */
static int next_chunk(struct spool_reader *r, struct error *err)
{
	size_t left = r->size - r->offset;
	if (left == 0)
		return 0;
	if (left < sizeof(struct spool_chunk_header)) {
		r->truncated_bytes = left;
		r->offset = r->size;
		return 0;
	}
	struct spool_chunk_header chunk;
	memcpy(&chunk, r->data + r->offset, sizeof(chunk));
	if (chunk.magic != SPOOL_CHUNK_MAGIC) {
		/* A writer that died between two writes leaves zeros at worst (a file system
		 * that extended the file before the data landed): treat an all-zero tail as
		 * truncation, anything else as corruption. */
		size_t i = r->offset;
		while (i < r->size && r->data[i] == 0)
			i++;
		if (i == r->size) {
			r->truncated_bytes = left;
			r->offset = r->size;
			return 0;
		}
		return error_set(err, "'%s' is corrupt: bad chunk header at offset %zu", r->path,
				 r->offset);
	}
	if (chunk.payload_size > left - sizeof(chunk)) {
		r->truncated_bytes = left;
		r->offset = r->size;
		return 0;
	}
	const unsigned char *payload = r->data + r->offset + sizeof(chunk);
	if (spool_crc32(payload, chunk.payload_size) != chunk.crc32)
		return error_set(err, "'%s' is corrupt: checksum mismatch in the chunk at "
				 "offset %zu", r->path, r->offset);
	r->cursor = payload;
	r->chunk_end = payload + chunk.payload_size;
	r->offset += sizeof(chunk) + chunk.payload_size;
	return 1;
}

int spool_reader_next(struct spool_reader *r, const struct record_header **record,
		      struct error *err)
{
	while (!r->cursor || r->cursor == r->chunk_end) {
		int rc = next_chunk(r, err);
		if (rc <= 0)
			return rc;
	}
	size_t left = (size_t)(r->chunk_end - r->cursor);
	size_t at = (size_t)(r->cursor - r->data);
	struct record_header header;
	if (left < sizeof(header))
		return error_set(err, "'%s' is corrupt: partial record at offset %zu", r->path, at);
	memcpy(&header, r->cursor, sizeof(header));
	if (header.size < sizeof(header) || header.size % RECORD_ALIGN || header.size > left)
		return error_set(err, "'%s' is corrupt: bad record size %u at offset %zu",
				 r->path, header.size, at);
	uint32_t min = record_min_size(header.type);
	if (min && header.size < min)
		return error_set(err, "'%s' is corrupt: record of type %u too short (%u bytes) "
				 "at offset %zu", r->path, header.type, header.size, at);
	if (header.type == RECORD_STRING) {
		const struct record_string *s = (const void *)r->cursor;
		if (s->length > header.size - sizeof(*s) || s->id == 0)
			return error_set(err, "'%s' is corrupt: bad string record at offset %zu",
					 r->path, at);
	}
	*record = (const void *)r->cursor;
	r->cursor += header.size;
	return 1;
}

size_t spool_reader_whole_length(const struct spool_reader *r)
{
	const struct spool_file_header *header = (const void *)r->data;
	size_t at = header->header_size;
	while (at < r->size) {
		size_t left = r->size - at;
		struct spool_chunk_header chunk;
		if (left < sizeof(chunk))
			return at;
		memcpy(&chunk, r->data + at, sizeof(chunk));
		if (chunk.magic != SPOOL_CHUNK_MAGIC) {
			size_t i = at; /* the rules of next_chunk(): zeros are a cut, else corruption */
			while (i < r->size && r->data[i] == 0)
				i++;
			return i == r->size ? at : r->size;
		}
		if (chunk.payload_size > left - sizeof(chunk))
			return at;
		at += sizeof(chunk) + chunk.payload_size;
	}
	return r->size;
}

void spool_reader_release(struct spool_reader *reader)
{
	if (reader->data)
		munmap((void *)reader->data, reader->size);
	reader->data = NULL;
}
