/* gpuprof compute analyze's roofline (see analyze.h): block 4's table 4.3 and the plot of
 * --roofline-plot and of gpuprof report, from the catalog's counts set against ceilings. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "compute/analyze-internal.h"
#include "compute/analyze.h"
#include "util/sort.h"
#include "util/strbuf.h"

/* A point of the roofline: a kernel's dispatches kept (or one dispatch), at one level. */
struct roof_group {
	const char *kernel;
	long long dispatch_id; /* -1: every dispatch kept of the kernel */
	int dispatches;
};

struct roof_sums {
	double work, matrix_work, bytes, ns;
	int count; /* dispatches with both work and bytes at the level */
};

/* The sum of the counts of the catalog set against ceiling in one dispatch; -1 when none
 * of them has a value. */
static int ceiling_count(const struct catalog *c, int ceiling, struct workload_context *ctx,
			 double *sum)
{
	int any = 0;
	*sum = 0;
	for (size_t b = 0; ceiling >= 0 && b < c->count; b++)
		for (size_t t = 0; t < c->blocks[b].count; t++)
			for (size_t i = 0; i < c->blocks[b].tables[t].count; i++) {
				const struct catalog_metric *m = &c->blocks[b].tables[t].metrics[i];
				double v;
				if (m->ceiling == ceiling &&
				    expr_eval(m->expr, workload_lookup, ctx, &v) == 0) {
					*sum += v;
					any = 1;
				}
			}
	return any ? 0 : -1;
}

static void roof_sum(const struct analyze_request *r, const struct workload *w,
		     const struct roof_group *g, int vector, int matrix, int level,
		     struct roof_sums *s)
{
	memset(s, 0, sizeof(*s));
	for (size_t i = 0; i < w->count; i++) {
		const struct workload_dispatch *d = &w->dispatches[i];
		if (!analyze_dispatch_kept(r, d) || strcmp(g->kernel, d->kernel) ||
		    (g->dispatch_id >= 0 && d->dispatch_id != g->dispatch_id))
			continue;
		struct workload_context c = { w, d };
		double work, matrix_work, bytes;
		int has_work = ceiling_count(r->catalog, vector, &c, &work) == 0;
		int has_matrix = ceiling_count(r->catalog, matrix, &c, &matrix_work) == 0;
		double ns;
		if ((!has_work && !has_matrix) || ceiling_count(r->catalog, level, &c, &bytes) ||
		    workload_duration(w, d, &ns))
			continue;
		s->work += (has_work ? work : 0) + (has_matrix ? matrix_work : 0);
		s->matrix_work += has_matrix ? matrix_work : 0;
		s->bytes += bytes;
		s->ns += ns;
		s->count++;
	}
}

static int by_duration(const void *a, const void *b)
{
	const struct workload_dispatch *const *x = a, *const *y = b;
	double u = (*x)->end - (*x)->start, v = (*y)->end - (*y)->start;
	if (u != v)
		return u < v ? 1 : -1;
	return ((*x)->dispatch_id > (*y)->dispatch_id) - ((*x)->dispatch_id < (*y)->dispatch_id);
}

/* The points' groups of the first workload: its top kernels by total time, or its
 * longest dispatches; returns how many (at most max_kernels). */
static size_t roof_groups(const struct analyze_request *r, struct roof_group **out)
{
	const struct workload *w = &r->workloads[0];
	struct roof_group *g = NULL;
	size_t n = 0;
	if (!r->per_dispatch) {
		struct kernel_time *k;
		size_t count = analyze_kernel_times(r, w, &k);
		for (size_t i = 0; i < count && (int)i < r->max_kernels; i++) {
			g = xrealloc(g, (n + 1) * sizeof(*g));
			g[n++] = (struct roof_group){ k[i].name, -1, k[i].count };
		}
		free(k);
	} else {
		const struct workload_dispatch **d = xcalloc(w->count + 1, sizeof(*d));
		size_t count = 0;
		for (size_t i = 0; i < w->count; i++)
			if (analyze_dispatch_kept(r, &w->dispatches[i]))
				d[count++] = &w->dispatches[i];
		sort_array(d, count, sizeof(*d), by_duration);
		for (size_t i = 0; i < count && (int)i < r->max_kernels; i++) {
			g = xrealloc(g, (n + 1) * sizeof(*g));
			g[n++] = (struct roof_group){ d[i]->kernel, d[i]->dispatch_id, 1 };
		}
		free(d);
	}
	*out = g;
	return n;
}

static int level_shown(const struct analyze_request *r, int level)
{
	int any = 0;
	for (int c = 0; c < ROOF_COUNT; c++)
		any |= r->levels[c];
	return level != ROOF_HBM_READ && roofline_is_bandwidth(level) && (!any || r->levels[level]);
}

/* One point: its sums and its placement; the compute ceiling it is set against. */
static int roof_point(const struct analyze_request *r, const struct roof_group *g, int level,
		      struct roof_sums *s, struct roofline_placement *p)
{
	int vector, matrix;
	roofline_data_type(r->data_type ? r->data_type : "FP32", &vector, &matrix);
	const struct workload *w = &r->workloads[0];
	roof_sum(r, w, g, vector, matrix, level, s);
	int compute = matrix >= 0 && (s->matrix_work > 0 || vector < 0) ? matrix : vector;
	roofline_place(w->roofline, level, compute, s->count ? s->work : NAN, s->bytes,
		       s->ns / 1e9, p);
	return compute;
}

int analyze_print_roofline(const struct analyze_request *r, struct error *err)
{
	const struct workload *w = &r->workloads[0];
	const char *type = r->data_type ? r->data_type : "FP32";
	int vector, matrix;
	roofline_data_type(type, &vector, &matrix);
	const char *unit = roofline_unit(vector >= 0 ? vector : matrix);
	struct strbuf title = STRBUF_INIT, rate = STRBUF_INIT, ceiling = STRBUF_INIT,
		      intensity = STRBUF_INIT, why = STRBUF_INIT;
	strbuf_addf(&title, "4.3 Roofline per %s (W1, %s)", r->per_dispatch ? "dispatch" : "kernel",
		    type);
	strbuf_addf(&intensity, "Intensity (%s/byte)", !strcmp(unit, "GOP/s") ? "OP" : "FLOP");
	strbuf_addf(&rate, "Rate (%s)", unit);
	strbuf_addf(&ceiling, "Ceiling (%s)", unit);
	const char *names[] = { "Kernel", r->per_dispatch ? "Dispatch_ID" : "Dispatches", "Level",
				intensity.buf, rate.buf, ceiling.buf, "Pct_of_Ceiling", "Bound" };
	struct table *t = table_begin(r->out, r->format, "4.3", title.buf, 8, names);
	struct roof_group *g;
	size_t n = roof_groups(r, &g);
	for (size_t i = 0; i < n; i++)
		for (int level = 0; level < ROOF_COUNT; level++) {
			if (!level_shown(r, level))
				continue;
			struct roof_sums s;
			struct roofline_placement p;
			int compute = roof_point(r, &g[i], level, &s, &p);
			table_text(t, g[i].kernel);
			table_int(t, g[i].dispatch_id >= 0 ? g[i].dispatch_id : g[i].dispatches);
			table_text(t, roofline_level_name(level));
			analyze_cell(r, t, p.intensity, 1);
			analyze_cell(r, t, p.rate, 1);
			analyze_cell(r, t, p.ceiling, 1);
			analyze_cell(r, t, p.percent, 1);
			strbuf_reset(&why);
			if (p.bound == BOUND_MEMORY)
				strbuf_addf(&why, "memory (%s)", roofline_column(level));
			else if (p.bound == BOUND_COMPUTE)
				strbuf_addf(&why, "compute (%s)", roofline_column(compute));
			else if (!s.count)
				strbuf_addf(&why, "N/A (no dispatch has both %s work and %s bytes: "
						  "collect block 4)", type, roofline_level_name(level));
			else if (!w->roofline)
				strbuf_addstr(&why, "N/A (no roofline.csv in the workload)");
			else if (isnan(p.knee))
				strbuf_addf(&why, "N/A (%s or %s not measured)", roofline_column(level),
					    compute >= 0 ? roofline_column(compute) : type);
			else
				strbuf_addf(&why, "N/A (no %s %s)", type,
					    s.work > 0 ? "bytes at this level" : "work");
			table_text(t, why.buf);
		}
	free(g);
	strbuf_release(&title), strbuf_release(&rate), strbuf_release(&ceiling);
	strbuf_release(&intensity), strbuf_release(&why);
	return table_end(t, err);
}

/* The roofline of the first workload into out: a page of its own, or the figure alone. */
static void write_roofline(const struct analyze_request *r, FILE *out, int page)
{
	const struct workload *w = &r->workloads[0];
	const char *type = r->data_type ? r->data_type : "FP32";
	int vector, matrix, shown[ROOF_COUNT] = { 0 };
	roofline_data_type(type, &vector, &matrix);
	if (vector >= 0)
		shown[vector] = 1;
	if (matrix >= 0)
		shown[matrix] = 1;
	struct roof_group *g;
	size_t n = roof_groups(r, &g), count = 0;
	struct roofline_point *points = xcalloc(n * ROOF_COUNT + 1, sizeof(*points));
	struct strbuf *labels = xcalloc(n + 1, sizeof(*labels));
	for (int level = 0; level < ROOF_COUNT; level++) {
		if (!level_shown(r, level))
			continue;
		shown[level] = 1;
		for (size_t i = 0; i < n; i++) {
			struct roof_sums s;
			struct roofline_placement p;
			roof_point(r, &g[i], level, &s, &p);
			if (!labels[i].len)
				strbuf_addf(&labels[i], g[i].dispatch_id >= 0 ? "%s #%lld" : "%s",
					    g[i].kernel, g[i].dispatch_id);
			if (p.intensity > 0 && p.rate > 0)
				points[count++] = (struct roofline_point){ labels[i].buf, level,
									   p.rate * 1e9, p.intensity };
		}
	}
	struct roofline none = { 0 };
	struct strbuf title = STRBUF_INIT, note = STRBUF_INIT;
	strbuf_addf(&title, "Roofline of %s (%s)", w->dir, type);
	if (!w->roofline)
		strbuf_addf(&note, "%s has no roofline.csv: the kernels are drawn without ceilings "
				   "(gpuprof compute profile without --no-roof, or gpuprof roofline -o "
				   "DIR, measures them). ", w->dir);
	if (!count)
		strbuf_addf(&note, "No kernel is placed: none kept has both %s work and bytes at the "
				   "levels shown (block 4's counters: gpuprof compute profile -b 4).",
			    type);
	else
		strbuf_addf(&note, "Each point is a %s's %s rate against its arithmetic intensity "
				   "at one memory level (the colour of that level's ceiling).",
			    r->per_dispatch ? "dispatch" : "kernel", type);
	if (page)
		roofline_plot_html(out, w->roofline ? w->roofline : &none, shown, points, count,
				   title.buf, note.buf);
	else
		roofline_plot_figure(out, w->roofline ? w->roofline : &none, shown, points, count,
				     note.buf);
	for (size_t i = 0; i < n; i++)
		strbuf_release(&labels[i]);
	free(labels), free(points), free(g);
	strbuf_release(&title), strbuf_release(&note);
}

int analyze_roofline_plot(const struct analyze_request *r, const char *path, struct error *err)
{
	FILE *out = fopen(path, "w");
	if (!out)
		return error_set(err, "--roofline-plot: cannot create '%s': %s", path,
				 strerror(errno));
	write_roofline(r, out, 1);
	if (ferror(out) | fclose(out))
		return error_set(err, "--roofline-plot: cannot write '%s'", path);
	return 0;
}

void analyze_roofline_figure(const struct analyze_request *r, FILE *out)
{
	write_roofline(r, out, 0);
}
