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

void rule_small_copies(const struct insight_process *p, struct findings *out)
{
	for (size_t i = 0; i < p->device_count; i++) {
		const struct insight_device *d = &p->devices[i];
		size_t small = 0, large = 0;
		int64_t small_ns = 0, small_bytes = 0, large_ns = 0, large_bytes = 0;
		size_t direction[3] = { 0, 0, 0 }; /* host to device, device to host, other */
		for (size_t k = 0; k < d->count; k++) {
			const struct insight_activity *a = &d->items[k];
			if (a->kind != INSIGHT_COPY)
				continue;
			if (a->bytes < SMALL_COPY_BYTES) {
				small++;
				small_ns += a->end - a->start;
				small_bytes += a->bytes;
				direction[a->direction == INSIGHT_HOST_TO_DEVICE ? 0
					  : a->direction == INSIGHT_DEVICE_TO_HOST ? 1 : 2]++;
			} else {
				large++;
				large_ns += a->end - a->start;
				large_bytes += a->bytes;
			}
		}
		if (small < SMALL_COPY_MIN_COUNT ||
		    (double)small_ns < SMALL_COPY_MIN_SHARE * (double)d->busy_ns)
			continue;
		struct finding *f = finding_add(out, "small-copies", p, d, small_ns);
		strbuf_addf(&f->what, "%zu copies of less than %d KiB on %s took ", small,
			    SMALL_COPY_BYTES / 1024, d->label);
		insight_duration(&f->what, small_ns);
		strbuf_addf(&f->what, " (%.1f %% of its busy time) for %" PRId64 " bytes",
			    100.0 * (double)small_ns / (double)d->busy_ns, small_bytes);
		strbuf_addf(&f->evidence, "host to device %zu, device to host %zu, other %zu; "
					  "%.0f bytes and ", direction[0], direction[1], direction[2],
			    (double)small_bytes / (double)small);
		insight_duration(&f->evidence, small_ns / (int64_t)small);
		strbuf_addf(&f->evidence, " per copy: %.3f GB/s", small_ns ? (double)small_bytes / (double)small_ns : 0);
		if (large && large_ns > 0)
			strbuf_addf(&f->evidence, " (its %zu larger copies: %.3f GB/s)", large,
				    (double)large_bytes / (double)large_ns);
		strbuf_addstr(&f->evidence, "\n");
		strbuf_addstr(&f->advice, "pack the small transfers into one buffer and copy it "
					  "at once, keep data on the device between kernels, or map "
					  "host memory that the kernels read directly");
	}
}
