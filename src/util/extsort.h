/* Records of a fixed size kept on disk rather than in memory: temporary files (in
 * $TMPDIR, else /tmp; gone when closed or when the process ends), buffered readers and
 * writers over them, and an external sort (sorted runs of a bounded size, merged), so
 * that a pass over a run of any length holds a constant amount of memory. */
#ifndef GPUPROF_UTIL_EXTSORT_H
#define GPUPROF_UTIL_EXTSORT_H

#include <stddef.h>
#include <stdint.h>

#include "util/error.h"

struct tempfile {
	int fd;                       /* -1: not open */
	uint64_t size;                /* bytes appended */
};

/* An unnamed file in $TMPDIR (else /tmp): 0, or -1 with err naming the directory. */
int tempfile_open(struct tempfile *t, struct error *err);
void tempfile_close(struct tempfile *t);

/* n bytes at offset: 0, or -1 with err set (a full disk named). */
int tempfile_pwrite(struct tempfile *t, uint64_t offset, const void *data, size_t n,
		    struct error *err);
int tempfile_pread(const struct tempfile *t, uint64_t offset, void *data, size_t n,
		   struct error *err);

/* Records appended to a temporary file through a buffer. */
struct record_writer {
	struct tempfile *file;
	size_t record;
	char *buffer;
	size_t used, size;            /* bytes */
};

void record_writer_begin(struct record_writer *w, struct tempfile *file, size_t record,
			 size_t buffer);
int record_writer_add(struct record_writer *w, const void *record, struct error *err);
/* What is buffered written out, the buffer freed: 0 or -1. */
int record_writer_end(struct record_writer *w, struct error *err);

/* Records [first, end) of a temporary file read in order through a buffer. */
struct record_reader {
	const struct tempfile *file;
	size_t record;
	char *buffer;
	size_t size, filled, at;      /* bytes */
	uint64_t next, end;           /* record indexes: the next to read from the file */
	int release;                  /* records read are not read again: their disk space
					 is given back as the reader moves on (where the
					 file system can) */
};

void record_reader_begin(struct record_reader *r, const struct tempfile *file, size_t record,
			 uint64_t first, uint64_t end, size_t buffer);
/* 1 and *record (valid until the next call), 0 at the end, -1 with err set. */
int record_reader_next(struct record_reader *r, const void **record, struct error *err);
void record_reader_end(struct record_reader *r);

/* Records of a temporary file read in order and changed in place: a record changed is
 * written back with its whole buffer when the reader moves past it (one write a buffer,
 * not one a record); one behind the buffer is written at once. */
struct record_updater {
	struct record_reader reader;
	struct tempfile *file;
	int dirty;                    /* the buffer holds changes not yet written back */
};

void record_updater_begin(struct record_updater *u, struct tempfile *file, size_t record,
			  uint64_t end, size_t buffer);
/* As record_reader_next: 1 and *record (valid until the next call), 0 at the end, -1. */
int record_updater_next(struct record_updater *u, const void **record, struct error *err);
/* Record index becomes *record: index is one read already. 0 or -1. */
int record_updater_set(struct record_updater *u, uint64_t index, const void *record,
		       struct error *err);
/* What is changed written back, the buffer freed: 0 or -1. */
int record_updater_end(struct record_updater *u, struct error *err);

/* An external sort: records added in any order, read back in the order of compare
 * (given arg). It holds at most about memory bytes, whatever the number of records:
 * past that, sorted runs go to a temporary file and are merged as they are read, each
 * run through a buffer of at least 16 KiB; when the runs outnumber the buffers memory
 * holds, groups of them are first merged into longer runs, in passes, until they do.
 * compare should order every two records (a sequence number breaks ties): the sort is
 * not stable. */
struct extsort;

/* What one sort should hold: 16 MiB, less under a smaller limit of data memory (a
 * sixteenth of it: a command may have a few sorts alive, and SQLite its own). */
#define EXTSORT_MEMORY ((size_t)16 << 20)
size_t extsort_memory(void);

struct extsort *extsort_begin(size_t record, size_t memory,
			      int (*compare)(const void *a, const void *b, void *arg), void *arg);
int extsort_add(struct extsort *s, const void *record, struct error *err);
/* Adding ends, reading begins: 0 or -1. */
int extsort_sorted(struct extsort *s, struct error *err);
/* 1 and *record (valid until the next call), 0 at the end, -1 with err set. */
int extsort_next(struct extsort *s, const void **record, struct error *err);
uint64_t extsort_count(const struct extsort *s);
/* The merge passes made before the last merge (0: the runs were merged at once). */
unsigned extsort_merge_passes(const struct extsort *s);
void extsort_free(struct extsort *s);

#endif
