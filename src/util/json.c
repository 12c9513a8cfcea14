/* JSON text (see json.h). */
#include "util/json.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* The length of the valid UTF-8 sequence at s, or 0. */
static size_t utf8_length(const unsigned char *s)
{
	unsigned char c = s[0];
	size_t n;
	uint32_t cp;
	if (c >= 0xc2 && c <= 0xdf) {
		n = 2;
		cp = c & 0x1f;
	} else if (c >= 0xe0 && c <= 0xef) {
		n = 3;
		cp = c & 0x0f;
	} else if (c >= 0xf0 && c <= 0xf4) {
		n = 4;
		cp = c & 0x07;
	} else {
		return 0;
	}
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if ((n == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
	    (n == 4 && (cp < 0x10000 || cp > 0x10ffff)))
		return 0; /* overlong, a surrogate, or beyond Unicode */
	return n;
}

void json_string(struct strbuf *out, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	strbuf_addch(out, '"');
	while (*p) {
		const unsigned char *run = p;
		while (*p >= 0x20 && *p < 0x80 && *p != '"' && *p != '\\')
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
	if (ns < 0) {
		strbuf_addch(out, '-');
		ns = -ns;
	}
	json_int(out, ns / 1000);
	int frac = (int)(ns % 1000);
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
