/* Tables in five formats (see table.h). */
#include "util/table.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/html.h"
#include "util/json.h"
#include "util/strbuf.h"

struct table {
	FILE *out;
	enum table_format format;
	int columns, column;  /* cells per row; the next cell's column */
	int64_t rows;
	char **names;
	/* text: the cells of the first TEXT_SAMPLE_ROWS rows kept, and which are numbers
	 * (aligned right); the columns take their widths from them, and the rows after
	 * are printed as they come, in those widths (wider values overflow) */
	char **cells;
	char *numeric;
	size_t cell_count, cell_alloc;
	size_t *width; /* set once the widths are fixed */
	struct strbuf line;   /* the row being written (csv, md, json) */
	int tables;           /* the position of this table in its output */
};

static int tables_in_output; /* json: a comma before every table but the first */

#define TEXT_SAMPLE_ROWS 1000 /* rows held to size a text table's columns */

int table_parse_format(const char *name)
{
	static const char *names[] = { "text", "csv", "md", "json" };
	for (int i = 0; i < 4; i++)
		if (!strcmp(name, names[i]))
			return i;
	return -1;
}

void table_output_begin(FILE *out, enum table_format format)
{
	tables_in_output = 0;
	if (format == TABLE_JSON)
		fputs("[\n", out);
}

void table_output_end(FILE *out, enum table_format format)
{
	if (format == TABLE_JSON)
		fputs("\n]\n", out);
}

static void csv_field(struct strbuf *line, const char *s, int quote)
{
	if (!quote) {
		strbuf_addstr(line, s);
		return;
	}
	strbuf_addch(line, '"');
	for (; *s; s++) {
		if (*s == '"')
			strbuf_addch(line, '"');
		strbuf_addch(line, *s);
	}
	strbuf_addch(line, '"');
}

/* Markdown cells: pipes escaped, line breaks as spaces. */
static void md_field(struct strbuf *line, const char *s)
{
	for (; *s; s++) {
		if (*s == '|')
			strbuf_addstr(line, "\\|");
		else if (*s == '\n' || *s == '\r')
			strbuf_addch(line, ' ');
		else
			strbuf_addch(line, *s);
	}
}

struct table *table_begin(FILE *out, enum table_format format, const char *key,
			  const char *title, int columns, const char *const *names)
{
	struct table *t = xcalloc(1, sizeof(*t));
	t->out = out;
	t->format = format;
	t->columns = columns;
	t->names = xcalloc((size_t)columns, sizeof(*t->names));
	for (int i = 0; i < columns; i++)
		t->names[i] = xstrdup(names[i]);
	strbuf_init(&t->line);
	t->tables = tables_in_output++;
	switch (format) {
	case TABLE_TEXT:
		if (title)
			fprintf(out, "%s%s\n", t->tables ? "\n" : "", title);
		break;
	case TABLE_CSV:
		if (t->tables)
			fputc('\n', out);
		if (title)
			fprintf(out, "# %s\n", title);
		for (int i = 0; i < columns; i++) {
			if (i)
				strbuf_addch(&t->line, ',');
			csv_field(&t->line, names[i], 1);
		}
		fprintf(out, "%s\n", t->line.buf);
		break;
	case TABLE_MD:
		if (title)
			fprintf(out, "%s### %s\n\n", t->tables ? "\n" : "", title);
		strbuf_addch(&t->line, '|');
		for (int i = 0; i < columns; i++) {
			strbuf_addch(&t->line, ' ');
			md_field(&t->line, names[i]);
			strbuf_addstr(&t->line, " |");
		}
		strbuf_addstr(&t->line, "\n|");
		for (int i = 0; i < columns; i++)
			strbuf_addstr(&t->line, " --- |");
		fprintf(out, "%s\n", t->line.buf);
		break;
	case TABLE_JSON:
		strbuf_addstr(&t->line, t->tables ? ",\n{\"name\":" : "{\"name\":");
		json_string(&t->line, key ? key : "");
		strbuf_addstr(&t->line, ",\"title\":");
		json_string(&t->line, title ? title : "");
		strbuf_addstr(&t->line, ",\"columns\":[");
		for (int i = 0; i < columns; i++) {
			if (i)
				strbuf_addch(&t->line, ',');
			json_string(&t->line, names[i]);
		}
		strbuf_addstr(&t->line, "],\"rows\":[");
		fputs(t->line.buf, out);
		break;
	case TABLE_HTML:
		strbuf_addstr(&t->line, "<h3>");
		html_text_buf(&t->line, title ? title : "");
		strbuf_addstr(&t->line, "</h3>\n<table data-table=\"");
		html_text_buf(&t->line, key ? key : "");
		strbuf_addstr(&t->line, "\"><tr>");
		for (int i = 0; i < columns; i++) {
			strbuf_addstr(&t->line, "<th>");
			html_text_buf(&t->line, names[i]);
			strbuf_addstr(&t->line, "</th>");
		}
		strbuf_addstr(&t->line, "</tr>\n");
		fputs(t->line.buf, out);
		break;
	}
	strbuf_reset(&t->line);
	return t;
}

/* One line of the text format, without trailing blanks. */
static void put_line(FILE *out, struct strbuf *line)
{
	while (line->len && line->buf[line->len - 1] == ' ')
		line->buf[--line->len] = '\0';
	fprintf(out, "%s\n", line->buf);
	strbuf_reset(line);
}

/* A text cell in its column's width; the line is printed after the row's last cell. */
static void text_cell(struct table *t, int c, const char *text, int numeric)
{
	strbuf_addf(&t->line, numeric ? "%s%*s" : "%s%-*s", c ? "  " : "", (int)t->width[c], text);
	if (c + 1 == t->columns)
		put_line(t->out, &t->line);
}

/* Fixes the text columns' widths from the header and the rows held, and prints them. */
static void print_held_rows(struct table *t)
{
	t->width = xcalloc((size_t)t->columns, sizeof(*t->width));
	for (int c = 0; c < t->columns; c++)
		t->width[c] = strlen(t->names[c]);
	for (size_t i = 0; i < t->cell_count; i++) {
		size_t n = strlen(t->cells[i]);
		if (n > t->width[i % (size_t)t->columns])
			t->width[i % (size_t)t->columns] = n;
	}
	for (int c = 0; c < t->columns; c++)
		text_cell(t, c, t->names[c], 0);
	for (size_t i = 0; i < t->cell_count; i++) {
		text_cell(t, (int)(i % (size_t)t->columns), t->cells[i], t->numeric[i]);
		free(t->cells[i]);
	}
	t->cell_count = 0;
}

/* Text for a terminal: control characters (an escape sequence in a kernel or marker
 * name, a line break) shown as \xNN, never sent to the terminal raw. */
static const char *printable(const char *text, struct strbuf *escaped)
{
	const char *p = text;
	while (*p && (unsigned char)*p >= 0x20 && *p != 0x7f)
		p++;
	if (!*p)
		return text;
	strbuf_reset(escaped);
	for (p = text; *p; p++) {
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			strbuf_addf(escaped, "\\x%02x", (unsigned char)*p);
		else
			strbuf_addch(escaped, *p);
	}
	return escaped->buf;
}

/* One cell: its text, whether it is a number, and its JSON form. */
static void cell(struct table *t, const char *text, int numeric, const char *json)
{
	struct strbuf escaped = STRBUF_INIT;
	if (t->format == TABLE_TEXT)
		text = printable(text, &escaped);
	if (t->format == TABLE_TEXT && t->width) {
		text_cell(t, t->column, text, numeric);
	} else if (t->format == TABLE_TEXT) {
		if (t->cell_count == t->cell_alloc) {
			t->cell_alloc = t->cell_alloc ? 2 * t->cell_alloc : 64;
			t->cells = xrealloc(t->cells, t->cell_alloc * sizeof(*t->cells));
			t->numeric = xrealloc(t->numeric, t->cell_alloc);
		}
		t->numeric[t->cell_count] = (char)numeric;
		t->cells[t->cell_count++] = xstrdup(text);
	} else {
		if (t->column == 0 && t->format == TABLE_JSON)
			strbuf_addstr(&t->line, t->rows ? ",\n[" : "\n[");
		else if (t->column == 0 && t->format == TABLE_MD)
			strbuf_addch(&t->line, '|');
		else if (t->column == 0 && t->format == TABLE_HTML)
			strbuf_addstr(&t->line, "<tr>");
		else if (t->column && t->format != TABLE_MD && t->format != TABLE_HTML)
			strbuf_addch(&t->line, ',');
		if (t->format == TABLE_HTML) {
			strbuf_addstr(&t->line, numeric ? "<td>" : "<td class=\"name\">");
			html_text_buf(&t->line, text);
			strbuf_addstr(&t->line, "</td>");
		} else if (t->format == TABLE_CSV)
			csv_field(&t->line, text, !numeric);
		else if (t->format == TABLE_MD) {
			strbuf_addch(&t->line, ' ');
			md_field(&t->line, text);
			strbuf_addstr(&t->line, " |");
		} else
			strbuf_addstr(&t->line, json);
	}
	if (++t->column == t->columns) {
		t->column = 0;
		t->rows++;
		if (t->format == TABLE_TEXT && !t->width && t->rows == TEXT_SAMPLE_ROWS)
			print_held_rows(t);
		if (t->format == TABLE_JSON)
			strbuf_addch(&t->line, ']');
		else if (t->format == TABLE_HTML)
			strbuf_addstr(&t->line, "</tr>");
		if (t->format != TABLE_TEXT) {
			fputs(t->line.buf, t->out);
			if (t->format != TABLE_JSON)
				fputc('\n', t->out);
			strbuf_reset(&t->line);
		}
	}
	strbuf_release(&escaped);
}

void table_int(struct table *t, int64_t v)
{
	struct strbuf s = STRBUF_INIT;
	json_int(&s, v);
	cell(t, s.buf, 1, s.buf);
	strbuf_release(&s);
}

void table_double(struct table *t, double v, int decimals)
{
	struct strbuf s = STRBUF_INIT, j = STRBUF_INIT;
	if (decimals < 0)
		strbuf_addf(&s, "%.15g", v);
	else
		strbuf_addf(&s, "%.*f", decimals, v);
	json_double(&j, v);
	cell(t, s.buf, 1, j.buf);
	strbuf_release(&s);
	strbuf_release(&j);
}

void table_text(struct table *t, const char *text)
{
	struct strbuf j = STRBUF_INIT;
	json_string(&j, text);
	cell(t, text, 0, j.buf);
	strbuf_release(&j);
}

void table_null(struct table *t)
{
	cell(t, "", 0, "null");
}

int table_end(struct table *t, struct error *err)
{
	if (t->format == TABLE_TEXT && !t->width)
		print_held_rows(t);
	else if (t->format == TABLE_JSON)
		fputs(t->rows ? "\n]}" : "]}", t->out);
	else if (t->format == TABLE_HTML)
		fputs("</table>\n", t->out);
	int rc = 0;
	if (fflush(t->out) != 0 || ferror(t->out))
		rc = error_set(err, "cannot write the output: %s", strerror(errno));
	for (size_t i = 0; i < t->cell_count; i++)
		free(t->cells[i]);
	for (int i = 0; i < t->columns; i++)
		free(t->names[i]);
	free(t->names);
	free(t->cells);
	free(t->numeric);
	free(t->width);
	strbuf_release(&t->line);
	free(t);
	return rc;
}
