/* gpuprof query: runs SQL over one or more databases, read-only, and prints the result
 * as a table. With several databases each documented view becomes the union of that
 * view in every database, with a leading "db" column (the input's position, from 0). */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands/commands.h"
#include "store/store.h"
#include "util/error.h"
#include "util/options.h"
#include "util/strbuf.h"
#include "util/table.h"

static const char usage[] = "gpuprof query [options] DB... --sql \"SELECT ...\"";
static const char description[] =
	"Runs SQL over gpuprof databases and prints each statement's rows; a statement that\n"
	"would write (VACUUM INTO, CREATE, DELETE...) is refused. The views are documented\n"
	"in docs/SCHEMA.md: processes, threads, agents, kernels, memory_copies,\n"
	"memory_allocations, synchronizations, overheads, regions, markers, metrics,\n"
	"pc_samples, pc_sampling. With\n"
	"several databases each view is their union, with a leading column db (0 for the\n"
	"first input, 1 for the second...), and the tables of input N are reached as\n"
	"dbN.gpuprof_... (input 0 as main.gpuprof_...). A view that an input of an older\n"
	"schema lacks (metrics, before 3.1) is the union of the inputs that have it.";

static const char *const views[] = { "processes", "threads", "agents", "kernels", "counters",
				      "memory_copies", "memory_allocations",
				      "synchronizations", "overheads", "regions", "markers",
				      "metrics", "pc_samples", "pc_sampling" };

/* Whether input i (attached as db<i>, or main) has the view: a database of an older
 * minor version of the schema may lack the newer ones (metrics). */
static int has_view(sqlite3 *db, int i, const char *view)
{
	char schema[32], sql[96];
	snprintf(schema, sizeof(schema), i ? "db%d" : "main", i);
	snprintf(sql, sizeof(sql), "SELECT 1 FROM %s.sqlite_master WHERE name = ?", schema);
	sqlite3_stmt *s;
	int found = 0;
	if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) == SQLITE_OK) {
		sqlite3_bind_text(s, 1, view, -1, SQLITE_STATIC);
		found = sqlite3_step(s) == SQLITE_ROW;
	}
	sqlite3_finalize(s);
	return found;
}

/* The columns of input i's view, each ended by a NUL, appended to names where not
 * there yet (a later schema's view may have more); 0, or -1 when they cannot be read. */
static int view_columns(sqlite3 *db, int i, const char *view, struct strbuf *names)
{
	sqlite3_stmt *s;
	if (sqlite3_prepare_v2(db, "SELECT name FROM pragma_table_info(?1, ?2)", -1, &s,
			       NULL) != SQLITE_OK)
		return -1;
	char schema[32];
	snprintf(schema, sizeof(schema), i ? "db%d" : "main", i);
	sqlite3_bind_text(s, 1, view, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 2, schema, -1, SQLITE_STATIC);
	while (sqlite3_step(s) == SQLITE_ROW) {
		const char *name = (const char *)sqlite3_column_text(s, 0);
		int known = 0;
		for (size_t at = 0; name && !known && at < names->len; at += strlen(names->buf + at) + 1)
			known = !strcmp(names->buf + at, name);
		if (name && !known)
			strbuf_add(names, name, strlen(name) + 1);
	}
	return sqlite3_finalize(s) == SQLITE_OK ? 0 : -1;
}

/* Whether input i's view has the column. */
static int view_has(sqlite3 *db, int i, const char *view, const char *column)
{
	struct strbuf names = STRBUF_INIT;
	int has = 0;
	if (view_columns(db, i, view, &names) == 0)
		for (size_t at = 0; !has && at < names.len; at += strlen(names.buf + at) + 1)
			has = !strcmp(names.buf + at, column);
	strbuf_release(&names);
	return has;
}

/* Attaches inputs 1.. to db and makes the union views: each input's rows under the
 * columns of all (an older schema's view lacks the later columns: NULL there). */
static int attach_all(sqlite3 *db, char **inputs, int count, struct error *err)
{
	int limit = sqlite3_limit(db, SQLITE_LIMIT_ATTACHED, -1);
	if (count - 1 > limit)
		return error_set(err, "at most %d databases can be queried at once (SQLite's "
				 "limit); join them first with gpuprof merge", limit + 1);
	struct strbuf sql = STRBUF_INIT;
	for (int i = 1; i < count; i++) {
		sqlite3 *check;
		if (store_open(inputs[i], &check, err)) /* a gpuprof database of this schema */
			return -1;
		sqlite3_close(check);
		sqlite3_stmt *attach;
		strbuf_reset(&sql);
		strbuf_addf(&sql, "ATTACH DATABASE ? AS db%d", i);
		if (store_prepare(db, sql.buf, &attach, err))
			goto fail;
		sqlite3_bind_text(attach, 1, inputs[i], -1, SQLITE_STATIC);
		int rc = sqlite3_step(attach);
		sqlite3_finalize(attach);
		if (rc != SQLITE_DONE) {
			error_set(err, "cannot attach '%s': %s", inputs[i], sqlite3_errmsg(db));
			goto fail;
		}
	}
	for (size_t v = 0; v < sizeof(views) / sizeof(views[0]); v++) {
		struct strbuf columns = STRBUF_INIT;
		for (int i = 0; i < count; i++)
			if (has_view(db, i, views[v]) && view_columns(db, i, views[v], &columns)) {
				strbuf_release(&columns);
				error_set(err, "cannot read the view %s of '%s': %s", views[v],
					  inputs[i], sqlite3_errmsg(db));
				goto fail;
			}
		strbuf_reset(&sql);
		for (int i = 0; i < count; i++) { /* the inputs that have the view */
			if (!has_view(db, i, views[v]))
				continue;
			if (sql.len)
				strbuf_addstr(&sql, " UNION ALL ");
			else
				strbuf_addf(&sql, "CREATE TEMP VIEW %s AS ", views[v]);
			strbuf_addf(&sql, "SELECT %d AS db", i);
			for (size_t at = 0; at < columns.len; at += strlen(columns.buf + at) + 1) {
				const char *c = columns.buf + at;
				if (view_has(db, i, views[v], c))
					strbuf_addf(&sql, ", \"%s\"", c);
				else
					strbuf_addf(&sql, ", NULL AS \"%s\"", c);
			}
			if (i)
				strbuf_addf(&sql, " FROM db%d.%s", i, views[v]);
			else
				strbuf_addf(&sql, " FROM main.%s", views[v]);
		}
		strbuf_release(&columns);
		if (!sql.len)
			continue;
		char *message = NULL;
		if (sqlite3_exec(db, sql.buf, NULL, NULL, &message) != SQLITE_OK) {
			error_set(err, "cannot join the view %s of the inputs: %s", views[v],
				  message ? message : sqlite3_errmsg(db));
			sqlite3_free(message);
			goto fail;
		}
	}
	strbuf_release(&sql);
	return 0;
fail:
	strbuf_release(&sql);
	return -1;
}

static void print_value(struct table *t, sqlite3_stmt *s, int column)
{
	switch (sqlite3_column_type(s, column)) {
	case SQLITE_INTEGER:
		table_int(t, sqlite3_column_int64(s, column));
		break;
	case SQLITE_FLOAT:
		table_double(t, sqlite3_column_double(s, column), -1);
		break;
	case SQLITE_NULL:
		table_null(t);
		break;
	case SQLITE_BLOB: {
		const unsigned char *b = sqlite3_column_blob(s, column);
		int n = sqlite3_column_bytes(s, column);
		struct strbuf hex = STRBUF_INIT;
		strbuf_addstr(&hex, "x'");
		for (int i = 0; i < n; i++)
			strbuf_addf(&hex, "%02x", b[i]);
		strbuf_addch(&hex, '\'');
		table_text(t, hex.buf);
		strbuf_release(&hex);
		break;
	}
	default:
		table_text(t, (const char *)sqlite3_column_text(s, column));
		break;
	}
}

/* Runs every statement of sql, printing the rows of each. */
static int run_sql(sqlite3 *db, const char *sql, enum table_format format, struct error *err)
{
	int statements = 0;
	table_output_begin(stdout, format);
	while (*sql) {
		sqlite3_stmt *s;
		const char *tail;
		if (sqlite3_prepare_v2(db, sql, -1, &s, &tail) != SQLITE_OK)
			return error_set(err, "%s", sqlite3_errmsg(db));
		sql = tail;
		if (!s)
			continue; /* whitespace or a comment */
		if (!sqlite3_stmt_readonly(s)) { /* VACUUM INTO writes a file even read-only */
			error_set(err, "'%.*s' would write: query only reads (copy the database "
				       "to change it)", (int)strcspn(sqlite3_sql(s), "\n"),
				  sqlite3_sql(s));
			sqlite3_finalize(s);
			return -1;
		}
		int columns = sqlite3_column_count(s);
		const char **names = xcalloc((size_t)columns + 1, sizeof(*names));
		for (int c = 0; c < columns; c++)
			names[c] = sqlite3_column_name(s, c);
		struct table *t = columns ? table_begin(stdout, format, "query", NULL, columns,
							names)
					  : NULL;
		int rc;
		while ((rc = sqlite3_step(s)) == SQLITE_ROW)
			for (int c = 0; c < columns; c++)
				print_value(t, s, c);
		free(names);
		if (rc != SQLITE_DONE)
			error_set(err, "%s", sqlite3_errmsg(db));
		sqlite3_finalize(s);
		if ((t && table_end(t, err)) || rc != SQLITE_DONE)
			return -1;
		statements++;
	}
	table_output_end(stdout, format);
	if (!statements)
		return error_set(err, "--sql holds no statement");
	return 0;
}

int cmd_query(int argc, char **argv)
{
	int help = -1;
	const char *sql = NULL, *format_name = "text";
	const struct option table[] = {
		{ OPTION_STRING, 0, "sql", &sql, "SQL", "the statements to run (required)" },
		{ OPTION_ENUM, 0, "format", &format_name, "text|csv|md|json",
		  "how rows are printed (default: text)" },
		{ OPTION_BOOL, 'h', "help", &help, NULL, "show this help" },
		OPTION_END,
	};
	struct error err;
	char **inputs;
	int count;
	if (command_parse_inputs("query", usage, description, table, &help, "database", argc, argv,
				 &inputs, &count))
		return 0;
	if (!sql)
		die_with(EXIT_USAGE, "query: --sql is required (usage: %s)", usage);
	sqlite3 *db;
	int rc = store_open(inputs[0], &db, &err);
	if (rc == 0 && count > 1)
		rc = attach_all(db, inputs, count, &err);
	if (rc == 0)
		rc = run_sql(db, sql, (enum table_format)table_parse_format(format_name), &err);
	sqlite3_close(db);
	free(inputs);
	if (rc)
		die("query: %s", err.message);
	return 0;
}
