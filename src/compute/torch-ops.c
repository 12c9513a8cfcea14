/* PyTorch's operators in a compute workload (see torch-ops.h). */
#include "compute/torch-ops.h"

#include <errno.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "store/store.h"
#include "util/csv.h"
#include "util/strbuf.h"

const char *const torch_ops_columns[TORCH_OPS_COLUMNS] = {
	"Operator_Name", "Context_Id", "Kernel_Name", "Counter_Name", "Counter_Value",
	"Start_Timestamp_function", "End_Timestamp_function", "Start_Timestamp_kernel",
	"End_Timestamp_kernel", "Module_Path",
};

static void csv_text(FILE *out, const unsigned char *text)
{
	fputc('"', out);
	for (const unsigned char *c = text ? text : (const unsigned char *)""; *c; c++) {
		if (*c == '"')
			fputc('"', out);
		fputc(*c, out);
	}
	fputc('"', out);
}

int torch_ops_write(sqlite3 *db, FILE *out, size_t *rows, struct error *err)
{
	*rows = 0;
	for (int i = 0; i < TORCH_OPS_COLUMNS; i++)
		fprintf(out, "%s\"%s\"", i ? "," : "", torch_ops_columns[i]);
	fputc('\n', out);
	if (!store_has_table(db, "gpuprof_marker"))
		return 0;
	int counters = store_has_table(db, "gpuprof_counter");
	/* a database before schema 3.7 has no module paths: "" */
	int modules = store_has_column(db, "gpuprof_marker", "module_id");
	struct strbuf sql = STRBUF_INIT;
	strbuf_addf(&sql, "SELECT o.string, k.context_id, n.string, %s, m.start, m.end, k.start, "
		    "k.end, %s FROM gpuprof_kernel k JOIN gpuprof_marker m ON m.process_id = "
		    "k.process_id AND m.range_id = k.range_id JOIN gpuprof_string d ON d.id = "
		    "m.domain_id AND d.string = 'torch' JOIN gpuprof_string o ON o.id = m.name_id "
		    "LEFT JOIN gpuprof_string n ON n.id = k.name_id ",
		    counters ? "cn.string, c.value" : "NULL, NULL", modules ? "u.string" : "NULL");
	if (counters)
		strbuf_addstr(&sql, "LEFT JOIN gpuprof_counter c ON c.process_id = k.process_id AND "
			      "c.correlation_id = k.correlation_id AND k.correlation_id != 0 LEFT "
			      "JOIN gpuprof_string cn ON cn.id = c.name_id ");
	if (modules)
		strbuf_addstr(&sql, "LEFT JOIN gpuprof_string u ON u.id = m.module_id ");
	strbuf_addstr(&sql, counters ? "ORDER BY k.start, k.id, cn.string, c.id"
				     : "ORDER BY k.start, k.id");
	sqlite3_stmt *s;
	int prepared = store_prepare(db, sql.buf, &s, err);
	strbuf_release(&sql);
	if (prepared)
		return -1;
	int step;
	while ((step = sqlite3_step(s)) == SQLITE_ROW) {
		csv_text(out, sqlite3_column_text(s, 0));
		fprintf(out, ",%" PRId64 ",", (int64_t)sqlite3_column_int64(s, 1));
		csv_text(out, sqlite3_column_text(s, 2));
		fputc(',', out);
		csv_text(out, sqlite3_column_text(s, 3));
		if (sqlite3_column_type(s, 4) == SQLITE_NULL)
			fputs(",", out);
		else
			fprintf(out, ",%.17g", sqlite3_column_double(s, 4));
		for (int i = 5; i < 9; i++)
			fprintf(out, ",%" PRId64, (int64_t)sqlite3_column_int64(s, i));
		fputc(',', out);
		csv_text(out, sqlite3_column_text(s, 9));
		fputc('\n', out);
		++*rows;
	}
	sqlite3_finalize(s);
	if (step != SQLITE_DONE)
		return error_set(err, "cannot read '%s': %s", sqlite3_db_filename(db, "main"),
				 sqlite3_errmsg(db));
	return 0;
}

/* ---- reading ---------------------------------------------------------------------------- */

/* The rows of a workload: its torch_trace/consolidated.csv, or those of a database given
 * as the workload. *text holds what *rows point into. */
static int read_rows(const char *workload, struct strbuf *text, struct csv_row **rows,
		     size_t *count, struct error *err)
{
	struct stat st;
	struct strbuf path = STRBUF_INIT;
	int rc = 0;
	if (stat(workload, &st) == 0 && !S_ISDIR(st.st_mode)) { /* a database */
		sqlite3 *db;
		char *data = NULL;
		size_t size = 0, written;
		FILE *out = open_memstream(&data, &size);
		if (!out)
			return error_set(err, "out of memory");
		rc = store_open(workload, &db, err);
		if (rc == 0) {
			rc = torch_ops_write(db, out, &written, err);
			sqlite3_close(db);
		}
		fclose(out);
		if (data)
			strbuf_add(text, data, size);
		free(data);
		strbuf_addstr(&path, workload);
	} else {
		strbuf_addf(&path, "%s/torch_trace/consolidated.csv", workload);
		FILE *in = fopen(path.buf, "r");
		if (!in) {
			rc = error_set(err, errno == ENOENT
				       ? "%s has no torch_trace/consolidated.csv (gpuprof compute "
					 "profile --torch-trace writes it)"
				       : "cannot read %s: %s", errno == ENOENT ? workload : path.buf,
				       strerror(errno));
		} else {
			if (strbuf_add_stream(text, in))
				rc = error_set(err, "cannot read '%s': %s", path.buf, strerror(errno));
			fclose(in);
		}
	}
	int bad_line = 0;
	if (rc == 0 && csv_parse(text->buf, text->len, rows, count, &bad_line))
		rc = error_set(err, "%s: line %d: a quote is not closed or text follows one",
			       path.buf, bad_line);
	/* a table written before the module paths has one column less */
	if (rc == 0 && (!*count || ((*rows)[0].count != TORCH_OPS_COLUMNS &&
				    (*rows)[0].count != TORCH_OPS_COLUMNS - 1) ||
			strcmp((*rows)[0].fields[0], torch_ops_columns[0]))) {
		csv_rows_release(*rows, *count);
		*rows = NULL;
		*count = 0;
		rc = error_set(err, "%s: not an operator table (its header is not %s, ...)",
			       path.buf, torch_ops_columns[0]);
	}
	strbuf_release(&path);
	return rc;
}

/* Whether the last components of path (a/b/c) match pattern's, each as fnmatch() matches
 * a file name: PurePosixPath.match(), as rocprof-compute matches its operator patterns
 * ("*conv2d"; "* /nn.Module.Linear.forward", without the space, for two levels). */
static int glob_matches(const char *path, const char *pattern)
{
	const char *p_end = pattern + strlen(pattern), *o_end = path + strlen(path);
	for (;;) {
		const char *p = p_end, *o = o_end;
		while (p > pattern && p[-1] != '/')
			p--;
		while (o > path && o[-1] != '/')
			o--;
		char want[1024], have[1024];
		if ((size_t)(p_end - p) >= sizeof(want) || (size_t)(o_end - o) >= sizeof(have))
			return 0;
		memcpy(want, p, (size_t)(p_end - p));
		want[p_end - p] = '\0';
		memcpy(have, o, (size_t)(o_end - o));
		have[o_end - o] = '\0';
		if (fnmatch(want, have, 0))
			return 0;
		if (p == pattern)
			return 1; /* every component of the pattern matched */
		if (o == path)
			return 0; /* the pattern is longer than the path */
		p_end = p - 1, o_end = o - 1;
	}
}

/* Whether an operator (a hierarchy a/b/c) in module path module matches name: all of
 * them for "all", "*" or "**"; as a glob of its last levels (glob_matches()); the
 * whole, a prefix of it, or from one of its levels on ("nn.Module.Linear.forward"
 * matches "nn.Module.Net.forward/nn.Module.Linear.forward" and what runs inside it); or
 * its module path, whole, as a glob, or a prefix of it at a dot ("Net.fc1" matches
 * "Net.fc1" and "Net.fc1.0"). */
int torch_ops_matches(const char *op, const char *module, const char *name)
{
	if (!strcmp(name, "all") || !strcmp(name, "*") || !strcmp(name, "**"))
		return 1;
	if (glob_matches(op, name))
		return 1;
	size_t n = strlen(name);
	for (const char *at = op; at; at = strchr(at, '/') ? strchr(at, '/') + 1 : NULL)
		if (!strncmp(at, name, n))
			return 1;
	return module && *module && (!fnmatch(name, module, 0) ||
				     (!strncmp(module, name, n) && module[n] == '.'));
}

struct op {
	char *name;
	size_t dispatches;
	double kernel_ns;
	struct counter {
		char *name;
		size_t count;
		double sum, min, max;
	} *counters;
	size_t counter_count;
	/* the last kernel counted: rows of one dispatch are consecutive */
	char *last_kernel;
	int64_t last_start, last_end;
};

static struct op *op_of(struct op **ops, size_t *count, const char *name)
{
	for (size_t i = 0; i < *count; i++)
		if (!strcmp((*ops)[i].name, name))
			return &(*ops)[i];
	*ops = xrealloc(*ops, (*count + 1) * sizeof(**ops));
	struct op *o = &(*ops)[(*count)++];
	memset(o, 0, sizeof(*o));
	o->name = xstrdup(name);
	return o;
}

static void add_counter(struct op *o, const char *name, double value)
{
	size_t i = 0;
	while (i < o->counter_count && strcmp(o->counters[i].name, name))
		i++;
	if (i == o->counter_count) {
		o->counters = xrealloc(o->counters, (i + 1) * sizeof(*o->counters));
		o->counters[i] = (struct counter){ xstrdup(name), 0, 0, INFINITY, -INFINITY };
		o->counter_count++;
	}
	struct counter *c = &o->counters[i];
	c->count++;
	c->sum += value;
	c->min = value < c->min ? value : c->min;
	c->max = value > c->max ? value : c->max;
}

static int by_time(const void *a, const void *b)
{
	const struct op *x = a, *y = b;
	if (x->kernel_ns != y->kernel_ns)
		return x->kernel_ns < y->kernel_ns ? 1 : -1;
	return strcmp(x->name, y->name);
}

int torch_ops_print(const char *workload, const char *name, enum table_format format,
		    FILE *out, struct error *err)
{
	struct strbuf text = STRBUF_INIT;
	struct csv_row *rows = NULL;
	size_t count = 0;
	if (read_rows(workload, &text, &rows, &count, err)) {
		strbuf_release(&text);
		return -1;
	}
	struct op *ops = NULL;
	size_t op_count = 0;
	int rc = 0;
	for (size_t i = 1; rc == 0 && i < count; i++) {
		char **f = rows[i].fields;
		char *end;
		if (rows[i].count != rows[0].count) {
			rc = error_set(err, "%s: line %d: %zu fields, not %zu", workload, rows[i].line,
				       rows[i].count, rows[0].count);
			break;
		}
		const char *module = rows[i].count > TORCH_OPS_COLUMNS - 1 ? f[9] : "";
		if (name && !torch_ops_matches(f[0], module, name))
			continue;
		int64_t start = strtoll(f[7], &end, 10), stop = strtoll(f[8], NULL, 10);
		struct op *o = op_of(&ops, &op_count, f[0]);
		if (!o->last_kernel || strcmp(o->last_kernel, f[2]) || o->last_start != start ||
		    o->last_end != stop) {
			o->dispatches++;
			o->kernel_ns += (double)(stop - start);
			free(o->last_kernel);
			o->last_kernel = xstrdup(f[2]);
			o->last_start = start, o->last_end = stop;
		}
		if (*f[3]) {
			double value = strtod(f[4], &end);
			if (end == f[4] || *end) {
				rc = error_set(err, "%s: line %d: Counter_Value '%s' is not a number",
					       workload, rows[i].line, f[4]);
				break;
			}
			add_counter(o, f[3], value);
		}
	}
	if (rc == 0 && name && !op_count)
		rc = error_set(err, "no operator of %s matches '%s' (--list-torch-operators lists "
			       "them)", workload, name);
	if (rc == 0 && !name && !op_count) /* nothing to list: an error, as every empty case */
		rc = error_set(err, "no kernel of %s ran inside a PyTorch operator (gpuprof compute "
			       "profile --torch-trace records them)", workload);
	/* every digit for scripts, two decimals for people */
	int decimals = format == TABLE_TEXT || format == TABLE_MD ? 2 : -1;
	if (rc == 0 && op_count) {
		qsort(ops, op_count, sizeof(*ops), by_time);
		table_output_begin(out, format);
		if (!name) {
			static const char *const columns[] = { "Operator", "Dispatches",
							       "Kernel time (ns)", "Counters" };
			struct table *t = table_begin(out, format, "torch_operators",
						      "PyTorch operators by the time of their kernels",
						      4, columns);
			for (size_t i = 0; i < op_count; i++) {
				table_text(t, ops[i].name);
				table_int(t, (int64_t)ops[i].dispatches);
				table_double(t, ops[i].kernel_ns, 0);
				table_int(t, (int64_t)ops[i].counter_count);
			}
			rc = table_end(t, err);
		} else {
			static const char *const columns[] = { "Operator", "Counter", "Dispatches",
							       "Sum", "Mean", "Min", "Max" };
			struct strbuf title = STRBUF_INIT;
			strbuf_addf(&title, "The counters of the operators matching '%s'", name);
			struct table *t = table_begin(out, format, "torch_operator", title.buf, 7,
						      columns);
			for (size_t i = 0; i < op_count; i++)
				for (size_t c = 0; c < ops[i].counter_count; c++) {
					const struct counter *k = &ops[i].counters[c];
					table_text(t, ops[i].name);
					table_text(t, k->name);
					table_int(t, (int64_t)k->count);
					table_double(t, k->sum, decimals);
					table_double(t, k->sum / (double)k->count, decimals);
					table_double(t, k->min, decimals);
					table_double(t, k->max, decimals);
				}
			rc = table_end(t, err);
			strbuf_release(&title);
		}
		table_output_end(out, format);
	}
	for (size_t i = 0; i < op_count; i++) {
		for (size_t c = 0; c < ops[i].counter_count; c++)
			free(ops[i].counters[c].name);
		free(ops[i].counters);
		free(ops[i].name);
		free(ops[i].last_kernel);
	}
	free(ops);
	csv_rows_release(rows, count);
	strbuf_release(&text);
	return rc;
}
