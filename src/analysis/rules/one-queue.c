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

struct queue {
	struct sender *senders;       /* in order of their first item */
	size_t sender_count;
	int64_t total, overlapped, end;
};

struct queues {
	struct queue *queues;         /* by the device's queue index */
	size_t count;
};

void *rule_one_queue_begin(const struct insight_process *p)
{
	return xcalloc(p->device_count ? p->device_count : 1, sizeof(struct queues));
}

void rule_one_queue_item(void *state, const struct insight_process *p,
			 const struct insight_device *d, const struct insight_activity *a)
{
	(void)p;
	struct queues *tally = (struct queues *)state + d->index;
	if (a->queue_index == SIZE_MAX)
		return;
	while (tally->count <= a->queue_index) {
		tally->queues = xrealloc(tally->queues,
					 (tally->count + 1) * sizeof(*tally->queues));
		tally->queues[tally->count++] = (struct queue){ .end = INT64_MIN };
	}
	struct queue *q = &tally->queues[a->queue_index];
	size_t s = 0;
	while (s < q->sender_count && q->senders[s].tid != a->tid)
		s++;
	if (s == q->sender_count) {
		q->senders = xrealloc(q->senders, (q->sender_count + 1) * sizeof(*q->senders));
		q->senders[q->sender_count++] = (struct sender){ a->tid, 0, 0 };
	}
	q->senders[s].ns += a->end - a->start;
	q->senders[s].items++;
	q->total += a->end - a->start;
	if (q->end > a->start)
		q->overlapped += (q->end < a->end ? q->end : a->end) - a->start;
	if (a->end > q->end)
		q->end = a->end;
}

void rule_one_queue_finish(void *state, const struct insight_process *p, struct findings *out)
{
	for (size_t i = 0; i < p->device_count; i++) {
		const struct insight_device *d = &p->devices[i];
		struct queues *tally = (struct queues *)state + i;
		for (size_t q = 0; q < tally->count; q++) {
			const struct queue *k = &tally->queues[q];
			size_t busy = 0, top = 0;
			for (size_t s = 0; s < k->sender_count; s++) {
				busy += k->senders[s].items >= ONE_QUEUE_MIN_ITEMS;
				if (k->senders[s].ns > k->senders[top].ns)
					top = s;
			}
			if (busy < ONE_QUEUE_MIN_THREADS ||
			    (double)k->overlapped >= ONE_QUEUE_MAX_OVERLAP * (double)k->total)
				continue;
			int64_t others = k->total - k->senders[top].ns;
			struct finding *f = finding_add(out, "one-queue", p, d, others);
			strbuf_addf(&f->what, "%zu threads sent their work to queue %" PRId64 " of %s, "
					      "where it ran one item at a time: the work of all but "
					      "the busiest thread (", busy, d->queues[q], d->label);
			insight_duration(&f->what, others);
			strbuf_addstr(&f->what, ") could have overlapped on queues of their own");
			for (size_t s = 0; s < k->sender_count; s++) {
				strbuf_addf(&f->evidence, "thread %" PRId64 ": %zu items, ",
					    k->senders[s].tid, k->senders[s].items);
				insight_duration(&f->evidence, k->senders[s].ns);
				strbuf_addstr(&f->evidence, "\n");
			}
			strbuf_addstr(&f->advice, "give each thread its own queue (CUDA: a stream per "
						  "thread, or --default-stream per-thread) and order what "
						  "depends on another thread's work with events");
		}
		for (size_t q = 0; q < tally->count; q++)
			free(tally->queues[q].senders);
		free(tally->queues);
	}
	free(state);
}
