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

#include "analysis/insight.h"
#include "analysis/profile.h"
#include "analysis/stats.h"
#include "store/store.h"
#include "store/store-job.h"
#include "util/html.h"
#include "util/strbuf.h"
#include "util/units.h"
#include "writer/flamegraph.h"
#include "writer/output-file.h"
#include "writer/report-timeline.h"
#include "writer/writer.h"

#define BINS 240          /* slices of a process's run in the overview and the series */
#define TOP_ROWS 30       /* rows of a table; the rest are counted */
#define WIDTH 960         /* of the pictures, px */
#define LABEL 260         /* room for a lane's name */

/* A device of a process: how busy it was in each slice of the process's run. */
struct lane {
	char *label;
	int64_t start, end;           /* ns: the process's recorded run */
	double busy[BINS];            /* busy ns in each slice */
	int64_t busy_ns;
};

/* A metric series, its values averaged per slice. */
struct series {
	char *label, *unit;
	double min, max, sum, bins[BINS];
	int64_t count, bin_count[BINS];
};

/* Copies by operation and direction. */
struct copy_kind {
	char *name;
	int64_t calls, bytes, ns;
};

/* The CPU samples of one process, as a call tree. */
struct flame {
	char *title;
	struct profile_tree tree;
};

struct report {
	struct stats_table kernels, api, ranges, functions;
	struct flame *flames;         /* one per process with samples */
	size_t flame_count, flames_left_out;
	struct copy_kind *copies;
	size_t copy_count;
	struct lane *lanes;
	size_t lane_count;
	struct series *series;
	size_t series_count;
	struct findings findings;
	int64_t samples;
	struct profile_tree launches; /* launches with a call stack (trace --launch-stacks) */
	struct strbuf inputs;         /* what was read, a line per process */
	struct strbuf timelines;      /* the run over time, SVG per process */
};

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
	if (store_prepare(db, "WITH f AS (SELECT process_id, series_id, MIN(time) AS t FROM "
			  "gpuprof_metric GROUP BY 1, 2), s AS (SELECT m.*, f.t FROM "
			  "gpuprof_metric_series m LEFT JOIN f USING (process_id, series_id)) "
			  "SELECT m.process_id, m.series_id, m.name, m.unit, p.pid, p.start, p.end, "
			  "m.source, m.device FROM s m JOIN gpuprof_process p ON p.id = m.process_id "
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
	int findings = insight_check(db, path, &observer, &r->findings, &findings_err);
	int rc = store_job_finish(&tables_job, err);
	int timeline = store_job_finish(&timelines_job, &timelines_err);
	if (rc == 0 && (findings || timeline)) { /* the first error in the order above */
		*err = findings ? findings_err : timelines_err;
		rc = -1;
	}
	if (rc == 0) /* the run over time, this input's findings pinned on it */
		report_timeline_draw(&timelines.read, r->findings.items + first_finding,
				     r->findings.count - first_finding, &r->timelines);
	report_timeline_release(&timelines.read);
	strbuf_release(&label);
	sqlite3_close(db);
	return rc;
}

/* ---- the page ------------------------------------------------------------------------ */

static const char style[] =
	"body{font:14px/1.4 sans-serif;margin:24px;color:#222;max-width:1200px}"
	"h1{font-size:22px}h2{font-size:18px;margin-top:32px;border-bottom:1px solid #ccc}"
	"table{border-collapse:collapse;margin:8px 0}td,th{padding:3px 8px;border-bottom:1px "
	"solid #eee;text-align:right}td:first-child,th:first-child{text-align:left}"
	"td.name{text-align:left;max-width:520px;overflow-wrap:anywhere}"
	".finding{border-left:4px solid #d62728;padding:4px 12px;margin:12px 0;background:#fafafa}"
	"pre{white-space:pre-wrap;overflow-wrap:anywhere}.finding pre{margin:4px 0}"
	".note{color:#666}svg{max-width:100%;height:auto}"
	"nav a{margin-right:12px}";

/* Lines of text, each escaped, for a <pre>. */
static void html_lines(FILE *out, const char *text)
{
	struct strbuf line = STRBUF_INIT;
	for (const char *at = text; *at;) {
		size_t n = strcspn(at, "\n");
		strbuf_reset(&line);
		strbuf_add(&line, at, n);
		html_text(out, line.buf);
		fputc('\n', out);
		at += n + (at[n] == '\n');
	}
	strbuf_release(&line);
}

/* A duration as a person reads it, the exact ns in data-ns. */
static void human_duration_cell(FILE *out, double ns)
{
	struct strbuf text = STRBUF_INIT;
	units_duration(&text, ns);
	fprintf(out, "<td data-ns=\"%.0f\">%s</td>", ns, text.buf);
	strbuf_release(&text);
}

static void stats_section(FILE *out, const char *id, const char *title, const char *what,
			  const struct stats_table *t)
{
	fprintf(out, "<section id=\"%s\"><h2>%s</h2>\n", id, title);
	fprintf(out, "<table><tr><th>%s</th><th>Calls</th><th>Total</th><th>Average</th>"
		     "<th>%%</th><th>Min</th><th>Max</th></tr>\n", what);
	for (size_t i = 0; i < t->count && i < TOP_ROWS; i++) {
		const struct stats_row *row = &t->rows[i];
		fprintf(out, "<tr><td class=\"name\">");
		html_text(out, row->name);
		fprintf(out, "</td><td>%" PRIu64 "</td>", row->calls);
		human_duration_cell(out, (double)row->total_ns);
		human_duration_cell(out, row->mean_ns);
		fprintf(out, "<td>%.1f</td>", row->percentage);
		human_duration_cell(out, (double)row->min_ns);
		human_duration_cell(out, (double)row->max_ns);
		fprintf(out, "</tr>\n");
	}
	fprintf(out, "</table>\n");
	if (t->count > TOP_ROWS)
		fprintf(out, "<p class=\"note\">and %zu more</p>\n", t->count - TOP_ROWS);
	fprintf(out, "</section>\n");
}

static void overview(FILE *out, const struct report *r)
{
	fprintf(out, "<section id=\"overview\"><h2>Devices along the run</h2>\n");
	/* the bars' scale: the busiest slice of any lane at the top, so that a device busy
	 * 0.02 % of the run still shows where */
	double top = 0;
	for (size_t i = 0; i < r->lane_count; i++) {
		const struct lane *l = &r->lanes[i];
		double slice = (double)(l->end - l->start) / BINS;
		for (int b = 0; b < BINS && slice > 0; b++)
			top = fmax(top, fmin(l->busy[b] / slice, 1));
	}
	if (top <= 0)
		top = 1;
	fprintf(out, "<p class=\"note\">Each bar is 1/%d of its process's run; its height is the "
		     "share of that time the device was busy (a kernel or a copy running), the "
		     "top of a lane being %.3g %%, the busiest slice.</p>\n", BINS, 100 * top);
	const int row = 36, height = (int)r->lane_count * row + 24;
	fprintf(out, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
		     "role=\"img\" font-size=\"12\">\n", WIDTH, height);
	const double width = (double)(WIDTH - LABEL) / BINS;
	for (size_t i = 0; i < r->lane_count; i++) {
		const struct lane *l = &r->lanes[i];
		double slice = (double)(l->end - l->start) / BINS, base = (double)(i + 1) * row;
		/* the name above its bars, cut to the label column */
		fprintf(out, "<g class=\"lane\" data-busy-ns=\"%" PRId64 "\"><text x=\"0\" "
			     "y=\"%.0f\" textLength=\"%d\" lengthAdjust=\"spacingAndGlyphs\">",
			l->busy_ns, base - 10, strlen(l->label) * 7 > LABEL - 10 ? LABEL - 10
				: (int)strlen(l->label) * 7);
		html_text(out, l->label);
		fprintf(out, "</text><line x1=\"%d\" y1=\"%.0f\" x2=\"%d\" y2=\"%.0f\" "
			     "stroke=\"#ccc\"/>\n", LABEL, base, WIDTH, base);
		for (int b = 0; b < BINS; b++) {
			double share = slice > 0 ? fmin(l->busy[b] / slice, 1) : 0;
			if (share <= 0)
				continue;
			double h = fmax(share / top * (row - 6), 2);
			fprintf(out, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.2f\" height=\"%.1f\" "
				     "fill=\"#1f77b4\"/>", LABEL + b * width, base - h, width, h);
		}
		fprintf(out, "\n<title>busy %.2f %% of the run</title></g>\n",
			l->end > l->start ? 100.0 * (double)l->busy_ns / (double)(l->end - l->start)
					  : 0);
	}
	int one_span = 1; /* lanes of processes of other lengths share no axis */
	for (size_t i = 1; i < r->lane_count; i++)
		one_span &= r->lanes[i].end - r->lanes[i].start ==
			    r->lanes[0].end - r->lanes[0].start;
	if (r->lane_count && one_span) {
		const struct lane *l = &r->lanes[0];
		struct strbuf axis = STRBUF_INIT;
		report_time_axis(&axis, LABEL, WIDTH - LABEL, height - 22, (double)(l->end - l->start));
		fputs(axis.buf, out);
		strbuf_release(&axis);
	}
	fprintf(out, "</svg>\n<table><tr><th>Device</th><th>Busy (ns)</th><th>Busy %% of the run"
		     "</th></tr>\n");
	for (size_t i = 0; i < r->lane_count; i++) {
		const struct lane *l = &r->lanes[i];
		fprintf(out, "<tr><td class=\"name\">");
		html_text(out, l->label);
		fprintf(out, "</td><td>%" PRId64 "</td><td>%.2f</td></tr>\n", l->busy_ns,
			l->end > l->start ? 100.0 * (double)l->busy_ns / (double)(l->end - l->start)
					  : 0);
	}
	fprintf(out, "</table></section>\n");
}

static void findings_section(FILE *out, const struct report *r)
{
	fprintf(out, "<section id=\"findings\"><h2>Findings</h2>\n");
	if (!r->findings.count)
		fprintf(out, "<p class=\"note\">None of gpuprof advise's %zu rules saw a problem.</p>\n",
			insight_rule_count);
	for (size_t i = 0; i < r->findings.count; i++) {
		const struct finding *f = &r->findings.items[i];
		fprintf(out, "<div class=\"finding\" data-rule=\"%s\" data-cost-ns=\"%" PRId64 "\">"
			     "<h3>", f->rule, f->cost_ns);
		html_text(out, f->rule);
		fprintf(out, ": pid %" PRId64, f->pid);
		if (f->device) {
			fputs(", ", out);
			html_text(out, f->device);
		}
		struct strbuf cost = STRBUF_INIT;
		insight_duration(&cost, f->cost_ns);
		fprintf(out, ", %s (%.1f %% of the process's time)</h3><p>", cost.buf, f->cost_pct);
		strbuf_release(&cost);
		html_text(out, f->what.buf);
		fprintf(out, "</p><pre>");
		html_lines(out, f->evidence.buf);
		fprintf(out, "</pre><p><b>Change:</b> ");
		html_text(out, f->advice.buf);
		fprintf(out, "</p></div>\n");
	}
	fprintf(out, "</section>\n");
}

/* A size as a person reads it, the exact bytes in data-bytes. */
static void human_bytes_cell(FILE *out, double bytes)
{
	struct strbuf text = STRBUF_INIT;
	units_bytes(&text, bytes);
	fprintf(out, "<td data-bytes=\"%.0f\">%s</td>", bytes, text.buf);
	strbuf_release(&text);
}

static void copies_section(FILE *out, const struct report *r)
{
	fprintf(out, "<section id=\"copies\"><h2>Memory copies</h2>\n");
	fprintf(out, "<table><tr><th>Operation and direction</th><th>Calls</th><th>Bytes</th>"
		     "<th>Total</th><th>Rate</th></tr>\n");
	for (size_t i = 0; i < r->copy_count; i++) {
		const struct copy_kind *c = &r->copies[i];
		fprintf(out, "<tr><td class=\"name\">");
		html_text(out, c->name);
		fprintf(out, "</td><td>%" PRId64 "</td>", c->calls);
		human_bytes_cell(out, (double)c->bytes);
		human_duration_cell(out, (double)c->ns);
		struct strbuf rate = STRBUF_INIT;
		if (c->ns > 0) {
			units_value(&rate, (double)c->bytes * 1e9 / (double)c->ns, "B/s");
			fprintf(out, "<td data-gbps=\"%.3f\">%s</td></tr>\n",
				(double)c->bytes / (double)c->ns, rate.buf);
		} else {
			fprintf(out, "<td></td></tr>\n");
		}
		strbuf_release(&rate);
	}
	fprintf(out, "</table></section>\n");
}

static void functions_section(FILE *out, struct report *r)
{
	fprintf(out, "<section id=\"functions\"><h2>Hot CPU functions</h2>\n");
	fprintf(out, "<table><tr><th>Function (running when sampled)</th><th>Samples</th>"
		     "<th>%%</th></tr>\n");
	for (size_t i = 0; i < r->functions.count && i < TOP_ROWS; i++) {
		const struct stats_row *row = &r->functions.rows[i];
		fprintf(out, "<tr><td class=\"name\">");
		html_text(out, row->name);
		fprintf(out, "</td><td>%" PRIu64 "</td><td>%.1f</td></tr>\n", row->total_ns,
			100.0 * (double)row->total_ns / (double)r->samples);
	}
	fprintf(out, "</table></section>\n");
}

/* Flame graphs: each process's CPU samples, and the device time by launch path. */
static void flames_section(FILE *out, struct report *r)
{
	if (r->flame_count) {
		fprintf(out, "<section id=\"cpu-flames\"><h2>Where the CPU time went</h2>\n"
			     "<p class=\"note\">Call-stack samples of each process (gpuprof sys): "
			     "each frame as wide as its share of the samples, its callees above it, "
			     "Python's functions in green. Click a frame to zoom, search by name; "
			     "hover for the counts.</p>\n");
		for (size_t i = 0; i < r->flame_count; i++) {
			struct strbuf id = STRBUF_INIT, count = STRBUF_INIT;
			strbuf_addf(&id, "cpu-flame-%zu", i + 1);
			fprintf(out, "<h3>");
			html_text(out, r->flames[i].title);
			profile_count_text(&r->flames[i].tree, &count);
			fprintf(out, "</h3><p class=\"note\">");
			html_text(out, count.buf);
			fprintf(out, "</p>\n");
			flamegraph_svg(out, &r->flames[i].tree, id.buf);
			strbuf_release(&id);
			strbuf_release(&count);
		}
		if (r->flames_left_out)
			fprintf(out, "<p class=\"note\">and %zu more processes with samples "
				     "(gpuprof profile shows each)</p>\n", r->flames_left_out);
		fprintf(out, "</section>\n");
	}
	if (r->launches.samples) {
		struct strbuf count = STRBUF_INIT;
		profile_count_text(&r->launches, &count);
		fprintf(out, "<section id=\"device-flame\"><h2>Device time by launch path</h2>\n"
			     "<p class=\"note\">Each kernel and copy (blue) weighted by its time on "
			     "the device, above the call path that launched it (trace "
			     "--launch-stacks). ");
		html_text(out, count.buf);
		fprintf(out, ".</p>\n");
		flamegraph_svg(out, &r->launches, "device-flame-1");
		fprintf(out, "</section>\n");
		strbuf_release(&count);
	}
}

/* Where the most device time was launched from in the user's code (trace
 * --launch-stacks): a section only where launches were recorded with their call stacks. */
static void launch_sites_section(FILE *out, const struct report *r)
{
	if (!r->launches.samples)
		return;
	struct profile_launch_site *sites;
	size_t count = profile_launch_sites(&r->launches, &sites);
	fprintf(out, "<section id=\"launch-sites\"><h2>Launch sites</h2>\n<p class=\"note\">"
		     "Device time of %" PRIu64 " launches by the innermost frame of the user's code "
		     "on the launch's path (a Python file outside Python's library and installed "
		     "packages, or the program's executable), then the frame it went through "
		     "(gpuprof profile --kernels gives the paths).</p>\n<table><tr><th>Function"
		     "</th><th>Through</th><th>Call</th><th>Launched</th><th>Launches</th>"
		     "<th>Device time</th><th>%%</th></tr>\n", r->launches.launches);
	for (size_t i = 0; i < count && i < TOP_ROWS; i++) {
		fprintf(out, "<tr><td class=\"name\">");
		html_text(out, sites[i].function);
		fprintf(out, "</td><td class=\"name\">");
		html_text(out, sites[i].through);
		fprintf(out, "</td><td>");
		html_text(out, sites[i].call);
		fprintf(out, "</td><td class=\"name\">");
		html_text(out, sites[i].launched);
		fprintf(out, "</td><td>%" PRIu64 "</td>", sites[i].launches);
		human_duration_cell(out, (double)sites[i].ns);
		fprintf(out, "<td>%.1f</td></tr>\n",
			100.0 * (double)sites[i].ns / (double)r->launches.samples);
	}
	fprintf(out, "</table></section>\n");
	free(sites);
}

/* A metric's value in its unit as a person reads it, the exact value in data-value. */
static void metric_cell(FILE *out, double value, const char *unit)
{
	struct strbuf text = STRBUF_INIT;
	units_value(&text, value, unit);
	fprintf(out, "<td data-value=\"%.9g\">", value);
	html_text(out, text.buf);
	fprintf(out, "</td>");
	strbuf_release(&text);
}

static void metrics_section(FILE *out, const struct report *r)
{
	fprintf(out, "<section id=\"metrics\"><h2>Metrics over time</h2>\n");
	fprintf(out, "<table><tr><th>Series</th><th>Unit</th><th>Samples</th><th>Min</th>"
		     "<th>Average</th><th>Max</th><th>Along the run</th></tr>\n");
	for (size_t i = 0; i < r->series_count; i++) {
		const struct series *x = &r->series[i];
		fprintf(out, "<tr><td class=\"name\">");
		html_text(out, x->label);
		fprintf(out, "</td><td>");
		html_text(out, x->unit);
		fprintf(out, "</td><td>%" PRId64 "</td>", x->count);
		metric_cell(out, x->min, x->unit);
		metric_cell(out, x->count ? x->sum / (double)x->count : 0, x->unit);
		metric_cell(out, x->max, x->unit);
		fprintf(out, "<td><svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
			     "height=\"30\"><polyline fill=\"none\" stroke=\"#2ca02c\" points=\"",
			BINS);
		double span = x->max > x->min ? x->max - x->min : 1;
		for (int b = 0; b < BINS; b++)
			if (x->bin_count[b])
				fprintf(out, "%d,%.1f ", b,
					28 - 26 * (x->bins[b] / (double)x->bin_count[b] - x->min) / span);
		fprintf(out, "\"/></svg></td></tr>\n");
	}
	fprintf(out, "</table></section>\n");
}

static void write_page(FILE *out, struct report *r, const char *roofline)
{
	stats_finish(&r->kernels);
	stats_finish(&r->api);
	stats_finish(&r->ranges);
	stats_finish(&r->functions);
	/* a section only where it has something to show: the findings always (none seen
	 * is something to tell) */
	const struct {
		int shown;
		const char *id, *name;
	} sections[] = {
		{ r->lane_count > 0, "overview", "Devices" },
		{ r->timelines.len > 0, "timeline", "Timeline" },
		{ 1, "findings", "Findings" },
		{ r->kernels.count > 0, "kernels", "Kernels" },
		{ r->copy_count > 0, "copies", "Copies" },
		{ r->api.count > 0, "api", "API calls" },
		{ r->ranges.count > 0, "ranges", "Marker ranges" },
		{ r->samples > 0, "functions", "CPU functions" },
		{ r->flame_count > 0, "cpu-flames", "CPU flame graphs" },
		{ r->launches.samples > 0, "device-flame", "Device time by launch path" },
		{ r->launches.samples > 0, "launch-sites", "Launch sites" },
		{ r->series_count > 0, "metrics", "Metrics" },
		{ roofline != NULL, "roofline", "Roofline" },
	};
	fprintf(out, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
		     "<title>gpuprof report</title><style>%s</style></head><body>\n"
		     "<h1>gpuprof report</h1>\n<pre class=\"note\" id=\"inputs\">", style);
	html_lines(out, r->inputs.buf);
	fprintf(out, "</pre>\n<nav>");
	for (size_t i = 0; i < sizeof(sections) / sizeof(sections[0]); i++)
		if (sections[i].shown)
			fprintf(out, "<a href=\"#%s\">%s</a>", sections[i].id, sections[i].name);
	fprintf(out, "</nav>\n");
	if (r->lane_count)
		overview(out, r);
	if (r->timelines.len)
		fprintf(out, "<section id=\"timeline\"><h2>The run over time</h2>\n<p class=\"note\">"
			     "Each process: its devices (blue, darker where busier, each dash at "
			     "least a third dark where it was busy at all; the longest idle gaps in "
			     "red) and their queues (orange), its threads' time in API calls (grey) "
			     "and in communication calls (MPI, NCCL, torch.distributed: green), their "
			     "marker and PyTorch operator ranges beneath (purple, nested); the "
			     "findings above (red: a device's over its kernels' span); "
			     "hover for names and times.</p>\n%s</section>\n", r->timelines.buf);
	findings_section(out, r);
	if (r->kernels.count)
		stats_section(out, "kernels", "Kernels", "Kernel", &r->kernels);
	if (r->copy_count)
		copies_section(out, r);
	if (r->api.count)
		stats_section(out, "api", "API calls", "Function", &r->api);
	if (r->ranges.count)
		stats_section(out, "ranges", "Marker ranges", "Range", &r->ranges);
	if (r->samples)
		functions_section(out, r);
	flames_section(out, r);
	launch_sites_section(out, r);
	if (r->series_count)
		metrics_section(out, r);
	if (roofline)
		fprintf(out, "<section id=\"roofline\"><h2>Roofline</h2>\n%s</section>\n", roofline);
	fprintf(out, "<p class=\"note\">gpuprof %s</p>\n", GPUPROF_VERSION);
	if (r->flame_count || r->launches.samples)
		fputs(flamegraph_script, out);
	fprintf(out, "</body></html>\n");
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
		write_page(out, &r, roofline);
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
	profile_release(&r.launches);
	for (size_t i = 0; i < r.flame_count; i++) {
		free(r.flames[i].title);
		profile_release(&r.flames[i].tree);
	}
	free(r.flames);
	strbuf_release(&r.inputs);
	strbuf_release(&r.timelines);
	return rc;
}
