/* HTML text (see html.h). */
#include "util/html.h"

#include "util/strbuf.h"
#include "util/utf8.h"

void html_text_buf(struct strbuf *out, const char *text)
{
	struct strbuf clean = STRBUF_INIT;
	utf8_sanitize(text ? text : "", &clean);
	for (const char *c = clean.buf; *c; c++) {
		switch (*c) {
		case '&': strbuf_addstr(out, "&amp;"); break;
		case '<': strbuf_addstr(out, "&lt;"); break;
		case '>': strbuf_addstr(out, "&gt;"); break;
		case '"': strbuf_addstr(out, "&quot;"); break;
		case '\'': strbuf_addstr(out, "&#39;"); break;
		default: strbuf_addch(out, (unsigned char)*c < 0x20 ? ' ' : *c);
		}
	}
	strbuf_release(&clean);
}

void html_text(FILE *out, const char *text)
{
	struct strbuf escaped = STRBUF_INIT;
	html_text_buf(&escaped, text);
	fputs(escaped.buf, out);
	strbuf_release(&escaped);
}
