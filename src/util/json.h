/* Writing JSON text: strings escaped and always valid UTF-8, numbers without printf. */
#ifndef GPUPROF_UTIL_JSON_H
#define GPUPROF_UTIL_JSON_H

#include <stdint.h>

#include "util/strbuf.h"

/* Appends s as a JSON string: quotes, backslashes, control characters and '<', '>', '&'
 * escaped, and each byte that is not part of valid UTF-8 replaced by U+FFFD. */
void json_string(struct strbuf *out, const char *s);

/* Appends v in decimal. */
void json_int(struct strbuf *out, int64_t v);

/* Appends a count of nanoseconds as microseconds with three decimals ("12.345"). */
void json_microseconds(struct strbuf *out, int64_t ns);

/* Appends a double, or null when it is not finite. */
void json_double(struct strbuf *out, double v);

#endif
