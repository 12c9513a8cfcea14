/* Rule one-queue: several host threads sending their work to one shared queue (CUDA's
 * default stream is the usual one), where it runs one item after another although work
 * from different threads is independent: on a queue per thread it could overlap. */
#include <inttypes.h>
#include <stdlib.h>

#include "analysis/insight.h"

/* At least ONE_QUEUE_MIN_THREADS threads with ONE_QUEUE_MIN_ITEMS items each on one
 * queue, whose items never ran at once (less than ONE_QUEUE_MAX_OVERLAP of its time). */
#define ONE_QUEUE_MIN_THREADS 2
#define ONE_QUEUE_MIN_ITEMS 10
#define ONE_QUEUE_MAX_OVERLAP 0.01

struct sender {
	int64_t tid, ns;
	size_t items;
};

void rule_one_queue(const struct insight_process *p, struct findings *out)
{
	for (size_t i = 0; i < p->device_count; i++) {
		const struct insight_device *d = &p->devices[i];
		int64_t *queues;
		size_t queue_count = insight_device_queues(d, &queues);
		for (size_t q = 0; q < queue_count; q++) {
			struct sender *senders = NULL;
			size_t sender_count = 0;
			int64_t total = 0, overlapped = 0, end = INT64_MIN;
			for (size_t k = 0; k < d->count; k++) {
				const struct insight_activity *a = &d->items[k];
				if (a->queue != queues[q])
					continue;
				size_t s = 0;
				while (s < sender_count && senders[s].tid != a->tid)
					s++;
				if (s == sender_count) {
					senders = xrealloc(senders, (sender_count + 1) * sizeof(*senders));
					senders[sender_count++] = (struct sender){ a->tid, 0, 0 };
				}
				senders[s].ns += a->end - a->start;
				senders[s].items++;
				total += a->end - a->start;
				if (end > a->start)
					overlapped += (end < a->end ? end : a->end) - a->start;
				if (a->end > end)
					end = a->end;
			}
			size_t busy = 0, top = 0;
			for (size_t s = 0; s < sender_count; s++) {
				busy += senders[s].items >= ONE_QUEUE_MIN_ITEMS;
				if (senders[s].ns > senders[top].ns)
					top = s;
			}
			if (busy < ONE_QUEUE_MIN_THREADS ||
			    (double)overlapped >= ONE_QUEUE_MAX_OVERLAP * (double)total) {
				free(senders);
				continue;
			}
			int64_t others = total - senders[top].ns;
			struct finding *f = finding_add(out, "one-queue", p, d, others);
			strbuf_addf(&f->what, "%zu threads sent their work to queue %" PRId64 " of %s, "
					      "where it ran one item at a time: the work of all but "
					      "the busiest thread (", busy, queues[q], d->label);
			insight_duration(&f->what, others);
			strbuf_addstr(&f->what, ") could have overlapped on queues of their own");
			for (size_t s = 0; s < sender_count; s++) {
				strbuf_addf(&f->evidence, "thread %" PRId64 ": %zu items, ", senders[s].tid,
					    senders[s].items);
				insight_duration(&f->evidence, senders[s].ns);
				strbuf_addstr(&f->evidence, "\n");
			}
			strbuf_addstr(&f->advice, "give each thread its own queue (CUDA: a stream per "
						  "thread, or --default-stream per-thread) and order what "
						  "depends on another thread's work with events");
			free(senders);
		}
		free(queues);
	}
}
