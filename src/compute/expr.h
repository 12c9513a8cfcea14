/* The expressions of the metric catalog (gpuprof compute): arithmetic over CUPTI metric
 * names and device constants, such as
 *     dram__bytes_read.sum + dram__bytes_write.sum
 *     100 * sm__cycles_active.avg / gpc__cycles_elapsed.max
 *     2 * device.fp32_fma_per_cycle * device.sm_count * device.sm_clock_hz
 * Numbers (123, 1.5, 1e9), names ([A-Za-z_][A-Za-z0-9_.]*), + - * /, unary -, parentheses,
 * min(a, b) and max(a, b). A value that cannot be had is N/A, never a number: a name
 * without a value, a division by zero, a result that is not finite. */
#ifndef GPUPROF_COMPUTE_EXPR_H
#define GPUPROF_COMPUTE_EXPR_H

#include "util/error.h"

#define EXPR_MAX_DEPTH 64 /* nesting of parentheses and operators */

struct expr;

/* Parses text; NULL with err set (where and why) when it is not an expression. */
struct expr *expr_parse(const char *text, struct error *err);
void expr_free(struct expr *e);

/* A name's value: returns 0 and sets *value, or -1 when it has none (N/A). */
typedef int (*expr_lookup)(const char *name, double *value, void *arg);

/* Evaluates e: 0 and *out, or -1 when the result is N/A. */
int expr_eval(const struct expr *e, expr_lookup lookup, void *arg, double *out);

/* Calls fn once for each name e uses, in the order they first appear. */
void expr_names(const struct expr *e, void (*fn)(const char *name, void *arg), void *arg);

#endif
