/* The offline HTML report (see report.h). Everything is aggregated while the databases
 * are read: statistics by name, busy time per device in BINS slices of the run, metric
 * series in BINS slices; the page holds those and the findings, so its size does not
 * grow with the number of kernels. */
#include "writer/report.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/store.h"
#include "store/store-job.h"
#include "util/strbuf.h"
#include "writer/output-file.h"
#include "writer/report-data.h"
#include "writer/report-timeline.h"
#include "writer/writer.h"

/* Runs query over db, calling row for each row: 0, or -1 with err. */
static int each_row(sqlite3 *db, const char *path, const char *query,
		    void (*row)(sqlite3_stmt *s, struct report *r), struct report *r,
		    struct error *err)
{
	sqlite3_stmt *s;
	if (store_prepare(db, query, &s, err))
		return -1;
	int step;
	while ((step = sqlite3_step(s)) == SQLITE_ROW)
		row(s, r);
	sqlite3_finalize(s);
	if (step != SQLITE_DONE)
		return error_set(err, "cannot read '%s': %s", path, sqlite3_errmsg(db));
	return 0;
}

static const char *text_of(sqlite3_stmt *s, int column)
{
	const unsigned char *t = sqlite3_column_text(s, column);
	return t ? (const char *)t : "";
}

static void add_kernel(sqlite3_stmt *s, struct report *r)
{
	stats_add(&r->kernels, text_of(s, 0), (uint64_t)sqlite3_column_int64(s, 1));
}

static void add_api(sqlite3_stmt *s, struct report *r)
{
	stats_add(&r->api, text_of(s, 0), (uint64_t)sqlite3_column_int64(s, 1));
}

static void add_range(sqlite3_stmt *s, struct report *r)
{
	stats_add(&r->ranges, text_of(s, 0), (uint64_t)sqlite3_column_int64(s, 1));
}

/* Functions by samples: a statistics row per function whose "time" is its samples. */
static void add_function(sqlite3_stmt *s, struct report *r)
{
	const char *name = text_of(s, 0);
	int64_t count = sqlite3_column_int64(s, 1);
	stats_add(&r->functions, *name ? name : "(unknown)", (uint64_t)count);
	r->samples += count;
}

static void add_copies(sqlite3_stmt *s, struct report *r)
{
	struct strbuf name = STRBUF_INIT;
	strbuf_addf(&name, "%s %s", text_of(s, 0), text_of(s, 1));
	size_t i = 0;
	while (i < r->copy_count && strcmp(r->copies[i].name, name.buf))
		i++;
	if (i == r->copy_count) {
		r->copies = xrealloc(r->copies, (r->copy_count + 1) * sizeof(*r->copies));
		r->copies[r->copy_count++] = (struct copy_kind){ strbuf_detach(&name), 0, 0, 0 };
	}
	strbuf_release(&name);
	r->copies[i].calls += sqlite3_column_int64(s, 2);
	r->copies[i].bytes += sqlite3_column_int64(s, 3);
	r->copies[i].ns += sqlite3_column_int64(s, 4);
}

/* The slices of [start, end) that interval [a, b) covers, each given its share. */
static void spread(double bins[BINS], int64_t start, int64_t end, int64_t a, int64_t b)
{
	if (end <= start || b <= a)
		return;
	double width = (double)(end - start) / BINS;
	a = a < start ? start : a;
	b = b > end ? end : b;
	for (int i = (int)((double)(a - start) / width); i < BINS && a < b; i++) {
		double slice_end = (double)start + (i + 1) * width;
		double until = (double)b < slice_end ? (double)b : slice_end;
		if (until > (double)a)
			bins[i] += until - (double)a;
		a = (int64_t)ceil(slice_end);
	}
}

/* The lanes: a device's busy intervals spread over its process's time. */
struct lanes {
	struct report *r;
	const char *path;
	int input, inputs;
};

static void lane_process(void *arg, const struct insight_process *p)
{
	struct lanes *x = arg;
	strbuf_addf(&x->r->inputs, "%s: pid %" PRId64 " on %s, ", x->path, p->pid, p->host);
	insight_duration(&x->r->inputs, p->end - p->start);
	strbuf_addch(&x->r->inputs, '\n');
}

static void lane_device(void *arg, const struct insight_process *p, const struct insight_device *d)
{
	struct lanes *x = arg;
	struct report *r = x->r;
	r->lanes = xrealloc(r->lanes, (r->lane_count + 1) * sizeof(*r->lanes));
	struct lane *l = &r->lanes[r->lane_count++];
	memset(l, 0, sizeof(*l));
	struct strbuf label = STRBUF_INIT;
	if (x->inputs > 1)
		strbuf_addf(&label, "%d: ", x->input + 1);
	strbuf_addf(&label, "pid %" PRId64 " %s", p->pid, d->label);
	l->label = strbuf_detach(&label);
	l->start = p->start;
	l->end = p->end;
}

static void lane_busy(void *arg, const struct insight_process *p, const struct insight_device *d,
		      const struct insight_interval *b)
{
	(void)p, (void)d;
	struct lanes *x = arg;
	struct lane *l = &x->r->lanes[x->r->lane_count - 1];
	spread(l->busy, l->start, l->end, b->start, b->end);
}

static void lane_end(void *arg, const struct insight_process *p, const struct insight_device *d)
{
	(void)p;
	struct lanes *x = arg;
	x->r->lanes[x->r->lane_count - 1].busy_ns = d->busy_ns;
}

static int add_series(sqlite3 *db, int input, int inputs, struct report *r, struct error *err)
{
	if (!store_has_table(db, "gpuprof_metric_series"))
		return 0;
	sqlite3_stmt *s;
	/* the machine's and the GPUs' series are copied into each process of a run: a merged
	 * database has them once per process, the same series from the same first time, shown
	 * once (source 2: a process's own) */
	/* each along the window its process's metrics were sampled in: a process sampled
	 * for 2 s of its life (sys --pid) has them across the picture, not at its end */
	if (store_prepare(db, "WITH f AS (SELECT process_id, series_id, MIN(time) AS t FROM "
			  "gpuprof_metric GROUP BY 1, 2), s AS (SELECT m.*, f.t FROM "
			  "gpuprof_metric_series m LEFT JOIN f USING (process_id, series_id)), "
			  "w AS (SELECT process_id, MIN(time) AS first, MAX(time) AS last FROM "
			  "gpuprof_metric GROUP BY 1) "
			  "SELECT m.process_id, m.series_id, m.name, m.unit, p.pid, w.first, w.last, "
			  "m.source, m.device FROM s m JOIN gpuprof_process p ON p.id = m.process_id "
			  "LEFT JOIN w ON w.process_id = m.process_id "
			  "WHERE m.source = 2 OR NOT EXISTS (SELECT 1 "
			  "FROM s o WHERE o.source = m.source AND o.device = m.device AND "
			  "o.name = m.name AND o.t IS m.t AND o.process_id < m.process_id) "
			  "ORDER BY m.process_id, m.series_id", &s, err))
		return -1;
	sqlite3_stmt *values = NULL;
	int rc = store_prepare(db, "SELECT time, value FROM gpuprof_metric WHERE process_id = ? "
			       "AND series_id = ? ORDER BY time", &values, err);
	while (rc == 0 && sqlite3_step(s) == SQLITE_ROW) {
		r->series = xrealloc(r->series, (r->series_count + 1) * sizeof(*r->series));
		struct series *x = &r->series[r->series_count++];
		memset(x, 0, sizeof(*x));
		struct strbuf label = STRBUF_INIT;
		if (inputs > 1)
			strbuf_addf(&label, "%d: ", input + 1);
		writer_metric_label(&label, writer_metric_source_name(sqlite3_column_int64(s, 7)),
				    sqlite3_column_int64(s, 8), sqlite3_column_int64(s, 4),
				    text_of(s, 2));
		x->label = strbuf_detach(&label);
		x->unit = xstrdup(text_of(s, 3));
		double start = (double)sqlite3_column_int64(s, 5), end = (double)sqlite3_column_int64(s, 6);
		double width = end > start ? (end - start) / BINS : 1;
		sqlite3_bind_int64(values, 1, sqlite3_column_int64(s, 0));
		sqlite3_bind_int64(values, 2, sqlite3_column_int64(s, 1));
		while (sqlite3_step(values) == SQLITE_ROW) {
			double v = sqlite3_column_double(values, 1);
			double at = ((double)sqlite3_column_int64(values, 0) - start) / width;
			int bin = !(at >= 0) ? 0 : at >= BINS ? BINS - 1 : (int)at;
			x->min = x->count && x->min < v ? x->min : v;
			x->max = x->count && x->max > v ? x->max : v;
			x->sum += v;
			x->count++;
			x->bins[bin] += v;
			x->bin_count[bin]++;
		}
		sqlite3_reset(values);
	}
	sqlite3_finalize(values);
	sqlite3_finalize(s);
	return rc;
}

/* Each process's samples as a call tree of its own (at most MAX_FLAMES processes, those
 * with the most samples first). */
#define MAX_FLAMES 16
static int add_flames(sqlite3 *db, const char *path, int inputs, struct report *r,
		      struct error *err)
{
	if (!store_has_table(db, "gpuprof_sample"))
		return 0;
	sqlite3_stmt *q;
	if (store_prepare(db, "SELECT p.id, p.pid, p.hostname, p.command, COUNT(*) AS n "
			      "FROM gpuprof_sample s JOIN processes p ON p.id = s.process_id "
			      "GROUP BY p.id ORDER BY n DESC, p.id", &q, err))
		return -1;
	int rc = 0, step;
	while (rc == 0 && (step = sqlite3_step(q)) == SQLITE_ROW) {
		if (r->flame_count == MAX_FLAMES) {
			r->flames_left_out++;
			continue;
		}
		r->flames = xrealloc(r->flames, (r->flame_count + 1) * sizeof(*r->flames));
		struct flame *f = &r->flames[r->flame_count];
		struct strbuf title = STRBUF_INIT;
		const char *command = text_of(q, 3);
		strbuf_addf(&title, "pid %lld on %s: ", (long long)sqlite3_column_int64(q, 1),
			    text_of(q, 2));
		strbuf_add(&title, command, strlen(command) > 120 ? 120 : strlen(command));
		if (inputs > 1)
			strbuf_addf(&title, " (%s)", path);
		f->title = strbuf_detach(&title);
		profile_init(&f->tree);
		struct profile_filter one = PROFILE_ALL;
		one.process_id = sqlite3_column_int64(q, 0);
		rc = profile_gather(db, &one, &f->tree, err);
		r->flame_count++;
	}
	sqlite3_finalize(q);
	return rc;
}

/* One input: what its tables, its flame graphs, its launches and its series need. */
static int read_tables(sqlite3 *db, void *arg, struct error *err)
{
	struct lanes *x = arg;
	struct report *r = x->r;
	const char *path = x->path;
	const char *join, *label = report_range_label(db, &join);
	struct strbuf ranges = STRBUF_INIT;
	strbuf_addf(&ranges, "SELECT %s, m.end - m.start FROM gpuprof_marker m LEFT JOIN "
		    "gpuprof_string s ON s.id = m.name_id %s WHERE m.kind IN (1, 2) AND "
		    "m.ended = 1", label, join);
	int rc = each_row(db, path, "SELECT s.string, k.end - k.start FROM gpuprof_kernel k "
			  "LEFT JOIN gpuprof_string s ON s.id = k.name_id", add_kernel, r, err) ||
		 each_row(db, path, "SELECT operation, direction, COUNT(*), SUM(size), "
			  "SUM(duration) FROM memory_copies GROUP BY operation, direction",
			  add_copies, r, err) ||
		 each_row(db, path, "SELECT s.string, c.end - c.start FROM gpuprof_api_call c "
			  "LEFT JOIN gpuprof_string s ON s.id = c.function_id", add_api, r, err) ||
		 each_row(db, path, ranges.buf, add_range, r, err);
	strbuf_release(&ranges);
	if (rc == 0 && store_has_table(db, "gpuprof_sample"))
		rc = each_row(db, path, "SELECT function, COUNT(*) FROM samples GROUP BY function",
			      add_function, r, err);
	if (rc == 0)
		rc = add_flames(db, path, x->inputs, r, err);
	struct profile_filter all = PROFILE_ALL;
	if (rc == 0)
		rc = profile_gather_launches(db, &all, &r->launches, err);
	if (rc == 0)
		rc = add_series(db, x->input, x->inputs, r, err);
	return rc;
}

/* One input's run over time, read to be drawn with its findings. */
struct timelines_job {
	const char *path, *label;
	struct report_timelines read;
};

static int read_timelines(sqlite3 *db, void *arg, struct error *err)
{
	struct timelines_job *j = arg;
	return report_timeline_read(db, j->path, j->label, &j->read, err);
}

/* One input read three ways side by side, each over a connection of its own
 * (store-job.h): its tables, its findings (with the devices' busy time), its run over
 * time; the three fill parts of the report that the others do not touch. */
static int read_input(const char *path, int input, int inputs, struct report *r,
		      struct error *err)
{
	sqlite3 *db;
	if (store_open(path, &db, err))
		return -1;
	struct lanes lanes = { r, path, input, inputs };
	struct strbuf label = STRBUF_INIT;
	if (inputs > 1)
		strbuf_addf(&label, "%d: %s", input + 1, path);
	struct timelines_job timelines = { path, label.buf, { NULL, 0 } };
	struct store_job tables_job, timelines_job;
	store_job_start(&tables_job, db, read_tables, &lanes);
	store_job_start(&timelines_job, db, read_timelines, &timelines);
	const struct insight_observer observer = { &lanes, lane_process, lane_device, lane_busy,
						   lane_end };
	size_t first_finding = r->findings.count;
	struct error findings_err, timelines_err;
	struct mpi_ranks ranks = { 0 };
	int findings = insight_check_ranks(db, path, &observer, &r->findings, &ranks,
					   &findings_err);
	if (findings == 0 && ranks.rank_count) { /* the page's MPI tables, as summary's */
		r->mpi = xrealloc(r->mpi, (r->mpi_count + 1) * sizeof(*r->mpi));
		r->mpi_inputs = xrealloc(r->mpi_inputs, (r->mpi_count + 1) * sizeof(*r->mpi_inputs));
		r->mpi[r->mpi_count] = ranks;
		r->mpi_inputs[r->mpi_count++] = input; /* numbered as summary numbers them */
	} else {
		mpi_ranks_release(&ranks);
	}
	int rc = store_job_finish(&tables_job, err);
	int timeline = store_job_finish(&timelines_job, &timelines_err);
	if (rc == 0 && (findings || timeline)) { /* the first error in the order above */
		*err = findings ? findings_err : timelines_err;
		rc = -1;
	}
	if (rc == 0) /* its device memory, once the other readers are done */
		rc = memory_gather(db, input, MEMORY_BY_RANGE, &r->memory, err) ||
		     communication_gather(db, input, &r->communication, err) ? -1 : 0;
	if (rc == 0) /* the run over time, this input's findings pinned on it */
		report_timeline_draw(&timelines.read, r->findings.items + first_finding,
				     r->findings.count - first_finding, &r->timelines);
	report_timeline_release(&timelines.read);
	strbuf_release(&label);
	sqlite3_close(db);
	return rc;
}

int report_write(char *const *inputs, int count, const char *roofline, const char *path,
		 struct error *err)
{
	struct report r;
	memset(&r, 0, sizeof(r));
	stats_init(&r.kernels);
	stats_init(&r.api);
	stats_init(&r.ranges);
	stats_init(&r.functions);
	profile_init(&r.launches);
	strbuf_init(&r.inputs);
	strbuf_init(&r.timelines);
	int rc = 0;
	for (int i = 0; rc == 0 && i < count; i++)
		rc = read_input(inputs[i], i, count, &r, err);
	FILE *out = rc == 0 ? output_partial_open(path, err) : NULL;
	if (out) {
		report_page_write(out, &r, roofline);
		int failed = ferror(out);
		if ((fclose(out) || failed) && rc == 0) {
			output_discard(path);
			rc = error_set(err, "cannot write '%s'", path);
		} else {
			rc = output_publish(path, err);
		}
	} else if (rc == 0) {
		rc = -1;
	}
	stats_release(&r.kernels);
	stats_release(&r.api);
	stats_release(&r.ranges);
	stats_release(&r.functions);
	for (size_t i = 0; i < r.copy_count; i++)
		free(r.copies[i].name);
	free(r.copies);
	for (size_t i = 0; i < r.lane_count; i++)
		free(r.lanes[i].label);
	free(r.lanes);
	for (size_t i = 0; i < r.series_count; i++) {
		free(r.series[i].label);
		free(r.series[i].unit);
	}
	free(r.series);
	findings_release(&r.findings);
	for (size_t i = 0; i < r.mpi_count; i++)
		mpi_ranks_release(&r.mpi[i]);
	free(r.mpi);
	free(r.mpi_inputs);
	profile_release(&r.launches);
	memory_release(&r.memory);
	communication_release(&r.communication);
	for (size_t i = 0; i < r.flame_count; i++) {
		free(r.flames[i].title);
		profile_release(&r.flames[i].tree);
	}
	free(r.flames);
	strbuf_release(&r.inputs);
	strbuf_release(&r.timelines);
	return rc;
}
