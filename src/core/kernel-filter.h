/* The kernel filters of `gpuprof trace` and `gpuprof convert`, as rocprofv3 names them:
 * --kernel-include-regex, --kernel-exclude-regex (applied after the include) and
 * --kernel-iteration-range (which dispatches of each kept kernel name to keep, counted
 * from 1 in launch order). They apply to the kernel trace when a spool is turned into
 * outputs: kernels filtered out are in no output; copies and API calls stay. */
#ifndef GPUPROF_CORE_KERNEL_FILTER_H
#define GPUPROF_CORE_KERNEL_FILTER_H

#include <regex.h>
#include <stddef.h>
#include <stdint.h>

#include "util/error.h"

struct kernel_filter {
	int has_include, has_exclude;
	regex_t include, exclude;  /* POSIX extended, matched anywhere in the name */
	struct {
		uint64_t first, last;  /* inclusive, from 1 */
	} *ranges;
	size_t range_count;        /* 0: every iteration */
};

/* Any argument may be NULL. Errors name the option and what is wrong. */
int kernel_filter_init(struct kernel_filter *f, const char *include, const char *exclude,
		       const char *iterations, struct error *err);
void kernel_filter_release(struct kernel_filter *f);
/* Whether any filter is set. */
int kernel_filter_active(const struct kernel_filter *f);
/* Whether the kernel name passes the regular expressions. */
int kernel_filter_name(const struct kernel_filter *f, const char *name);
/* Whether iteration (from 1) of a name is kept. */
int kernel_filter_iteration(const struct kernel_filter *f, uint64_t iteration);

#endif
