/* Rule device-idle: a device that sat idle between its kernels, for a large share of the
 * time from its first kernel to its last, because the host had not yet enqueued the next
 * work (not because the runtime was slow to start work it already had); and what the
 * host was doing meanwhile: the API calls its threads were in, the time in none (the
 * host's own code), and the functions sampled then. */
#include <inttypes.h>
#include <stdlib.h>

#include "analysis/insight.h"

/* The idle time that the host caused (the part of each gap before the next work was
 * enqueued) must be at least this share of the kernels' window, and at least
 * IDLE_MIN_NS. */
#define IDLE_MIN_SHARE 0.25
#define IDLE_MIN_NS 1000000

void rule_device_idle(const struct insight_process *p, struct findings *out)
{
	for (size_t i = 0; i < p->device_count; i++) {
		const struct insight_device *d = &p->devices[i];
		int64_t first = INT64_MAX, last = INT64_MIN;
		for (size_t k = 0; k < d->count; k++)
			if (d->items[k].kind == INSIGHT_KERNEL) {
				first = d->items[k].start < first ? d->items[k].start : first;
				last = d->items[k].end > last ? d->items[k].end : last;
			}
		if (first >= last)
			continue;
		/* the gaps between busy intervals inside [first, last], and the part of each
		 * before the work that ends it was enqueued (its API call returned) */
		struct insight_interval *gaps = xcalloc(d->busy_count ? d->busy_count : 1,
							sizeof(*gaps));
		size_t count = 0, longest = 0, next = 0;
		int64_t idle = 0, starved = 0;
		for (size_t b = 0; b + 1 < d->busy_count; b++) {
			if (d->busy[b].end < first || d->busy[b + 1].start > last)
				continue;
			struct insight_interval g = { d->busy[b].end, d->busy[b + 1].start };
			while (next < d->count && d->items[next].start < g.end)
				next++;
			const struct insight_call *c = next < d->count
						       ? insight_call_of(p, &d->items[next]) : NULL;
			int64_t enqueued = c ? c->end : g.start; /* unknown: not the host's doing */
			starved += (enqueued < g.end ? enqueued : g.end) - g.start > 0
				   ? (enqueued < g.end ? enqueued : g.end) - g.start : 0;
			idle += g.end - g.start;
			if (g.end - g.start > gaps[longest].end - gaps[longest].start)
				longest = count;
			gaps[count++] = g;
		}
		int64_t window = last - first;
		if (starved < IDLE_MIN_NS || (double)starved < IDLE_MIN_SHARE * (double)window) {
			free(gaps);
			continue;
		}
		struct finding *f = finding_add(out, "device-idle", p, d, idle);
		strbuf_addf(&f->what, "%s was idle ", d->label);
		insight_duration(&f->what, idle);
		strbuf_addf(&f->what, " between its first and last kernel, %.1f %% of that time, in "
				      "%zu gaps; for ", 100.0 * (double)idle / (double)window, count);
		insight_duration(&f->what, starved);
		strbuf_addstr(&f->what, " of it the host had not yet enqueued the next work");
		strbuf_addstr(&f->evidence, "kernels from +");
		insight_duration(&f->evidence, first - p->start);
		strbuf_addstr(&f->evidence, " to +");
		insight_duration(&f->evidence, last - p->start);
		strbuf_addstr(&f->evidence, " (since the process started)\nlongest gap: ");
		insight_duration(&f->evidence, gaps[longest].end - gaps[longest].start);
		strbuf_addstr(&f->evidence, " from +");
		insight_duration(&f->evidence, gaps[longest].start - p->start);
		strbuf_addstr(&f->evidence, "\n");
		insight_describe_gaps(p, gaps, count, &f->evidence);
		strbuf_addstr(&f->advice, "keep work queued ahead of the device: enqueue the next work "
					  "before waiting for the last, wait only where the host needs a "
					  "result, and move host work that sits between launches off "
					  "the launching thread or overlap it with the device's work");
		free(gaps);
	}
}
