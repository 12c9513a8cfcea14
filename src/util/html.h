/* Text for HTML pages written by gpuprof (the report, the roofline plot): every name that
 * came from a program is written through here, so that it shows as text and never as
 * markup. */
#ifndef GPUPROF_UTIL_HTML_H
#define GPUPROF_UTIL_HTML_H

#include <stdio.h>

/* text with the markup characters escaped (also for attribute values in double or
 * single quotes), control characters as spaces, invalid UTF-8 replaced by U+FFFD */
void html_text(FILE *out, const char *text);
/* The same, appended to a buffer. */
struct strbuf;
void html_text_buf(struct strbuf *out, const char *text);

#endif
