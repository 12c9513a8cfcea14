/* Rule pageable-copies: copies between the device and pageable host memory (CUDA says
 * the memory kind): the driver stages them through a pinned buffer, so they run at a
 * fraction of the bus's bandwidth and cannot overlap with kernels. */
#include <inttypes.h>

#include "analysis/insight.h"

/* Together at least PAGEABLE_MIN_NS, or PAGEABLE_MIN_SHARE of the device's busy time. */
#define PAGEABLE_MIN_NS 1000000
#define PAGEABLE_MIN_SHARE 0.05

void rule_pageable_copies(const struct insight_process *p, struct findings *out)
{
	for (size_t i = 0; i < p->device_count; i++) {
		const struct insight_device *d = &p->devices[i];
		size_t count = 0;
		int64_t ns = 0, bytes = 0;
		const char *name = NULL;
		for (size_t k = 0; k < d->count; k++) {
			const struct insight_activity *a = &d->items[k];
			int host_kind = a->direction == INSIGHT_HOST_TO_DEVICE ? a->src_memory_kind
					: a->direction == INSIGHT_DEVICE_TO_HOST ? a->dst_memory_kind : 0;
			if (a->kind != INSIGHT_COPY || host_kind != INSIGHT_PAGEABLE)
				continue;
			count++;
			ns += a->end - a->start;
			bytes += a->bytes;
			name = a->name;
		}
		if (!count || (ns < PAGEABLE_MIN_NS && (double)ns < PAGEABLE_MIN_SHARE * (double)d->busy_ns))
			continue;
		struct finding *f = finding_add(out, "pageable-copies", p, d, ns);
		strbuf_addf(&f->what, "%zu copies between %s and pageable host memory took ", count,
			    d->label);
		insight_duration(&f->what, ns);
		strbuf_addf(&f->what, " for %" PRId64 " bytes (%.3f GB/s)", bytes,
			    ns ? (double)bytes / (double)ns : 0);
		strbuf_addf(&f->evidence, "made by %s, among others\n", *name ? name : "?");
		strbuf_addstr(&f->advice, "allocate the host buffers pinned (cudaMallocHost, "
					  "cudaHostAlloc) or pin them (cudaHostRegister), then copy "
					  "with cudaMemcpyAsync so that copies overlap with kernels");
	}
}
