/* Which thread held Python's GIL, and when (see gil.h). */
#include "core/gil.h"

void gil_history_init(struct gil_history *h)
{
	pthread_mutex_init(&h->lock, NULL);
	h->count = 0;
}

void gil_history_release(struct gil_history *h)
{
	pthread_mutex_destroy(&h->lock);
}

void gil_note(struct gil_history *h, uint64_t time_ns, uint32_t holder)
{
	pthread_mutex_lock(&h->lock);
	const struct gil_change *last = h->count ? &h->changes[(h->count - 1) % GIL_CHANGES] : NULL;
	if (!last || (last->tid != holder && time_ns >= last->time_ns)) {
		h->changes[h->count % GIL_CHANGES] = (struct gil_change){ time_ns, holder };
		h->count++;
	}
	pthread_mutex_unlock(&h->lock);
}

int gil_keep(struct gil_history *h, uint32_t tid, uint64_t time_ns)
{
	pthread_mutex_lock(&h->lock);
	uint64_t first = h->count > GIL_CHANGES ? h->count - GIL_CHANGES : 0;
	int keep = 1; /* not known */
	if (h->count && time_ns >= h->changes[first % GIL_CHANGES].time_ns) {
		uint64_t lo = first, hi = h->count; /* the last change at or before time_ns */
		while (hi - lo > 1) {
			uint64_t mid = lo + (hi - lo) / 2;
			if (h->changes[mid % GIL_CHANGES].time_ns <= time_ns)
				lo = mid;
			else
				hi = mid;
		}
		keep = h->changes[lo % GIL_CHANGES].tid == tid;
	}
	pthread_mutex_unlock(&h->lock);
	return keep;
}
