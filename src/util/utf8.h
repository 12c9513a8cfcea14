/* UTF-8 checks for outputs whose readers require valid text (JSON, Perfetto's strings):
 * names taken from the profiled program (markers, command lines) may hold any bytes. */
#ifndef GPUPROF_UTIL_UTF8_H
#define GPUPROF_UTIL_UTF8_H

#include <stddef.h>

#include "util/strbuf.h"

/* The length of the valid multi-byte UTF-8 sequence at s (s[0] >= 0x80), or 0. */
size_t utf8_length(const unsigned char *s);
/* Whether the NUL-terminated s is valid UTF-8. */
int utf8_valid(const char *s);
/* Appends s to out with each byte that starts no valid sequence replaced by U+FFFD. */
void utf8_sanitize(const char *s, struct strbuf *out);

#endif
