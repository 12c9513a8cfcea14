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

struct queue {
	int64_t first, last;          /* its kernels' window */
	int64_t copy_ns, kernel_ns;
	size_t kernels, copies, interleaved;
};

struct serial {
	int64_t together;             /* the time the device ran a copy and a kernel at once */
	int64_t copy_end, kernel_end;
	struct queue *queues;         /* by the device's queue index */
	size_t queue_count;
};

void *rule_copy_kernel_serial_begin(const struct insight_process *p)
{
	struct serial *tally = xcalloc(p->device_count ? p->device_count : 1, sizeof(*tally));
	for (size_t i = 0; i < p->device_count; i++)
		tally[i].copy_end = tally[i].kernel_end = INT64_MIN;
	return tally;
}

void rule_copy_kernel_serial_item(void *state, const struct insight_process *p,
				  const struct insight_device *d, const struct insight_activity *a)
{
	(void)p;
	struct serial *tally = (struct serial *)state + d->index;
	if (a->kind == INSIGHT_OTHER_MEMORY)
		return;
	int64_t *other = a->kind == INSIGHT_KERNEL ? &tally->copy_end : &tally->kernel_end;
	int64_t *same = a->kind == INSIGHT_KERNEL ? &tally->kernel_end : &tally->copy_end;
	if (*other > a->start)
		tally->together += (*other < a->end ? *other : a->end) - a->start;
	if (a->end > *same)
		*same = a->end;
	if (a->queue_index == SIZE_MAX)
		return;
	while (tally->queue_count <= a->queue_index) {
		tally->queues = xrealloc(tally->queues,
					 (tally->queue_count + 1) * sizeof(*tally->queues));
		tally->queues[tally->queue_count++] = (struct queue){ .first = INT64_MAX, .last = INT64_MIN };
	}
	struct queue *q = &tally->queues[a->queue_index];
	if (a->kind == INSIGHT_KERNEL) {
		q->first = a->start < q->first ? a->start : q->first;
		q->last = a->end > q->last ? a->end : q->last;
		q->kernels++;
		q->kernel_ns += a->end - a->start;
	} else {
		q->copies++;
		q->copy_ns += a->end - a->start;
	}
}

/* The second pass: the copies that came between their queue's first and last kernel. */
static void count_interleaved(void *arg, const struct insight_device *d,
			      const struct insight_activity *a)
{
	(void)d;
	struct serial *tally = arg;
	if (a->kind != INSIGHT_COPY || a->queue_index >= tally->queue_count)
		return;
	struct queue *q = &tally->queues[a->queue_index];
	q->interleaved += a->start > q->first && a->end < q->last;
}

/* Whether a queue holds the finding but for its interleaved copies. */
static int serialised(const struct serial *tally, const struct queue *q)
{
	int64_t smaller = q->copy_ns < q->kernel_ns ? q->copy_ns : q->kernel_ns;
	int64_t total = q->copy_ns + q->kernel_ns;
	return q->kernels && q->copies && (double)smaller >= SERIAL_MIN_SHARE * (double)total &&
	       (double)tally->together < SERIAL_MAX_OVERLAP * (double)smaller;
}

void rule_copy_kernel_serial_finish(void *state, const struct insight_process *p,
				    struct findings *out)
{
	for (size_t i = 0; i < p->device_count; i++) {
		const struct insight_device *d = &p->devices[i];
		struct serial *tally = (struct serial *)state + i;
		int again = 0;
		for (size_t q = 0; q < tally->queue_count; q++)
			again |= serialised(tally, &tally->queues[q]);
		if (again)
			insight_replay(p, d, count_interleaved, NULL, tally);
		for (size_t q = 0; q < tally->queue_count; q++) {
			const struct queue *k = &tally->queues[q];
			if (!serialised(tally, k) || k->interleaved < SERIAL_MIN_INTERLEAVED)
				continue;
			int64_t smaller = k->copy_ns < k->kernel_ns ? k->copy_ns : k->kernel_ns;
			struct finding *f = finding_add(out, "copy-kernel-serial", p, d, smaller);
			strbuf_addf(&f->what, "queue %" PRId64 " of %s ran %zu copies (", d->queues[q],
				    d->label, k->copies);
			insight_duration(&f->what, k->copy_ns);
			strbuf_addf(&f->what, ") and %zu kernels (", k->kernels);
			insight_duration(&f->what, k->kernel_ns);
			strbuf_addstr(&f->what, ") one after the other; overlapping them could hide up "
						"to ");
			insight_duration(&f->what, smaller);
			strbuf_addf(&f->evidence, "%zu of the copies came between the queue's first and "
						  "last kernel; copies and kernels overlapped on the device "
						  "for ", k->interleaved);
			insight_duration(&f->evidence, tally->together);
			strbuf_addstr(&f->evidence, "\n");
			strbuf_addstr(&f->advice, "split the data into chunks and put copies and kernels "
						  "on separate queues (streams), ordered by events, so the "
						  "next chunk's copy runs during this chunk's kernel (with "
						  "pinned host memory in CUDA)");
		}
		free(tally->queues);
	}
	free(state);
}
