/* Rule launch-bound: many kernels, each shorter than the idle time before it, on a device
 * busy for less than half the time from its first kernel to its last: launching sets the
 * pace (the host's API calls, or the runtime's own cost per command), not the kernels.
 * Kernels whose thread waited for them before launching again are left to
 * sync-per-launch: there the waits set the pace. */
#include <inttypes.h>
#include <stdlib.h>

#include "analysis/insight.h"

/* At least this many kernels; the device busy for less than this share of the kernels'
 * window; the median kernel shorter than the median idle time before a kernel. */
#define LAUNCH_MIN_KERNELS 100
#define LAUNCH_MAX_BUSY_SHARE 0.5

void rule_launch_bound(const struct insight_process *p, struct findings *out)
{
	for (size_t i = 0; i < p->device_count; i++) {
		const struct insight_device *d = &p->devices[i];
		int64_t *durations = xcalloc(d->count ? d->count : 1, sizeof(*durations));
		int64_t *before = xcalloc(d->count ? d->count : 1, sizeof(*before));
		int64_t first = INT64_MAX, last = INT64_MIN, idle = 0;
		size_t n = 0, b = 0;
		for (size_t k = 0; k < d->count; k++) { /* sorted by start */
			const struct insight_activity *a = &d->items[k];
			const struct insight_call *c = insight_call_of(p, a);
			if (a->kind != INSIGHT_KERNEL || (c && c->waited))
				continue;
			while (b < d->busy_count && d->busy[b].end < a->start)
				b++;
			/* the idle time before it: when it starts a busy interval after the first */
			int64_t gap = n && b < d->busy_count && b > 0 && d->busy[b].start == a->start
				      ? a->start - d->busy[b - 1].end : 0;
			durations[n] = a->end - a->start;
			before[n++] = gap;
			idle += gap;
			first = a->start < first ? a->start : first;
			last = a->end > last ? a->end : last;
		}
		int64_t duration = insight_median(durations, n), wait = insight_median(before, n);
		free(durations);
		free(before);
		if (n < LAUNCH_MIN_KERNELS)
			continue;
		int64_t window = last - first, busy = 0;
		for (size_t k = 0; k < d->busy_count; k++) {
			int64_t s = d->busy[k].start > first ? d->busy[k].start : first;
			int64_t e = d->busy[k].end < last ? d->busy[k].end : last;
			busy += e > s ? e - s : 0;
		}
		if ((double)busy >= LAUNCH_MAX_BUSY_SHARE * (double)window ||
		    duration >= wait)
			continue;
		struct finding *f = finding_add(out, "launch-bound", p, d, idle);
		strbuf_addf(&f->what, "%zu kernels on %s ran ", n, d->label);
		insight_duration(&f->what, duration);
		strbuf_addstr(&f->what, " each (median) after the device had idled ");
		insight_duration(&f->what, wait);
		strbuf_addf(&f->what, " for them: it was busy %.1f %% of the time from the first to "
				      "the last", 100.0 * (double)busy / (double)window);
		strbuf_addstr(&f->evidence, "kernels from +");
		insight_duration(&f->evidence, first - p->start);
		strbuf_addstr(&f->evidence, " to +");
		insight_duration(&f->evidence, last - p->start);
		strbuf_addstr(&f->evidence, "; idle before them: ");
		insight_duration(&f->evidence, idle);
		strbuf_addstr(&f->evidence, "\n");
		strbuf_addstr(&f->advice, "give each launch more work: fuse small kernels, process "
					  "several items per launch, or record the sequence once and "
					  "replay it (CUDA graphs)");
	}
}
