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

struct launches {
	size_t n;                     /* kernels counted */
	int64_t first, last, idle;    /* their window; the idle time before them */
	int64_t busy_closed;          /* busy time since first in the intervals closed */
	int64_t busy;                 /* busy time from first to last */
};

void *rule_launch_bound_begin(const struct insight_process *p)
{
	return xcalloc(p->device_count ? p->device_count : 1, sizeof(struct launches));
}

/* A kernel counted: not one its thread waited for. */
static int counted(const struct insight_activity *a)
{
	return a->kind == INSIGHT_KERNEL && !(a->call && a->call->waited);
}

/* The idle time before a kernel: when it starts a busy interval after the first, and
 * is not the first kernel counted (n before it). */
static int64_t idle_before(const struct insight_device *d, const struct insight_activity *a,
			   size_t n)
{
	return n && d->before_open != INT64_MIN && d->open.start == a->start
	       ? a->start - d->before_open : 0;
}

void rule_launch_bound_item(void *state, const struct insight_process *p,
			    const struct insight_device *d, const struct insight_activity *a)
{
	(void)p;
	struct launches *tally = (struct launches *)state + d->index;
	if (!counted(a))
		return;
	tally->idle += idle_before(d, a, tally->n);
	if (!tally->n++)
		tally->first = a->start; /* the stream is in order of start */
	if (tally->n == 1 || a->end > tally->last) {
		/* the busy time up to a new last: the closed intervals, and the open one's
		 * part from first to it */
		tally->last = a->end;
		int64_t from = d->open.start > tally->first ? d->open.start : tally->first;
		tally->busy = tally->busy_closed + (tally->last - from);
	}
}

void rule_launch_bound_busy(void *state, const struct insight_process *p,
			    const struct insight_device *d, const struct insight_interval *b,
			    const struct insight_activity *next)
{
	(void)p, (void)next;
	struct launches *tally = (struct launches *)state + d->index;
	if (tally->n)
		tally->busy_closed += b->end - (b->start > tally->first ? b->start : tally->first);
}

/* The second pass: the medians of the kernels' durations and of the idle time before
 * them. */
struct medians {
	size_t n;
	struct insight_median *durations, *before;
};

static void add_medians(void *arg, const struct insight_device *d, const struct insight_activity *a)
{
	struct medians *m = arg;
	if (!counted(a))
		return;
	insight_median_add(m->durations, a->end - a->start);
	insight_median_add(m->before, idle_before(d, a, m->n++));
}

void rule_launch_bound_finish(void *state, const struct insight_process *p, struct findings *out)
{
	for (size_t i = 0; i < p->device_count; i++) {
		const struct insight_device *d = &p->devices[i];
		const struct launches *tally = (struct launches *)state + i;
		int64_t window = tally->last - tally->first;
		if (tally->n < LAUNCH_MIN_KERNELS ||
		    (double)tally->busy >= LAUNCH_MAX_BUSY_SHARE * (double)window)
			continue;
		struct medians m = { 0, insight_median_begin(p), insight_median_begin(p) };
		insight_replay(p, d, add_medians, NULL, &m);
		int64_t duration = insight_median_end(m.durations);
		int64_t wait = insight_median_end(m.before);
		if (duration >= wait)
			continue;
		struct finding *f = finding_add(out, "launch-bound", p, d, tally->idle);
		strbuf_addf(&f->what, "%zu kernels on %s ran ", tally->n, d->label);
		insight_duration(&f->what, duration);
		strbuf_addstr(&f->what, " each (median) after the device had idled ");
		insight_duration(&f->what, wait);
		strbuf_addf(&f->what, " for them: it was busy %.1f %% of the time from the first to "
				      "the last", 100.0 * (double)tally->busy / (double)window);
		strbuf_addstr(&f->evidence, "kernels from +");
		insight_duration(&f->evidence, tally->first - p->start);
		strbuf_addstr(&f->evidence, " to +");
		insight_duration(&f->evidence, tally->last - p->start);
		strbuf_addstr(&f->evidence, "; idle before them: ");
		insight_duration(&f->evidence, tally->idle);
		strbuf_addstr(&f->evidence, "\n");
		strbuf_addstr(&f->advice, "give each launch more work: fuse small kernels, process "
					  "several items per launch, or record the sequence once and "
					  "replay it (CUDA graphs)");
	}
	free(state);
}
