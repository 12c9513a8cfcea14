/* Numbers as a person reads them: 3 significant digits and a unit that keeps them short
 * (1.23 ms, 83.5 %, 1.2 GB), for the HTML report's tables and pictures. The exact values
 * stay in the outputs meant for programs (CSV, JSON, the database). */
#ifndef GPUPROF_UTIL_UNITS_H
#define GPUPROF_UTIL_UNITS_H

#include "util/strbuf.h"

/* A duration: "812 ns", "4.52 us", "1.23 ms", "12.3 s". */
void units_duration(struct strbuf *out, double ns);

/* Bytes, decimal (as bandwidths are): "512 B", "4.10 kB", "1.20 GB". */
void units_bytes(struct strbuf *out, double bytes);

/* A value of a metric in its unit ("%", "bytes", "W", "MHz", ...): percentages with one
 * decimal, bytes as units_bytes(), others with 3 significant digits and k, M, G. */
void units_value(struct strbuf *out, double value, const char *unit);

#endif
