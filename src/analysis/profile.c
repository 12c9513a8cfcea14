/* The samples' call tree (see profile.h). */
#include "analysis/profile.h"
#include "analysis/user-code.h"

#include <stdlib.h>
#include <string.h>

#include "analysis/device-busy.h"
#include "analysis/unwind.h"
#include "store/store.h"
#include "util/hash.h"
#include "util/sort.h"
#include "util/strbuf.h"
#include "util/table.h"

static uint64_t node_hash(uint32_t parent, const char *function, const char *module)
{
	return hash_int(parent) ^ hash_string(function) ^ (hash_string(module) * 31);
}

static uint32_t tree_child(struct profile_tree *t, uint32_t parent, const char *function,
			   const char *module)
{
	if (2 * (t->count + 1) > t->slot_count) {
		free(t->slots);
		t->slot_count = t->slot_count ? 2 * t->slot_count : 1024;
		t->slots = xcalloc(t->slot_count, sizeof(*t->slots));
		for (size_t i = 1; i < t->count; i++) {
			size_t j = node_hash(t->nodes[i].parent, t->nodes[i].function,
					     t->nodes[i].module) & (t->slot_count - 1);
			while (t->slots[j])
				j = (j + 1) & (t->slot_count - 1);
			t->slots[j] = (uint32_t)i;
		}
	}
	size_t j = node_hash(parent, function, module) & (t->slot_count - 1);
	for (; t->slots[j]; j = (j + 1) & (t->slot_count - 1)) {
		const struct profile_node *n = &t->nodes[t->slots[j]];
		if (n->parent == parent && !strcmp(n->function, function) && !strcmp(n->module, module))
			return t->slots[j];
	}
	t->nodes = xrealloc(t->nodes, (t->count + 1) * sizeof(*t->nodes));
	t->nodes[t->count] = (struct profile_node){ parent, xstrdup(function), xstrdup(module), 0, 0,
						 0, 0 };
	t->slots[j] = (uint32_t)t->count;
	return (uint32_t)t->count++;
}

int profile_passes_through(const char *function, const char *module)
{
	if (!strcmp(function, "_start"))
		return 1;
	const char *slash = strrchr(module, '/');
	const char *base = slash ? slash + 1 : module;
	static const char *const prefixes[] = { "libc.so", "libc-", "ld-linux", "ld-2.",
						"libpthread.so", "libdl.so", "libpython" };
	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (!strncmp(base, prefixes[i], strlen(prefixes[i])))
			return 1;
	/* the interpreter's executable: python, python3, python3.11, python3.11d... */
	if (strncmp(base, "python", 6))
		return 0;
	return strspn(base + 6, "0123456789.dmu") == strlen(base + 6);
}

/* Whether a frame is a Python function's: named "FILE:FUNCTION" after its file, which is
 * its module and its source (analysis/unwind-names.c). */
static int python_frame(const char *function, const char *module, const char *source)
{
	if (!*module || strcmp(module, source))
		return 0;
	const char *file = unwind_python_file(module);
	size_t length = strlen(file);
	return !strncmp(function, file, length) && function[length] == ':';
}

/* " (file:line)" after a frame's name: a Python file as its frames name it, a native
 * source by its base name. */
static void line_label(struct strbuf *out, const char *source, int line)
{
	size_t length = strlen(source);
	const char *base = strrchr(source, '/');
	const char *file = length > 3 && !strcmp(source + length - 3, ".py")
				   ? unwind_python_file(source) : base ? base + 1 : source;
	strbuf_addf(out, " (%s:%d)", file, line);
}

/* Whether the range m named n (a hierarchy "a/b/c", as PyTorch operators are named) is
 * one that --range ?4 names: the whole name, or one or more of its levels ("b", "a/b");
 * or its module path (temp.marker_module: marker_modules()), whole or a prefix of it at
 * a dot ("Net.fc1" names Net.fc1 and Net.fc1.0) */
#define RANGE_NAMED \
	"(instr('/' || n.string || '/', '/' || ?4 || '/') > 0 OR m.id IN (" \
	"  SELECT id FROM temp.marker_module WHERE module = ?4 OR " \
	"  substr(module, 1, length(?4) + 1) = ?4 || '.'))"
/* What a filter keeps of the samples s (or launch stacks s) of process p: thread ?1 (of
 * process ?6 when it is not 0),
 * from ?2 and to ?3 ns after the process's start, inside a marker range named ?4 on the
 * sample's thread... */
#define FILTER \
	"WHERE (?1 < 0 OR s.tid = ?1) AND (?6 = 0 OR s.process_id = ?6) " \
	"AND s.time >= p.start + ?2 " \
	"AND (?3 < 0 OR s.time < p.start + ?3) AND (?4 IS NULL OR EXISTS (" \
	"  SELECT 1 FROM gpuprof_marker m JOIN gpuprof_string n ON n.id = m.name_id " \
	"  WHERE m.process_id = s.process_id AND m.tid = s.tid AND " RANGE_NAMED \
	"  AND s.time >= m.start AND s.time < m.end)) "
/* The samples kept, by process and stack */
#define SAMPLES_KEPT \
	"SELECT s.process_id, s.stack_id, COUNT(*), NULL FROM gpuprof_sample s " \
	"JOIN gpuprof_process p ON p.id = s.process_id " FILTER
/* The launches kept, by process, stack and what ran (a kernel by name, a copy by
 * direction), weighted by their device time */
/* ... the stack a kernel stands at: for a CUDA graph's kernel, where its node was
 * captured (the stack of domain 4, DOMAIN_CUDA_GRAPH_NODE, keyed by the node's id, that
 * of the node it was copied from for an instantiated graph's: temp.graph_node_original),
 * else its launching call's */
#define KERNEL_STACK \
	"COALESCE((SELECT c.id FROM gpuprof_launch_stack c WHERE k.graph_node_id != 0 AND " \
	"  c.process_id = k.process_id AND c.domain = 4 AND c.correlation_id = COALESCE((" \
	"    SELECT g.original_id FROM temp.graph_node_original g WHERE g.process_id = " \
	"    k.process_id AND g.node_id = k.graph_node_id), k.graph_node_id) ORDER BY c.id LIMIT 1), " \
	"  (SELECT c.id FROM gpuprof_launch_stack c WHERE c.process_id = k.process_id AND " \
	"   c.correlation_id = k.correlation_id AND c.domain != 4 ORDER BY c.id LIMIT 1))"
#define LAUNCHES_KEPT \
	"SELECT s.process_id, s.stack_id, SUM(k.end - k.start), n.string, COUNT(*) " \
	"FROM gpuprof_kernel k JOIN gpuprof_launch_stack s ON s.id = " KERNEL_STACK " " \
	"JOIN gpuprof_process p ON p.id = s.process_id " \
	"JOIN gpuprof_string n ON n.id = k.name_id " FILTER "GROUP BY 1, 2, 4 UNION ALL " \
	"SELECT s.process_id, s.stack_id, SUM(c.end - c.start), " \
	"CASE c.operation WHEN 2 THEN '[fill]' WHEN 3 THEN '[map]' WHEN 4 THEN '[unmap]' " \
	"WHEN 5 THEN '[migrate]' WHEN 6 THEN '[marker]' WHEN 7 THEN '[barrier]' WHEN 8 THEN '[free]' " \
	"ELSE '[copy ' || CASE c.direction WHEN 1 THEN 'host to device' WHEN 2 THEN 'device to host' " \
	"WHEN 3 THEN 'device to device' WHEN 4 THEN 'host to host' ELSE 'unknown' END || ']' END, " \
	"COUNT(*) FROM gpuprof_launch_stack s JOIN gpuprof_process p ON p.id = s.process_id " \
	"JOIN gpuprof_memory_copy c ON c.process_id = s.process_id " \
	"AND c.correlation_id = s.correlation_id AND s.domain != 4 " FILTER "GROUP BY 1, 2, 4"
/* ... and while device work ran (?5 > 0) or while none did: the busy interval that
 * began last before the sample, found by the index, still running */
#define DEVICE_STATE \
	"AND (?5 > 0) = COALESCE((SELECT b.end > s.time FROM temp.profile_busy b " \
	"  WHERE b.process_id = s.process_id AND b.start <= s.time " \
	"  ORDER BY b.start DESC LIMIT 1), 0) "

/* The samples lost in the filter's time window (schema 3.3). Which thread a lost sample
 * was of, the kernel does not say: every loss in the window counts. */
static int gather_lost(sqlite3 *db, const struct profile_filter *f, struct profile_tree *t,
		       struct error *err)
{
	sqlite3_stmt *q;
	if (!store_has_table(db, "gpuprof_sample_lost"))
		return 0;
	if (store_prepare(db, "SELECT SUM(l.samples), MIN(l.start - p.start), MAX(l.end - p.start) "
			      "FROM gpuprof_sample_lost l JOIN gpuprof_process p ON p.id = l.process_id "
			      "WHERE l.end >= p.start + ?1 AND (?2 < 0 OR l.start < p.start + ?2)",
			  &q, err))
		return -1;
	sqlite3_bind_int64(q, 1, (sqlite3_int64)(f->from * 1e9));
	sqlite3_bind_int64(q, 2, f->to < 0 ? -1 : (sqlite3_int64)(f->to * 1e9));
	if (sqlite3_step(q) == SQLITE_ROW && sqlite3_column_int64(q, 0) > 0) {
		int64_t from = sqlite3_column_int64(q, 1), to = sqlite3_column_int64(q, 2);
		if (!t->lost || from < t->lost_from)
			t->lost_from = from;
		if (!t->lost || to > t->lost_to)
			t->lost_to = to;
		t->lost += (uint64_t)sqlite3_column_int64(q, 0);
	}
	sqlite3_finalize(q);
	return 0;
}

/* Adds the samples (or the launches) of one database that the filter keeps to the tree. */
/* temp.marker_module(id, module): the module path of each marker that has one (none in a
 * database before schema 3.7), which RANGE_NAMED reads. */
static int marker_modules(sqlite3 *db, struct error *err)
{
	return store_exec(db, store_has_column(db, "gpuprof_marker", "module_id")
			  ? "CREATE TEMP VIEW IF NOT EXISTS marker_module AS SELECT m.id, u.string "
			    "AS module FROM main.gpuprof_marker m JOIN main.gpuprof_string u ON "
			    "u.id = m.module_id"
			  : "CREATE TEMP VIEW IF NOT EXISTS marker_module AS SELECT 0 AS id, '' AS "
			    "module WHERE 0", err);
}

/* temp.graph_node_original(process_id, node_id, original_id): the CUDA graph nodes copied
 * from others (none in a database before schema 3.8), which KERNEL_STACK reads. */
static int graph_node_originals(sqlite3 *db, struct error *err)
{
	return store_exec(db, store_has_table(db, "gpuprof_graph_node_clone")
			  ? "CREATE TEMP VIEW IF NOT EXISTS graph_node_original AS SELECT process_id, "
			    "node_id, original_id FROM main.gpuprof_graph_node_clone"
			  : "CREATE TEMP VIEW IF NOT EXISTS graph_node_original AS SELECT 0 AS "
			    "process_id, 0 AS node_id, 0 AS original_id WHERE 0", err);
}

static int gather(sqlite3 *db, const struct profile_filter *f, int launches,
		  struct profile_tree *t, struct error *err)
{
	if (!store_has_table(db, launches ? "gpuprof_launch_stack" : "gpuprof_sample"))
		return 0; /* an older schema: none */
	if (marker_modules(db, err) || (launches && graph_node_originals(db, err)))
		return -1;
	/* each process's stack tree, in id order (a caller before its callees) */
	struct {
		int64_t process_id, id, parent;
		char *function, *module;
		int passes, python; /* profile_passes_through(); a Python function's */
	} *stack = NULL;
	size_t stacks = 0, alloc = 0;
	sqlite3_stmt *q;
	int rc = store_prepare(db, "SELECT k.process_id, k.stack_id, k.parent_id, f.function, "
			       "f.module, f.source, f.line FROM gpuprof_stack k JOIN gpuprof_frame f "
			       "ON f.process_id = k.process_id AND f.frame_id = k.frame_id "
			       "ORDER BY 1, 2", &q, err);
	struct strbuf label = STRBUF_INIT;
	while (rc == 0 && sqlite3_step(q) == SQLITE_ROW) {
		if (stacks == alloc) {
			alloc = alloc ? 2 * alloc : 1024;
			stack = xrealloc(stack, alloc * sizeof(*stack));
		}
		const unsigned char *fn = sqlite3_column_text(q, 3), *mod = sqlite3_column_text(q, 4);
		const unsigned char *source = sqlite3_column_text(q, 5);
		int line = sqlite3_column_int(q, 6);
		stack[stacks].process_id = sqlite3_column_int64(q, 0);
		stack[stacks].id = sqlite3_column_int64(q, 1);
		stack[stacks].parent = sqlite3_column_int64(q, 2);
		strbuf_reset(&label);
		strbuf_addstr(&label, fn ? (const char *)fn : "");
		/* (gpuprof's interposer of the API function called: its line is gpuprof's) */
		if (t->lines && source && *source && line > 0 &&
		    !(mod && unwind_gpuprof_module((const char *)mod)))
			line_label(&label, (const char *)source, line);
		stack[stacks].function = xstrdup(label.buf);
		stack[stacks].module = xstrdup(mod ? (const char *)mod : "");
		const char *name = fn ? (const char *)fn : "";
		stack[stacks].passes = profile_passes_through(name, stack[stacks].module);
		stack[stacks].python = python_frame(name, stack[stacks].module,
						    source ? (const char *)source : "");
		stacks++;
	}
	sqlite3_finalize(q);
	strbuf_release(&label);
	if (rc == 0 && f->device && !launches)
		rc = device_busy_table(db, "profile_busy", err);
	if (rc == 0)
		rc = store_prepare(db, launches ? LAUNCHES_KEPT
				   : f->device ? SAMPLES_KEPT DEVICE_STATE "GROUP BY 1, 2"
					       : SAMPLES_KEPT "GROUP BY 1, 2", &q, err);
	if (rc == 0) {
		sqlite3_bind_int64(q, 1, f->tid);
		sqlite3_bind_int64(q, 6, f->process_id);
		sqlite3_bind_int64(q, 2, (sqlite3_int64)(f->from * 1e9));
		sqlite3_bind_int64(q, 3, f->to < 0 ? -1 : (sqlite3_int64)(f->to * 1e9));
		if (f->range)
			sqlite3_bind_text(q, 4, f->range, -1, SQLITE_STATIC);
		if (f->device && !launches)
			sqlite3_bind_int(q, 5, f->device);
	}
	uint32_t path_nodes[1024];
	while (rc == 0 && sqlite3_step(q) == SQLITE_ROW) {
		int64_t process_id = sqlite3_column_int64(q, 0), id = sqlite3_column_int64(q, 1);
		uint64_t samples = (uint64_t)sqlite3_column_int64(q, 2);
		size_t depth = 0;
		while (id && depth < sizeof(path_nodes) / sizeof(path_nodes[0])) { /* leaf up */
			size_t lo = 0, hi = stacks;
			while (lo < hi) {
				size_t mid = lo + (hi - lo) / 2;
				if (stack[mid].process_id < process_id ||
				    (stack[mid].process_id == process_id && stack[mid].id < id))
					lo = mid + 1;
				else
					hi = mid;
			}
			if (lo == stacks || stack[lo].process_id != process_id || stack[lo].id != id ||
			    stack[lo].parent >= id) /* a corrupt tree: cut here */
				break;
			path_nodes[depth++] = (uint32_t)lo;
			id = stack[lo].parent;
		}
		t->samples += samples;
		/* the innermost frame kept: the leaf, or (the Python view) the Python function
		 * that the interpreter's own frames beneath it ran for (its evaluation loop,
		 * allocations, collections: with the C library's calls they made) */
		size_t innermost = 0;
		if (!t->all_frames) {
			while (innermost < depth && stack[path_nodes[innermost]].passes)
				innermost++;
			if (innermost == depth || !stack[path_nodes[innermost]].python)
				innermost = 0;
		}
		uint32_t node = 0;
		while (depth-- > innermost) { /* root down */
			const char *function = stack[path_nodes[depth]].function;
			const char *module = stack[path_nodes[depth]].module;
			if (depth > innermost && !t->all_frames && stack[path_nodes[depth]].passes)
				continue; /* passes the call on: its callee stands in its place */
			node = tree_child(t, node, function, module);
			t->nodes[node].total += samples;
		}
		if (launches && node) { /* what the launch ran, beneath the call */
			const unsigned char *what = sqlite3_column_text(q, 3);
			node = tree_child(t, node, what ? (const char *)what : "", "[device]");
			t->nodes[node].total += samples;
			t->nodes[node].launches += (uint64_t)sqlite3_column_int64(q, 4);
			t->launches += (uint64_t)sqlite3_column_int64(q, 4);
		}
		if (node)
			t->nodes[node].self += samples;
	}
	sqlite3_finalize(q);
	for (size_t i = 0; i < stacks; i++) {
		free(stack[i].function);
		free(stack[i].module);
	}
	free(stack);
	return rc || launches ? rc : gather_lost(db, f, t, err);
}

static int count_of(sqlite3 *db, const char *sql, const struct profile_filter *f,
		    uint64_t *out, struct error *err)
{
	sqlite3_stmt *q;
	if (store_prepare(db, sql, &q, err))
		return -1;
	int parameters = sqlite3_bind_parameter_count(q); /* ?1 the thread, ?4 the range */
	if (parameters >= 1)
		sqlite3_bind_int64(q, 1, f->tid);
	if (parameters >= 6)
		sqlite3_bind_int64(q, 6, f->process_id);
	if (parameters >= 4 && f->range)
		sqlite3_bind_text(q, 4, f->range, -1, SQLITE_STATIC);
	if (sqlite3_step(q) == SQLITE_ROW)
		*out += (uint64_t)sqlite3_column_int64(q, 0);
	sqlite3_finalize(q);
	return 0;
}

int profile_filter_count(sqlite3 *db, const struct profile_filter *f, int launches,
			 struct profile_filter_counts *out, struct error *err)
{
	const char *table = launches ? "gpuprof_launch_stack" : "gpuprof_sample";
	if (!store_has_table(db, table))
		return 0;
	struct strbuf all = STRBUF_INIT, thread = STRBUF_INIT;
	strbuf_addf(&all, "SELECT COUNT(*) FROM %s", table);
	strbuf_addf(&thread, "SELECT COUNT(*) FROM %s WHERE tid = ?1", table);
	int rc = marker_modules(db, err) || count_of(db, all.buf, f, &out->all, err) ||
		 (f->tid >= 0 && count_of(db, thread.buf, f, &out->of_thread, err)) ||
		 (f->range && count_of(db, "SELECT COUNT(*) FROM gpuprof_marker m JOIN "
					  "gpuprof_string n ON n.id = m.name_id WHERE " RANGE_NAMED,
				       f, &out->ranges_named, err));
	strbuf_release(&all);
	strbuf_release(&thread);
	return rc ? -1 : 0;
}

int profile_gather(sqlite3 *db, const struct profile_filter *f, struct profile_tree *t,
		   struct error *err)
{
	return gather(db, f, 0, t, err);
}

int profile_gather_launches(sqlite3 *db, const struct profile_filter *f,
			    struct profile_tree *t, struct error *err)
{
	t->device_time = 1;
	return gather(db, f, 1, t, err);
}

void profile_count_text(const struct profile_tree *t, struct strbuf *out)
{
	uint64_t cut = 0; /* rooted at the frame that says the copy was too short */
	for (size_t i = 1; i < t->count; i++)
		if (t->nodes[i].parent == 0 && !strncmp(t->nodes[i].function, "[truncated", 10))
			cut += t->nodes[i].total;
	if (t->device_time) {
		strbuf_addf(out, "device time of %llu launches with a call stack: %.6f s",
			    (unsigned long long)t->launches, (double)t->samples / 1e9);
		if (cut)
			strbuf_addf(out, ", %.6f s of it under stacks cut short (deeper than the "
				    "stack copied: --launch-stack-size copies more)", cut / 1e9);
		return;
	}
	strbuf_addf(out, "call-stack samples: %llu", (unsigned long long)t->samples);
	if (cut)
		strbuf_addf(out, ", %llu of them cut short (deeper than the stack copied: "
			    "--sampling-stack-size copies more)", (unsigned long long)cut);
	if (t->lost)
		strbuf_addf(out, "; %llu more lost by the kernel between %.3f s and %.3f s",
			    (unsigned long long)t->lost, t->lost_from / 1e9, t->lost_to / 1e9);
}

/* ---- the flat profile ------------------------------------------------------------------ */

static int by_total(const void *a, const void *b)
{
	const struct profile_function *x = a, *y = b;
	if (x->total != y->total)
		return x->total < y->total ? 1 : -1;
	if (x->self != y->self)
		return x->self < y->self ? 1 : -1;
	return strcmp(x->function, y->function);
}

static int by_self(const void *a, const void *b)
{
	const struct profile_function *x = a, *y = b;
	if (x->self != y->self)
		return x->self < y->self ? 1 : -1;
	return by_total(a, b);
}

size_t profile_flat(const struct profile_tree *t, enum profile_sort sort,
		    struct profile_function **out)
{
	/* self from every call, total from the outermost call of each path only */
	struct profile_function *rows = NULL;
	size_t count = 0;
	uint32_t *slots = NULL;
	size_t slot_count = 0;
	for (size_t i = 1; i < t->count; i++) {
		const struct profile_node *n = &t->nodes[i];
		int recursion = 0;
		for (uint32_t up = n->parent; up && !recursion; up = t->nodes[up].parent)
			recursion = !strcmp(t->nodes[up].function, n->function) &&
				    !strcmp(t->nodes[up].module, n->module);
		if (2 * (count + 1) > slot_count) {
			free(slots);
			slot_count = slot_count ? 2 * slot_count : 256;
			slots = xcalloc(slot_count, sizeof(*slots));
			for (size_t r = 0; r < count; r++) {
				size_t j = (hash_string(rows[r].function) ^ hash_string(rows[r].module)) &
					   (slot_count - 1);
				while (slots[j])
					j = (j + 1) & (slot_count - 1);
				slots[j] = (uint32_t)r + 1;
			}
		}
		size_t j = (hash_string(n->function) ^ hash_string(n->module)) & (slot_count - 1);
		while (slots[j] && (strcmp(rows[slots[j] - 1].function, n->function) ||
				    strcmp(rows[slots[j] - 1].module, n->module)))
			j = (j + 1) & (slot_count - 1);
		if (!slots[j]) {
			rows = xrealloc(rows, (count + 1) * sizeof(*rows));
			rows[count++] = (struct profile_function){ n->function, n->module, 0, 0 };
			slots[j] = (uint32_t)count;
		}
		rows[slots[j] - 1].self += n->self;
		if (!recursion)
			rows[slots[j] - 1].total += n->total;
	}
	free(slots);
	sort_array(rows, count, sizeof(*rows), sort == PROFILE_SORT_SELF ? by_self : by_total);
	*out = rows;
	return count;
}

static int by_device_time(const void *a, const void *b)
{
	const struct profile_launch_site *x = a, *y = b;
	if (x->ns != y->ns)
		return x->ns < y->ns ? 1 : -1;
	int c = strcmp(x->function, y->function);
	return c ? c : strcmp(x->launched, y->launched);
}

size_t profile_launch_sites(const struct profile_tree *t, struct profile_launch_site **out)
{
	struct profile_launch_site *rows = NULL;
	size_t count = 0;
	for (size_t i = 1; i < t->count; i++) {
		const struct profile_node *n = &t->nodes[i];
		if (!n->launches || !n->parent)
			continue; /* not what a launch ran */
		const struct profile_node *call = &t->nodes[n->parent];
		/* up from the API function to the user's code; without any, its caller */
		const struct profile_node *below = call, *site = NULL;
		for (uint32_t up = call->parent; up && !site; up = t->nodes[up].parent) {
			if (user_code(t->nodes[up].module))
				site = &t->nodes[up];
			else
				below = &t->nodes[up];
		}
		if (!site) {
			site = call->parent ? &t->nodes[call->parent] : NULL;
			below = call;
		}
		const char *function = site ? site->function : "", *module = site ? site->module : "";
		const char *through = below != call ? below->function : "";
		size_t r = 0;
		for (; r < count; r++) /* the same site reached by other paths: one row */
			if (!strcmp(rows[r].call, call->function) && !strcmp(rows[r].launched, n->function) &&
			    !strcmp(rows[r].function, function) && !strcmp(rows[r].module, module) &&
			    !strcmp(rows[r].through, through))
				break;
		if (r == count) {
			rows = xrealloc(rows, (count + 1) * sizeof(*rows));
			rows[count++] = (struct profile_launch_site){ function, module, through,
								      call->function, n->function, 0, 0 };
		}
		rows[r].launches += n->launches;
		rows[r].ns += n->total;
	}
	sort_array(rows, count, sizeof(*rows), by_device_time);
	*out = rows;
	return count;
}

int profile_launch_sites_table(const struct profile_tree *t, int format, const char *key,
			       const char *title, size_t limit, double divisor, int decimals,
			       const char *units, struct error *err)
{
	struct profile_launch_site *sites;
	size_t count = profile_launch_sites(t, &sites);
	struct strbuf time = STRBUF_INIT;
	strbuf_addf(&time, "Device time (%s)", units);
	const char *names[] = { "Function", "Module", "Through", "Call", "Launched", "Launches",
				time.buf, "Pct" };
	struct table *out = table_begin(stdout, (enum table_format)format, key, title, 8, names);
	for (size_t i = 0; i < count && (!limit || i < limit); i++) {
		const char *base = strrchr(sites[i].module, '/');
		table_text(out, sites[i].function);
		table_text(out, base ? base + 1 : sites[i].module);
		table_text(out, sites[i].through);
		table_text(out, sites[i].call);
		table_text(out, sites[i].launched);
		table_int(out, (int64_t)sites[i].launches);
		table_double(out, (double)sites[i].ns / divisor, decimals);
		table_double(out, t->samples ? 100.0 * (double)sites[i].ns / (double)t->samples : 0, 2);
	}
	free(sites);
	strbuf_release(&time);
	return table_end(out, err);
}

int profile_flat_table(const struct profile_tree *t, enum profile_sort sort, int format,
		       const char *key, const char *title, size_t limit, struct error *err)
{
	struct profile_function *rows;
	size_t count = profile_flat(t, sort, &rows);
	const char *names[] = { "Function", "Module", "Self", "Self %", "Total", "Total %" };
	struct table *out = table_begin(stdout, (enum table_format)format, key, title, 6, names);
	double all = t->samples ? (double)t->samples : 1;
	for (size_t i = 0; i < count && (!limit || i < limit); i++) {
		const char *base = strrchr(rows[i].module, '/');
		table_text(out, rows[i].function);
		table_text(out, base ? base + 1 : rows[i].module);
		if (t->device_time && t->unit_ns > 1) {
			table_double(out, (double)rows[i].self / t->unit_ns, 3);
			table_double(out, 100.0 * (double)rows[i].self / all, 2);
			table_double(out, (double)rows[i].total / t->unit_ns, 3);
		} else {
			table_int(out, (int64_t)rows[i].self);
			table_double(out, 100.0 * (double)rows[i].self / all, 2);
			table_int(out, (int64_t)rows[i].total);
		}
		table_double(out, 100.0 * (double)rows[i].total / all, 2);
	}
	free(rows);
	return table_end(out, err);
}

void profile_link(struct profile_tree *t)
{
	for (size_t i = t->count; i-- > 1;) {
		t->nodes[i].next_sibling = t->nodes[t->nodes[i].parent].first_child;
		t->nodes[t->nodes[i].parent].first_child = (uint32_t)i;
	}
}

void profile_init(struct profile_tree *t)
{
	memset(t, 0, sizeof(*t));
	t->nodes = xcalloc(1, sizeof(*t->nodes));
	t->nodes[0] = (struct profile_node){ 0, xstrdup(""), xstrdup(""), 0, 0, 0, 0 };
	t->count = 1;
}

void profile_release(struct profile_tree *t)
{
	for (size_t i = 0; i < t->count; i++) {
		free(t->nodes[i].function);
		free(t->nodes[i].module);
	}
	free(t->nodes);
	free(t->slots);
	memset(t, 0, sizeof(*t));
}

void profile_folded_line(struct strbuf *out, const char *const *functions, size_t n,
			 uint64_t count)
{
	for (size_t i = 0; i < n; i++) {
		for (const char *c = functions[i]; *c; c++)
			strbuf_addch(out, *c == ';' ? ':' : *c == '\n' ? ' ' : *c);
		strbuf_addch(out, i + 1 < n ? ';' : ' ');
	}
	strbuf_addf(out, "%llu\n", (unsigned long long)count);
}

void profile_folded(const struct profile_tree *t, struct strbuf *out)
{
	const char *functions[1024];
	for (size_t i = 1; i < t->count; i++) {
		if (!t->nodes[i].self)
			continue;
		size_t n = 0;
		for (uint32_t up = (uint32_t)i; up && n < 1024; up = t->nodes[up].parent)
			n++;
		size_t k = n;
		for (uint32_t up = (uint32_t)i; up && k > 0; up = t->nodes[up].parent)
			functions[--k] = t->nodes[up].function;
		profile_folded_line(out, functions, n, t->nodes[i].self);
	}
}
