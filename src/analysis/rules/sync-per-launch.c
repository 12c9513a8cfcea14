/* Rule sync-per-launch: a host thread that waits for the device after (nearly) every
 * kernel it launches, before it launches the next (the "poor device occupancy" loop of
 * the ROCm profiling guides): the device starves from each kernel's end until the host
 * has woken up and launched the next. */
#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>

#include "analysis/insight.h"

/* At least this many launches on the thread, and this share of them followed by a wait
 * before the next launch. */
#define SYNC_MIN_LAUNCHES 20
#define SYNC_MIN_SHARE 0.9

void rule_sync_per_launch(const struct insight_process *p, struct findings *out)
{
	if (!p->has_calls)
		return;
	for (size_t first = 0, end; first < p->call_count; first = end) {
		int64_t tid = p->calls[first].tid;
		insight_thread_calls(p, tid, &first, &end);
		size_t launches = 0, waited = 0;
		int64_t wait_ns = 0;
		const char *wait_name = NULL, *launch_name = NULL;
		int waiting = 0; /* the last launch was waited for: its wait comes next */
		for (size_t i = first; i < end; i++) {
			const struct insight_call *c = &p->calls[i];
			if (c->launch) {
				launches++;
				waited += c->waited;
				waiting = c->waited;
				launch_name = c->name;
			} else if (waiting && (c->blocking || insight_is_wait(c->name))) {
				wait_ns += c->end - c->start;
				wait_name = c->name;
				waiting = 0;
			}
		}
		if (launches < SYNC_MIN_LAUNCHES || (double)waited < SYNC_MIN_SHARE * (double)launches)
			continue;
		/* the cost: the device's idle time after each such kernel, until its next work */
		int64_t idle = 0;
		size_t kernels = 0;
		const struct insight_device *where = NULL;
		const char *kernel_name = NULL;
		for (size_t i = 0; i < p->device_count; i++) {
			const struct insight_device *d = &p->devices[i];
			size_t b = 0, counted = SIZE_MAX; /* each gap once */
			for (size_t k = 0; k < d->count; k++) {
				const struct insight_activity *a = &d->items[k];
				const struct insight_call *c = insight_call_of(p, a);
				if (a->kind != INSIGHT_KERNEL || !c || c->tid != tid || !c->waited)
					continue;
				while (b < d->busy_count && d->busy[b].end < a->end)
					b++;
				kernels++;
				kernel_name = a->name;
				where = d;
				if (b + 1 < d->busy_count && d->busy[b].end == a->end && b != counted) {
					idle += d->busy[b + 1].start - d->busy[b].end;
					counted = b;
				}
			}
		}
		struct finding *f = finding_add(out, "sync-per-launch", p, where, idle);
		strbuf_addf(&f->what, "thread %" PRId64 " waited for the device after %zu of its %zu "
				      "launches, each before launching the next; the device sat idle ",
			    tid, waited, launches);
		insight_duration(&f->what, idle);
		strbuf_addstr(&f->what, " after those kernels");
		strbuf_addf(&f->evidence, "launches: %s (kernel %s, %zu run)\nwaits: %s, the thread "
					  "blocked in them for ", launch_name, kernel_name ? kernel_name : "?",
			    kernels, wait_name);
		insight_duration(&f->evidence, wait_ns);
		strbuf_addstr(&f->evidence, "\n");
		strbuf_addstr(&f->advice, "launch the loop's kernels back to back and wait once after "
					  "the loop, or only where the host needs a result; order "
					  "dependent work with events or the queue's order instead of "
					  "waits; read results with non-blocking copies");
	}
}
