/* Reading CSV text (RFC 4180: quoted fields may hold commas, doubled quotes and
 * newlines; blank lines are skipped): the workload files of gpuprof compute and
 * roofline.csv. */
#ifndef GPUPROF_UTIL_CSV_H
#define GPUPROF_UTIL_CSV_H

#include <stddef.h>

struct csv_row {
	char **fields;
	size_t count;
	int line; /* where the row starts, from 1 */
};

/* The rows of size bytes of text into *out (freed with csv_rows_release), a UTF-8 byte
 * order mark at its start skipped; -1 with
 * *bad_line where a quote is not closed or text follows one. */
int csv_parse(const char *text, size_t size, struct csv_row **out, size_t *count,
	      int *bad_line);
void csv_rows_release(struct csv_row *rows, size_t count);

#endif
