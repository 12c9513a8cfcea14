/* Reading CSV text (see csv.h). */
#include "util/csv.h"

#include <stdlib.h>
#include <string.h>

#include "util/strbuf.h"

void csv_rows_release(struct csv_row *rows, size_t count)
{
	for (size_t r = 0; r < count; r++) {
		for (size_t f = 0; f < rows[r].count; f++)
			free(rows[r].fields[f]);
		free(rows[r].fields);
	}
	free(rows);
}

int csv_parse(const char *text, size_t size, struct csv_row **out, size_t *count,
		     int *bad_line)
{
	struct csv_row *rows = NULL;
	size_t n = 0;
	const char *at = text, *end = text + size;
	int line = 1;
	struct strbuf field = STRBUF_INIT;
	if (size >= 3 && !memcmp(at, "\xef\xbb\xbf", 3))
		at += 3; /* a UTF-8 byte order mark, as spreadsheets write them */
	while (at < end) {
		struct csv_row row = { NULL, 0, line };
		for (;;) { /* one field */
			strbuf_reset(&field);
			if (at < end && *at == '"') {
				at++;
				for (;;) {
					if (at >= end) {
						*bad_line = row.line;
						goto fail;
					}
					if (*at == '"' && at + 1 < end && at[1] == '"') {
						strbuf_addch(&field, '"');
						at += 2;
					} else if (*at == '"') {
						at++;
						break;
					} else {
						line += *at == '\n';
						strbuf_addch(&field, *at++);
					}
				}
				if (at < end && *at != ',' && *at != '\n' && *at != '\r') {
					*bad_line = line;
					goto fail;
				}
			} else {
				while (at < end && *at != ',' && *at != '\n' && *at != '\r')
					strbuf_addch(&field, *at++);
			}
			row.fields = xrealloc(row.fields, (row.count + 1) * sizeof(char *));
			row.fields[row.count++] = xstrdup(field.buf);
			if (at < end && *at == ',') {
				at++;
				continue;
			}
			break;
		}
		if (at < end && *at == '\r')
			at++;
		if (at < end && *at == '\n') {
			at++;
			line++;
		}
		if (row.count == 1 && !row.fields[0][0]) { /* a blank line */
			free(row.fields[0]);
			free(row.fields);
			continue;
		}
		rows = xrealloc(rows, (n + 1) * sizeof(*rows));
		rows[n++] = row;
		continue;
fail:
		for (size_t f = 0; f < row.count; f++)
			free(row.fields[f]);
		free(row.fields);
		csv_rows_release(rows, n);
		strbuf_release(&field);
		return -1;
	}
	strbuf_release(&field);
	*out = rows;
	*count = n;
	return 0;
}
