/* Findings of device memory (analysis/memory.h): allocations made and freed again within
 * 1 ms over and over (churn: costed in the time of their calls), memory never freed by
 * the end (leaks), and a peak of half the device's memory or more held mostly by one
 * allocation site (both costed in bytes, as a share of the device's peak: no time is lost to
 * them). */
#include <inttypes.h>

#include "analysis/insight.h"
#include "analysis/memory.h"

/* churn: at least CHURN_MIN allocations freed within 1 ms (memory.c's CHURN_NS) */
#define CHURN_MIN 100
/* a leak: at least LEAK_MIN_BYTES held at the end */
#define LEAK_MIN_BYTES (1u << 20)
/* a peak held by one site: a peak of at least PEAK_DEVICE_SHARE of the device's memory
 * (where it runs out), one site holding at least PEAK_SITE_SHARE of it */
#define PEAK_DEVICE_SHARE 0.5
#define PEAK_SITE_SHARE 0.5

static const char peak_share[] = "the device's memory peak";

static void sites_evidence(struct strbuf *out, const char *what,
			   const struct memory_site *sites, size_t count)
{
	for (size_t i = 0; i < count && i < 3; i++)
		strbuf_addf(out, "%s %s%s%s: %" PRIu64 " allocations, %" PRIu64 " bytes\n", what,
			    sites[i].function, *sites[i].where ? " at " : "", sites[i].where,
			    sites[i].allocations, sites[i].bytes);
}

static struct finding *memory_finding(struct findings *out, const char *rule,
				      const struct insight_process *p,
				      const struct memory_device *d, int64_t cost_ns)
{
	struct finding *f = finding_add(out, rule, p, NULL, cost_ns);
	f->device = xstrdup(d->label);
	return f;
}

static void churn(const struct insight_process *p, const struct memory_device *d,
		  struct findings *out)
{
	if (d->churn < CHURN_MIN)
		return;
	struct finding *f = memory_finding(out, "memory-churn", p, d, d->churn_ns);
	strbuf_addf(&f->what, "%" PRIu64 " allocations on %s were freed within 1 ms of being "
			      "made; ", d->churn, d->label);
	if (d->churn_ns) {
		strbuf_addstr(&f->what, "the calls that made and freed them took ");
		insight_duration(&f->what, d->churn_ns);
	} else {
		strbuf_addstr(&f->what, "their calls' time was not recorded (trace the API: -r)");
	}
	sites_evidence(&f->evidence, "made by", d->churned, d->churned_count);
	strbuf_addstr(&f->advice, "allocate once and reuse the buffers from one iteration to the "
				  "next (a pool, or a caching allocator such as PyTorch's), or "
				  "allocate in stream order (cudaMallocAsync, cudaFreeAsync), whose "
				  "pool makes a free and the next allocation cheap");
}

static void leak(const struct insight_process *p, const struct memory_device *d,
		 struct findings *out)
{
	if (d->end_bytes < LEAK_MIN_BYTES || !d->peak_bytes)
		return;
	struct finding *f = memory_finding(out, "memory-leak", p, d, 0);
	uint64_t allocations = 0;
	for (size_t i = 0; i < d->at_end_count; i++)
		allocations += d->at_end[i].allocations;
	f->cost_pct = 100.0 * (double)d->end_bytes / (double)d->peak_bytes;
	f->share_of = peak_share;
	strbuf_addf(&f->what, "%s still held %" PRIu64 " bytes in %" PRIu64 " allocations when "
			      "the recording ended, never freed (%.1f %% of its peak)", d->label,
		    d->end_bytes, allocations, f->cost_pct);
	sites_evidence(&f->evidence, "allocated by", d->at_end, d->at_end_count);
	strbuf_addstr(&f->advice, "free what these sites allocate once it is no longer needed "
				  "(clReleaseMemObject, clSVMFree, cudaFree): memory held to the end "
				  "is kept from everything else on the device, and a leak in a loop "
				  "grows until an allocation fails");
}

static void peak_site(const struct insight_process *p, const struct memory_device *d,
		      struct findings *out)
{
	if (!d->device_bytes || !d->at_peak_count ||
	    (double)d->peak_bytes < PEAK_DEVICE_SHARE * (double)d->device_bytes ||
	    (double)d->at_peak[0].bytes < PEAK_SITE_SHARE * (double)d->peak_bytes)
		return;
	const struct memory_site *s = &d->at_peak[0];
	struct finding *f = memory_finding(out, "memory-peak-site", p, d, 0);
	f->cost_pct = 100.0 * (double)s->bytes / (double)d->peak_bytes;
	f->share_of = peak_share;
	strbuf_addf(&f->what, "At its peak of %" PRIu64 " bytes (%.1f %% of its memory), %.6f s "
			      "after the process started, %s held %" PRIu64 " bytes of it (%.1f "
			      "%%) from one site: %s%s%s", d->peak_bytes,
		    100.0 * (double)d->peak_bytes / (double)d->device_bytes,
		    (double)d->peak_ns / 1e9, d->label, s->bytes, f->cost_pct, s->function,
		    *s->where ? " at " : "", s->where);
	sites_evidence(&f->evidence, "at the peak,", d->at_peak, d->at_peak_count);
	strbuf_addstr(&f->advice, "the peak takes much of the device: to lower it, "
				  "make that site's allocations smaller or shorter-lived (free them "
				  "before the next large allocation, work in smaller chunks, reuse "
				  "one buffer for what is needed one after another)");
}

void memory_findings(const struct insight_process *p, const struct memory_device *d,
		     struct findings *out)
{
	churn(p, d, out);
	leak(p, d, out);
	peak_site(p, d, out);
}
