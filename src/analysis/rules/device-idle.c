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

struct idle {
	int64_t idle, starved;        /* ns */
	size_t gaps;
	struct insight_interval longest;
};

void *rule_device_idle_begin(const struct insight_process *p)
{
	return xcalloc(p->device_count ? p->device_count : 1, sizeof(struct idle));
}

/* The gaps between busy intervals inside the kernels' window, and the part of each
 * before the work that ends it was enqueued (its API call returned). */
void rule_device_idle_busy(void *state, const struct insight_process *p,
			   const struct insight_device *d, const struct insight_interval *b,
			   const struct insight_activity *next)
{
	(void)p;
	struct idle *tally = (struct idle *)state + d->index;
	if (!next || b->end < d->kernels_from || next->start > d->kernels_to ||
	    d->kernels_from >= d->kernels_to)
		return;
	struct insight_interval g = { b->end, next->start };
	int64_t enqueued = next->call ? next->call->end : g.start; /* unknown: not the host's */
	int64_t until = enqueued < g.end ? enqueued : g.end;
	tally->starved += until > g.start ? until - g.start : 0;
	tally->idle += g.end - g.start;
	if (g.end - g.start > tally->longest.end - tally->longest.start)
		tally->longest = g;
	tally->gaps++;
}

void rule_device_idle_finish(void *state, const struct insight_process *p, struct findings *out)
{
	for (size_t i = 0; i < p->device_count; i++) {
		const struct insight_device *d = &p->devices[i];
		const struct idle *tally = (struct idle *)state + i;
		int64_t first = d->kernels_from, last = d->kernels_to, window = last - first;
		if (first >= last || tally->starved < IDLE_MIN_NS ||
		    (double)tally->starved < IDLE_MIN_SHARE * (double)window)
			continue;
		struct finding *f = finding_add(out, "device-idle", p, d, tally->idle);
		strbuf_addf(&f->what, "%s was idle ", d->label);
		insight_duration(&f->what, tally->idle);
		strbuf_addf(&f->what, " between its first and last kernel, %.1f %% of that time, in "
				      "%zu gaps; for ", 100.0 * (double)tally->idle / (double)window, tally->gaps);
		insight_duration(&f->what, tally->starved);
		strbuf_addstr(&f->what, " of it the host had not yet enqueued the next work");
		strbuf_addstr(&f->evidence, "kernels from +");
		insight_duration(&f->evidence, first - p->start);
		strbuf_addstr(&f->evidence, " to +");
		insight_duration(&f->evidence, last - p->start);
		strbuf_addstr(&f->evidence, " (since the process started)\nlongest gap: ");
		insight_duration(&f->evidence, tally->longest.end - tally->longest.start);
		strbuf_addstr(&f->evidence, " from +");
		insight_duration(&f->evidence, tally->longest.start - p->start);
		strbuf_addstr(&f->evidence, "\n");
		insight_describe_gaps(p, d, first, last, &f->evidence);
		strbuf_addstr(&f->advice, "keep work queued ahead of the device: enqueue the next work "
					  "before waiting for the last, wait only where the host needs a "
					  "result, and move host work that sits between launches off "
					  "the launching thread or overlap it with the device's work");
	}
	free(state);
}
