/* The samples of each thread as nested slices, for the timelines (see unwind.h). */
#include "analysis/unwind.h"

#include <stdlib.h>
#include <string.h>

#include "util/sort.h"
#include "util/strbuf.h"

static int by_thread_then_time(const void *a, const void *b)
{
	const struct sample_input *x = a, *y = b;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return (x->time > y->time) - (x->time < y->time);
}

static int by_start_then_depth(const void *a, const void *b)
{
	const struct sample_slice *x = a, *y = b;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->depth != y->depth)
		return x->depth < y->depth ? -1 : 1;
	return (x->tid > y->tid) - (x->tid < y->tid);
}

/* Whether two nodes (their callers alike) are the same call: the same function, whatever
 * line of it ran (a frame per line: the slice of a function lasts over its lines). */
static int same_call(const struct sample_stacks *s, uint32_t a, uint32_t b)
{
	if (a == b)
		return 1;
	const struct stack_frame *x = &s->frames[s->nodes[a].frame];
	const struct stack_frame *y = &s->frames[s->nodes[b].frame];
	return !strcmp(x->function, y->function) &&
	       !strcmp(x->module, y->module);
}

size_t sample_slices_build(const struct sample_stacks *s, struct sample_input *samples,
			   size_t n, struct sample_slice **out)
{
	sort_array(samples, n, sizeof(*samples), by_thread_then_time);
	struct sample_slice *slices = NULL;
	size_t count = 0, alloc = 0;
	uint32_t open[UNWIND_MAX_FRAMES];   /* the nodes open on the thread, root first */
	size_t open_start[UNWIND_MAX_FRAMES];
	size_t depth = 0;
	for (size_t i = 0; i <= n; i++) {
		int new_thread = i == n || (i > 0 && samples[i].tid != samples[i - 1].tid);
		uint32_t path[UNWIND_MAX_FRAMES];
		size_t length = 0, common = 0;
		if (i < n && !new_thread) {
			uint32_t reversed[UNWIND_MAX_FRAMES];
			size_t m = 0;
			for (uint32_t node = samples[i].leaf; node && m < UNWIND_MAX_FRAMES;
			     node = s->nodes[node].parent)
				reversed[m++] = node;
			while (m)
				path[length++] = reversed[--m];
			while (common < depth && common < length &&
			       same_call(s, open[common], path[common]))
				common++;
		}
		/* close what the new sample does not have: at its time, or at the end of the
		 * thread's last sample */
		int64_t at;
		if (i < n && !new_thread) {
			at = samples[i].time;
		} else {
			const struct sample_input *last = &samples[i - 1];
			int64_t gap = i >= 2 && samples[i - 2].tid == last->tid
				      ? last->time - samples[i - 2].time : 0;
			at = last->time + (gap > 0 ? gap : 1);
		}
		while (depth > common) {
			depth--;
			if (count == alloc) {
				alloc = alloc ? 2 * alloc : 1024;
				slices = xrealloc(slices, alloc * sizeof(*slices));
			}
			slices[count++] = (struct sample_slice){
				.tid = samples[open_start[depth]].tid, .start = samples[open_start[depth]].time,
				.end = at, .depth = (uint32_t)depth, .frame = s->nodes[open[depth]].frame };
		}
		if (i == n)
			break;
		if (new_thread) { /* this sample begins the next thread: open its whole stack */
			uint32_t reversed[UNWIND_MAX_FRAMES];
			size_t m = 0;
			for (uint32_t node = samples[i].leaf; node && m < UNWIND_MAX_FRAMES;
			     node = s->nodes[node].parent)
				reversed[m++] = node;
			length = 0;
			while (m)
				path[length++] = reversed[--m];
		}
		for (; depth < length; depth++) {
			open[depth] = path[depth];
			open_start[depth] = i;
		}
	}
	sort_array(slices, count, sizeof(*slices), by_start_then_depth);
	*out = slices;
	return count;
}

