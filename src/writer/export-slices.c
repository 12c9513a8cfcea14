/* The sampled stacks of a database as slices for the timelines (see export-slices.h). */
#include "writer/export-slices.h"

#include <stdlib.h>
#include <string.h>

#include "analysis/unwind.h"
#include "store/store.h"
#include "util/sort.h"

/* A text column, "" for NULL. */
static const char *column_text(sqlite3_stmt *s, int column)
{
	const unsigned char *t = sqlite3_column_text(s, column);
	return t ? (const char *)t : "";
}

static int by_slice_start(const void *a, const void *b)
{
	const struct sample_slice *x = a, *y = b; /* the first member of each item */
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return (x->depth > y->depth) - (x->depth < y->depth);
}

static int load_process_slices(sqlite3 *db, int64_t process_id, struct sample_stacks *st,
			       struct export_slices *out, size_t index, struct error *err)
{
	sqlite3_stmt *q;
	memset(st, 0, sizeof(*st));
	int rc = store_prepare(db, "SELECT frame_id, function, module, offset FROM gpuprof_frame "
			       "WHERE process_id = ? ORDER BY frame_id", &q, err);
	if (rc)
		return -1;
	sqlite3_bind_int64(q, 1, process_id);
	while (sqlite3_step(q) == SQLITE_ROW) { /* ids from 1: index id - 1, gaps kept empty */
		int64_t id = sqlite3_column_int64(q, 0);
		if (id < 1 || id > (int64_t)st->frame_count + 1000000)
			continue;
		while (st->frame_count < (size_t)id) {
			st->frames = xrealloc(st->frames, (st->frame_count + 1) * sizeof(*st->frames));
			st->frames[st->frame_count++] = (struct stack_frame){
				xstrdup(""), xstrdup(""), 0, xstrdup(""), 0, 0 };
		}
		struct stack_frame *f = &st->frames[id - 1];
		free(f->function);
		free(f->module);
		f->function = xstrdup(column_text(q, 1));
		f->module = xstrdup(column_text(q, 2));
		f->offset = (uint64_t)sqlite3_column_int64(q, 3);
	}
	sqlite3_finalize(q);
	st->nodes = xcalloc(1, sizeof(*st->nodes));
	st->node_count = 1;
	if (store_prepare(db, "SELECT stack_id, parent_id, frame_id FROM gpuprof_stack "
			  "WHERE process_id = ? ORDER BY stack_id", &q, err))
		return -1;
	sqlite3_bind_int64(q, 1, process_id);
	while (sqlite3_step(q) == SQLITE_ROW) {
		int64_t id = sqlite3_column_int64(q, 0), parent = sqlite3_column_int64(q, 1);
		int64_t frame = sqlite3_column_int64(q, 2);
		/* a tree in id order (a caller before its callees); anything else is cut at
		 * the root, as is a frame that does not exist */
		if (id != (int64_t)st->node_count)
			continue;
		st->nodes = xrealloc(st->nodes, (st->node_count + 1) * sizeof(*st->nodes));
		st->nodes[st->node_count++] = (struct stack_node){
			parent >= 0 && parent < id ? (uint32_t)parent : 0,
			frame >= 1 && frame <= (int64_t)st->frame_count ? (uint32_t)(frame - 1) : 0 };
	}
	sqlite3_finalize(q);
	if (!st->frame_count) { /* a frame for the nodes to name, even in a corrupt database */
		st->frames = xcalloc(1, sizeof(*st->frames));
		st->frames[0] = (struct stack_frame){ xstrdup("[unknown]"), xstrdup(""), 0,
						      xstrdup(""), 0, 0 };
		st->frame_count = 1;
	}
	struct sample_input *in = NULL;
	size_t n = 0, alloc = 0;
	if (store_prepare(db, "SELECT tid, time, stack_id FROM gpuprof_sample "
			  "WHERE process_id = ?", &q, err))
		return -1;
	sqlite3_bind_int64(q, 1, process_id);
	while (sqlite3_step(q) == SQLITE_ROW) {
		int64_t leaf = sqlite3_column_int64(q, 2);
		if (n == alloc) {
			alloc = alloc ? 2 * alloc : 1024;
			in = xrealloc(in, alloc * sizeof(*in));
		}
		in[n++] = (struct sample_input){ sqlite3_column_int64(q, 0), sqlite3_column_int64(q, 1),
						 leaf > 0 && leaf < (int64_t)st->node_count
						 ? (uint32_t)leaf : 0 };
	}
	sqlite3_finalize(q);
	struct sample_slice *slices = NULL;
	size_t count = sample_slices_build(st, in, n, &slices);
	free(in);
	out->items = xrealloc(out->items, (out->count + count + 1) * sizeof(*out->items));
	for (size_t i = 0; i < count; i++) {
		out->items[out->count].slice = slices[i];
		out->items[out->count++].process = index;
	}
	free(slices);
	return 0;
}

int export_slices_load(sqlite3 *db, struct export_slices *out, struct error *err)
{
	memset(out, 0, sizeof(*out));
	if (!store_has_table(db, "gpuprof_sample")) /* schema 3.0 */
		return 0;
	sqlite3_stmt *q;
	if (store_prepare(db, "SELECT DISTINCT process_id FROM gpuprof_sample ORDER BY 1", &q, err))
		return -1;
	while (sqlite3_step(q) == SQLITE_ROW) {
		out->process_ids = xrealloc(out->process_ids,
					    (out->process_count + 1) * sizeof(*out->process_ids));
		out->process_ids[out->process_count++] = sqlite3_column_int64(q, 0);
	}
	sqlite3_finalize(q);
	out->stacks = xcalloc(out->process_count ? out->process_count : 1, sizeof(*out->stacks));
	for (size_t i = 0; i < out->process_count; i++)
		if (load_process_slices(db, out->process_ids[i], &out->stacks[i], out, i, err))
			return -1;
	sort_array(out->items, out->count, sizeof(*out->items), by_slice_start);
	return 0;
}

void export_slices_release(struct export_slices *d)
{
	for (size_t i = 0; i < d->process_count; i++)
		sample_stacks_release(&d->stacks[i]);
	free(d->stacks);
	free(d->process_ids);
	free(d->items);
}
