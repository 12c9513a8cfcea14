/* JSON text (see json.h). */
#include "util/json.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "util/utf8.h"

void json_string(struct strbuf *out, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	strbuf_addch(out, '"');
	while (*p) {
		const unsigned char *run = p;
		/* '<', '>' and '&' too: the text stays inert inside HTML (a trace viewer
		 * page that embeds it in <script>) */
		while (*p >= 0x20 && *p < 0x80 && *p != '"' && *p != '\\' && *p != '<' &&
		       *p != '>' && *p != '&')
			p++;
		strbuf_add(out, run, (size_t)(p - run));
		if (!*p)
			break;
		if (*p >= 0x80) {
			size_t n = utf8_length(p);
			if (n) {
				strbuf_add(out, p, n);
				p += n;
			} else {
				strbuf_addstr(out, "\\ufffd");
				p++;
			}
			continue;
		}
		switch (*p) {
		case '"': strbuf_addstr(out, "\\\""); break;
		case '\\': strbuf_addstr(out, "\\\\"); break;
		case '\n': strbuf_addstr(out, "\\n"); break;
		case '\r': strbuf_addstr(out, "\\r"); break;
		case '\t': strbuf_addstr(out, "\\t"); break;
		default: strbuf_addf(out, "\\u%04x", *p); break;
		}
		p++;
	}
	strbuf_addch(out, '"');
}

void json_int(struct strbuf *out, int64_t v)
{
	char digits[24];
	int n = 0;
	uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
	do {
		digits[n++] = (char)('0' + u % 10);
		u /= 10;
	} while (u);
	strbuf_grow(out, (size_t)n + 1);
	if (v < 0)
		out->buf[out->len++] = '-';
	while (n)
		out->buf[out->len++] = digits[--n];
	out->buf[out->len] = '\0';
}

void json_microseconds(struct strbuf *out, int64_t ns)
{
	uint64_t magnitude = ns < 0 ? -(uint64_t)ns : (uint64_t)ns;
	if (ns < 0)
		strbuf_addch(out, '-');
	json_int(out, (int64_t)(magnitude / 1000));
	int frac = (int)(magnitude % 1000);
	strbuf_grow(out, 4);
	out->buf[out->len++] = '.';
	out->buf[out->len++] = (char)('0' + frac / 100);
	out->buf[out->len++] = (char)('0' + frac / 10 % 10);
	out->buf[out->len++] = (char)('0' + frac % 10);
	out->buf[out->len] = '\0';
}

void json_double(struct strbuf *out, double v)
{
	if (!isfinite(v))
		strbuf_addstr(out, "null");
	else
		strbuf_addf(out, "%.15g", v);
}
