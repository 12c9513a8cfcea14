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
	struct copies *x = (struct copies *)state + d->index;
	if (a->kind != INSIGHT_COPY)
		return;
	if (a->bytes < SMALL_COPY_BYTES) {
		x->small++;
		x->small_ns += a->end - a->start;
		x->small_bytes += a->bytes;
		x->direction[a->direction == INSIGHT_HOST_TO_DEVICE ? 0
			     : a->direction == INSIGHT_DEVICE_TO_HOST ? 1 : 2]++;
	} else {
		x->large++;
		x->large_ns += a->end - a->start;
		x->large_bytes += a->bytes;
	}
}

void rule_small_copies_finish(void *state, const struct insight_process *p, struct findings *out)
{
	for (size_t i = 0; i < p->device_count; i++) {
		const struct insight_device *d = &p->devices[i];
		const struct copies *x = (struct copies *)state + i;
		if (x->small < SMALL_COPY_MIN_COUNT ||
		    (double)x->small_ns < SMALL_COPY_MIN_SHARE * (double)d->busy_ns)
			continue;
		struct finding *f = finding_add(out, "small-copies", p, d, x->small_ns);
		strbuf_addf(&f->what, "%zu copies of less than %d KiB on %s took ", x->small,
			    SMALL_COPY_BYTES / 1024, d->label);
		insight_duration(&f->what, x->small_ns);
		strbuf_addf(&f->what, " (%.1f %% of its busy time) for %" PRId64 " bytes",
			    100.0 * (double)x->small_ns / (double)d->busy_ns, x->small_bytes);
		strbuf_addf(&f->evidence, "host to device %zu, device to host %zu, other %zu; "
					  "%.0f bytes and ", x->direction[0], x->direction[1],
			    x->direction[2], (double)x->small_bytes / (double)x->small);
		insight_duration(&f->evidence, x->small_ns / (int64_t)x->small);
		strbuf_addf(&f->evidence, " per copy: %.3f GB/s",
			    x->small_ns ? (double)x->small_bytes / (double)x->small_ns : 0);
		if (x->large && x->large_ns > 0)
			strbuf_addf(&f->evidence, " (its %zu larger copies: %.3f GB/s)", x->large,
				    (double)x->large_bytes / (double)x->large_ns);
		strbuf_addstr(&f->evidence, "\n");
		strbuf_addstr(&f->advice, "pack the small transfers into one buffer and copy it "
					  "at once, keep data on the device between kernels, or map "
					  "host memory that the kernels read directly");
	}
	free(state);
}
