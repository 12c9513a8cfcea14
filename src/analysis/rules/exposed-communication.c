/* Rule exposed-communication: a device's collective-communication kernels (NCCL's) that
 * ran with no compute kernel beside them on the device, for a large share of its kernels'
 * span: time a training step waits for gradients or activations to arrive, which
 * overlapping communication with compute would hide (analysis/communication.h). */
#include <inttypes.h>
#include <stdlib.h>

#include "analysis/communication.h"
#include "analysis/insight.h"

/* The exposed time must be at least EXPOSED_MIN_NS and EXPOSED_MIN_SHARE of the span
 * from the device's first kernel to its last. */
#define EXPOSED_MIN_NS 1000000
#define EXPOSED_MIN_SHARE 0.05

void *rule_exposed_communication_begin(const struct insight_process *p)
{
	return xcalloc(p->device_count ? p->device_count : 1, sizeof(struct overlap_sweep));
}

void rule_exposed_communication_item(void *state, const struct insight_process *p,
				     const struct insight_device *d,
				     const struct insight_activity *a)
{
	(void)p;
	if (a->kind == INSIGHT_KERNEL)
		overlap_sweep_add((struct overlap_sweep *)state + d->index, a->start, a->end,
				  communication_kernel(a->name));
}

void rule_exposed_communication_finish(void *state, const struct insight_process *p,
				       struct findings *out)
{
	for (size_t i = 0; i < p->device_count; i++) {
		const struct insight_device *d = &p->devices[i];
		struct overlap_sweep *s = (struct overlap_sweep *)state + i;
		overlap_sweep_finish(s);
		int64_t exposed = s->communication_ns - s->overlapped_ns;
		int64_t span = d->kernels_to - d->kernels_from;
		if (!s->communication_kernels || exposed < EXPOSED_MIN_NS ||
		    (double)exposed < EXPOSED_MIN_SHARE * (double)span)
			continue;
		struct finding *f = finding_add(out, "exposed-communication", p, d, exposed);
		strbuf_addf(&f->what, "%s ran communication kernels alone, with no compute kernel "
				      "beside them, for ", d->label);
		insight_duration(&f->what, exposed);
		strbuf_addf(&f->what, ": %.1f %% of their ",
			    100.0 * (double)exposed / (double)s->communication_ns);
		insight_duration(&f->what, s->communication_ns);
		strbuf_addf(&f->what, ", and %.1f %% of its kernels' span ",
			    100.0 * (double)exposed / (double)span);
		insight_duration(&f->what, span);
		strbuf_addf(&f->evidence, "%" PRIu64 " communication kernels ran ",
			    s->communication_kernels);
		insight_duration(&f->evidence, s->communication_ns);
		strbuf_addstr(&f->evidence, ", overlapped with compute for ");
		insight_duration(&f->evidence, s->overlapped_ns);
		strbuf_addf(&f->evidence, "\n%" PRIu64 " compute kernels ran ", s->compute_kernels);
		insight_duration(&f->evidence, s->compute_ns);
		/* the compute not already beside communication is what could hide the rest */
		int64_t free_compute = s->compute_ns - s->overlapped_ns;
		strbuf_addstr(&f->evidence, "; overlapping could hide up to ");
		insight_duration(&f->evidence, exposed < free_compute ? exposed : free_compute);
		strbuf_addstr(&f->evidence, " of the exposed time\n");
		strbuf_addstr(&f->advice, "overlap communication with compute: launch the collectives "
					  "on their own stream as soon as their inputs are ready "
					  "(gradient buckets: DistributedDataParallel's bucket_cap_mb, "
					  "FSDP's backward_prefetch), wait for them only where their "
					  "result is needed, and keep compute queued meanwhile");
	}
	free(state);
}
