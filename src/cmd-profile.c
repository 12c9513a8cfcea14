/* gpuprof profile: the call-stack samples of databases (gpuprof sys) as a flat profile,
 * a call tree or folded stacks, for a thread, a time window or a marker range. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "store/store.h"
#include "util/error.h"
#include "util/hash.h"
#include "util/json.h"
#include "util/options.h"
#include "util/sort.h"
#include "util/strbuf.h"
#include "util/table.h"

static const char usage[] = "gpuprof profile [options] DB...";
static const char description[] =
	"Prints the call-stack samples of gpuprof databases (gpuprof sys, --sample), all\n"
	"inputs together: a flat profile (each function's self samples, when it was running,\n"
	"and total samples, when it was on the stack, counted once per sample however deep its\n"
	"recursion, with their share of the samples kept), or the call tree (--tree), or the\n"
	"folded stacks that flamegraph.pl, inferno and speedscope read (--format folded). The\n"
	"samples kept can be those of one thread, of a time window counted from each process's\n"
	"start, or those taken inside a marker range of a given name on the same thread: what\n"
	"were the CPUs doing inside range X?";

struct filter {
	long long tid;          /* -1: every thread */
	double from, to;        /* seconds from the process start; to < 0: to the end */
	const char *range;      /* a marker range's name, NULL: none */
};

/* A node of the merged call tree: its caller, function and module, and its samples. */
struct tree_node {
	uint32_t parent;
	char *function, *module;
	uint64_t total, self;
	uint32_t first_child, next_sibling; /* filled before printing */
};

struct tree {
	struct tree_node *nodes; /* nodes[0]: the root */
	size_t count;
	uint32_t *slots;
	size_t slot_count;
	uint64_t samples;
};

static uint64_t node_hash(uint32_t parent, const char *function, const char *module)
{
	return hash_int(parent) ^ hash_string(function) ^ (hash_string(module) * 31);
}

static uint32_t tree_child(struct tree *t, uint32_t parent, const char *function,
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
		const struct tree_node *n = &t->nodes[t->slots[j]];
		if (n->parent == parent && !strcmp(n->function, function) && !strcmp(n->module, module))
			return t->slots[j];
	}
	t->nodes = xrealloc(t->nodes, (t->count + 1) * sizeof(*t->nodes));
	t->nodes[t->count] = (struct tree_node){ parent, xstrdup(function), xstrdup(module), 0, 0,
						 0, 0 };
	t->slots[j] = (uint32_t)t->count;
	return (uint32_t)t->count++;
}

/* Adds the samples of one database that the filter keeps to the tree. */
static int gather(const char *path, const struct filter *f, struct tree *t, struct error *err)
{
	sqlite3 *db;
	if (store_open(path, &db, err))
		return -1;
	if (!store_has_table(db, "gpuprof_sample")) { /* schema 3.0: no samples */
		sqlite3_close(db);
		return 0;
	}
	/* each process's stack tree, in id order (a caller before its callees) */
	struct { int64_t process_id, id, parent; char *function, *module; } *stack = NULL;
	size_t stacks = 0, alloc = 0;
	sqlite3_stmt *q;
	int rc = store_prepare(db, "SELECT k.process_id, k.stack_id, k.parent_id, f.function, "
			       "f.module FROM gpuprof_stack k JOIN gpuprof_frame f ON "
			       "f.process_id = k.process_id AND f.frame_id = k.frame_id "
			       "ORDER BY 1, 2", &q, err);
	while (rc == 0 && sqlite3_step(q) == SQLITE_ROW) {
		if (stacks == alloc) {
			alloc = alloc ? 2 * alloc : 1024;
			stack = xrealloc(stack, alloc * sizeof(*stack));
		}
		const unsigned char *fn = sqlite3_column_text(q, 3), *mod = sqlite3_column_text(q, 4);
		stack[stacks].process_id = sqlite3_column_int64(q, 0);
		stack[stacks].id = sqlite3_column_int64(q, 1);
		stack[stacks].parent = sqlite3_column_int64(q, 2);
		stack[stacks].function = xstrdup(fn ? (const char *)fn : "");
		stack[stacks++].module = xstrdup(mod ? (const char *)mod : "");
	}
	sqlite3_finalize(q);
	if (rc == 0)
		rc = store_prepare(db,
			"SELECT s.process_id, s.stack_id, COUNT(*) FROM gpuprof_sample s "
			"JOIN gpuprof_process p ON p.id = s.process_id "
			"WHERE (?1 < 0 OR s.tid = ?1) AND s.time >= p.start + ?2 "
			"AND (?3 < 0 OR s.time < p.start + ?3) AND (?4 IS NULL OR EXISTS ("
			"  SELECT 1 FROM gpuprof_marker m JOIN gpuprof_string n ON n.id = m.name_id "
			"  WHERE m.process_id = s.process_id AND m.tid = s.tid AND n.string = ?4 "
			"  AND s.time >= m.start AND s.time < m.end)) GROUP BY 1, 2", &q, err);
	if (rc == 0) {
		sqlite3_bind_int64(q, 1, f->tid);
		sqlite3_bind_int64(q, 2, (sqlite3_int64)(f->from * 1e9));
		sqlite3_bind_int64(q, 3, f->to < 0 ? -1 : (sqlite3_int64)(f->to * 1e9));
		if (f->range)
			sqlite3_bind_text(q, 4, f->range, -1, SQLITE_STATIC);
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
		uint32_t node = 0;
		while (depth-- > 0) { /* root down */
			node = tree_child(t, node, stack[path_nodes[depth]].function,
					  stack[path_nodes[depth]].module);
			t->nodes[node].total += samples;
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
	sqlite3_close(db);
	return rc;
}

/* ---- the flat profile ------------------------------------------------------------------ */

struct flat_row {
	const char *function, *module;
	uint64_t self, total;
};

static int by_total(const void *a, const void *b)
{
	const struct flat_row *x = a, *y = b;
	if (x->total != y->total)
		return x->total < y->total ? 1 : -1;
	if (x->self != y->self)
		return x->self < y->self ? 1 : -1;
	return strcmp(x->function, y->function);
}

static int print_flat(const struct tree *t, enum table_format format, int limit,
		      struct error *err)
{
	/* functions: self from the leaves, total once per sample path (a function counted
	 * once however many times it recurs on a path) */
	struct flat_row *rows = NULL;
	size_t count = 0;
	for (size_t i = 1; i < t->count; i++) {
		const struct tree_node *n = &t->nodes[i];
		int recursion = 0; /* counted at its outermost occurrence only */
		for (uint32_t up = n->parent; up && !recursion; up = t->nodes[up].parent)
			recursion = !strcmp(t->nodes[up].function, n->function) &&
				    !strcmp(t->nodes[up].module, n->module);
		size_t r = 0;
		while (r < count && (strcmp(rows[r].function, n->function) ||
				     strcmp(rows[r].module, n->module)))
			r++;
		if (r == count) {
			rows = xrealloc(rows, (count + 1) * sizeof(*rows));
			rows[count++] = (struct flat_row){ n->function, n->module, 0, 0 };
		}
		rows[r].self += n->self;
		if (!recursion)
			rows[r].total += n->total;
	}
	sort_array(rows, count, sizeof(*rows), by_total);
	const char *names[] = { "Function", "Module", "Self", "Self %", "Total", "Total %" };
	char title[96];
	snprintf(title, sizeof(title), "FLAT PROFILE (%llu call-stack samples)",
		 (unsigned long long)t->samples);
	table_output_begin(stdout, format);
	struct table *out = table_begin(stdout, format, "profile", title, 6, names);
	for (size_t i = 0; i < count && (limit <= 0 || (int)i < limit); i++) {
		const char *base = strrchr(rows[i].module, '/');
		table_text(out, rows[i].function);
		table_text(out, base ? base + 1 : rows[i].module);
		table_int(out, (int64_t)rows[i].self);
		table_double(out, 100.0 * (double)rows[i].self / (double)t->samples, 2);
		table_int(out, (int64_t)rows[i].total);
		table_double(out, 100.0 * (double)rows[i].total / (double)t->samples, 2);
	}
	int rc = table_end(out, err);
	table_output_end(stdout, format);
	free(rows);
	return rc;
}

/* ---- the call tree and the folded stacks ------------------------------------------------ */

static void link_children(struct tree *t)
{
	for (size_t i = t->count; i-- > 1;) { /* siblings end up in creation order reversed */
		t->nodes[i].next_sibling = t->nodes[t->nodes[i].parent].first_child;
		t->nodes[t->nodes[i].parent].first_child = (uint32_t)i;
	}
}

static int by_children_total(const void *a, const void *b, void *ctx)
{
	const struct tree *t = ctx;
	uint64_t x = t->nodes[*(const uint32_t *)a].total, y = t->nodes[*(const uint32_t *)b].total;
	return x != y ? (x < y ? 1 : -1) : 0;
}

/* The children of node, by total samples. */
static size_t children(const struct tree *t, uint32_t node, uint32_t **out)
{
	size_t n = 0;
	for (uint32_t c = t->nodes[node].first_child; c; c = t->nodes[c].next_sibling)
		n++;
	*out = xcalloc(n ? n : 1, sizeof(**out));
	n = 0;
	for (uint32_t c = t->nodes[node].first_child; c; c = t->nodes[c].next_sibling)
		(*out)[n++] = c;
	qsort_r(*out, n, sizeof(**out), by_children_total, (void *)t);
	return n;
}

static void print_tree_text(const struct tree *t, uint32_t node, int depth, double min_percent,
			    struct strbuf *line)
{
	uint32_t *kids;
	size_t n = children(t, node, &kids);
	for (size_t i = 0; i < n; i++) {
		const struct tree_node *k = &t->nodes[kids[i]];
		double percent = 100.0 * (double)k->total / (double)t->samples;
		if (percent < min_percent)
			continue;
		strbuf_reset(line);
		strbuf_addf(line, "%6.2f%% %8llu %8llu  ", percent, (unsigned long long)k->total,
			    (unsigned long long)k->self);
		for (int d = 0; d < depth; d++)
			strbuf_addstr(line, "  ");
		strbuf_addstr(line, k->function);
		puts(line->buf);
		print_tree_text(t, kids[i], depth + 1, min_percent, line);
	}
	free(kids);
}

static void print_tree_json(const struct tree *t, uint32_t node, double min_percent,
			    struct strbuf *out)
{
	uint32_t *kids;
	size_t n = children(t, node, &kids);
	int first = 1;
	strbuf_addch(out, '[');
	for (size_t i = 0; i < n; i++) {
		const struct tree_node *k = &t->nodes[kids[i]];
		if (100.0 * (double)k->total / (double)t->samples < min_percent)
			continue;
		strbuf_addstr(out, first ? "{\"function\":" : ",{\"function\":");
		first = 0;
		json_string(out, k->function);
		strbuf_addstr(out, ",\"module\":");
		json_string(out, k->module);
		strbuf_addf(out, ",\"total\":%llu,\"self\":%llu,\"children\":",
			    (unsigned long long)k->total, (unsigned long long)k->self);
		print_tree_json(t, kids[i], min_percent, out);
		strbuf_addch(out, '}');
	}
	strbuf_addch(out, ']');
	free(kids);
}

static void print_folded(const struct tree *t)
{
	struct strbuf line = STRBUF_INIT;
	uint32_t path[1024];
	for (size_t i = 1; i < t->count; i++) {
		if (!t->nodes[i].self)
			continue;
		size_t n = 0;
		for (uint32_t up = (uint32_t)i; up && n < 1024; up = t->nodes[up].parent)
			path[n++] = up;
		strbuf_reset(&line);
		while (n-- > 0) {
			for (const char *c = t->nodes[path[n]].function; *c; c++)
				strbuf_addch(&line, *c == ';' ? ':' : *c == '\n' ? ' ' : *c);
			strbuf_addch(&line, n ? ';' : ' ');
		}
		strbuf_addf(&line, "%llu", (unsigned long long)t->nodes[i].self);
		puts(line.buf);
	}
	strbuf_release(&line);
}

static int parse_seconds(const char *text, const char *option, double *out, struct error *err)
{
	char *end;
	errno = 0;
	*out = text ? strtod(text, &end) : 0;
	if (text && (!*text || *end || errno || *out < 0))
		return error_set(err, "%s: '%s' is not a number of seconds from the process start",
				 option, text);
	return 0;
}

int cmd_profile(int argc, char **argv)
{
	int help = -1, tree_wanted = -1;
	const char *format = "text", *tid = NULL, *from = NULL, *to = NULL, *range = NULL;
	const char *limit_text = "30", *min_text = "1";
	const struct option table[] = {
		{ OPTION_BOOL, 0, "tree", &tree_wanted, NULL,
		  "the call tree (callers above their callees) instead of the flat profile" },
		{ OPTION_ENUM, 0, "format", &format, "text|csv|md|json|folded",
		  "how to print (folded: one line per stack, for flame graphs)" },
		{ OPTION_STRING, 0, "tid", &tid, "TID", "only the samples of this thread" },
		{ OPTION_STRING, 0, "from", &from, "SECONDS",
		  "only samples taken this long after their process began or later" },
		{ OPTION_STRING, 0, "to", &to, "SECONDS", "only samples taken before this" },
		{ OPTION_STRING, 0, "range", &range, "NAME",
		  "only samples taken inside a marker range of this name, on its thread" },
		{ OPTION_STRING, 0, "limit", &limit_text, "N",
		  "rows of the flat profile (default 30; 0: all)" },
		{ OPTION_STRING, 0, "min-percent", &min_text, "P",
		  "leave out of the tree the calls with less than P % of the samples (default 1)" },
		{ OPTION_BOOL, 'h', "help", &help, NULL, "show this help" },
		OPTION_END,
	};
	struct error err;
	char **inputs;
	int count;
	if (command_parse_inputs("profile", usage, description, table, &help, "database", argc,
				 argv, &inputs, &count))
		return 0;
	struct filter f = { .tid = -1, .range = range };
	char *end;
	double min_percent = 0, to_seconds = -1;
	long limit = strtol(limit_text, &end, 10);
	if (*end || !*limit_text || limit < 0)
		die_with(EXIT_USAGE, "profile: --limit: '%s' is not a number of rows", limit_text);
	min_percent = strtod(min_text, &end);
	if (*end || !*min_text || min_percent < 0 || min_percent > 100)
		die_with(EXIT_USAGE, "profile: --min-percent: '%s' is not a percentage", min_text);
	if (tid) {
		f.tid = strtoll(tid, &end, 10);
		if (*end || !*tid || f.tid < 0)
			die_with(EXIT_USAGE, "profile: --tid: '%s' is not a thread id", tid);
	}
	if (parse_seconds(from, "--from", &f.from, &err) ||
	    (to && parse_seconds(to, "--to", &to_seconds, &err)))
		die_with(EXIT_USAGE, "profile: %s", err.message);
	f.to = to ? to_seconds : -1;
	struct tree t = { 0 };
	t.nodes = xcalloc(1, sizeof(*t.nodes));
	t.nodes[0] = (struct tree_node){ 0, xstrdup(""), xstrdup(""), 0, 0, 0, 0 };
	t.count = 1;
	int rc = 0;
	for (int i = 0; rc == 0 && i < count; i++)
		rc = gather(inputs[i], &f, &t, &err);
	free(inputs);
	if (rc)
		die("profile: %s", err.message);
	if (!t.samples) {
		fprintf(stderr, "gpuprof: profile: no call-stack samples%s (record them with gpuprof "
				"sys, or trace --sample)\n",
			tid || from || to || range ? " that the filters keep" : "");
	} else if (!strcmp(format, "folded")) {
		print_folded(&t);
	} else if (tree_wanted == 1 && strcmp(format, "text") && strcmp(format, "json")) {
		die_with(EXIT_USAGE, "profile: the tree prints as text or json, not %s", format);
	} else if (tree_wanted == 1) {
		link_children(&t);
		if (!strcmp(format, "json")) {
			struct strbuf out = STRBUF_INIT;
			strbuf_addf(&out, "{\"samples\":%llu,\"tree\":", (unsigned long long)t.samples);
			print_tree_json(&t, 0, min_percent, &out);
			strbuf_addstr(&out, "}");
			puts(out.buf);
			strbuf_release(&out);
		} else {
			struct strbuf line = STRBUF_INIT;
			printf("CALL TREE (%llu call-stack samples; total %%, total, self)\n",
			       (unsigned long long)t.samples);
			print_tree_text(&t, 0, 0, min_percent, &line);
			strbuf_release(&line);
		}
	} else {
		if (print_flat(&t, (enum table_format)table_parse_format(format), (int)limit, &err))
			rc = -1;
	}
	for (size_t i = 0; i < t.count; i++) {
		free(t.nodes[i].function);
		free(t.nodes[i].module);
	}
	free(t.nodes);
	free(t.slots);
	if (rc)
		die("profile: %s", err.message);
	return 0;
}
