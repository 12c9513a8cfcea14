/* HTML text (see html.h). */
#include "util/html.h"

#include "util/strbuf.h"
#include "util/utf8.h"

void html_text(FILE *out, const char *text)
{
	struct strbuf clean = STRBUF_INIT;
	utf8_sanitize(text ? text : "", &clean);
	for (const char *c = clean.buf; *c; c++) {
		switch (*c) {
		case '&': fputs("&amp;", out); break;
		case '<': fputs("&lt;", out); break;
		case '>': fputs("&gt;", out); break;
		case '"': fputs("&quot;", out); break;
		case '\'': fputs("&#39;", out); break;
		default:
			if ((unsigned char)*c < 0x20)
				fputc(' ', out);
			else
				fputc(*c, out);
		}
	}
	strbuf_release(&clean);
}
