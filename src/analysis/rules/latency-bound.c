/* Rule latency-bound: kernels measured with the speed-of-light counters whose SMs and
 * memory both stay far below their peak (Nsight Compute's SpeedOfLight rule): neither
 * compute nor bandwidth limits them, latency does (too few warps in flight to hide it,
 * dependent loads, too small a grid). */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/insight.h"

/* Both the SMs' and memory's throughput below LATENCY_MAX_PCT % of peak (their average
 * over the kernel's measured dispatches, weighted by duration); the kernel at least
 * LATENCY_MIN_SHARE of the device's busy time. */
#define LATENCY_MAX_PCT 60.0
#define LATENCY_MIN_SHARE 0.05

struct kernel {
	const char *name;
	int64_t ns, measured_ns;
	size_t dispatches;
	double sm, memory; /* sums of % x ns */
};

void rule_latency_bound(const struct insight_process *p, struct findings *out)
{
	for (size_t i = 0; i < p->device_count; i++) {
		const struct insight_device *d = &p->devices[i];
		struct kernel *kernels = NULL;
		size_t count = 0;
		for (size_t k = 0; k < d->count; k++) {
			const struct insight_activity *a = &d->items[k];
			if (a->kind != INSIGHT_KERNEL || isnan(a->sm_pct) || isnan(a->memory_pct))
				continue;
			size_t j = 0; /* names are interned: one pointer per name */
			while (j < count && kernels[j].name != a->name)
				j++;
			if (j == count) {
				kernels = xrealloc(kernels, (count + 1) * sizeof(*kernels));
				kernels[count++] = (struct kernel){ a->name, 0, 0, 0, 0, 0 };
			}
			int64_t ns = a->end - a->start;
			kernels[j].measured_ns += ns;
			kernels[j].dispatches++;
			kernels[j].sm += a->sm_pct * (double)ns;
			kernels[j].memory += a->memory_pct * (double)ns;
		}
		for (size_t j = 0; j < count; j++) { /* all their dispatches' time */
			for (size_t k = 0; k < d->count; k++)
				if (d->items[k].kind == INSIGHT_KERNEL && d->items[k].name == kernels[j].name)
					kernels[j].ns += d->items[k].end - d->items[k].start;
		}
		for (size_t j = 0; j < count; j++) {
			const struct kernel *k = &kernels[j];
			if (k->measured_ns <= 0)
				continue;
			double sm = k->sm / (double)k->measured_ns, memory = k->memory / (double)k->measured_ns;
			if (sm >= LATENCY_MAX_PCT || memory >= LATENCY_MAX_PCT ||
			    (double)k->ns < LATENCY_MIN_SHARE * (double)d->busy_ns)
				continue;
			double busiest = sm > memory ? sm : memory;
			/* what the kernel's time would shrink by if its busiest unit ran at peak */
			int64_t cost = (int64_t)((double)k->ns * (1 - busiest / 100));
			struct finding *f = finding_add(out, "latency-bound", p, d, cost);
			strbuf_addf(&f->what, "kernel %s (", k->name);
			insight_duration(&f->what, k->ns);
			strbuf_addf(&f->what, ") reaches %.1f %% of the SMs' peak and %.1f %% of memory's: "
					      "latency, not throughput, bounds it", sm, memory);
			strbuf_addf(&f->evidence, "%zu dispatches measured (gpuprof compute analyze -b 2 "
						  "breaks the throughputs down)\n", k->dispatches);
			strbuf_addstr(&f->advice, "hide latency with more work in flight: more warps per "
						  "SM (occupancy: registers and shared memory per block), "
						  "more independent loads per thread, a grid of more than one "
						  "wave; see the warp-state stalls (compute analyze -b 20)");
		}
		free(kernels);
	}
}
