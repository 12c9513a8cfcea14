/* What every table of gpuprof compute analyze uses (see analyze-internal.h): the
 * dispatches a request keeps, its kernels by time, and how a number is shown. Below
 * analyze.c, analyze-roofline.c and analyze-pc.c. */
#include "compute/analyze-internal.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/sort.h"

int analyze_parse_dispatch(const char *text, long long *from, long long *to, struct error *err)
{
	char *end;
	errno = 0;
	*from = strtoll(text, &end, 10);
	*to = *from;
	if (*end == ':') {
		const char *second = end + 1;
		*to = strtoll(second, &end, 10);
		if (end == second)
			*to = -1;
	}
	if (end == text || *end || errno || *from < 1 || (*to != -1 && *to < *from))
		return error_set(err, "-d %s: a dispatch is a number from 1, or a range FROM:TO "
				      "(FROM: for every one from FROM)", text);
	return 0;
}

int analyze_dispatch_kept(const struct analyze_request *r, const struct workload_dispatch *d)
{
	int kernel = !r->kernel_count, id = !r->dispatch_count;
	for (int i = 0; i < r->kernel_count && !kernel; i++)
		kernel = strstr(d->kernel, r->kernels[i]) != NULL;
	for (int i = 0; i < r->dispatch_count && !id; i++) {
		long long from, to;
		struct error err;
		if (analyze_parse_dispatch(r->dispatches[i], &from, &to, &err) == 0)
			id = d->dispatch_id >= from && (to < 0 || d->dispatch_id <= to);
	}
	return kernel && id;
}

/* Text for people: two decimals; CSV and JSON for scripts: every digit. */
int analyze_decimals(const struct analyze_request *r)
{
	return r->format == TABLE_TEXT || r->format == TABLE_MD ? 2 : -1;
}

void analyze_cell(const struct analyze_request *r, struct table *t, double v, int defined)
{
	if (defined && isfinite(v))
		table_double(t, v, analyze_decimals(r));
	else
		table_null(t);
}

static int by_sum(const void *a, const void *b)
{
	const struct kernel_time *x = a, *y = b;
	if (x->sum != y->sum)
		return x->sum < y->sum ? 1 : -1;
	return strcmp(x->name, y->name);
}

/* The kernels of the dispatches kept, by total time; returns how many. */
size_t analyze_kernel_times(const struct analyze_request *r, const struct workload *w,
			   struct kernel_time **out)
{
	struct kernel_time *k = NULL;
	size_t n = 0;
	for (size_t i = 0; i < w->count; i++) {
		const struct workload_dispatch *d = &w->dispatches[i];
		if (!analyze_dispatch_kept(r, d))
			continue;
		size_t j = 0;
		while (j < n && strcmp(k[j].name, d->kernel))
			j++;
		if (j == n) {
			k = xrealloc(k, (n + 1) * sizeof(*k));
			k[n++] = (struct kernel_time){ d->kernel, 0, INFINITY, -INFINITY, 0 };
		}
		double t;
		if (workload_duration(w, d, &t))
			t = 0; /* counted, with no time */
		k[j].sum += t;
		k[j].min = fmin(k[j].min, t);
		k[j].max = fmax(k[j].max, t);
		k[j].count++;
	}
	sort_array(k, n, sizeof(*k), by_sum);
	*out = k;
	return n;
}
