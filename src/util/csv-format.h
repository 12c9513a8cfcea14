/* Fast CSV field formatting shared by the CSV writers: strings quoted with quotes
 * doubled, numbers bare, as rocprofv3 writes them. */
#ifndef GPUPROF_UTIL_CSV_FORMAT_H
#define GPUPROF_UTIL_CSV_FORMAT_H

#include <stdint.h>
#include <string.h>

#include "util/strbuf.h"

static inline void csv_int(struct strbuf *line, int64_t value)
{
	char digits[24];
	int n = 0;
	uint64_t v = value < 0 ? -(uint64_t)value : (uint64_t)value;
	do
		digits[n++] = (char)('0' + v % 10);
	while (v /= 10);
	strbuf_grow(line, (size_t)n + 2);
	if (line->len)
		line->buf[line->len++] = ',';
	if (value < 0)
		line->buf[line->len++] = '-';
	while (n)
		line->buf[line->len++] = digits[--n];
	line->buf[line->len] = '\0';
}

/* An empty field, not the line's first: a value that is not known. */
static inline void csv_empty(struct strbuf *line)
{
	strbuf_addch(line, ',');
}

static inline void csv_text(struct strbuf *line, const char *text)
{
	size_t len = strlen(text);
	strbuf_grow(line, len + 3);
	if (line->len)
		line->buf[line->len++] = ',';
	line->buf[line->len++] = '"';
	for (const char *quote; (quote = memchr(text, '"', len)); ) {
		size_t n = (size_t)(quote - text) + 1;
		strbuf_add(line, text, n);
		strbuf_addch(line, '"'); /* a quote is written twice */
		text += n;
		len -= n;
	}
	strbuf_add(line, text, len);
	strbuf_addch(line, '"');
}

#endif
