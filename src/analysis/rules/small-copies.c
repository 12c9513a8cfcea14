/* Rule small-copies: many small copies whose fixed cost per copy dominates: together
 * they hold the device for a good share of its busy time while moving little data. */
#include <inttypes.h>
#include <stdlib.h>

#include "analysis/insight.h"

/* A copy below SMALL_COPY_BYTES is small; the rule wants at least SMALL_COPY_MIN_COUNT
 * of them on a device, together at least SMALL_COPY_MIN_SHARE of its busy time. */
#define SMALL_COPY_BYTES (64 * 1024)
#define SMALL_COPY_MIN_COUNT 100
#define SMALL_COPY_MIN_SHARE 0.1

struct copies {
	size_t small, large;
	int64_t small_ns, small_bytes, large_ns, large_bytes;
	size_t direction[3];          /* small ones: host to device, device to host, other */
};

void *rule_small_copies_begin(const struct insight_process *p)
{
	return xcalloc(p->device_count ? p->device_count : 1, sizeof(struct copies));
}

void rule_small_copies_item(void *state, const struct insight_process *p,
			    const struct insight_device *d, const struct insight_activity *a)
{
	(void)p;
	struct copies *tally = (struct copies *)state + d->index;
	if (a->kind != INSIGHT_COPY)
		return;
	if (a->bytes < SMALL_COPY_BYTES) {
		tally->small++;
		tally->small_ns += a->end - a->start;
		tally->small_bytes += a->bytes;
		tally->direction[a->direction == INSIGHT_HOST_TO_DEVICE ? 0
			     : a->direction == INSIGHT_DEVICE_TO_HOST ? 1 : 2]++;
	} else {
		tally->large++;
		tally->large_ns += a->end - a->start;
		tally->large_bytes += a->bytes;
	}
}

void rule_small_copies_finish(void *state, const struct insight_process *p, struct findings *out)
{
	for (size_t i = 0; i < p->device_count; i++) {
		const struct insight_device *d = &p->devices[i];
		const struct copies *tally = (struct copies *)state + i;
		if (tally->small < SMALL_COPY_MIN_COUNT ||
		    (double)tally->small_ns < SMALL_COPY_MIN_SHARE * (double)d->busy_ns)
			continue;
		struct finding *f = finding_add(out, "small-copies", p, d, tally->small_ns);
		strbuf_addf(&f->what, "%zu copies of less than %d KiB on %s took ", tally->small,
			    SMALL_COPY_BYTES / 1024, d->label);
		insight_duration(&f->what, tally->small_ns);
		strbuf_addf(&f->what, " (%.1f %% of its busy time) for %" PRId64 " bytes",
			    100.0 * (double)tally->small_ns / (double)d->busy_ns,
			    tally->small_bytes);
		strbuf_addf(&f->evidence, "host to device %zu, device to host %zu, other %zu; "
					  "%.0f bytes and ", tally->direction[0],
			    tally->direction[1], tally->direction[2],
			    (double)tally->small_bytes / (double)tally->small);
		insight_duration(&f->evidence, tally->small_ns / (int64_t)tally->small);
		strbuf_addf(&f->evidence, " per copy: %.3f GB/s",
			    tally->small_ns ? (double)tally->small_bytes / (double)tally->small_ns
					    : 0);
		if (tally->large && tally->large_ns > 0)
			strbuf_addf(&f->evidence, " (its %zu larger copies: %.3f GB/s)",
				    tally->large, (double)tally->large_bytes / (double)tally->large_ns);
		strbuf_addstr(&f->evidence, "\n");
		strbuf_addstr(&f->advice, "pack the small transfers into one buffer and copy it "
					  "at once, keep data on the device between kernels, or map "
					  "host memory that the kernels read directly");
	}
	free(state);
}
