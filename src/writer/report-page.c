/* The page of the HTML report (see report.h): its sections from the aggregates that
 * report.c read, one self-contained file (no script or style from elsewhere). */
#include "writer/report-data.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/html.h"
#include "util/units.h"
#include "writer/flamegraph.h"
#include "writer/communication-summary.h"
#include "writer/memory-summary.h"
#include "writer/mpi-summary.h"
#include "writer/report-timeline.h"

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
		fprintf(out, ", %s (%.1f %% of ", cost.buf, f->cost_pct);
		html_text(out, finding_share_of(f));
		fputs(")</h3><p>", out);
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

#define MEMORY_WIDTH 600
#define MEMORY_HEIGHT 90

/* Each process's memory on each device over its run: the bytes held (a step after each
 * allocation and free), the peak marked; then summary's MEMORY tables. */
static void memory_section(FILE *out, const struct report *r)
{
	fprintf(out, "<section id=\"memory\"><h2>Device memory</h2>\n<p class=\"note\">The "
		     "bytes each process held on each device, from its first allocation to its "
		     "last change (an allocation from its call's return, a free from its call's "
		     "start; times from the process's start), the peak marked in red; what held "
		     "it and what was never freed, by allocation site.</p>\n");
	for (size_t i = 0; i < r->memory.count; i++) {
		const struct memory_device *d = &r->memory.devices[i];
		if (!d->points)
			continue;
		/* from its first allocation to its last change */
		int64_t first = d->times_ns[0], last = d->times_ns[d->points - 1];
		double span = last > first ? (double)(last - first) : 1;
		double peak = d->peak_bytes ? (double)d->peak_bytes : 1;
		fprintf(out, "<h3>pid %" PRId64 ", ", d->pid);
		html_text(out, d->device);
		fprintf(out, "</h3>\n<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
			     "height=\"%d\"><polyline fill=\"none\" stroke=\"#1f77b4\" points=\"0,%d",
			MEMORY_WIDTH, MEMORY_HEIGHT + 20, MEMORY_HEIGHT + 10);
		double y = MEMORY_HEIGHT + 10;
		for (size_t k = 0; k < d->points;) {
			/* the changes of one pixel's column: their highest, then their last (a
			 * step per change where there are few) */
			double x = (double)MEMORY_WIDTH * (double)(d->times_ns[k] - first) / span;
			uint64_t top = d->held[k], last_held = d->held[k];
			size_t from = k++;
			while (d->points > 2 * MEMORY_WIDTH && k < d->points &&
			       (int)((double)MEMORY_WIDTH * (double)(d->times_ns[k] - first) / span) ==
				       (int)x) {
				top = d->held[k] > top ? d->held[k] : top;
				last_held = d->held[k++];
			}
			fprintf(out, " %.1f,%.1f", x, y); /* held until this change, then */
			if (k - from > 1)
				fprintf(out, " %.1f,%.1f", x,
					10 + MEMORY_HEIGHT * (1 - (double)top / peak));
			y = 10 + MEMORY_HEIGHT * (1 - (double)last_held / peak);
			fprintf(out, " %.1f,%.1f", x, y);
		}
		double px = (double)MEMORY_WIDTH * (double)(d->peak_ns - first) / span;
		struct strbuf text = STRBUF_INIT;
		units_value(&text, (double)d->peak_bytes, "B");
		fprintf(out, "\"/><circle cx=\"%.1f\" cy=\"10\" r=\"4\" fill=\"#d62728\"><title>"
			     "peak ", px);
		html_text(out, text.buf);
		fprintf(out, " at %.6f s</title></circle><text x=\"%.1f\" y=\"14\" "
			     "font-size=\"11\" fill=\"#d62728\">peak ", (double)d->peak_ns / 1e9,
			px > MEMORY_WIDTH - 160 ? MEMORY_WIDTH - 160.0 : px + 6);
		html_text(out, text.buf);
		fprintf(out, " at %.3f s</text><text x=\"0\" y=\"%d\" font-size=\"10\">%.3f s"
			     "</text><text x=\"%d\" y=\"%d\" font-size=\"10\" text-anchor=\"end\">"
			     "%.3f s</text></svg>\n", (double)d->peak_ns / 1e9, MEMORY_HEIGHT + 20,
			(double)first / 1e9, MEMORY_WIDTH, MEMORY_HEIGHT + 20, (double)last / 1e9);
		strbuf_release(&text);
	}
	struct error err; /* a failed write is the page's: report_write checks its stream */
	memory_summary_tables(out, TABLE_HTML, &r->memory, &err);
	fprintf(out, "</section>\n");
}

/* The tables of gpuprof summary's MPI part, the same columns (writer/mpi-summary.h). */
static void mpi_section(FILE *out, const struct report *r)
{
	fprintf(out, "<section id=\"mpi\"><h2>MPI</h2>\n<p class=\"note\">Each rank between "
		     "MPI_Init and MPI_Finalize: computing, in MPI calls, and waiting there for "
		     "other ranks (Scalasca's patterns); the collectives' waits and the rank "
		     "that arrived last; the receives that waited for a late sender. Times in "
		     "ms.</p>\n");
	struct mpi_summary_units units = mpi_summary_units_of("msec");
	struct error err; /* a failed write is the page's: report_write checks its stream */
	mpi_summary_tables(out, TABLE_HTML, &units, r->mpi, r->mpi_inputs, r->mpi_count, &err);
	fprintf(out, "</section>\n");
}

/* gpuprof summary's COMMUNICATION table (writer/communication-summary.h). */
static void communication_section(FILE *out, const struct report *r)
{
	fprintf(out, "<section id=\"communication\"><h2>Communication</h2>\n<p class=\"note\">"
		     "Each device's collective-communication kernels (NCCL's): their time, the "
		     "part with compute kernels running beside them (overlapped) and the part "
		     "alone (exposed: what a step waits for); NCCL's calls with the kernels they "
		     "launched, their time and bandwidths. Times in ms.</p>\n");
	struct mpi_summary_units units = mpi_summary_units_of("msec");
	struct error err; /* a failed write is the page's: report_write checks its stream */
	communication_summary_table(out, TABLE_HTML, &units, &r->communication, &err);
	fprintf(out, "</section>\n");
}

void report_page_write(FILE *out, struct report *r, const char *roofline)
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
		{ r->mpi_count > 0, "mpi", "MPI" },
		{ r->communication.count + r->communication.call_count > 0, "communication",
		  "Communication" },
		{ r->kernels.count > 0, "kernels", "Kernels" },
		{ r->copy_count > 0, "copies", "Copies" },
		{ r->memory.count > 0, "memory", "Memory" },
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
	if (r->mpi_count)
		mpi_section(out, r);
	if (r->communication.count + r->communication.call_count)
		communication_section(out, r);
	if (r->kernels.count)
		stats_section(out, "kernels", "Kernels", "Kernel", &r->kernels);
	if (r->copy_count)
		copies_section(out, r);
	if (r->memory.count)
		memory_section(out, r);
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
