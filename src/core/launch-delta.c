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

/* The held stack made what the struct launch_stack_delta at `at` (payload bytes from
 * there to the record's end) says: 0, or -1 (corrupt). */
static int apply(struct launch_delta_thread *t, const unsigned char *at, size_t payload)
{
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

/* A whole stack, held for the next: its sample, or NULL when corrupt. */
static const struct record_sample *hold(struct launch_delta_thread *t, uint16_t number,
					const struct record_sample *sample)
{
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

/* The held stack made what a RECORD_LAUNCH_DELTA says: 0, or -1 (corrupt). */
static int apply_record(struct launch_delta_thread *t, const struct record_launch_delta *l)
{
	size_t size = l->launch.header.size, at = sizeof(*l);
	if (size < at || l->registers >> SAMPLE_REGISTERS)
		return -1;
	uint64_t registers[SAMPLE_REGISTERS];
	memcpy(registers, t->sample->registers, sizeof(registers));
	const unsigned char *bytes = (const unsigned char *)l;
	for (uint32_t bits = l->registers; bits; bits &= bits - 1) {
		if (size - at < 8)
			return -1;
		memcpy(&registers[__builtin_ctz(bits)], bytes + at, 8);
		at += 8;
	}
	if (registers[7] != t->sample->registers[7] || apply(t, bytes + at, size - at))
		return -1; /* a difference is taken at the same stack pointer only */
	memcpy(t->sample->registers, registers, sizeof(registers));
	t->sample->tid = l->launch.tid;
	t->sample->time_ns = l->launch.time_ns;
	t->sample->flags = l->sample_flags & ~SAMPLE_STACK_DELTA;
	return 0;
}

const struct record_sample *launch_delta_next(struct launch_delta *d,
					      const struct record_header *h)
{
	const struct record_launch_stack *whole = (const void *)h;
	const struct record_launch_delta *compact = (const void *)h;
	int is_compact = h->type == RECORD_LAUNCH_DELTA;
	const struct record_sample *sample = is_compact ? NULL : &whole->sample;
	struct launch_delta_thread *t = thread_of(d, is_compact ? compact->launch.tid : sample->tid);
	uint16_t number = h->flags, follows = (uint16_t)(t->number + 1);
	if (!follows)
		follows = 1;
	if (sample && !(sample->flags & SAMPLE_STACK_DELTA))
		return hold(t, number, sample);
	if (!t->number || number != follows) {
		t->number = 0; /* the next delta has nothing to build on either */
		return NULL;
	}
	if (is_compact) {
		if (apply_record(t, compact)) {
			t->number = 0;
			return NULL;
		}
	} else { /* an older spool's difference: every register in its sample */
		if (sample->stack_size != t->sample->stack_size ||
		    sample->registers[7] != t->sample->registers[7] ||
		    apply(t, (const unsigned char *)(sample + 1), sample->header.size - sizeof(*sample))) {
			t->number = 0;
			return NULL;
		}
		uint32_t size = t->sample->stack_size;
		memcpy(t->sample, sample, sizeof(*sample)); /* its registers, time and flags */
		t->sample->header.size = (uint32_t)(sizeof(*sample) + size);
		t->sample->flags &= ~SAMPLE_STACK_DELTA;
	}
	t->number = number;
	return t->sample;
}

struct record_launch launch_stack_call(const struct record_header *h)
{
	if (h->type != RECORD_LAUNCH_STACK) /* a launch point, or a difference: the call first */
		return *(const struct record_launch *)h;
	const struct record_launch_stack *l = (const void *)h;
	return (struct record_launch){ .header = *h, .tid = l->sample.tid, .domain = l->domain,
				       .function_id = l->function_id,
				       .correlation_id = l->correlation_id,
				       .time_ns = l->sample.time_ns };
}

void launch_delta_release(struct launch_delta *d)
{
	for (size_t i = 0; i < d->count; i++)
		free(d->threads[i].sample);
	free(d->threads);
	memset(d, 0, sizeof(*d));
}
