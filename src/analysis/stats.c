/* Duration statistics by name (see stats.h). */
#include "analysis/stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/hash.h"
#include "util/sort.h"
#include "util/strbuf.h"

void stats_init(struct stats_table *t)
{
	memset(t, 0, sizeof(*t));
}

void stats_release(struct stats_table *t)
{
	for (size_t i = 0; i < t->count; i++)
		free(t->rows[i].name);
	free(t->rows);
	free(t->slots);
	stats_init(t);
}

/* slots hold row index + 1; 0 is empty. */
static void reindex(struct stats_table *t)
{
	size_t count = t->slot_count ? t->slot_count * 2 : 64;
	free(t->slots);
	t->slots = xcalloc(count, sizeof(*t->slots));
	t->slot_count = count;
	for (size_t i = 0; i < t->count; i++) {
		size_t j = hash_string(t->rows[i].name) & (count - 1);
		while (t->slots[j])
			j = (j + 1) & (count - 1);
		t->slots[j] = i + 1;
	}
}

void stats_add(struct stats_table *t, const char *name, uint64_t duration_ns)
{
	if ((t->count + 1) * 2 > t->slot_count)
		reindex(t);
	size_t j = hash_string(name) & (t->slot_count - 1);
	struct stats_row *row = NULL;
	for (; t->slots[j]; j = (j + 1) & (t->slot_count - 1)) {
		if (!strcmp(t->rows[t->slots[j] - 1].name, name)) {
			row = &t->rows[t->slots[j] - 1];
			break;
		}
	}
	if (!row) {
		if (t->count == t->alloc) {
			t->alloc = t->alloc ? t->alloc * 2 : 32;
			t->rows = xrealloc(t->rows, t->alloc * sizeof(*t->rows));
		}
		row = &t->rows[t->count++];
		memset(row, 0, sizeof(*row));
		row->name = xstrdup(name);
		row->min_ns = UINT64_MAX;
		t->slots[j] = t->count;
	}
	row->calls++;
	row->total_ns += duration_ns;
	if (duration_ns < row->min_ns)
		row->min_ns = duration_ns;
	if (duration_ns > row->max_ns)
		row->max_ns = duration_ns;
	double delta = (double)duration_ns - row->mean_ns;
	row->mean_ns += delta / (double)row->calls;
	row->m2 += delta * ((double)duration_ns - row->mean_ns);
	t->total_ns += duration_ns;
}

static int by_total_desc(const void *a, const void *b)
{
	const struct stats_row *x = a, *y = b;
	if (x->total_ns != y->total_ns)
		return x->total_ns < y->total_ns ? 1 : -1;
	return strcmp(x->name, y->name);
}

void stats_finish(struct stats_table *t)
{
	for (size_t i = 0; i < t->count; i++) {
		struct stats_row *r = &t->rows[i];
		r->percentage = t->total_ns ? 100.0 * (double)r->total_ns / (double)t->total_ns : 0;
		r->stddev_ns = r->calls ? sqrt(r->m2 / (double)r->calls) : 0;
	}
	if (t->count)
		sort_array(t->rows, t->count, sizeof(*t->rows), by_total_desc);
	free(t->slots);
	t->slots = NULL;
	t->slot_count = 0;
}
