/* Temporary record files and the external sort (see extsort.h). */
#include "util/extsort.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "util/strbuf.h"

/* ---- temporary files -------------------------------------------------------------------- */

static const char *temp_dir(void)
{
	const char *dir = getenv("TMPDIR");
	return dir && *dir ? dir : "/tmp";
}

int tempfile_open(struct tempfile *t, struct error *err)
{
	const char *dir = temp_dir();
	t->size = 0;
	t->fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (t->fd < 0 && (errno == EOPNOTSUPP || errno == EISDIR || errno == EINVAL)) {
		/* a file system without unnamed files: a named one, unlinked at once */
		struct strbuf path = STRBUF_INIT;
		strbuf_addf(&path, "%s/gpuprof-XXXXXX", dir);
		t->fd = mkostemp(path.buf, O_CLOEXEC);
		if (t->fd >= 0)
			unlink(path.buf);
		strbuf_release(&path);
	}
	if (t->fd < 0)
		return error_set(err, "cannot make a temporary file in %s (set TMPDIR to another "
				 "directory): %s", dir, strerror(errno));
	return 0;
}

void tempfile_close(struct tempfile *t)
{
	if (t->fd >= 0)
		close(t->fd);
	t->fd = -1;
	t->size = 0;
}

int tempfile_pwrite(struct tempfile *t, uint64_t offset, const void *data, size_t n,
		    struct error *err)
{
	const char *p = data;
	while (n) {
		ssize_t w = pwrite(t->fd, p, n, (off_t)offset);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return error_set(err, "cannot write a temporary file in %s (set TMPDIR to a "
					 "directory with more room): %s", temp_dir(),
					 w < 0 ? strerror(errno) : "nothing written");
		p += w, n -= (size_t)w, offset += (uint64_t)w;
	}
	if (offset > t->size)
		t->size = offset;
	return 0;
}

int tempfile_pread(const struct tempfile *t, uint64_t offset, void *data, size_t n,
		   struct error *err)
{
	char *p = data;
	while (n) {
		ssize_t r = pread(t->fd, p, n, (off_t)offset);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return error_set(err, "cannot read a temporary file in %s: %s", temp_dir(),
					 r < 0 ? strerror(errno) : "it ends early");
		p += r, n -= (size_t)r, offset += (uint64_t)r;
	}
	return 0;
}

/* ---- buffered records ---------------------------------------------------------------------- */

void record_writer_begin(struct record_writer *w, struct tempfile *file, size_t record,
			 size_t buffer)
{
	w->file = file;
	w->record = record;
	w->size = buffer / record > 0 ? buffer / record * record : record;
	w->buffer = xcalloc(1, w->size);
	w->used = 0;
}

static int writer_flush(struct record_writer *w, struct error *err)
{
	int rc = w->used ? tempfile_pwrite(w->file, w->file->size, w->buffer, w->used, err) : 0;
	w->used = 0;
	return rc;
}

int record_writer_add(struct record_writer *w, const void *record, struct error *err)
{
	if (w->used == w->size && writer_flush(w, err))
		return -1;
	memcpy(w->buffer + w->used, record, w->record);
	w->used += w->record;
	return 0;
}

int record_writer_end(struct record_writer *w, struct error *err)
{
	int rc = w->buffer ? writer_flush(w, err) : 0;
	free(w->buffer);
	w->buffer = NULL;
	return rc;
}

void record_reader_begin(struct record_reader *r, const struct tempfile *file, size_t record,
			 uint64_t first, uint64_t end, size_t buffer)
{
	r->file = file;
	r->record = record;
	r->size = buffer / record > 0 ? buffer / record * record : record;
	r->buffer = xcalloc(1, r->size);
	r->filled = r->at = 0;
	r->next = first;
	r->end = end;
	r->release = 0;
}

int record_reader_next(struct record_reader *r, const void **record, struct error *err)
{
	if (r->at == r->filled) {
		if (r->release && r->filled) /* read once: its disk space given back */
			fallocate(r->file->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
				  (off_t)((r->next * r->record) - r->filled), (off_t)r->filled);
		if (r->next >= r->end)
			return 0;
		uint64_t count = r->size / r->record;
		if (count > r->end - r->next)
			count = r->end - r->next;
		r->filled = (size_t)count * r->record;
		r->at = 0;
		if (tempfile_pread(r->file, r->next * r->record, r->buffer, r->filled, err))
			return -1;
		r->next += count;
	}
	*record = r->buffer + r->at;
	r->at += r->record;
	return 1;
}

void record_reader_end(struct record_reader *r)
{
	free(r->buffer);
	r->buffer = NULL;
}

void record_updater_begin(struct record_updater *u, struct tempfile *file, size_t record,
			  uint64_t end, size_t buffer)
{
	record_reader_begin(&u->reader, file, record, 0, end, buffer);
	u->file = file;
	u->dirty = 0;
}

/* The buffer's changes written back to where it was read from. */
static int updater_write_back(struct record_updater *u, struct error *err)
{
	struct record_reader *r = &u->reader;
	if (!u->dirty)
		return 0;
	u->dirty = 0;
	return tempfile_pwrite(u->file, r->next * r->record - r->filled, r->buffer, r->filled, err);
}

int record_updater_next(struct record_updater *u, const void **record, struct error *err)
{
	if (u->reader.at == u->reader.filled && updater_write_back(u, err))
		return -1;
	return record_reader_next(&u->reader, record, err);
}

int record_updater_set(struct record_updater *u, uint64_t index, const void *record,
		       struct error *err)
{
	struct record_reader *r = &u->reader;
	uint64_t first = r->next - r->filled / r->record;
	if (index >= first && index < r->next) {
		memcpy(r->buffer + (index - first) * r->record, record, r->record);
		u->dirty = 1;
		return 0;
	}
	return tempfile_pwrite(u->file, index * r->record, record, r->record, err);
}

int record_updater_end(struct record_updater *u, struct error *err)
{
	int rc = u->reader.buffer ? updater_write_back(u, err) : 0;
	record_reader_end(&u->reader);
	return rc;
}

/* ---- the external sort ----------------------------------------------------------------------- */

#define MIN_MERGE_BUFFER (16 * 1024)

size_t extsort_memory(void)
{
	size_t memory = EXTSORT_MEMORY;
	struct rlimit limit;
	if (getrlimit(RLIMIT_DATA, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY &&
	    limit.rlim_cur / 16 < memory)
		memory = limit.rlim_cur / 16 > (256 << 10) ? limit.rlim_cur / 16 : 256 << 10;
	return memory;
}

struct extsort {
	size_t record, capacity;      /* bytes a record; records a chunk holds */
	int (*compare)(const void *, const void *, void *);
	void *arg;
	char *chunk;                  /* the records being gathered */
	const char **order;           /* them, sorted */
	size_t count;                 /* in the chunk */
	uint64_t total;
	size_t memory;
	struct tempfile file;         /* the sorted runs, one after another */
	struct run {
		uint64_t first, end;  /* record indexes in file */
		struct record_reader reader;
		const void *head;     /* its next record */
	} *runs;
	size_t run_count;
	size_t *heap, heap_count;     /* runs by their heads */
	size_t next;                  /* reading one chunk: the next of order; merging:
					 whether a record was handed out */
	unsigned passes;              /* merge passes made before the last merge */
};

struct extsort *extsort_begin(size_t record, size_t memory,
			      int (*compare)(const void *, const void *, void *), void *arg)
{
	struct extsort *s = xcalloc(1, sizeof(*s));
	s->record = record;
	s->memory = memory;
	s->capacity = memory / (record + sizeof(*s->order));
	if (s->capacity < 16)
		s->capacity = 16;
	s->compare = compare;
	s->arg = arg;
	s->file.fd = -1;
	return s;
}

static int by_record(const void *a, const void *b, void *arg)
{
	struct extsort *s = arg;
	return s->compare(*(const char *const *)a, *(const char *const *)b, s->arg);
}

static void sort_chunk(struct extsort *s)
{
	for (size_t i = 0; i < s->count; i++)
		s->order[i] = s->chunk + i * s->record;
	/* records often come in order already (a table read in its rowid order, which is
	 * start order): one look at each pair then, rather than a sort (qsort_r's merge sort
	 * keeps equal records in their order, as this does) */
	size_t i = 1;
	while (i < s->count && s->compare(s->order[i - 1], s->order[i], s->arg) <= 0)
		i++;
	if (i < s->count)
		qsort_r(s->order, s->count, sizeof(*s->order), by_record, s);
}

/* The chunk sorted and written as a run. */
static int spill(struct extsort *s, struct error *err)
{
	if (s->file.fd < 0 && tempfile_open(&s->file, err))
		return -1;
	sort_chunk(s);
	struct record_writer w;
	record_writer_begin(&w, &s->file, s->record, 1 << 20);
	uint64_t first = s->file.size / s->record;
	int rc = 0;
	for (size_t i = 0; rc == 0 && i < s->count; i++)
		rc = record_writer_add(&w, s->order[i], err);
	if (record_writer_end(&w, err))
		rc = -1;
	if (rc)
		return -1;
	s->runs = xrealloc(s->runs, (s->run_count + 1) * sizeof(*s->runs));
	s->runs[s->run_count++] = (struct run){ .first = first, .end = first + s->count };
	s->count = 0;
	return 0;
}

int extsort_add(struct extsort *s, const void *record, struct error *err)
{
	if (!s->chunk) {
		s->chunk = xcalloc(s->capacity, s->record);
		s->order = xcalloc(s->capacity, sizeof(*s->order));
	}
	if (s->count == s->capacity && spill(s, err))
		return -1;
	memcpy(s->chunk + s->count * s->record, record, s->record);
	s->count++;
	s->total++;
	return 0;
}

static int heap_less(struct extsort *s, size_t a, size_t b)
{
	int c = s->compare(s->runs[a].head, s->runs[b].head, s->arg);
	return c < 0 || (c == 0 && a < b);
}

static void heap_down(struct extsort *s, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;
		if (l < s->heap_count && heap_less(s, s->heap[l], s->heap[m]))
			m = l;
		if (r < s->heap_count && heap_less(s, s->heap[r], s->heap[m]))
			m = r;
		if (m == i)
			return;
		size_t t = s->heap[i];
		s->heap[i] = s->heap[m];
		s->heap[m] = t;
		i = m;
	}
}

/* Opens runs [first, end) for reading through buffers of `buffer` bytes, their heads
 * on the heap: 0 or -1. */
static int open_runs(struct extsort *s, size_t first, size_t end, size_t buffer,
		     struct error *err)
{
	s->heap_count = 0;
	s->next = 0;
	for (size_t i = first; i < end; i++) {
		struct run *r = &s->runs[i];
		record_reader_begin(&r->reader, &s->file, s->record, r->first, r->end, buffer);
		r->reader.release = 1; /* a run is read once */
		int got = record_reader_next(&r->reader, &r->head, err);
		if (got < 0)
			return -1;
		if (got)
			s->heap[s->heap_count++] = i;
	}
	for (size_t i = s->heap_count; i-- > 0;)
		heap_down(s, i);
	return 0;
}

/* The next record of the runs open, in order: 1 and *record (valid until the next
 * call), 0 at their end, -1 with err set. */
static int merged_next(struct extsort *s, const void **record, struct error *err)
{
	if (!s->heap_count)
		return 0;
	/* the record handed out last is still in its run's buffer: advance that run now */
	struct run *top = &s->runs[s->heap[0]];
	if (s->next) {
		int got = record_reader_next(&top->reader, &top->head, err);
		if (got < 0)
			return -1;
		if (!got) {
			s->heap[0] = s->heap[--s->heap_count];
			if (!s->heap_count)
				return 0;
		}
		heap_down(s, 0);
		top = &s->runs[s->heap[0]];
	}
	s->next = 1;
	*record = top->head;
	return 1;
}

/* One pass of merges: each group of `fan_in` runs becomes one run of a new file, which
 * replaces the old (whose disk space the readers gave back as they went): 0 or -1. */
static int merge_pass(struct extsort *s, size_t fan_in, struct error *err)
{
	struct tempfile out = { .fd = -1 };
	if (tempfile_open(&out, err))
		return -1;
	size_t groups = (s->run_count + fan_in - 1) / fan_in;
	struct run *merged = xcalloc(groups, sizeof(*merged));
	size_t buffer = s->memory / (fan_in + 1); /* the readers' and the writer's */
	if (buffer < MIN_MERGE_BUFFER)
		buffer = MIN_MERGE_BUFFER;
	int rc = 0;
	for (size_t g = 0; rc == 0 && g < groups; g++) {
		size_t first = g * fan_in;
		size_t end = first + fan_in < s->run_count ? first + fan_in : s->run_count;
		struct record_writer w;
		record_writer_begin(&w, &out, s->record, buffer);
		merged[g].first = out.size / s->record;
		rc = open_runs(s, first, end, buffer, err);
		const void *record;
		int got = 0;
		while (rc == 0 && (got = merged_next(s, &record, err)) > 0)
			rc = record_writer_add(&w, record, err);
		if (got < 0)
			rc = -1;
		if (record_writer_end(&w, err))
			rc = -1;
		merged[g].end = out.size / s->record;
		for (size_t i = first; i < end; i++)
			record_reader_end(&s->runs[i].reader);
	}
	if (rc) {
		free(merged);
		tempfile_close(&out);
		return -1;
	}
	tempfile_close(&s->file);
	s->file = out;
	free(s->runs);
	s->runs = merged;
	s->run_count = groups;
	s->passes++;
	return 0;
}

int extsort_sorted(struct extsort *s, struct error *err)
{
	if (!s->run_count) { /* it all fits: sorted in memory */
		if (s->count)
			sort_chunk(s);
		s->next = 0;
		return 0;
	}
	if (s->count && spill(s, err))
		return -1;
	free(s->chunk), s->chunk = NULL;
	free(s->order), s->order = NULL;
	/* as many runs are merged at once as memory gives each a buffer of its own: more,
	 * and they are merged in passes, each a fan_in-th as many runs as the last */
	size_t fan_in = s->memory / MIN_MERGE_BUFFER;
	if (fan_in < 2)
		fan_in = 2;
	s->heap = xcalloc(s->run_count < fan_in ? s->run_count : fan_in, sizeof(*s->heap));
	while (s->run_count > fan_in)
		if (merge_pass(s, fan_in, err))
			return -1;
	size_t buffer = s->memory / s->run_count;
	return open_runs(s, 0, s->run_count, buffer < MIN_MERGE_BUFFER ? MIN_MERGE_BUFFER : buffer,
			 err);
}

int extsort_next(struct extsort *s, const void **record, struct error *err)
{
	if (!s->run_count) {
		if (s->next >= s->count)
			return 0;
		*record = s->order[s->next++];
		return 1;
	}
	return merged_next(s, record, err);
}

unsigned extsort_merge_passes(const struct extsort *s)
{
	return s->passes;
}

uint64_t extsort_count(const struct extsort *s)
{
	return s->total;
}

void extsort_free(struct extsort *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->run_count; i++)
		record_reader_end(&s->runs[i].reader);
	free(s->runs);
	free(s->heap);
	free(s->chunk);
	free(s->order);
	tempfile_close(&s->file);
	free(s);
}
