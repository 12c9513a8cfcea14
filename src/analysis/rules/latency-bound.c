/* Rule latency-bound: kernels measured with the speed-of-light counters whose SMs and
 * memory both stay far below their peak (Nsight Compute's SpeedOfLight rule): neither
 * compute nor bandwidth limits them, latency does (too few warps in flight to hide it,
 * dependent loads, too small a grid). */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/insight.h"
#include "util/hash.h"
#include "util/sort.h"

/* Both the SMs' and memory's throughput below LATENCY_MAX_PCT % of peak (their average
 * over the kernel's measured dispatches, weighted by duration); the kernel at least
 * LATENCY_MIN_SHARE of the device's busy time. */
#define LATENCY_MAX_PCT 60.0
#define LATENCY_MIN_SHARE 0.05

struct kernel {
	const char *name;
	int64_t ns, measured_ns;
	size_t dispatches;
	double sm, memory;            /* sums of % x ns */
	size_t measured;              /* its place among the measured (first met); 0: none */
};

/* A device's kernels by name (names are interned: a name is its pointer), an
 * open-addressing index over a growing array. */
struct kernels {
	struct kernel *items;
	size_t count, measured;
	size_t *slots, size;          /* index + 1; 0: empty */
};

void *rule_latency_bound_begin(const struct insight_process *p)
{
	return xcalloc(p->device_count ? p->device_count : 1, sizeof(struct kernels));
}

static struct kernel *kernel_of(struct kernels *k, const char *name)
{
	if (2 * (k->count + 1) > k->size) {
		k->size = k->size ? 2 * k->size : 64;
		free(k->slots);
		k->slots = xcalloc(k->size, sizeof(*k->slots));
		for (size_t i = 0; i < k->count; i++) {
			size_t j = hash_int((uintptr_t)k->items[i].name) & (k->size - 1);
			while (k->slots[j])
				j = (j + 1) & (k->size - 1);
			k->slots[j] = i + 1;
		}
	}
	size_t j = hash_int((uintptr_t)name) & (k->size - 1);
	for (; k->slots[j]; j = (j + 1) & (k->size - 1))
		if (k->items[k->slots[j] - 1].name == name)
			return &k->items[k->slots[j] - 1];
	k->items = xrealloc(k->items, (k->count + 1) * sizeof(*k->items));
	k->items[k->count] = (struct kernel){ .name = name };
	k->slots[j] = ++k->count;
	return &k->items[k->count - 1];
}

void rule_latency_bound_item(void *state, const struct insight_process *p,
			     const struct insight_device *d, const struct insight_activity *a)
{
	(void)p;
	struct kernels *tally = (struct kernels *)state + d->index;
	if (a->kind != INSIGHT_KERNEL)
		return;
	struct kernel *k = kernel_of(tally, a->name);
	int64_t ns = a->end - a->start;
	k->ns += ns; /* all its dispatches' time */
	if (isnan(a->sm_pct) || isnan(a->memory_pct))
		return;
	if (!k->measured)
		k->measured = ++tally->measured;
	k->measured_ns += ns;
	k->dispatches++;
	k->sm += a->sm_pct * (double)ns;
	k->memory += a->memory_pct * (double)ns;
}

static int by_measured(const void *a, const void *b)
{
	const struct kernel *x = a, *y = b;
	return (x->measured > y->measured) - (x->measured < y->measured);
}

void rule_latency_bound_finish(void *state, const struct insight_process *p,
			       struct findings *out)
{
	for (size_t i = 0; i < p->device_count; i++) {
		const struct insight_device *d = &p->devices[i];
		struct kernels *tally = (struct kernels *)state + i;
		sort_array(tally->items, tally->count, sizeof(*tally->items), by_measured);
		for (size_t j = 0; j < tally->count; j++) {
			const struct kernel *k = &tally->items[j];
			if (!k->measured || k->measured_ns <= 0)
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
		free(tally->items);
		free(tally->slots);
	}
	free(state);
}
