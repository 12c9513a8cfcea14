/* After the run: the metrics spool joined to each process's spool, and madengine's
 * power and VRAM files written from it (see metrics.h). */
#include "metrics/metrics.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/record.h"
#include "core/spool.h"
#include "metrics/nvml.h"
/* Calls each(record) for every record of the samplers' files that exist. */
static int each_record(const char *base, int (*each)(void *ctx, const struct record_header *h),
		       void *ctx, struct error *err)
{
	struct strbuf path = STRBUF_INIT;
	int rc = 0;
	for (int gpu = 0; rc == 0 && gpu < 2; gpu++) {
		metrics_file(&path, base, gpu);
		struct spool_reader reader;
		if (access(path.buf, F_OK) < 0)
			continue;
		if (spool_reader_open(&reader, path.buf, err)) {
			rc = -1;
			break;
		}
		const struct record_header *h;
		int more;
		while ((more = spool_reader_next(&reader, &h, err)) > 0)
			if (each(ctx, h))
				break;
		spool_reader_release(&reader);
		rc = more < 0 ? -1 : 0;
	}
	strbuf_release(&path);
	return rc;
}

int metrics_recorded(const char *base)
{
	struct strbuf path = STRBUF_INIT;
	int found = 0;
	for (int gpu = 0; gpu < 2 && !found; gpu++) {
		metrics_file(&path, base, gpu);
		found = access(path.buf, F_OK) == 0;
	}
	strbuf_release(&path);
	return found;
}

/* Series ids kept: a bitmap per sampler, each numbering its series from its own start. */
struct selection {
	pid_t pid;
	unsigned char *kept[2];
	size_t size[2];
	struct strbuf chunk;
	uint32_t records;
	int fd;
	int failed;
	struct error *err;
};

static unsigned char *kept_slot(struct selection *s, uint32_t id, int grow)
{
	int gpu = id >= METRICS_GPU_SERIES_FROM;
	size_t at = gpu ? id - METRICS_GPU_SERIES_FROM : id;
	if (at >= s->size[gpu]) {
		if (!grow)
			return NULL;
		size_t size = 2 * at + 64;
		s->kept[gpu] = xrealloc(s->kept[gpu], size);
		memset(s->kept[gpu] + s->size[gpu], 0, size - s->size[gpu]);
		s->size[gpu] = size;
	}
	return &s->kept[gpu][at];
}

static int kept(struct selection *s, uint32_t id)
{
	unsigned char *slot = kept_slot(s, id, 0);
	return slot && *slot;
}

static void select_add(struct selection *s, const struct record_header *h)
{
	strbuf_add(&s->chunk, h, h->size);
	s->records++;
	if (s->chunk.len >= (1u << 20) && !s->failed) {
		s->failed = spool_write_chunk(s->fd, s->chunk.buf, (uint32_t)s->chunk.len,
					      s->records, s->err) != 0;
		strbuf_reset(&s->chunk);
		s->records = 0;
	}
}

static int select_record(void *ctx, const struct record_header *h)
{
	struct selection *s = ctx;
	if (h->type == RECORD_METRIC_SERIES) {
		const struct record_metric_series *r = (const void *)h;
		if (r->source == METRIC_PROCESS && r->pid != (uint32_t)s->pid)
			return 0;
		*kept_slot(s, r->id, 1) = 1;
		select_add(s, h);
	} else if (h->type == RECORD_METRIC &&
		   kept(s, ((const struct record_metric *)h)->series_id)) {
		select_add(s, h);
	}
	return s->failed;
}

int metrics_append(const char *metrics_base, const char *process_spool, struct error *err)
{
	struct spool_reader reader;
	if (spool_reader_open(&reader, process_spool, err))
		return -1;
	const struct record_header *h;
	pid_t pid = 0;
	while (!pid && spool_reader_next(&reader, &h, err) > 0) /* in the first chunk */
		if (h->type == RECORD_PROCESS)
			pid = (pid_t)((const struct record_process *)h)->pid;
	size_t whole = spool_reader_whole_length(&reader), size = reader.size;
	spool_reader_release(&reader);
	if (!pid) /* not our kind of spool: convert says why */
		return 0;
	int fd = open(process_spool, O_WRONLY | O_APPEND | O_CLOEXEC);
	if (fd < 0)
		return error_set(err, "cannot write '%s': %s", process_spool, strerror(errno));
	if (whole < size) {
		if (ftruncate(fd, (off_t)whole) < 0) {
			int e = errno;
			close(fd);
			return error_set(err, "cannot write '%s': %s", process_spool, strerror(e));
		}
		fprintf(stderr, "gpuprof: %s: ignored an incomplete last chunk of %zu bytes\n",
			process_spool, size - whole);
	}
	struct selection s = { .pid = pid, .fd = fd, .err = err };
	strbuf_init(&s.chunk);
	int rc = each_record(metrics_base, select_record, &s, err);
	if (rc == 0 && !s.failed && s.records)
		s.failed = spool_write_chunk(fd, s.chunk.buf, (uint32_t)s.chunk.len, s.records,
					     err) != 0;
	if (close(fd) < 0 && rc == 0 && !s.failed)
		rc = error_set(err, "cannot write '%s': %s", process_spool, strerror(errno));
	strbuf_release(&s.chunk);
	free(s.kept[0]);
	free(s.kept[1]);
	return rc || s.failed ? -1 : 0;
}

/* madengine's files: one row per round, one column per GPU. */
enum { MADENGINE_POWER, MADENGINE_VRAM, MADENGINE_FILES };

struct madengine {
	uint32_t series[MADENGINE_FILES][METRICS_MAX_GPUS]; /* id per GPU, 0 for none */
	int gpus;
	struct strbuf rows[MADENGINE_FILES];
	uint64_t row_time[MADENGINE_FILES];
	double values[MADENGINE_FILES][METRICS_MAX_GPUS];
	int64_t realtime_offset; /* CLOCK_REALTIME - trace clock, now */
};

static void madengine_row(struct madengine *m, int file)
{
	if (!m->row_time[file])
		return;
	time_t seconds = (time_t)(((int64_t)m->row_time[file] + m->realtime_offset) / 1000000000);
	long micros = (long)((((int64_t)m->row_time[file] + m->realtime_offset) % 1000000000) / 1000);
	struct tm local;
	char text[64];
	localtime_r(&seconds, &local);
	strftime(text, sizeof(text), "%Y-%m-%d %H:%M:%S", &local);
	strbuf_addf(&m->rows[file], "%s.%06ld", text, micros);
	for (int g = 0; g < m->gpus; g++)
		strbuf_addf(&m->rows[file], ",%.2f", m->values[file][g]);
	strbuf_addch(&m->rows[file], '\n');
	m->row_time[file] = 0;
}

static int madengine_record(void *ctx, const struct record_header *h)
{
	struct madengine *m = ctx;
	if (h->type == RECORD_METRIC_SERIES) {
		const struct record_metric_series *r = (const void *)h;
		if (r->source != METRIC_GPU || r->device < 0 || r->device >= METRICS_MAX_GPUS)
			return 0;
		int file = !strcmp(r->name, nvml_metric_name(GPU_POWER)) ? MADENGINE_POWER
			   : !strcmp(r->name, nvml_metric_name(GPU_MEMORY_USED_PERCENT))
				   ? MADENGINE_VRAM : -1;
		if (file < 0)
			return 0;
		m->series[file][r->device] = r->id;
		if (r->device + 1 > m->gpus)
			m->gpus = r->device + 1;
		return 0;
	}
	if (h->type != RECORD_METRIC)
		return 0;
	const struct record_metric *r = (const void *)h;
	for (int file = 0; file < MADENGINE_FILES; file++)
		for (int g = 0; g < m->gpus; g++)
			if (m->series[file][g] == r->series_id) {
				if (m->row_time[file] != r->time_ns) /* a new round */
					madengine_row(m, file);
				m->row_time[file] = r->time_ns;
				m->values[file][g] = r->value;
			}
	return 0;
}

int metrics_write_madengine(const char *metrics_base, const char *directory,
			    struct strbuf *written, struct error *err)
{
	static const char *const names[MADENGINE_FILES] = {
		"gpu_info_power_profiler_output.csv", "gpu_info_vram_profiler_output.csv" };
	static const char *const columns[MADENGINE_FILES] = { "Power(Watt) GPU", "vram(%) GPU" };
	struct madengine *m = xcalloc(1, sizeof(*m));
	m->realtime_offset = (int64_t)clock_realtime_ns() - (int64_t)clock_now_ns();
	for (int f = 0; f < MADENGINE_FILES; f++)
		strbuf_init(&m->rows[f]);
	int rc = each_record(metrics_base, madengine_record, m, err);
	for (int f = 0; rc == 0 && f < MADENGINE_FILES; f++) {
		madengine_row(m, f);
		if (!m->gpus)
			continue;
		struct strbuf path = STRBUF_INIT, text = STRBUF_INIT;
		strbuf_addf(&path, "%s/%s", directory, names[f]);
		strbuf_addstr(&text, "time");
		for (int g = 0; g < m->gpus; g++)
			strbuf_addf(&text, ",%s%d", columns[f], g);
		strbuf_addch(&text, '\n');
		strbuf_add(&text, m->rows[f].buf, m->rows[f].len);
		FILE *out = fopen(path.buf, "we");
		if (!out || fwrite(text.buf, 1, text.len, out) != text.len || fclose(out)) {
			rc = error_set(err, "cannot write '%s': %s", path.buf, strerror(errno));
			if (out)
				unlink(path.buf);
		} else {
			strbuf_addf(written, "%s\n", path.buf);
		}
		strbuf_release(&path);
		strbuf_release(&text);
	}
	for (int f = 0; f < MADENGINE_FILES; f++)
		strbuf_release(&m->rows[f]);
	free(m);
	return rc;
}

