/* UTF-8 checks (see utf8.h). */
#include "util/utf8.h"

#include <stdint.h>

size_t utf8_length(const unsigned char *s)
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

int utf8_valid(const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p;) {
		size_t n = *p < 0x80 ? 1 : utf8_length(p);
		if (!n)
			return 0;
		p += n;
	}
	return 1;
}

void utf8_sanitize(const char *s, struct strbuf *out)
{
	for (const unsigned char *p = (const unsigned char *)s; *p;) {
		size_t n = *p < 0x80 ? 1 : utf8_length(p);
		if (n) {
			strbuf_add(out, p, n);
			p += n;
		} else {
			strbuf_addstr(out, "\xef\xbf\xbd");
			p++;
		}
	}
}
