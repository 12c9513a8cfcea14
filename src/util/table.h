/* Tables printed for people and for scripts (summary, query): text with aligned
 * columns, CSV, Markdown or JSON; and HTML, for the report's page. Rows are given cell
 * by cell; text keeps them until the table ends (to align the columns), the other
 * formats stream them. */
#ifndef GPUPROF_UTIL_TABLE_H
#define GPUPROF_UTIL_TABLE_H

#include <stdint.h>
#include <stdio.h>

#include "util/error.h"

enum table_format { TABLE_TEXT, TABLE_CSV, TABLE_MD, TABLE_JSON,
		   TABLE_HTML /* the report's: a <h3> title, a <table> (no command offers it) */ };

/* "text", "csv", "md" or "json"; -1 for anything else. */
int table_parse_format(const char *name);

struct table;

/* A table with a title (text and md print it above the table, csv as a "# title"
 * line, json as the "title" member) and a key (json's "name" member). In json every
 * table is one object {"name", "title", "columns", "rows": [[...], ...]} and the tables
 * of one output are the elements of one array (table_output_begin/end). */
struct table *table_begin(FILE *out, enum table_format format, const char *key,
			  const char *title, int columns, const char *const *names);
void table_int(struct table *t, int64_t v);
/* decimals < 0: as many as the value needs (%.15g) */
void table_double(struct table *t, double v, int decimals);
void table_text(struct table *t, const char *s);
void table_null(struct table *t);
/* Ends the table; returns -1 with err set when writing to out failed. */
int table_end(struct table *t, struct error *err);

/* Around the tables of one output: json's enclosing array (the other formats print
 * nothing but a blank line between tables). */
void table_output_begin(FILE *out, enum table_format format);
void table_output_end(FILE *out, enum table_format format);

#endif
