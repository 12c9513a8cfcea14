/* gpuprof compute profile's planning (see compute.h): what a selection or set of the
 * catalog takes on a chip, from CUPTI's profiler host API, and the listings of
 * --list-available-metrics and --list-sets. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands/compute.h"
#include "compute/catalog.h"
#include "compute/host.h"
#include "util/strbuf.h"

/* Adds a metric to the plan: its CUPTI metrics, and one to the count. */
void compute_plan_add(const struct catalog_metric *m, void *arg)
{
	struct compute_plan *p = arg;
	catalog_cupti_names(m, &p->names);
	p->metrics++;
}

static void print_metric(const struct catalog_metric *m, void *arg)
{
	struct compute_plan *p = arg;
	struct strbuf names = STRBUF_INIT, refused = STRBUF_INIT;
	catalog_cupti_names(m, &names);
	const char *support = "derived";
	if (names.len)
		support = host_list_passes(p->api, p->chip, names.buf, &refused) < 0 ? "no" : "yes";
	printf("    %-8s %-40s %-18s %-7s %s%s%s%s\n", m->id, m->name, m->unit, support,
	       m->expr_text, refused.len ? "  (" : "", refused.buf, refused.len ? " missing)" : "");
	compute_plan_add(m, p);
	strbuf_release(&names);
	strbuf_release(&refused);
}

/* "N CUPTI metrics, P passes" of what p collected, or why not. */
static void describe_passes(const struct compute_plan *p, struct strbuf *out)
{
	size_t cupti = 0;
	for (const char *c = p->names.buf; *c; c++)
		cupti += *c == '\n';
	if (!cupti) {
		strbuf_addstr(out, "no CUPTI metric (all derived)");
		return;
	}
	struct strbuf refused = STRBUF_INIT;
	long passes = host_list_passes(p->api, p->chip, p->names.buf, &refused);
	if (passes < 0 && refused.len)
		strbuf_addf(out, "%zu CUPTI metrics; %s has no %s", cupti, p->chip, refused.buf);
	else if (passes < 0)
		strbuf_addf(out, "%zu CUPTI metrics; CUPTI cannot plan them together on %s, though "
				 "it accepts each alone (select fewer with -b)", cupti, p->chip);
	else
		strbuf_addf(out, "%zu CUPTI metrics, %ld pass%s", cupti, passes,
			    passes == 1 ? "" : "es");
	strbuf_release(&refused);
}

/* Whether the -b selections name metric m (all of them when there is none). */
static int wanted(const struct catalog_block *b, const struct catalog_table *t,
		  const struct catalog_metric *m, const struct option_list *blocks)
{
	return catalog_selected(b, t, m, (const char *const *)blocks->items, blocks->count);
}

/* Adds to p the metrics of block b that -b selects. */
void compute_plan_block(const struct catalog_block *b, const struct option_list *blocks,
		       struct compute_plan *p)
{
	for (size_t t = 0; t < b->count; t++)
		for (size_t m = 0; m < b->tables[t].count; m++)
			if (wanted(b, &b->tables[t], &b->tables[t].metrics[m], blocks))
				compute_plan_add(&b->tables[t].metrics[m], p);
}

/* The catalog, or what -b selects of it: each block with the passes its selected
 * metrics take, then each metric; last, the passes of the whole selection. */
int compute_list_metrics(const struct catalog *c, const struct option_list *blocks,
			struct host_api *api, const char *chip)
{
	struct compute_plan total = { api, chip, STRBUF_INIT, 0 };
	printf("gpuprof compute: the metric catalog on %s (CUPTI's profiler host API)\n", chip);
	printf("    %-8s %-40s %-18s %-7s %s\n", "id", "metric", "unit", "on chip", "expression");
	for (size_t b = 0; b < c->count; b++) {
		const struct catalog_block *block = &c->blocks[b];
		struct compute_plan p = { api, chip, STRBUF_INIT, 0 };
		compute_plan_block(block, blocks, &p);
		if (!p.metrics) {
			strbuf_release(&p.names);
			continue;
		}
		struct strbuf passes = STRBUF_INIT;
		describe_passes(&p, &passes);
		printf("%-3d %s", block->id, block->title);
		for (size_t a = 0; a < block->alias_count; a++)
			printf("%s%s", a ? ", " : " (", block->aliases[a]);
		printf("%s: %s\n", block->alias_count ? ")" : "", passes.buf);
		strbuf_release(&passes);
		strbuf_release(&p.names);
		for (size_t t = 0; t < block->count; t++) {
			const struct catalog_table *table = &block->tables[t];
			int shown = 0;
			for (size_t m = 0; m < table->count; m++) {
				if (!wanted(block, table, &table->metrics[m], blocks))
					continue;
				if (!shown++)
					printf("  %-6s %s\n", table->id, table->title);
				print_metric(&table->metrics[m], &total);
			}
		}
	}
	struct strbuf passes = STRBUF_INIT;
	describe_passes(&total, &passes);
	printf("selected: %d metrics, %s\n", total.metrics, passes.buf);
	strbuf_release(&passes);
	strbuf_release(&total.names);
	return 0;
}

/* Each metric set with the passes it takes on the chip. */
int compute_list_sets(const struct catalog *c, struct host_api *api, const char *chip)
{
	printf("gpuprof compute: metric sets on %s (--set NAME)\n", chip);
	int width = 0;
	for (size_t i = 0; i < c->set_count; i++)
		if ((int)strlen(c->sets[i].name) > width)
			width = (int)strlen(c->sets[i].name);
	for (size_t i = 0; i < c->set_count; i++) {
		const struct catalog_set *s = &c->sets[i];
		struct compute_plan p = { api, chip, STRBUF_INIT, 0 };
		for (size_t k = 0; k < s->select_count; k++)
			catalog_select(c, s->select[k], compute_plan_add, &p);
		struct strbuf passes = STRBUF_INIT, why = STRBUF_INIT, *groups;
		describe_passes(&p, &passes);
		long runs = p.names.len ? host_plan_groups(p.api, p.chip, p.names.buf, &groups, &why) : 0;
		if (runs > 0) {
			strbuf_addf(&passes, " (%ld run%s by application replay)", runs,
				    runs == 1 ? "" : "s");
			host_release_groups(groups, runs);
		} else if (runs < 0) {
			strbuf_addf(&passes, " (no application replay: %s)", why.buf);
		}
		strbuf_release(&why);
		printf("%-*s %d metrics, %s: %s", width, s->name, p.metrics, passes.buf,
		       s->description);
		for (size_t a = 0; a < s->alias_count; a++)
			printf("%s%s", a ? ", " : " (for rocprof-compute's ", s->aliases[a]);
		printf("%s\n", s->alias_count ? ")" : "");
		strbuf_release(&passes);
		strbuf_release(&p.names);
	}
	return 0;
}
