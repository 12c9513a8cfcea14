/* Launch stacks made whole from their differences (see launch-delta.h). */
#include "core/launch-delta.h"

#include <stdlib.h>
#include <string.h>

#include "util/strbuf.h"

static struct launch_delta_thread *thread_of(struct launch_delta *d, uint32_t tid)
{
	for (size_t i = 0; i < d->count; i++)
		if (d->threads[i].tid == tid)
			return &d->threads[i];
	d->threads = xrealloc(d->threads, (d->count + 1) * sizeof(*d->threads));
	struct launch_delta_thread *t = &d->threads[d->count++];
	memset(t, 0, sizeof(*t));
	t->tid = tid;
	return t;
}

/* The held stack made what the delta after `sample` says: 0, or -1 (corrupt). */
static int apply(struct launch_delta_thread *t, const struct record_sample *sample)
{
	size_t payload = sample->header.size - sizeof(*sample);
	const unsigned char *at = (const unsigned char *)(sample + 1);
	if (payload < sizeof(struct launch_stack_delta))
		return -1;
	const struct launch_stack_delta *delta = (const void *)at;
	size_t words = t->sample->stack_size / 8, map_bytes = ((words + 7) / 8 + 7) & ~(size_t)7;
	if (delta->words != words || sizeof(*delta) + map_bytes > payload ||
	    delta->changed > (payload - sizeof(*delta) - map_bytes) / 8)
		return -1;
	const unsigned char *map = at + sizeof(*delta);
	const uint64_t *changed = (const uint64_t *)(map + map_bytes);
	uint64_t *stack = (uint64_t *)(t->sample + 1);
	size_t taken = 0;
	for (size_t w = 0; w < words; w++) {
		if (!(map[w / 8] >> (w % 8) & 1))
			continue;
		if (taken == delta->changed)
			return -1; /* more bits than words */
		stack[w] = changed[taken++];
	}
	return taken == delta->changed ? 0 : -1;
}

const struct record_sample *launch_delta_next(struct launch_delta *d,
					      const struct record_launch_stack *l)
{
	const struct record_sample *sample = &l->sample;
	struct launch_delta_thread *t = thread_of(d, sample->tid);
	uint16_t number = l->header.flags, follows = (uint16_t)(t->number + 1);
	if (!follows)
		follows = 1;
	if (!(sample->flags & SAMPLE_STACK_DELTA)) { /* whole: held for the next */
		size_t size = sizeof(*sample) + sample->stack_size;
		if (sample->stack_size > sample->header.size - sizeof(*sample)) { /* corrupt */
			t->number = 0;
			return NULL;
		}
		if (t->capacity < size) {
			t->sample = xrealloc(t->sample, size);
			t->capacity = size;
		}
		memcpy(t->sample, sample, size);
		t->number = number;
		return sample;
	}
	if (!t->number || number != follows || sample->stack_size != t->sample->stack_size ||
	    sample->registers[7] != t->sample->registers[7] || apply(t, sample)) {
		t->number = 0; /* the next delta has nothing to build on either */
		return NULL;
	}
	uint32_t size = t->sample->stack_size;
	memcpy(t->sample, sample, sizeof(*sample)); /* its registers, time and flags */
	t->sample->header.size = (uint32_t)(sizeof(*sample) + size);
	t->sample->flags &= ~SAMPLE_STACK_DELTA;
	t->number = number;
	return t->sample;
}

void launch_delta_release(struct launch_delta *d)
{
	for (size_t i = 0; i < d->count; i++)
		free(d->threads[i].sample);
	free(d->threads);
	memset(d, 0, sizeof(*d));
}
