/* Launch call stacks as text (see launch-stacks.h). */
#include "writer/launch-stacks.h"

#include <stdlib.h>
#include <string.h>

#include "analysis/unwind.h"
#include "core/launch-delta.h"
#include "store/store.h"
#include "util/sort.h"
#include "util/strbuf.h"

static int by_call(const void *a, const void *b)
{
	const struct launch_entry *x = a, *y = b;
	if (x->process_id != y->process_id)
		return x->process_id < y->process_id ? -1 : 1;
	return (x->correlation_id > y->correlation_id) - (x->correlation_id < y->correlation_id);
}

static void add_entry(struct launch_stack_index *x, int64_t process_id, int64_t correlation_id,
		      uint32_t text)
{
	x->entries = xrealloc(x->entries, (x->count + 1) * sizeof(*x->entries));
	x->entries[x->count++] = (struct launch_entry){ process_id, correlation_id, text };
}

static uint32_t add_text(struct launch_stack_index *x, char *text)
{
	x->texts = xrealloc(x->texts, (x->text_count + 1) * sizeof(*x->texts));
	x->texts[x->text_count] = text;
	return (uint32_t)x->text_count++;
}

/* A stack of the database: its node and its caller's, and its function. */
struct node {
	int64_t process_id, id, parent;
	char *function;
	uint32_t text; /* + 1, once made */
};

static struct node *find_node(struct node *nodes, size_t count, int64_t process_id, int64_t id)
{
	size_t lo = 0, hi = count;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (nodes[mid].process_id < process_id ||
		    (nodes[mid].process_id == process_id && nodes[mid].id < id))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < count && nodes[lo].process_id == process_id && nodes[lo].id == id ? &nodes[lo]
										      : NULL;
}

/* The text of a stack: its functions from the root down, joined by ';'. */
static char *stack_text(struct node *nodes, size_t count, struct node *leaf)
{
	const char *functions[UNWIND_MAX_FRAMES];
	size_t n = 0;
	for (struct node *at = leaf; at && n < UNWIND_MAX_FRAMES;) {
		functions[n++] = at->function;
		/* a caller has a smaller id: a tree that says otherwise is cut there */
		at = at->parent && at->parent < at->id
			     ? find_node(nodes, count, at->process_id, at->parent) : NULL;
	}
	struct strbuf text = STRBUF_INIT;
	while (n-- > 0)
		strbuf_addf(&text, "%s%s", text.len ? ";" : "", functions[n]);
	return strbuf_detach(&text);
}

int launch_stacks_load(sqlite3 *db, struct launch_stack_index *x, struct error *err)
{
	memset(x, 0, sizeof(*x));
	if (!store_has_table(db, "gpuprof_launch_stack"))
		return 0;
	sqlite3_stmt *q;
	if (store_prepare(db, "SELECT k.process_id, k.stack_id, k.parent_id, f.function "
			      "FROM gpuprof_stack k JOIN gpuprof_frame f ON f.process_id = "
			      "k.process_id AND f.frame_id = k.frame_id WHERE EXISTS (SELECT 1 "
			      "FROM gpuprof_launch_stack) ORDER BY 1, 2", &q, err))
		return -1;
	struct node *nodes = NULL;
	size_t count = 0;
	while (sqlite3_step(q) == SQLITE_ROW) {
		const unsigned char *function = sqlite3_column_text(q, 3);
		nodes = xrealloc(nodes, (count + 1) * sizeof(*nodes));
		nodes[count++] = (struct node){ sqlite3_column_int64(q, 0), sqlite3_column_int64(q, 1),
						sqlite3_column_int64(q, 2),
						xstrdup(function ? (const char *)function : ""), 0 };
	}
	sqlite3_finalize(q);
	/* an API call's stack (not a CUDA graph node's capture: keyed by its node id) */
	int rc = store_prepare(db, "SELECT process_id, correlation_id, stack_id FROM "
				   "gpuprof_launch_stack WHERE domain != 4 ORDER BY 1, 2", &q, err);
	while (rc == 0 && sqlite3_step(q) == SQLITE_ROW) {
		struct node *leaf = find_node(nodes, count, sqlite3_column_int64(q, 0),
					      sqlite3_column_int64(q, 2));
		if (!leaf)
			continue;
		if (!leaf->text)
			leaf->text = add_text(x, stack_text(nodes, count, leaf)) + 1;
		add_entry(x, sqlite3_column_int64(q, 0), sqlite3_column_int64(q, 1), leaf->text - 1);
	}
	if (rc == 0)
		sqlite3_finalize(q);
	for (size_t i = 0; i < count; i++)
		free(nodes[i].function);
	free(nodes);
	return rc;
}

void launch_stacks_from_recording(const struct recording *rec, struct launch_stack_index *x)
{
	memset(x, 0, sizeof(*x));
	const struct sample_stacks *st = rec->stacks;
	if (!st || !st->launch_count)
		return;
	uint32_t *made = xcalloc(st->node_count, sizeof(*made)); /* a node's text + 1 */
	for (size_t i = 0; i < rec->launch_stacks.count && i < st->launch_count; i++) {
		uint32_t node = st->launch_leaf[i], frames[UNWIND_MAX_FRAMES];
		struct record_launch call = launch_stack_call(rec->launch_stacks.items[i]);
		if (!node || node >= st->node_count || call.domain == DOMAIN_CUDA_GRAPH_NODE)
			continue;
		if (!made[node]) {
			size_t n = sample_stack_frames(st, node, frames, UNWIND_MAX_FRAMES);
			struct strbuf text = STRBUF_INIT;
			while (n-- > 0)
				strbuf_addf(&text, "%s%s", text.len ? ";" : "",
					    st->frames[frames[n]].function);
			made[node] = add_text(x, strbuf_detach(&text)) + 1;
		}
		add_entry(x, 1, (int64_t)call.correlation_id, made[node] - 1);
	}
	free(made);
	sort_array(x->entries, x->count, sizeof(*x->entries), by_call);
}

const char *launch_stacks_find(const struct launch_stack_index *x, int64_t process_id,
			       int64_t correlation_id)
{
	struct launch_entry key = { process_id, correlation_id, 0 };
	const struct launch_entry *e = x->count
		? bsearch(&key, x->entries, x->count, sizeof(*x->entries), by_call) : NULL;
	return e ? x->texts[e->text] : NULL;
}

void launch_stacks_release(struct launch_stack_index *x)
{
	for (size_t i = 0; i < x->text_count; i++)
		free(x->texts[i]);
	free(x->texts);
	free(x->entries);
	memset(x, 0, sizeof(*x));
}
