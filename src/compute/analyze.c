/* gpuprof compute analyze (see analyze.h). */
#include "compute/analyze.h"
#include "compute/analyze-internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/strbuf.h"

/* Units of counts, which -n normalizes: per kernel (as they are), second, cycle, warp. */
static int count_unit(const char *unit)
{
	static const char *const counts[] = { "bytes", "instructions", "sectors", "requests",
					      "wavefronts", "conflicts", "FLOP", "OP" };
	for (size_t i = 0; i < sizeof(counts) / sizeof(counts[0]); i++)
		if (!strcmp(unit, counts[i]))
			return 1;
	return 0;
}

static void shown_unit(const struct analyze_request *r, const char *unit, struct strbuf *out)
{
	static const char *const per[] = { "", "/s", "/cycle", "/warp" };
	strbuf_addf(out, "%s%s", unit, count_unit(unit) ? per[r->normal] : "");
}

/* What one dispatch's count is divided by under -n; -1 when it cannot be known. */
static int normal_divisor(const struct analyze_request *r, const struct workload *w,
			  const struct workload_dispatch *d, double *out)
{
	struct workload_context c = { w, d };
	double warp_size;
	switch (r->normal) {
	case PER_KERNEL:
		*out = 1;
		return 0;
	case PER_SECOND:
		if (workload_duration(w, d, out))
			return -1;
		*out /= 1e9;
		return 0;
	case PER_CYCLE:
		return workload_lookup("gpc__cycles_elapsed.max", out, &c) || *out <= 0 ? -1 : 0;
	case PER_WARP:
		if (workload_lookup("device.warp_size", &warp_size, &c) || warp_size <= 0)
			return -1;
		*out = ceil(d->block_threads / warp_size) * (d->grid_threads / d->block_threads);
		return *out > 0 ? 0 : -1;
	}
	return -1;
}

struct stats {
	double sum, min, max, peak_sum;
	int count, peak_count;
};

/* A metric's value for one dispatch, normalized as -n asks: 0, or -1 when it has none. */
static int dispatch_value(const struct analyze_request *r, const struct workload *w,
			  const struct workload_dispatch *d, const struct catalog_metric *m,
			  double *v)
{
	struct workload_context c = { w, d };
	double divisor = 1;
	if (expr_eval(m->expr, workload_lookup, &c, v) ||
	    (count_unit(m->unit) && normal_divisor(r, w, d, &divisor)))
		return -1;
	*v /= divisor;
	return 0;
}

/* A metric over the dispatches kept of w (kernel: only those of this name when given). */
static void metric_stats(const struct analyze_request *r, const struct workload *w,
			 const struct catalog_metric *m, const char *kernel, struct stats *s)
{
	memset(s, 0, sizeof(*s));
	for (size_t i = 0; i < w->count; i++) {
		const struct workload_dispatch *d = &w->dispatches[i];
		if (!analyze_dispatch_kept(r, d) || (kernel && strcmp(kernel, d->kernel)))
			continue;
		struct workload_context c = { w, d };
		double v, peak;
		if (dispatch_value(r, w, d, m, &v) == 0) {
			s->sum += v;
			s->min = s->count && s->min < v ? s->min : v;
			s->max = s->count && s->max > v ? s->max : v;
			s->count++;
		}
		if (m->peak && !count_unit(m->unit) && expr_eval(m->peak, workload_lookup, &c, &peak) == 0) {
			s->peak_sum += peak;
			s->peak_count++;
		}
	}
}

static const char *label(int i, struct strbuf *out)
{
	strbuf_reset(out);
	strbuf_addf(out, "W%d", i + 1);
	return out->buf;
}

/* ---- what a selection names ----------------------------------------------------------- */

/* The tables analyze makes itself rather than from the catalog's metrics. */
static const struct own_table {
	const char *id;
	int block;
	const char *reads; /* the catalog selections it is made of (comma-separated) */
} own_tables[] = { { "0.1", 0, "2.1.5" }, { "1.1", 1, "" }, { "2.2", 2, "2.1.0,2.1.1,2.1.10" },
		   { "4.3", 4, "4.2" }, { "21.1", 21, "" } };
#define OWN_TABLES (sizeof(own_tables) / sizeof(own_tables[0]))

/* Whether a selection names a block by its number or an alias. */
static int names_block(const struct catalog *c, const char *selection, int block)
{
	char id[16];
	snprintf(id, sizeof(id), "%d", block);
	if (!strcmp(selection, id))
		return 1;
	for (size_t b = 0; b < c->count; b++)
		for (size_t a = 0; c->blocks[b].id == block && a < c->blocks[b].alias_count; a++)
			if (!strcmp(c->blocks[b].aliases[a], selection))
				return 1;
	return 0;
}

static int names_own(const struct catalog *c, const char *selection, const struct own_table *t)
{
	return !strcmp(selection, t->id) || names_block(c, selection, t->block);
}

const char *analyze_table_reads(const char *id)
{
	for (size_t i = 0; i < OWN_TABLES; i++)
		if (!strcmp(id, own_tables[i].id))
			return own_tables[i].reads;
	return NULL;
}

int analyze_known_selection(const struct catalog *c, const char *selection)
{
	for (size_t i = 0; i < OWN_TABLES; i++)
		if (names_own(c, selection, &own_tables[i]))
			return 1;
	return catalog_select(c, selection, NULL, NULL) >= 0;
}

/* Whether the request shows table id of own_tables. */
static int own_shown(const struct analyze_request *r, const char *id)
{
	if (!r->block_count)
		return 1;
	for (size_t i = 0; i < OWN_TABLES; i++)
		for (int k = 0; !strcmp(own_tables[i].id, id) && k < r->block_count; k++)
			if (names_own(r->catalog, r->blocks[k], &own_tables[i]))
				return 1;
	return 0;
}

int analyze_check_kept(const struct analyze_request *r, struct error *err)
{
	for (int i = 0; i < r->count; i++) {
		const struct workload *w = &r->workloads[i];
		size_t kept = 0;
		for (size_t k = 0; k < w->count && !kept; k++)
			kept += analyze_dispatch_kept(r, &w->dispatches[k]);
		if (kept)
			continue;
		struct strbuf filters = STRBUF_INIT;
		for (int k = 0; k < r->kernel_count; k++)
			strbuf_addf(&filters, "%s-k %s", filters.len ? " " : "", r->kernels[k]);
		for (int k = 0; k < r->dispatch_count; k++)
			strbuf_addf(&filters, "%s-d %s", filters.len ? " " : "", r->dispatches[k]);
		error_set(err, "%s: no dispatch of %s is kept (--list-stats lists its kernels and "
			       "dispatches)", filters.buf, w->dir);
		strbuf_release(&filters);
		return -1;
	}
	return 0;
}

/* ---- numbers for people ------------------------------------------------------------------ */

/* A row's scale in text and Markdown: the values of a unit that takes an SI prefix, when
 * the largest reaches a million, are shown in the prefix that keeps it under 1000
 * (4.19 TB/s rather than 4194304000000.00 bytes/s); *shown is the unit with its prefix.
 * 1 for CSV and JSON, which keep every digit, and for other units. */
static double row_scale(const struct analyze_request *r, const char *unit, double largest,
			struct strbuf *shown)
{
	static const struct { const char *unit, *stem; int space; } scalable[] = {
		{ "bytes", "B", 0 }, { "bytes/s", "B/s", 0 }, { "Hz", "Hz", 0 },
		{ "FLOP", "FLOP", 0 }, { "OP", "OP", 0 }, { "instructions", "instructions", 1 },
		{ "sectors", "sectors", 1 }, { "requests", "requests", 1 },
		{ "wavefronts", "wavefronts", 1 }, { "conflicts", "conflicts", 1 },
		{ "cycles", "cycles", 1 }, { "threads", "threads", 1 },
	};
	static const char *const prefixes[] = { "k", "M", "G", "T", "P", "E" };
	static const char *const per[] = { "", "/s", "/cycle", "/warp" };
	strbuf_reset(shown);
	shown_unit(r, unit, shown);
	if (analyze_decimals(r) < 0 || !isfinite(largest) || fabs(largest) < 1e6)
		return 1;
	for (size_t i = 0; i < sizeof(scalable) / sizeof(scalable[0]); i++) {
		if (strcmp(unit, scalable[i].unit))
			continue;
		int p = 0;
		double scale = 1e3;
		while (p + 1 < (int)(sizeof(prefixes) / sizeof(prefixes[0])) &&
		       fabs(largest) >= scale * 1e3)
			p++, scale *= 1e3;
		strbuf_reset(shown);
		strbuf_addf(shown, "%s%s%s%s", prefixes[p], scalable[i].space ? " " : "",
			    scalable[i].stem, count_unit(unit) ? per[r->normal] : "");
		return scale;
	}
	return 1;
}

/* ---- 0. top kernels, 1. system info ------------------------------------------------- */

static int print_top(const struct analyze_request *r, int which, struct error *err)
{
	const struct workload *w = &r->workloads[which];
	struct kernel_time *k;
	size_t n = analyze_kernel_times(r, w, &k);
	double total = 0;
	for (size_t i = 0; i < n; i++)
		total += k[i].sum;
	struct strbuf title = STRBUF_INIT, sum = STRBUF_INIT, mean = STRBUF_INIT;
	strbuf_addf(&title, "0.1 Top kernels of %s", w->dir);
	strbuf_addf(&sum, "Sum (%s)", r->time_unit);
	strbuf_addf(&mean, "Mean (%s)", r->time_unit);
	const char *names[] = { "Kernel", "Count", sum.buf, mean.buf, "Min", "Max", "Pct" };
	struct table *t = table_begin(r->out, r->format, "0.1", title.buf, 7, names);
	for (size_t i = 0; i < n && (int)i < r->max_kernels; i++) {
		table_text(t, k[i].name);
		table_int(t, k[i].count);
		analyze_cell(r, t, k[i].sum / r->time_scale, 1);
		analyze_cell(r, t, k[i].sum / k[i].count / r->time_scale, 1);
		analyze_cell(r, t, k[i].min / r->time_scale, 1);
		analyze_cell(r, t, k[i].max / r->time_scale, 1);
		analyze_cell(r, t, 100 * k[i].sum / total, total > 0);
	}
	free(k);
	strbuf_release(&title), strbuf_release(&sum), strbuf_release(&mean);
	return table_end(t, err);
}

static int print_system(const struct analyze_request *r, struct error *err)
{
	const char **names = xcalloc((size_t)r->count + 1, sizeof(*names));
	struct strbuf *labels = xcalloc((size_t)r->count, sizeof(*labels));
	names[0] = "Fact";
	for (int i = 0; i < r->count; i++)
		names[i + 1] = label(i, &labels[i]);
	struct table *t = table_begin(r->out, r->format, "1.1", "1.1 System info", r->count + 1,
				      names);
	const struct workload *first = &r->workloads[0];
	for (size_t f = 0; f < first->fact_count; f++) {
		table_text(t, first->facts[f]);
		for (int i = 0; i < r->count; i++) {
			const char *v = workload_fact(&r->workloads[i], first->facts[f]);
			if (v)
				table_text(t, v);
			else
				table_null(t);
		}
	}
	int rc = table_end(t, err);
	for (int i = 0; i < r->count; i++)
		strbuf_release(&labels[i]);
	free(labels);
	free(names);
	return rc;
}

/* ---- the catalog's tables --------------------------------------------------------------- */

static int print_table(const struct analyze_request *r, const struct catalog_block *b,
		       const struct catalog_table *table, struct error *err)
{
	struct strbuf title = STRBUF_INIT, unit = STRBUF_INIT;
	strbuf_addf(&title, "%s %s", table->id, table->title);
	struct table *t;
	struct strbuf *labels = xcalloc((size_t)r->count * 3, sizeof(*labels));
	if (r->count == 1) {
		const char *names[] = { "Metric_ID", "Metric", "Avg", "Min", "Max", "Unit", "Peak",
					"Pct_of_Peak" };
		t = table_begin(r->out, r->format, table->id, title.buf, 8, names);
	} else {
		const char **names = xcalloc((size_t)r->count * 3 + 3, sizeof(*names));
		int n = 0;
		names[n++] = "Metric_ID", names[n++] = "Metric", names[n++] = "Unit";
		strbuf_addstr(&labels[0], "W1 (baseline)");
		names[n++] = labels[0].buf;
		for (int i = 1; i < r->count; i++) {
			strbuf_addf(&labels[3 * i], "W%d", i + 1);
			strbuf_addf(&labels[3 * i + 1], "W%d change %%", i + 1);
			strbuf_addf(&labels[3 * i + 2], "W%d diff", i + 1);
			names[n++] = labels[3 * i].buf;
			names[n++] = labels[3 * i + 1].buf;
			names[n++] = labels[3 * i + 2].buf;
		}
		t = table_begin(r->out, r->format, table->id, title.buf, n, names);
		free(names);
	}
	for (size_t i = 0; i < table->count; i++) {
		const struct catalog_metric *m = &table->metrics[i];
		if (!catalog_selected(b, table, m, r->blocks, r->block_count))
			continue;
		table_text(t, m->id);
		table_text(t, m->name);
		struct stats base;
		metric_stats(r, &r->workloads[0], m, NULL, &base);
		double avg = base.count ? base.sum / base.count : NAN;
		if (r->count == 1) {
			double peak = base.peak_count ? base.peak_sum / base.peak_count : NAN;
			double largest = base.count ? fmax(fabs(base.min), fabs(base.max)) : NAN;
			double scale = row_scale(r, m->unit, base.peak_count && !isnan(largest)
							       ? fmax(largest, fabs(peak)) : largest, &unit);
			analyze_cell(r, t, avg / scale, base.count);
			analyze_cell(r, t, base.min / scale, base.count);
			analyze_cell(r, t, base.max / scale, base.count);
			table_text(t, unit.buf);
			analyze_cell(r, t, peak / scale, base.peak_count);
			analyze_cell(r, t, 100 * avg / peak, base.count && base.peak_count && peak != 0);
			continue;
		}
		struct stats *s = xcalloc((size_t)r->count, sizeof(*s));
		double largest = base.count ? fabs(avg) : NAN;
		for (int w = 1; w < r->count; w++) {
			metric_stats(r, &r->workloads[w], m, NULL, &s[w]);
			if (s[w].count)
				largest = isnan(largest) ? fabs(s[w].sum / s[w].count)
							 : fmax(largest, fabs(s[w].sum / s[w].count));
		}
		double scale = row_scale(r, m->unit, largest, &unit);
		table_text(t, unit.buf);
		analyze_cell(r, t, avg / scale, base.count);
		for (int w = 1; w < r->count; w++) {
			double other = s[w].count ? s[w].sum / s[w].count : NAN;
			analyze_cell(r, t, other / scale, s[w].count);
			analyze_cell(r, t, 100 * (other - avg) / avg, s[w].count && base.count && avg != 0);
			analyze_cell(r, t, (other - avg) / scale, s[w].count && base.count);
		}
		free(s);
	}
	for (int i = 0; i < r->count * 3; i++)
		strbuf_release(&labels[i]);
	free(labels);
	strbuf_release(&title);
	strbuf_release(&unit);
	return table_end(t, err);
}

/* The speed-of-light bottleneck of each kernel (Nsight Compute's SpeedOfLight rule):
 * both SM and memory throughput under 60 % is latency-bound (and fewer than one wave
 * of blocks starves the SMs); otherwise the larger by 10 points or more bounds the
 * kernel, and within 10 points it is balanced; above 80 % the unit is near its peak. */
static int print_bottleneck(const struct analyze_request *r, const struct catalog *c,
			    struct error *err)
{
	const struct catalog_metric *sm = NULL, *memory = NULL, *waves = NULL;
	for (size_t b = 0; b < c->count; b++)
		for (size_t t = 0; t < c->blocks[b].count; t++)
			for (size_t i = 0; i < c->blocks[b].tables[t].count; i++) {
				const struct catalog_metric *m = &c->blocks[b].tables[t].metrics[i];
				sm = !strcmp(m->id, "2.1.0") ? m : sm;
				memory = !strcmp(m->id, "2.1.1") ? m : memory;
				waves = !strcmp(m->id, "2.1.10") ? m : waves;
			}
	if (!sm || !memory || !waves)
		return 0;
	const struct workload *w = &r->workloads[0];
	struct kernel_time *k;
	size_t n = analyze_kernel_times(r, w, &k);
	const char *names[] = { "Kernel", "SM %", "Memory %", "Waves", "Bottleneck" };
	struct table *t = table_begin(r->out, r->format, "2.2", "2.2 Bottleneck (W1)", 5, names);
	for (size_t i = 0; i < n && (int)i < r->max_kernels; i++) {
		struct stats a, b, v;
		metric_stats(r, w, sm, k[i].name, &a);
		metric_stats(r, w, memory, k[i].name, &b);
		metric_stats(r, w, waves, k[i].name, &v);
		double s = a.count ? a.sum / a.count : NAN, m = b.count ? b.sum / b.count : NAN;
		double wave = v.count ? v.sum / v.count : NAN;
		table_text(t, k[i].name);
		analyze_cell(r, t, s, a.count);
		analyze_cell(r, t, m, b.count);
		analyze_cell(r, t, wave, v.count);
		struct strbuf verdict = STRBUF_INIT;
		if (!a.count || !b.count)
			strbuf_addstr(&verdict, "N/A (needs 2.1.0 and 2.1.1)");
		else if (s < 60 && m < 60)
			strbuf_addf(&verdict, "latency: neither the SMs nor memory reach 60 %%%s",
				    v.count && wave < 1 ? "; fewer than one wave: launch more blocks"
							: "");
		else if (fabs(s - m) >= 10)
			strbuf_addf(&verdict, "%s", s > m ? "compute (SM)" : "memory");
		else
			strbuf_addstr(&verdict, "balanced");
		if (a.count && b.count && fmax(s, m) > 80)
			strbuf_addstr(&verdict, "; above 80 %: near the peak of that unit");
		table_text(t, verdict.buf);
		strbuf_release(&verdict);
	}
	free(k);
	return table_end(t, err);
}

int analyze_print(const struct analyze_request *r, struct error *err)
{
	table_output_begin(r->out, r->format);
	int rc = 0;
	for (int i = 0; rc == 0 && i < r->count && own_shown(r, "0.1"); i++)
		rc = print_top(r, i, err);
	if (rc == 0 && own_shown(r, "1.1"))
		rc = print_system(r, err);
	int pc_done = !own_shown(r, "21.1");
	for (size_t b = 0; rc == 0 && b < r->catalog->count; b++) {
		const struct catalog_block *block = &r->catalog->blocks[b];
		if (!pc_done && block->id > 21) { /* block 21 in its place */
			rc = analyze_print_pc_sampling(r, r->block_count > 0, err);
			pc_done = 1;
		}
		for (size_t t = 0; rc == 0 && t < block->count; t++) {
			const struct catalog_table *table = &block->tables[t];
			int any = 0;
			for (size_t i = 0; i < table->count && !any; i++)
				any = catalog_selected(block, table, &table->metrics[i], r->blocks,
						       r->block_count);
			if (any)
				rc = print_table(r, block, table, err);
		}
		if (rc == 0 && block->id == 2 && own_shown(r, "2.2"))
			rc = print_bottleneck(r, r->catalog, err);
		if (rc == 0 && block->id == 4 && own_shown(r, "4.3"))
			rc = analyze_print_roofline(r, err);
	}
	if (rc == 0 && !pc_done)
		rc = analyze_print_pc_sampling(r, r->block_count > 0, err);
	table_output_end(r->out, r->format);
	return rc;
}

/* One input of a metric for one dispatch, appended to a line. */
struct explanation {
	const struct workload *w;
	const struct workload_dispatch *d;
	struct strbuf *line;
};

static void explain_input(const char *name, void *arg)
{
	struct explanation *e = arg;
	struct workload_context c = { e->w, e->d };
	double v;
	strbuf_addf(e->line, "%s%s = ", e->line->len ? ", " : "", name);
	if (workload_lookup(name, &v, &c) == 0)
		strbuf_addf(e->line, "%.15g", v);
	else
		strbuf_addstr(e->line, "N/A");
	if (!strcmp(name, "launch.duration")) { /* which of the two measures it is */
		struct workload_context measured = c;
		double gpu;
		strbuf_addstr(e->line, workload_lookup(CATALOG_DURATION, &gpu, &measured) == 0 && gpu > 0
				       ? " (" CATALOG_DURATION ")" : " (End_Timestamp - Start_Timestamp)");
	}
}

/* How many dispatches -g shows one by one. */
#define EXPLAINED_DISPATCHES 20

int analyze_explain(const struct analyze_request *r, const char *id, struct error *err)
{
	for (size_t b = 0; b < r->catalog->count; b++)
		for (size_t t = 0; t < r->catalog->blocks[b].count; t++)
			for (size_t i = 0; i < r->catalog->blocks[b].tables[t].count; i++) {
				const struct catalog_metric *m = &r->catalog->blocks[b].tables[t].metrics[i];
				if (strcmp(m->id, id))
					continue;
				const struct workload *w = &r->workloads[0];
				struct strbuf unit = STRBUF_INIT, line = STRBUF_INIT;
				shown_unit(r, m->unit, &unit);
				fprintf(r->out, "%s %s (%s) = %s\n", m->id, m->name, unit.buf, m->expr_text);
				if (m->peak_text)
					fprintf(r->out, "  peak = %s\n", m->peak_text);
				int kept = 0;
				for (size_t k = 0; k < w->count; k++) {
					const struct workload_dispatch *d = &w->dispatches[k];
					if (!analyze_dispatch_kept(r, d) || ++kept > EXPLAINED_DISPATCHES)
						continue;
					struct explanation e = { w, d, &line };
					strbuf_reset(&line);
					expr_names(m->expr, explain_input, &e);
					double v;
					fprintf(r->out, "  dispatch %lld (%s): %s", d->dispatch_id, d->kernel,
						line.buf);
					if (dispatch_value(r, w, d, m, &v) == 0)
						fprintf(r->out, " -> %.15g %s\n", v, unit.buf);
					else
						fprintf(r->out, " -> N/A\n");
				}
				if (kept > EXPLAINED_DISPATCHES)
					fprintf(r->out, "  (%d more dispatches)\n", kept - EXPLAINED_DISPATCHES);
				struct stats st;
				metric_stats(r, w, m, NULL, &st);
				if (st.count)
					fprintf(r->out, "  = %.15g %s: the mean of the %d dispatch%s values "
							"(Avg of the tables)\n", st.sum / st.count, unit.buf,
						st.count, st.count == 1 ? "'s" : "es'");
				else
					fprintf(r->out, "  = N/A: no dispatch kept has every input\n");
				strbuf_release(&unit);
				strbuf_release(&line);
				return 0;
			}
	return error_set(err, "-g %s: no metric has this id (--list-metrics lists them)", id);
}

int analyze_list_stats(const struct analyze_request *r, struct error *err)
{
	table_output_begin(r->out, r->format);
	int rc = 0;
	for (int i = 0; rc == 0 && i < r->count; i++) {
		const struct workload *w = &r->workloads[i];
		struct strbuf title = STRBUF_INIT;
		strbuf_addf(&title, "Kernels of %s", w->dir);
		const char *names[] = { "Kernel", "Dispatches", "Dispatch_IDs" };
		struct table *t = table_begin(r->out, r->format, "kernels", title.buf, 3, names);
		struct kernel_time *k;
		size_t n = analyze_kernel_times(r, w, &k);
		for (size_t j = 0; j < n; j++) {
			struct strbuf ids = STRBUF_INIT;
			for (size_t d = 0; d < w->count; d++)
				if (!strcmp(w->dispatches[d].kernel, k[j].name) &&
				    analyze_dispatch_kept(r, &w->dispatches[d]))
					strbuf_addf(&ids, "%s%lld", ids.len ? " " : "",
						    w->dispatches[d].dispatch_id);
			table_text(t, k[j].name);
			table_int(t, k[j].count);
			table_text(t, ids.buf);
			strbuf_release(&ids);
		}
		free(k);
		strbuf_release(&title);
		rc = table_end(t, err);
	}
	table_output_end(r->out, r->format);
	return rc;
}
