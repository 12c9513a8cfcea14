/* The run over time in the HTML report (see report-timeline.h). */
#include "writer/report-timeline.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/insight.h"
#include "analysis/mpi-ranks.h"
#include "store/store.h"
#include "util/html.h"
#include "util/sort.h"
#include "util/units.h"

#define LABEL 210        /* px: the lanes' names */
#define PX 990           /* px: the time */
#define LANE 16          /* px per lane */
#define MAX_PROCESSES "8"  /* per input, in the SQL below */
#define MAX_DEPTH 4        /* nested ranges drawn */
#define MAX_RANGES "3000"  /* per process, the longest */
#define GAPS 5           /* idle gaps marked per device, the longest */

/* A lane: the time covered in each pixel. */
struct lane {
	char name[160];
	int kind;             /* 0 device, 1 queue, 2 thread, 3 its communication calls */
	int64_t key, tid;
	double covered[PX];
	int64_t busy_ns;
};

struct range {
	int64_t start, end, tid;
	int depth;
	char *name;
};

struct gap {
	int64_t agent, start, end; /* ns from the window's start */
};

/* A point-to-point message of an MPI run: its ranks, when it was sent and when its
 * receive ended (ns, the database's clock), how long the receive waited for it. */
struct timeline_message {
	int64_t sender, receiver, sent, received, wait;
};

#define MAX_MESSAGES "500" /* drawn, those whose receives waited longest */

/* A process's run over time as read, to be drawn once its findings are known. */
struct timeline_process {
	char *title;
	int64_t pid, rank, start;     /* rank: -1 for none; start: the window's, ns */
	double span, slice;           /* ns: the window, a pixel */
	struct lane *lanes;
	size_t lane_count;
	struct gap *gaps;
	size_t gap_count;
	struct range *ranges;
	size_t range_count;
};

/* t - start, the saturated difference where a database holds times out of any range
 * (edited by hand, corrupt): the picture clips it. */
static int64_t since(int64_t t, int64_t start)
{
	int64_t d;
	if (__builtin_sub_overflow(t, start, &d))
		return t < start ? INT64_MIN / 2 : INT64_MAX / 2;
	return d;
}

/* Adds [a, b) (ns from the window's start) to a lane's pixels, the part of it inside
 * the window. */
static void cover(struct lane *l, double slice, int64_t a, int64_t b)
{
	double lo = fmax((double)a, 0), hi = fmin((double)b, slice * PX);
	if (!(hi > lo))
		return;
	l->busy_ns += (int64_t)(hi - lo);
	int first = (int)(lo / slice), last = (int)fmin(ceil(hi / slice) - 1, PX - 1);
	for (int p = first; p <= last && p < PX; p++) {
		double x = fmax(lo, p * slice), y = fmin(hi, (p + 1) * slice);
		if (y > x)
			l->covered[p] += y - x;
	}
}

/* The lane's pixels as rectangles, consecutive pixels of one shade merged: any time
 * covered shows (a pixel of 1 % is drawn at a third of the colour), the share of the
 * pixel's time as the shade. */
static void draw_lane(struct strbuf *out, const struct lane *l, double y, double slice,
		      const char *colour)
{
	for (int p = 0; p < PX;) {
		double share = fmin(l->covered[p] / slice, 1);
		if (share <= 0) {
			p++;
			continue;
		}
		double shade = share < 0.01 ? 0.33 : 0.33 + 0.67 * share;
		int q = p + 1;
		while (q < PX && l->covered[q] > 0 &&
		       fabs((0.33 + 0.67 * fmin(l->covered[q] / slice, 1)) - shade) < 0.05)
			q++;
		strbuf_addf(out, "<rect x=\"%d\" y=\"%.0f\" width=\"%d\" height=\"%d\" fill=\"%s\" "
				 "fill-opacity=\"%.2f\"/>", LABEL + p, y, q - p, LANE - 3, colour,
			    shade);
		p = q;
	}
}

void report_time_axis(struct strbuf *out, double x0, double width, double y, double span_ns)
{
	if (span_ns <= 0)
		return;
	/* a round step giving 5 to 10 ticks */
	double step = pow(10, floor(log10(span_ns / 5)));
	if (span_ns / step > 20)
		step *= 5;
	else if (span_ns / step > 10)
		step *= 2;
	strbuf_addf(out, "<g class=\"axis\" font-size=\"10\" fill=\"#555\"><line x1=\"%.0f\" "
			 "y1=\"%.0f\" x2=\"%.0f\" y2=\"%.0f\" stroke=\"#999\"/>", x0, y, x0 + width, y);
	struct strbuf label = STRBUF_INIT;
	for (double t = 0; t <= span_ns * 1.0001; t += step) {
		double x = x0 + t / span_ns * width;
		strbuf_reset(&label);
		if (t == 0)
			strbuf_addstr(&label, "0");
		else
			units_duration(&label, t);
		const char *anchor = x > x0 + width - 30 ? "end" : t == 0 ? "start" : "middle";
		strbuf_addf(out, "<line x1=\"%.1f\" y1=\"%.0f\" x2=\"%.1f\" y2=\"%.0f\" "
				 "stroke=\"#999\"/><text x=\"%.1f\" y=\"%.0f\" text-anchor=\"%s\">%s"
				 "</text>", x, y, x, y + 4, x, y + 14, anchor, label.buf);
	}
	strbuf_release(&label);
	strbuf_addstr(out, "</g>");
}

static int by_start(const void *a, const void *b)
{
	const struct range *x = a, *y = b;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->end > y->end ? -1 : x->end < y->end;
}

/* The lane of key (kind, key, tid), made if new. */
static struct lane *lane_of(struct lane **lanes, size_t *count, int kind, int64_t key,
			    int64_t tid)
{
	for (size_t i = 0; i < *count; i++)
		if ((*lanes)[i].kind == kind && (*lanes)[i].key == key && (*lanes)[i].tid == tid)
			return &(*lanes)[i];
	*lanes = xrealloc(*lanes, (*count + 1) * sizeof(**lanes));
	struct lane *l = &(*lanes)[(*count)++];
	memset(l, 0, sizeof(*l));
	l->kind = kind;
	l->key = key;
	l->tid = tid;
	if (kind == 2)
		snprintf(l->name, sizeof(l->name), "thread %lld", (long long)tid);
	return l;
}

/* The deepest nesting of the ranges drawn on thread tid: -1 when it has none. */
static int deepest_range(const struct range *ranges, size_t count, int64_t tid)
{
	int deepest = -1;
	for (size_t r = 0; r < count; r++)
		if (ranges[r].tid == tid && ranges[r].depth < MAX_DEPTH && ranges[r].depth > deepest)
			deepest = ranges[r].depth;
	return deepest;
}

/* What each kind of lane is called, what its time is, its colour. */
static const struct {
	const char *kind, *what, *colour;
} lane_kinds[] = {
	{ "device", "busy", "#1f77b4" },
	{ "queue", "busy", "#ff7f0e" },
	{ "thread", "in API calls", "#7f7f7f" },
	{ "communication", "in communication calls", "#2ca02c" },
};

/* Opens a lane's group, its name, tooltip and time covered drawn (closed by the caller,
 * who may add to it). */
static void open_lane(struct strbuf *out, const struct lane *l, double y, double span,
		      double slice)
{
	struct strbuf d = STRBUF_INIT;
	units_duration(&d, (double)l->busy_ns);
	strbuf_addf(out, "<g class=\"tlane\" data-kind=\"%s\" data-busy-ns=\"%" PRId64 "\">"
			 "<text x=\"0\" y=\"%.0f\">", lane_kinds[l->kind].kind, l->busy_ns,
		    y + LANE - 5);
	html_text_buf(out, l->name);
	strbuf_addstr(out, "</text><title>");
	html_text_buf(out, l->name);
	strbuf_addf(out, ": %s %s, %.2f %% of the run</title>", d.buf, lane_kinds[l->kind].what,
		    span > 0 ? 100.0 * (double)l->busy_ns / span : 0);
	strbuf_release(&d);
	draw_lane(out, l, y, slice, lane_kinds[l->kind].colour);
}

/* A lane with nothing drawn over it; the y of the next. */
static double lane_alone(struct strbuf *out, const struct lane *l, double y, double span,
			 double slice)
{
	open_lane(out, l, y, span, slice);
	strbuf_addstr(out, "</g>\n");
	return y + LANE;
}

/* A range at its nesting depth under the thread's lane, named where it is wide enough. */
static void draw_range(struct strbuf *out, const struct range *x, double base, double slice)
{
	double x0 = LABEL + (double)x->start / slice, w = fmax((double)(x->end - x->start) / slice, 1);
	double y = base + x->depth * LANE;
	strbuf_addstr(out, "<g class=\"range\" data-name=\"");
	html_text_buf(out, x->name);
	strbuf_addf(out, "\" data-start-ns=\"%" PRId64 "\" data-end-ns=\"%" PRId64 "\"><rect "
			 "x=\"%.1f\" y=\"%.0f\" width=\"%.1f\" height=\"%d\" fill=\"#9467bd\" "
			 "fill-opacity=\"0.55\"/><title>", x->start, x->end, x0, y, w, LANE - 3);
	html_text_buf(out, x->name);
	struct strbuf d = STRBUF_INIT;
	units_duration(&d, (double)(x->end - x->start));
	strbuf_addf(out, ": %s</title>", d.buf);
	strbuf_release(&d);
	size_t fits = w > 30 ? (size_t)fmin((w - 4) / 6.2, 4096) : 0;
	if (fits) {
		struct strbuf cut = STRBUF_INIT;
		strbuf_add(&cut, x->name, strlen(x->name) < fits ? strlen(x->name) : fits);
		strbuf_addf(out, "<text x=\"%.1f\" y=\"%.0f\">", x0 + 2, y + LANE - 5);
		html_text_buf(out, cut.buf);
		strbuf_addstr(out, "</text>");
		strbuf_release(&cut);
	}
	strbuf_addstr(out, "</g>\n");
}

/* The findings of the process pinned where they happen, a row each above the lanes. */
static void draw_findings(struct strbuf *out, const struct finding *findings, size_t count,
			  int64_t pid, int64_t start, double slice, double *y)
{
	for (size_t i = 0; i < count; i++) {
		const struct finding *f = &findings[i];
		if (f->pid != pid || f->from_ns >= f->to_ns)
			continue;
		double x0 = LABEL + (double)since(f->from_ns, start) / slice;
		double w = fmax((double)(f->to_ns - f->from_ns) / slice, 2);
		struct strbuf cost = STRBUF_INIT;
		units_duration(&cost, (double)f->cost_ns);
		strbuf_addf(out, "<g class=\"pin\" data-rule=\"%s\" data-from-ns=\"%" PRId64 "\" "
				 "data-to-ns=\"%" PRId64 "\"><text x=\"0\" y=\"%.0f\" "
				 "fill=\"#d62728\">%s</text><rect x=\"%.1f\" y=\"%.0f\" "
				 "width=\"%.1f\" height=\"%d\" fill=\"#d62728\" fill-opacity=\"0.25\" "
				 "stroke=\"#d62728\"/><title>%s, %s: ", f->rule, since(f->from_ns, start),
			    since(f->to_ns, start), *y + LANE - 5, f->rule, x0, *y + 3, w, LANE - 8, f->rule,
			    cost.buf);
		html_text_buf(out, f->what.buf);
		strbuf_addstr(out, "</title></g>\n");
		strbuf_release(&cost);
		*y += LANE;
	}
}

/* The devices' lanes being read: each device's busy intervals merged in order of
 * start, its longest idle gaps kept. */
struct device_state {
	int64_t agent, open_start, open_end, last_start;
	struct gap longest[GAPS];
	int longest_count;
};

struct devices {
	int64_t start;                /* the window's */
	double slice;
	struct lane *lanes;
	size_t lane_count;
	struct gap *gaps;
	size_t gap_count;
	struct device_state *states;  /* by agent, ascending */
	size_t state_count;
	struct device_name {
		int64_t agent;
		char *name;
	} *names;                     /* the agents table's, where read in place */
	size_t name_count;
};

/* An item [s, e) of device a's queue, in the device's order of start; name: the device's. */
static void device_item(struct devices *d, struct device_state *st, int64_t a, int64_t queue,
			int64_t s, int64_t e, const char *name, int first)
{
	struct lane *device;
	st->last_start = s;
	if (first) {
		device = lane_of(&d->lanes, &d->lane_count, 0, a, 0);
		snprintf(device->name, sizeof(device->name), "%s", name);
		st->agent = a;
		st->open_start = s;
		st->open_end = e;
		st->longest_count = 0;
	} else if (s > st->open_end) { /* a gap: the busy interval before it closes */
		device = lane_of(&d->lanes, &d->lane_count, 0, a, 0);
		cover(device, d->slice, since(st->open_start, d->start), since(st->open_end, d->start));
		struct gap g = { a, st->open_end, s };
		int at = st->longest_count;
		while (at > 0 && since(st->longest[at - 1].end, st->longest[at - 1].start) <
				    since(g.end, g.start))
			at--;
		if (at < GAPS) {
			if (st->longest_count < GAPS)
				st->longest_count++;
			memmove(&st->longest[at + 1], &st->longest[at],
				(size_t)(st->longest_count - 1 - at) * sizeof(*st->longest));
			st->longest[at] = g;
		}
		st->open_start = s;
		st->open_end = e;
	} else if (e > st->open_end) {
		st->open_end = e;
	}
	struct lane *l = lane_of(&d->lanes, &d->lane_count, 1, a, queue);
	if (!l->name[0])
		snprintf(l->name, sizeof(l->name), "  queue %lld", (long long)queue);
	cover(l, d->slice, since(s, d->start), since(e, d->start));
}

/* The device's last busy interval, its gaps kept. */
static void device_close(struct devices *d, const struct device_state *st)
{
	struct lane *device = lane_of(&d->lanes, &d->lane_count, 0, st->agent, 0);
	cover(device, d->slice, since(st->open_start, d->start), since(st->open_end, d->start));
	for (int g = 0; g < st->longest_count; g++) {
		d->gaps = xrealloc(d->gaps, (d->gap_count + 1) * sizeof(*d->gaps));
		d->gaps[d->gap_count++] = (struct gap){ st->agent,
							since(st->longest[g].start, d->start),
							since(st->longest[g].end, d->start) };
	}
}

/* What reading needed; the lanes and gaps are kept. */
static void devices_release_reading(struct devices *d)
{
	free(d->states);
	for (size_t i = 0; i < d->name_count; i++)
		free(d->names[i].name);
	free(d->names);
}

static void devices_release(struct devices *d)
{
	devices_release_reading(d);
	free(d->lanes);
	free(d->gaps);
}

/* The work by device and start, sorted by SQLite. */
static int read_devices_sorted(sqlite3 *db, const char *path, int64_t id, struct devices *d,
			       struct error *err)
{
	sqlite3_stmt *q;
	int rc = store_prepare(db,
		"SELECT w.agent, w.queue, w.start, w.end, COALESCE(a.name, 'device ' || w.agent) "
		"FROM (SELECT agent_index AS agent, queue_index AS queue, start, end FROM "
		"gpuprof_kernel WHERE process_id = ?1 UNION ALL SELECT IFNULL(CASE direction WHEN 2 "
		"THEN src_agent_index ELSE dst_agent_index END, 0), queue_index, start, end FROM "
		"gpuprof_memory_copy WHERE process_id = ?1) w "
		"LEFT JOIN agents a ON a.process_id = ?1 AND a.agent_id = w.agent "
		"ORDER BY w.agent, w.start", &q, err);
	if (rc)
		return -1;
	sqlite3_bind_int64(q, 1, id);
	struct device_state st = { .agent = -1 };
	int open = 0, step;
	while ((step = sqlite3_step(q)) == SQLITE_ROW) {
		int64_t a = sqlite3_column_int64(q, 0);
		int first = !open || a != st.agent;
		if (first && open)
			device_close(d, &st);
		open = 1;
		device_item(d, &st, a, sqlite3_column_int64(q, 1), sqlite3_column_int64(q, 2),
			    sqlite3_column_int64(q, 3), (const char *)sqlite3_column_text(q, 4), first);
	}
	if (open)
		device_close(d, &st);
	if (step != SQLITE_DONE)
		rc = error_set(err, "cannot read '%s': %s", path, sqlite3_errmsg(db));
	sqlite3_finalize(q);
	return rc;
}

static struct device_state *state_of(struct devices *d, int64_t agent, int *first)
{
	size_t i = 0;
	while (i < d->state_count && d->states[i].agent < agent)
		i++;
	*first = i == d->state_count || d->states[i].agent != agent;
	if (*first) {
		d->states = xrealloc(d->states, (d->state_count + 1) * sizeof(*d->states));
		memmove(&d->states[i + 1], &d->states[i], (d->state_count - i) * sizeof(*d->states));
		d->state_count++;
		memset(&d->states[i], 0, sizeof(d->states[i]));
	}
	return &d->states[i];
}

/* The work read in the tables' order, which the loader made start order, kernels and
 * copies merged by start: the same lanes as read_devices_sorted without sorting every
 * item. 1 where an item comes before the previous one of its device, a kernel has no
 * device or a device two names (the caller reads them sorted then); 0, or -1 with err. */
static int read_devices_in_place(sqlite3 *db, const char *path, int64_t id, struct devices *d,
				 struct error *err)
{
	sqlite3_stmt *names, *q[2] = { NULL, NULL };
	if (store_prepare(db, "SELECT agent_id, name FROM agents WHERE process_id = ?1 "
			      "ORDER BY agent_id", &names, err))
		return -1;
	sqlite3_bind_int64(names, 1, id);
	int rc = 0, step;
	while ((step = sqlite3_step(names)) == SQLITE_ROW) {
		int64_t agent = sqlite3_column_int64(names, 0);
		if (d->name_count && d->names[d->name_count - 1].agent == agent)
			rc = 1;
		const unsigned char *name = sqlite3_column_text(names, 1);
		d->names = xrealloc(d->names, (d->name_count + 1) * sizeof(*d->names));
		d->names[d->name_count++] = (struct device_name){ agent, name ? xstrdup((const char *)name) : NULL };
	}
	if (step != SQLITE_DONE)
		rc = error_set(err, "cannot read '%s': %s", path, sqlite3_errmsg(db));
	sqlite3_finalize(names);
	if (rc == 0)
		rc = store_prepare(db, "SELECT agent_index, queue_index, start, end FROM "
				       "gpuprof_kernel WHERE process_id = ?1 ORDER BY id", &q[0], err) ||
		     store_prepare(db, "SELECT IFNULL(CASE direction WHEN 2 THEN src_agent_index "
				       "ELSE dst_agent_index END, 0), queue_index, start, end FROM "
				       "gpuprof_memory_copy WHERE process_id = ?1 ORDER BY id", &q[1],
				       err) ? -1 : 0;
	int has[2] = { 0, 0 };
	for (int k = 0; k < 2 && rc == 0; k++) {
		sqlite3_bind_int64(q[k], 1, id);
		has[k] = sqlite3_step(q[k]);
	}
	struct strbuf label = STRBUF_INIT;
	while (rc == 0 && (has[0] == SQLITE_ROW || has[1] == SQLITE_ROW)) {
		int k = has[0] != SQLITE_ROW ? 1 : has[1] != SQLITE_ROW ? 0
			: sqlite3_column_int64(q[1], 2) < sqlite3_column_int64(q[0], 2);
		if (sqlite3_column_type(q[k], 0) == SQLITE_NULL) {
			rc = 1;
			break;
		}
		int64_t a = sqlite3_column_int64(q[k], 0), s = sqlite3_column_int64(q[k], 2);
		int first;
		struct device_state *st = state_of(d, a, &first);
		if (!first && s < st->last_start) {
			rc = 1;
			break;
		}
		const char *name = NULL;
		if (first) {
			for (size_t i = 0; i < d->name_count && !name; i++)
				if (d->names[i].agent == a)
					name = d->names[i].name;
			if (!name) {
				strbuf_reset(&label);
				strbuf_addf(&label, "device %lld", (long long)a);
				name = label.buf;
			}
		}
		device_item(d, st, a, sqlite3_column_int64(q[k], 1), s, sqlite3_column_int64(q[k], 3),
			    name, first);
		has[k] = sqlite3_step(q[k]);
	}
	strbuf_release(&label);
	for (int k = 0; k < 2 && rc == 0; k++)
		if (has[k] != SQLITE_DONE)
			rc = error_set(err, "cannot read '%s': %s", path, sqlite3_errmsg(db));
	sqlite3_finalize(q[0]);
	sqlite3_finalize(q[1]);
	if (rc)
		return rc;
	for (size_t i = 0; i < d->state_count; i++)
		device_close(d, &d->states[i]);
	/* lanes by device as SQLite's order makes them, each device's lane then its
	 * queues' in the order met (a stable insertion sort: a lane per device and queue) */
	for (size_t i = 1; i < d->lane_count; i++) {
		struct lane l = d->lanes[i];
		size_t j = i;
		for (; j > 0 && d->lanes[j - 1].key > l.key; j--)
			d->lanes[j] = d->lanes[j - 1];
		d->lanes[j] = l;
	}
	return 0;
}

/* One process's lanes, gaps and ranges read from db. */
static int read_process(sqlite3 *db, const char *path, int64_t id, struct timeline_process *t,
			struct error *err)
{
	int64_t start = t->start;
	double slice = t->slice;
	struct lane *lanes = NULL;
	size_t lane_count = 0;
	struct gap *gaps = NULL;
	size_t gap_count = 0;
	/* the devices' and queues' work, by device and start */
	struct devices d = { .start = start, .slice = slice };
	int rc = read_devices_in_place(db, path, id, &d, err);
	if (rc > 0) { /* not in start order: sorted by SQLite */
		devices_release(&d);
		d = (struct devices){ .start = start, .slice = slice };
		rc = read_devices_sorted(db, path, id, &d, err);
	}
	devices_release_reading(&d);
	lanes = d.lanes, lane_count = d.lane_count;
	gaps = d.gaps, gap_count = d.gap_count;
	sqlite3_stmt *q;
	/* the threads' API calls */
	if (rc == 0)
		rc = store_prepare(db, "SELECT c.tid, c.start, c.end FROM gpuprof_api_call c "
				       "WHERE c.process_id = ?1", &q, err);
	if (rc == 0) {
		sqlite3_bind_int64(q, 1, id);
		while (sqlite3_step(q) == SQLITE_ROW) {
			int64_t tid = sqlite3_column_int64(q, 0);
			struct lane *l = lane_of(&lanes, &lane_count, 2, tid, tid);
			cover(l, slice, since(sqlite3_column_int64(q, 1), start),
			      since(sqlite3_column_int64(q, 2), start));
		}
		sqlite3_finalize(q);
	}
	/* the threads' communication calls (MPI, NCCL, torch.distributed) */
	if (rc == 0 && store_has_table(db, "gpuprof_mpi_call")) {
		rc = store_prepare(db, "SELECT tid, start, end FROM gpuprof_mpi_call WHERE "
				       "process_id = ?1", &q, err);
		if (rc == 0) {
			sqlite3_bind_int64(q, 1, id);
			while (sqlite3_step(q) == SQLITE_ROW) {
				int64_t tid = sqlite3_column_int64(q, 0);
				lane_of(&lanes, &lane_count, 2, tid, tid);
				struct lane *l = lane_of(&lanes, &lane_count, 3, tid, tid);
				snprintf(l->name, sizeof(l->name), "  communication");
				cover(l, slice, since(sqlite3_column_int64(q, 1), start),
				      since(sqlite3_column_int64(q, 2), start));
			}
			sqlite3_finalize(q);
		}
	}
	/* the marker ranges, the longest kept */
	struct range *ranges = NULL;
	size_t range_count = 0;
	if (rc == 0) {
		const char *join, *label = report_range_label(db, &join);
		struct strbuf sql = STRBUF_INIT;
		strbuf_addf(&sql, "SELECT m.tid, m.start, m.end, %s FROM gpuprof_marker m "
			    "LEFT JOIN gpuprof_string s ON s.id = m.name_id %s WHERE "
			    "m.process_id = ?1 AND m.kind IN (1, 2) AND m.ended = 1 "
			    "ORDER BY m.end - m.start DESC LIMIT " MAX_RANGES, label, join);
		rc = store_prepare(db, sql.buf, &q, err);
		strbuf_release(&sql);
	}
	if (rc == 0) {
		sqlite3_bind_int64(q, 1, id);
		while (sqlite3_step(q) == SQLITE_ROW) {
			ranges = xrealloc(ranges, (range_count + 1) * sizeof(*ranges));
			const unsigned char *name = sqlite3_column_text(q, 3);
			ranges[range_count++] = (struct range){
				since(sqlite3_column_int64(q, 1), start), since(sqlite3_column_int64(q, 2), start),
				sqlite3_column_int64(q, 0), 0, xstrdup(name ? (const char *)name : "") };
			lane_of(&lanes, &lane_count, 2, sqlite3_column_int64(q, 0),
				sqlite3_column_int64(q, 0));
		}
		sqlite3_finalize(q);
	}
	if (rc == 0 && lane_count) {
		sort_array(ranges, range_count, sizeof(*ranges), by_start);
		int64_t stack[MAX_DEPTH + 1];
		int depth = 0;
		for (size_t i = 0; i < range_count; i++) {
			if (i == 0 || ranges[i].tid != ranges[i - 1].tid)
				depth = 0;
			while (depth > 0 && stack[depth - 1] <= ranges[i].start)
				depth--;
			ranges[i].depth = depth;
			if (depth <= MAX_DEPTH)
				stack[depth < MAX_DEPTH ? depth++ : depth] = ranges[i].end;
		}
		/* thread names */
		if (store_prepare(db, "SELECT tid, name FROM threads WHERE process_id = ?1", &q,
				  err) == 0) {
			sqlite3_bind_int64(q, 1, id);
			while (sqlite3_step(q) == SQLITE_ROW) {
				int64_t tid = sqlite3_column_int64(q, 0);
				for (size_t i = 0; i < lane_count; i++)
					if (lanes[i].kind == 2 && lanes[i].tid == tid)
						snprintf(lanes[i].name, sizeof(lanes[i].name),
							 "thread %lld %s", (long long)tid,
							 sqlite3_column_text(q, 1) ?
							 (const char *)sqlite3_column_text(q, 1) : "");
			}
			sqlite3_finalize(q);
		}
	}
	t->lanes = lanes, t->lane_count = lane_count;
	t->gaps = gaps, t->gap_count = gap_count;
	t->ranges = ranges, t->range_count = range_count;
	return rc;
}

/* One process's picture: each device, its idle gaps marked, and its queues; then each
 * thread, its API calls, and its ranges beneath by nesting; its findings pinned above. */
static void draw_process(const struct timeline_process *t, const struct finding *findings,
			 size_t finding_count, struct strbuf *out)
{
	const struct lane *lanes = t->lanes;
	size_t lane_count = t->lane_count;
	const struct gap *gaps = t->gaps;
	size_t gap_count = t->gap_count;
	const struct range *ranges = t->ranges;
	size_t range_count = t->range_count;
	int64_t pid = t->pid, start = t->start;
	double span = t->span, slice = t->slice;
	const char *title = t->title;
	if (!lane_count)
		return;
	size_t rows = 0;
	for (size_t i = 0; i < finding_count; i++)
		rows += findings[i].pid == pid && findings[i].from_ns < findings[i].to_ns;
	for (size_t i = 0; i < lane_count; i++) {
		rows++;
		if (lanes[i].kind == 2)
			rows += (size_t)(deepest_range(ranges, range_count, lanes[i].tid) + 1);
	}
	double height = (double)rows * LANE + 30;
	strbuf_addf(out, "<figure class=\"timeline\" data-pid=\"%" PRId64 "\" data-window-start-ns="
			 "\"%" PRId64 "\" data-window-ns=\"%.0f\"><figcaption>", pid, start, span);
	html_text_buf(out, title);
	strbuf_addf(out, "</figcaption><svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
			 "height=\"%.0f\" viewBox=\"0 0 %d %.0f\" font-size=\"11\">\n",
		    LABEL + PX, height, LABEL + PX, height);
	double y = 0;
	draw_findings(out, findings, finding_count, pid, start, slice, &y);
	for (size_t i = 0; i < lane_count; i++) {
		const struct lane *l = &lanes[i];
		if (l->kind != 0)
			continue;
		open_lane(out, l, y, span, slice);
		for (size_t g = 0; g < gap_count; g++) {
			if (gaps[g].agent != l->key)
				continue;
			struct strbuf d = STRBUF_INIT;
			units_duration(&d, (double)(gaps[g].end - gaps[g].start));
			strbuf_addf(out, "<rect class=\"gap\" data-idle-ns=\"%" PRId64 "\" "
					 "x=\"%.1f\" y=\"%.0f\" width=\"%.1f\" height=\"%d\" "
					 "fill=\"#d62728\" fill-opacity=\"0.12\" stroke=\"#d62728\">"
					 "<title>idle %s</title></rect>",
				    gaps[g].end - gaps[g].start,
				    LABEL + (double)gaps[g].start / slice, y,
				    fmax((double)(gaps[g].end - gaps[g].start) / slice, 1),
				    LANE - 3, d.buf);
			strbuf_release(&d);
		}
		strbuf_addstr(out, "</g>\n");
		y += LANE;
		for (size_t k = 0; k < lane_count; k++)
			if (lanes[k].kind == 1 && lanes[k].key == l->key)
				y = lane_alone(out, &lanes[k], y, span, slice);
	}
	for (size_t i = 0; i < lane_count; i++) {
		const struct lane *l = &lanes[i];
		if (l->kind != 2)
			continue;
		y = lane_alone(out, l, y, span, slice);
		for (size_t k = 0; k < lane_count; k++)
			if (lanes[k].kind == 3 && lanes[k].tid == l->tid)
				y = lane_alone(out, &lanes[k], y, span, slice);
		for (size_t r = 0; r < range_count; r++)
			if (ranges[r].tid == l->tid && ranges[r].depth < MAX_DEPTH)
				draw_range(out, &ranges[r], y, slice);
		y += (double)(deepest_range(ranges, range_count, l->tid) + 1) * LANE;
	}
	report_time_axis(out, LABEL, PX, y + 4, span);
	strbuf_addstr(out, "</svg></figure>\n");
}

/* The messages of an MPI run (analysis/mpi-ranks.h matches each send with its
 * receive), those whose receives waited longest first, into t. 0, or -1 with err. */
static int read_messages(sqlite3 *db, const char *path, struct report_timelines *t,
			 struct error *err)
{
	if (mpi_match_messages(db, err))
		return -1;
	sqlite3_stmt *q;
	int rc = store_prepare(db, "SELECT m.sender, m.receiver, m.sent, r.end, m.wait, "
			       "COUNT(*) OVER () FROM temp.mpi_msg m JOIN gpuprof_mpi_call r ON "
			       "r.process_id = m.recv_process AND r.call_id = m.recv_call WHERE "
			       "m.send_id IS NOT NULL ORDER BY m.wait DESC, m.sent LIMIT "
			       MAX_MESSAGES, &q, err);
	int step = SQLITE_DONE;
	while (rc == 0 && (step = sqlite3_step(q)) == SQLITE_ROW) {
		t->messages = xrealloc(t->messages, (t->message_count + 1) * sizeof(*t->messages));
		t->messages[t->message_count++] = (struct timeline_message){
			sqlite3_column_int64(q, 0), sqlite3_column_int64(q, 1),
			sqlite3_column_int64(q, 2), sqlite3_column_int64(q, 3),
			sqlite3_column_int64(q, 4) };
		t->message_total = sqlite3_column_int64(q, 5);
	}
	if (rc == 0 && step != SQLITE_DONE)
		rc = error_set(err, "cannot read '%s': %s", path, sqlite3_errmsg(db));
	sqlite3_finalize(q);
	mpi_match_release(db);
	return rc;
}

/* The processes drawn: an MPI run's ranks by rank (only the processes that made MPI
 * calls are ranks: a rank's children inherit its rank), the others after them in the
 * database's order. */
static void drawn_sql(sqlite3 *db, struct strbuf *sql)
{
	strbuf_addf(sql, "SELECT id, pid, hostname, command, start, end, %s AS mpi_rank FROM "
			 "processes WHERE end > start ORDER BY COALESCE(mpi_rank, -1) < 0, mpi_rank, "
			 "id LIMIT " MAX_PROCESSES, store_has_table(db, "gpuprof_mpi_call")
		    ? "CASE WHEN rank >= 0 AND id IN " STORE_MPI_PROCESSES " THEN rank END" : "NULL");
}

int report_timeline_read(sqlite3 *db, const char *path, const char *label,
			 struct report_timelines *t, struct error *err)
{
	/* one axis for all: the processes of a database share its clock (a merged run's,
	 * each host placed by its clock exchanges), so the same instant is at the same x
	 * in every picture */
	sqlite3_stmt *q;
	struct strbuf drawn = STRBUF_INIT, window = STRBUF_INIT;
	drawn_sql(db, &drawn);
	strbuf_addf(&window, "SELECT MIN(start), MAX(end) FROM (%s)", drawn.buf);
	int rc = store_prepare(db, window.buf, &q, err);
	strbuf_release(&window);
	if (rc) {
		strbuf_release(&drawn);
		return -1;
	}
	int64_t first = 0, last = 0;
	if (sqlite3_step(q) == SQLITE_ROW) {
		first = sqlite3_column_int64(q, 0);
		last = sqlite3_column_int64(q, 1);
	}
	sqlite3_finalize(q);
	rc = store_prepare(db, drawn.buf, &q, err);
	strbuf_release(&drawn);
	if (rc)
		return -1;
	struct strbuf title = STRBUF_INIT;
	while (rc == 0 && sqlite3_step(q) == SQLITE_ROW) {
		strbuf_reset(&title);
		const unsigned char *host = sqlite3_column_text(q, 2), *command = sqlite3_column_text(q, 3);
		strbuf_addf(&title, "%s%s", label, *label ? ", " : "");
		if (sqlite3_column_type(q, 6) != SQLITE_NULL && sqlite3_column_int64(q, 6) >= 0)
			strbuf_addf(&title, "rank %lld, ", (long long)sqlite3_column_int64(q, 6));
		strbuf_addf(&title, "pid %lld on %s: %.100s", (long long)sqlite3_column_int64(q, 1),
			    host ? (const char *)host : "", command ? (const char *)command : "");
		t->items = xrealloc(t->items, (t->count + 1) * sizeof(*t->items));
		struct timeline_process *p = &t->items[t->count++];
		memset(p, 0, sizeof(*p));
		p->title = xstrdup(title.buf);
		p->pid = sqlite3_column_int64(q, 1);
		p->rank = sqlite3_column_type(q, 6) == SQLITE_NULL ? -1 : sqlite3_column_int64(q, 6);
		p->start = first;
		p->span = (double)since(last, first);
		p->slice = p->span / PX;
		rc = read_process(db, path, sqlite3_column_int64(q, 0), p, err);
	}
	sqlite3_finalize(q);
	strbuf_release(&title);
	int ranks = 0; /* each rank's process is drawn once */
	for (size_t i = 0; i < t->count; i++)
		ranks += t->items[i].rank >= 0;
	if (rc == 0 && ranks > 1)
		rc = read_messages(db, path, t, err);
	return rc;
}

/* The messages between the ranks drawn: a row per rank (its communication calls, as
 * on its own picture) and a line per message from its send to the end of its receive,
 * on the same axis as the processes' pictures. */
static void draw_messages(const struct report_timelines *t, struct strbuf *out)
{
	const struct timeline_process *rows[64];
	size_t count = 0;
	for (size_t i = 0; i < t->count && count < 64; i++)
		if (t->items[i].rank >= 0)
			rows[count++] = &t->items[i];
	if (count < 2 || !t->message_count)
		return;
	int64_t start = rows[0]->start;
	double span = rows[0]->span, slice = rows[0]->slice, height = 2.0 * LANE * count + 30;
	strbuf_addf(out, "<figure class=\"messages\" data-messages=\"%" PRId64 "\" "
			 "data-shown=\"%zu\" data-window-start-ns=\"%" PRId64 "\" data-window-ns="
			 "\"%.0f\"><figcaption>MPI messages: %s%zu of %" PRId64 ", each from its "
			 "send to the end of its receive</figcaption><svg xmlns=\"http://www.w3.org/"
			 "2000/svg\" width=\"%d\" height=\"%.0f\" viewBox=\"0 0 %d %.0f\" "
			 "font-size=\"11\">\n", t->message_total, t->message_count, start, span,
		    (int64_t)t->message_count < t->message_total ? "the receives that waited "
		    "longest, " : "", t->message_count, t->message_total, LABEL + PX, height,
		    LABEL + PX, height);
	for (size_t i = 0; i < count; i++) {
		double y = 2.0 * LANE * (double)i;
		strbuf_addf(out, "<g class=\"mlane\" data-rank=\"%" PRId64 "\"><text x=\"0\" "
				 "y=\"%.0f\">rank %" PRId64 "</text>", rows[i]->rank, y + LANE - 5,
			    rows[i]->rank);
		for (size_t k = 0; k < rows[i]->lane_count; k++)
			if (rows[i]->lanes[k].kind == 3) { /* its (first) thread's MPI calls */
				draw_lane(out, &rows[i]->lanes[k], y, slice, lane_kinds[3].colour);
				break;
			}
		strbuf_addstr(out, "</g>\n");
	}
	for (size_t m = 0; m < t->message_count; m++) {
		const struct timeline_message *x = &t->messages[m];
		double from = -1, to = -1;
		for (size_t i = 0; i < count; i++) {
			if (rows[i]->rank == x->sender)
				from = 2.0 * LANE * (double)i + (LANE - 3) / 2.0;
			if (rows[i]->rank == x->receiver)
				to = 2.0 * LANE * (double)i + (LANE - 3) / 2.0;
		}
		if (from < 0 || to < 0)
			continue; /* a rank not drawn */
		struct strbuf w = STRBUF_INIT;
		units_duration(&w, (double)x->wait);
		strbuf_addf(out, "<line class=\"message\" data-sender=\"%" PRId64 "\" "
				 "data-receiver=\"%" PRId64 "\" data-sent-ns=\"%" PRId64 "\" "
				 "data-received-ns=\"%" PRId64 "\" x1=\"%.2f\" y1=\"%.1f\" x2=\"%.2f\" "
				 "y2=\"%.1f\" stroke=\"#2ca02c\" stroke-opacity=\"0.7\"><title>rank "
				 "%" PRId64 " to rank %" PRId64 ": its receive waited %s</title></line>\n",
			    x->sender, x->receiver, x->sent, x->received,
			    LABEL + (double)since(x->sent, start) / slice, from,
			    LABEL + (double)since(x->received, start) / slice, to, x->sender,
			    x->receiver, w.buf);
		strbuf_release(&w);
	}
	report_time_axis(out, LABEL, PX, 2.0 * LANE * (double)count + 4, span);
	strbuf_addstr(out, "</svg></figure>\n");
}

void report_timeline_draw(const struct report_timelines *t, const struct finding *findings,
			  size_t finding_count, struct strbuf *out)
{
	for (size_t i = 0; i < t->count; i++)
		draw_process(&t->items[i], findings, finding_count, out);
	draw_messages(t, out);
}

void report_timeline_release(struct report_timelines *t)
{
	for (size_t i = 0; i < t->count; i++) {
		struct timeline_process *p = &t->items[i];
		for (size_t r = 0; r < p->range_count; r++)
			free(p->ranges[r].name);
		free(p->ranges);
		free(p->lanes);
		free(p->gaps);
		free(p->title);
	}
	free(t->items);
	free(t->messages);
	memset(t, 0, sizeof(*t));
}

const char *report_range_label(sqlite3 *db, const char **join)
{
	if (!store_has_column(db, "gpuprof_marker", "module_id")) {
		*join = "";
		return "s.string";
	}
	*join = "LEFT JOIN gpuprof_string u ON u.id = m.module_id";
	return "s.string || COALESCE(' [' || NULLIF(u.string, '') || ']', '')";
}
