/* Kernel filters (see kernel-filter.h). */
#include "core/kernel-filter.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

static int compile(regex_t *re, const char *pattern, const char *option, struct error *err)
{
	int rc = regcomp(re, pattern, REG_EXTENDED | REG_NOSUB);
	if (rc) {
		char message[256];
		regerror(rc, re, message, sizeof(message));
		regfree(re);
		return error_set(err, "%s: '%s' is not a valid regular expression: %s", option,
				 pattern, message);
	}
	return 0;
}

/* "[1, 2, [5-8]]", "[1-2],[3-4]", "3": numbers and inclusive ranges, brackets ignored. */
static int parse_iterations(struct kernel_filter *f, const char *text, struct error *err)
{
	const char *p = text;
	size_t alloc = 0;
	for (;;) {
		while (*p == '[' || *p == ']' || *p == ',' || isspace((unsigned char)*p))
			p++;
		if (!*p)
			break;
		char *end;
		if (!isdigit((unsigned char)*p))
			goto bad;
		uint64_t first = strtoull(p, &end, 10), last = first;
		p = end;
		while (isspace((unsigned char)*p))
			p++;
		if (*p == '-') {
			p++;
			while (isspace((unsigned char)*p))
				p++;
			if (!isdigit((unsigned char)*p))
				goto bad;
			last = strtoull(p, &end, 10);
			p = end;
		}
		if (first == 0 || last < first)
			goto bad;
		if (*p && *p != ',' && *p != ']' && !isspace((unsigned char)*p))
			goto bad;
		if (f->range_count == alloc) {
			alloc = alloc ? 2 * alloc : 8;
			void *grown = realloc(f->ranges, alloc * sizeof(*f->ranges));
			if (!grown)
				return error_set(err, "--kernel-iteration-range: out of memory");
			f->ranges = grown;
		}
		f->ranges[f->range_count].first = first;
		f->ranges[f->range_count++].last = last;
	}
	if (f->range_count)
		return 0;
bad:
	return error_set(err, "--kernel-iteration-range: '%s' is not a set of iterations "
			 "(numbers from 1 and ranges A-B, as in \"[1, 2, [5-8]]\"); the error is at "
			 "'%s'", text, *p ? p : "the end");
}

int kernel_filter_init(struct kernel_filter *f, const char *include, const char *exclude,
		       const char *iterations, struct error *err)
{
	memset(f, 0, sizeof(*f));
	if (include && compile(&f->include, include, "--kernel-include-regex", err))
		return -1;
	f->has_include = include != NULL;
	if (exclude && compile(&f->exclude, exclude, "--kernel-exclude-regex", err)) {
		kernel_filter_release(f);
		return -1;
	}
	f->has_exclude = exclude != NULL;
	if (iterations && parse_iterations(f, iterations, err)) {
		kernel_filter_release(f);
		return -1;
	}
	return 0;
}

void kernel_filter_release(struct kernel_filter *f)
{
	if (f->has_include)
		regfree(&f->include);
	if (f->has_exclude)
		regfree(&f->exclude);
	free(f->ranges);
	memset(f, 0, sizeof(*f));
}

int kernel_filter_active(const struct kernel_filter *f)
{
	return f && (f->has_include || f->has_exclude || f->range_count);
}

int kernel_filter_name(const struct kernel_filter *f, const char *name)
{
	if (f->has_include && regexec(&f->include, name, 0, NULL, 0) != 0)
		return 0;
	return !(f->has_exclude && regexec(&f->exclude, name, 0, NULL, 0) == 0);
}

int kernel_filter_iteration(const struct kernel_filter *f, uint64_t iteration)
{
	if (!f->range_count)
		return 1;
	for (size_t i = 0; i < f->range_count; i++)
		if (iteration >= f->ranges[i].first && iteration <= f->ranges[i].last)
			return 1;
	return 0;
}
