/* The summary format (--summary): a readable table per domain on stderr, in the units
 * chosen with -u, like rocprofv3's "ROCPROFV3 <DOMAIN> SUMMARY". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/domain-stats.h"
#include "writer/writer.h"

#define NAME_WIDTH 60

struct summary_state {
	const struct output_options *options;
	struct domain_stats stats;
	int64_t pid;
};

static int summary_begin(void **state, const struct output_options *options,
			 struct error *err)
{
	struct summary_state *s = xcalloc(1, sizeof(*s));
	s->options = options;
	domain_stats_init(&s->stats);
	*state = s;
	return 0;
}

static int summary_event(void *state, const struct event *e, struct error *err)
{
	struct summary_state *s = state;
	s->pid = e->pid;
	domain_stats_add(&s->stats, e);
	return 0;
}

static double unit_divisor(const char *units)
{
	if (!units || !strcmp(units, "nsec"))
		return 1;
	if (!strcmp(units, "usec"))
		return 1e3;
	if (!strcmp(units, "msec"))
		return 1e6;
	return 1e9;
}

static void print_table(FILE *out, const char *domain, const struct stats_table *t,
			const char *units, int64_t pid)
{
	if (!t->count)
		return;
	double div = unit_divisor(units);
	int width = 4;
	for (size_t i = 0; i < t->count; i++) {
		int n = (int)strlen(t->rows[i].name);
		if (n > width)
			width = n > NAME_WIDTH ? NAME_WIDTH : n;
	}
	fprintf(out, "\nGPUPROF %s SUMMARY (pid %lld, times in %s)\n", domain, (long long)pid,
		units ? units : "nsec");
	fprintf(out, "| %-*s | %-15s | %10s | %14s | %14s | %7s | %14s | %14s | %14s |\n", width,
		"NAME", "DOMAIN", "CALLS", "DURATION", "AVERAGE", "PERCENT", "MIN", "MAX",
		"STDDEV");
	char dashes[NAME_WIDTH + 1];
	memset(dashes, '-', sizeof(dashes) - 1);
	dashes[NAME_WIDTH] = '\0';
	fprintf(out, "|-%.*s-|-----------------|------------|----------------|----------------|"
		     "---------|----------------|----------------|----------------|\n",
		width, dashes);
	for (size_t i = 0; i < t->count; i++) {
		const struct stats_row *r = &t->rows[i];
		int n = (int)strlen(r->name);
		if (n > width)
			fprintf(out, "| %.*s... ", width - 3, r->name);
		else
			fprintf(out, "| %-*s ", width, r->name);
		fprintf(out, "| %-15.15s | %10llu | %14.3f | %14.3f | %7.2f | %14.3f | %14.3f | "
			     "%14.3f |\n",
			domain, (unsigned long long)r->calls, (double)r->total_ns / div,
			r->mean_ns / div, r->percentage, (double)r->min_ns / div,
			(double)r->max_ns / div, r->stddev_ns / div);
	}
}

static int summary_end(void *state, int failed, struct strbuf *written, struct error *err)
{
	struct summary_state *s = state;
	if (!failed) {
		struct domain_stats *ds = &s->stats;
		const char *units = s->options->summary_units;
		domain_stats_finish(ds);
		print_table(stderr, "KERNEL_DISPATCH", &ds->kernels, units, s->pid);
		print_table(stderr, "MEMORY_COPY", &ds->copies, units, s->pid);
		print_table(stderr, "MEMORY_ALLOCATION", &ds->allocations, units, s->pid);
		for (int i = 0; i < ds->api_count; i++)
			print_table(stderr, ds->apis[i].domain, &ds->apis[i].table, units, s->pid);
		if (!ds->kernels.count && !ds->copies.count && !ds->allocations.count &&
		    !ds->api_count)
			fprintf(stderr, "\nGPUPROF SUMMARY (pid %lld): no kernels, copies or API "
					"calls were recorded\n", (long long)s->pid);
	}
	domain_stats_release(&s->stats);
	free(s);
	return 0;
}

const struct writer_ops summary_writer = {
	.format = "summary",
	.begin = summary_begin,
	.event = summary_event,
	.end = summary_end,
};
