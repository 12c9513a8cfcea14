/* Rule copy-kernel-serial: copies interleaved with kernels on one in-order queue (a loop
 * of upload, compute, download): the queue runs them one after the other, while on
 * separate queues the next chunk's copy could run during this chunk's kernel. */
#include <inttypes.h>
#include <stdlib.h>

#include "analysis/insight.h"

/* At least SERIAL_MIN_INTERLEAVED copies between the queue's first and last kernel;
 * copies and kernels each at least SERIAL_MIN_SHARE of the queue's time; and copies and
 * kernels overlapping on the device for less than SERIAL_MAX_OVERLAP of the smaller. */
#define SERIAL_MIN_INTERLEAVED 4
#define SERIAL_MIN_SHARE 0.1
#define SERIAL_MAX_OVERLAP 0.01

/* The time the device ran a copy and a kernel at once. */
static int64_t overlap(const struct insight_device *d)
{
	int64_t total = 0, copy_end = INT64_MIN, kernel_end = INT64_MIN;
	for (size_t k = 0; k < d->count; k++) {
		const struct insight_activity *a = &d->items[k];
		int64_t *other = a->kind == INSIGHT_KERNEL ? &copy_end : &kernel_end;
		int64_t *same = a->kind == INSIGHT_KERNEL ? &kernel_end : &copy_end;
		if (a->kind == INSIGHT_OTHER_MEMORY)
			continue;
		if (*other > a->start)
			total += (*other < a->end ? *other : a->end) - a->start;
		if (a->end > *same)
			*same = a->end;
	}
	return total;
}

void rule_copy_kernel_serial(const struct insight_process *p, struct findings *out)
{
	for (size_t i = 0; i < p->device_count; i++) {
		const struct insight_device *d = &p->devices[i];
		int64_t together = overlap(d);
		/* each queue of the device in turn */
		int64_t *queues;
		size_t queue_count = insight_device_queues(d, &queues);
		for (size_t q = 0; q < queue_count; q++) {
			int64_t queue = queues[q];
			size_t k = 0;
			int64_t first = INT64_MAX, last = INT64_MIN, copy_ns = 0, kernel_ns = 0;
			size_t kernels = 0, copies = 0, interleaved = 0;
			for (size_t j = k; j < d->count; j++) {
				const struct insight_activity *a = &d->items[j];
				if (a->queue != queue || a->kind != INSIGHT_KERNEL)
					continue;
				first = a->start < first ? a->start : first;
				last = a->end > last ? a->end : last;
				kernels++;
				kernel_ns += a->end - a->start;
			}
			for (size_t j = k; j < d->count; j++) {
				const struct insight_activity *a = &d->items[j];
				if (a->queue != queue || a->kind != INSIGHT_COPY)
					continue;
				copies++;
				copy_ns += a->end - a->start;
				interleaved += a->start > first && a->end < last;
			}
			int64_t smaller = copy_ns < kernel_ns ? copy_ns : kernel_ns;
			int64_t total = copy_ns + kernel_ns;
			if (interleaved < SERIAL_MIN_INTERLEAVED ||
			    (double)smaller < SERIAL_MIN_SHARE * (double)total ||
			    (double)together >= SERIAL_MAX_OVERLAP * (double)smaller)
				continue;
			struct finding *f = finding_add(out, "copy-kernel-serial", p, d, smaller);
			strbuf_addf(&f->what, "queue %" PRId64 " of %s ran %zu copies (", queue, d->label,
				    copies);
			insight_duration(&f->what, copy_ns);
			strbuf_addf(&f->what, ") and %zu kernels (", kernels);
			insight_duration(&f->what, kernel_ns);
			strbuf_addstr(&f->what, ") one after the other; overlapping them could hide up "
						"to ");
			insight_duration(&f->what, smaller);
			strbuf_addf(&f->evidence, "%zu of the copies came between the queue's first and "
						  "last kernel; copies and kernels overlapped on the device "
						  "for ", interleaved);
			insight_duration(&f->evidence, together);
			strbuf_addstr(&f->evidence, "\n");
			strbuf_addstr(&f->advice, "split the data into chunks and put copies and kernels "
						  "on separate queues (streams), ordered by events, so the "
						  "next chunk's copy runs during this chunk's kernel (with "
						  "pinned host memory in CUDA)");
		}
		free(queues);
	}
}
