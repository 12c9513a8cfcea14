/* Rule pageable-copies: copies between the device and pageable host memory (CUDA says
 * the memory kind): the driver stages them through a pinned buffer, so they run at a
 * fraction of the bus's bandwidth and cannot overlap with kernels. */
#include <inttypes.h>
#include <stdlib.h>

#include "analysis/insight.h"

/* Together at least PAGEABLE_MIN_NS, or PAGEABLE_MIN_SHARE of the device's busy time. */
#define PAGEABLE_MIN_NS 1000000
#define PAGEABLE_MIN_SHARE 0.05

struct pageable {
	size_t count;
	int64_t ns, bytes;
	const char *name;             /* the last one's function */
};

void *rule_pageable_copies_begin(const struct insight_process *p)
{
	return xcalloc(p->device_count ? p->device_count : 1, sizeof(struct pageable));
}

void rule_pageable_copies_item(void *state, const struct insight_process *p,
			       const struct insight_device *d, const struct insight_activity *a)
{
	(void)p;
	struct pageable *tally = (struct pageable *)state + d->index;
	int host_kind = a->direction == INSIGHT_HOST_TO_DEVICE ? a->src_memory_kind
			: a->direction == INSIGHT_DEVICE_TO_HOST ? a->dst_memory_kind : 0;
	if (a->kind != INSIGHT_COPY || host_kind != INSIGHT_PAGEABLE)
		return;
	tally->count++;
	tally->ns += a->end - a->start;
	tally->bytes += a->bytes;
	tally->name = a->name;
}

void rule_pageable_copies_finish(void *state, const struct insight_process *p,
				 struct findings *out)
{
	for (size_t i = 0; i < p->device_count; i++) {
		const struct insight_device *d = &p->devices[i];
		const struct pageable *tally = (struct pageable *)state + i;
		if (!tally->count || (tally->ns < PAGEABLE_MIN_NS &&
				  (double)tally->ns < PAGEABLE_MIN_SHARE * (double)d->busy_ns))
			continue;
		struct finding *f = finding_add(out, "pageable-copies", p, d, tally->ns);
		strbuf_addf(&f->what, "%zu copies between %s and pageable host memory took ",
			    tally->count, d->label);
		insight_duration(&f->what, tally->ns);
		strbuf_addf(&f->what, " for %" PRId64 " bytes (%.3f GB/s)", tally->bytes,
			    tally->ns ? (double)tally->bytes / (double)tally->ns : 0);
		strbuf_addf(&f->evidence, "made by %s, among others\n",
			    *tally->name ? tally->name : "?");
		strbuf_addstr(&f->advice, "allocate the host buffers pinned (cudaMallocHost, "
					  "cudaHostAlloc) or pin them (cudaHostRegister), then copy "
					  "with cudaMemcpyAsync so that copies overlap with kernels");
	}
	free(state);
}
