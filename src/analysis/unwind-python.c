/* The Python frames of a sample: which tick stands for it (see unwind-python.h). */
#include "analysis/unwind-python.h"

#include <stdio.h>
#include <stdlib.h>

#include "util/sort.h"
#include "util/strbuf.h"

const unsigned python_code_registers[PYTHON_CODE_REGISTERS] = { 15, 14, 13, 12, 3, 6 };

/* ---- code objects -------------------------------------------------------------------- */

static int by_start(const void *a, const void *b)
{
	const struct record_python_code *x = *(const void *const *)a, *y = *(const void *const *)b;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return (x->time_ns > y->time_ns) - (x->time_ns < y->time_ns);
}

void python_codes_build(struct python_codes *c, const struct recording *rec)
{
	c->count = 0;
	c->by_start = xcalloc(rec->python_codes.count ? rec->python_codes.count : 1,
			      sizeof(*c->by_start));
	for (size_t i = 0; i < rec->python_codes.count; i++) {
		const struct record_python_code *p = (const void *)rec->python_codes.items[i];
		if (p->end > p->start && p->end - p->start < (1u << 26)) /* else corrupt */
			c->by_start[c->count++] = p;
	}
	sort_array(c->by_start, c->count, sizeof(*c->by_start), by_start);
}

void python_codes_release(struct python_codes *c)
{
	free(c->by_start);
	c->by_start = NULL;
	c->count = 0;
}

/* Code objects before the address that may still hold it: the largest is some
 * megabytes; those named at one address over a run are few. */
#define CODES_BACK 64

const struct record_python_code *python_codes_find(const struct python_codes *c,
						   uint64_t address, uint64_t time_ns)
{
	size_t lo = 0, hi = c->count; /* the first starting after address */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (c->by_start[mid]->start <= address)
			lo = mid + 1;
		else
			hi = mid;
	}
	const struct record_python_code *best = NULL;
	for (size_t i = lo, back = 0; i-- > 0 && back < CODES_BACK; back++) {
		const struct record_python_code *p = c->by_start[i];
		if (address >= p->end)
			continue;
		/* the last named before the sample; else the first named after it */
		if (!best || (p->time_ns <= time_ns ? best->time_ns > time_ns || p->time_ns > best->time_ns
						  : best->time_ns > time_ns && p->time_ns < best->time_ns))
			best = p;
	}
	return best;
}

const struct record_python_code *python_hits_ran(const struct python_hits *hits, int loop)
{
	const struct record_python_code *const *codes = hits->codes + loop * PYTHON_CODE_REGISTERS;
	const struct record_python_code *best = NULL;
	int most = 0;
	for (int r = 0; r < PYTHON_CODE_REGISTERS; r++) {
		if (!codes[r])
			continue;
		int n = 0;
		for (int q = 0; q < PYTHON_CODE_REGISTERS; q++)
			n += codes[q] && codes[q]->function_id == codes[r]->function_id &&
			     codes[q]->file_id == codes[r]->file_id;
		if (n > most) { /* the most registers, then the first in their order */
			best = codes[r];
			most = n;
		}
	}
	return best;
}

/* ---- ticks ----------------------------------------------------------------------------- */

static int by_thread_then_tick(const void *a, const void *b)
{
	const struct record_python_stack *x = *(const void *const *)a, *y = *(const void *const *)b;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return (x->time_ns > y->time_ns) - (x->time_ns < y->time_ns);
}

void python_ticks_sort(const struct record_python_stack **ticks, size_t n)
{
	sort_array(ticks, n, sizeof(*ticks), by_thread_then_tick);
}

/* Entries into the evaluation loop in a tick's frames: its groups. */
static int tick_groups(const struct record_python_stack *t)
{
	const struct python_frame *f = (const void *)(t + 1);
	int n = 0;
	for (uint32_t i = 0; i < t->count; i++)
		n += (f[i].flags & PYTHON_FRAME_ENTRY) != 0;
	return n;
}

static int found_in(const struct python_hits *hits, int loop, const struct python_frame *f)
{
	const struct record_python_code *const *codes = hits->codes + loop * PYTHON_CODE_REGISTERS;
	for (int r = 0; r < PYTHON_CODE_REGISTERS; r++)
		if (codes[r] && codes[r]->function_id == f->function_id &&
		    codes[r]->file_id == f->file_id)
			return 1;
	return 0;
}

/* How well the tick's groups agree with what the sample's loops ran (from the root, a
 * group for a loop): 2 for a group whose innermost frame ran a code found, 1 for one
 * where a caller of it did (the group cut there: cut[k]), 0 for none. */
static int agreeing(const struct record_python_stack *t, const struct python_hits *hits,
		    int *cut)
{
	const struct python_frame *f = (const void *)(t + 1);
	int group = -1, score = 0, partly = -1;
	for (uint32_t i = t->count; i-- > 0;) {
		if (group < 0 || (f[i].flags & PYTHON_FRAME_ENTRY)) {
			group++;
			partly = -1;
		}
		if (group >= hits->loops)
			break;
		cut[group] = -1;
		int innermost = i == 0 || (f[i - 1].flags & PYTHON_FRAME_ENTRY);
		if (!found_in(hits, group, &f[i])) {
			if (innermost && partly >= 0) {
				score += 1;
				cut[group] = partly;
			}
			continue;
		}
		if (innermost)
			score += 2;
		else
			partly = (int)i; /* the innermost found so far */
	}
	return score;
}

#define TICKS_AROUND 64 /* ticks each way that may stand for a sample */

const struct record_python_stack *python_tick_for(const struct record_python_stack *const *ticks,
						 size_t n, const struct record_sample *sample,
						 struct python_hits *hits)
{
	size_t lo = 0, hi = n; /* the first at or after (tid, time) */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct record_python_stack *t = ticks[mid];
		if (t->tid < sample->tid || (t->tid == sample->tid && t->time_ns < sample->time_ns))
			lo = mid + 1;
		else
			hi = mid;
	}
	int loops = hits->loops;
	const struct record_python_stack *best = NULL, *shaped = NULL, *agreed = NULL;
	uint64_t distance = 0, shaped_distance = 0, agreed_distance = 0;
	int agreed_score = 0, agreed_shaped = 0;
	int cut[loops > 0 ? loops : 1];
	size_t from = lo > TICKS_AROUND ? lo - TICKS_AROUND : 0;
	for (size_t i = from; i < lo + TICKS_AROUND && i < n; i++) {
		const struct record_python_stack *t = ticks[i];
		if (t->tid != sample->tid)
			continue;
		uint64_t d = t->time_ns > sample->time_ns ? t->time_ns - sample->time_ns
							  : sample->time_ns - t->time_ns;
		if (d <= t->period_ns && (!best || d < distance)) {
			best = t;
			distance = d;
		}
		if (!loops || d > TICKS_AROUND * t->period_ns)
			continue;
		int shape = tick_groups(t) == loops;
		if (shape && (!shaped || d < shaped_distance)) {
			shaped = t;
			shaped_distance = d;
		}
		/* the best agreement, then the shape, then the nearest */
		int score = hits->known ? agreeing(t, hits, cut) : 0;
		if (score && (!agreed || score > agreed_score ||
			      (score == agreed_score && (shape > agreed_shaped ||
							 (shape == agreed_shaped && d < agreed_distance))))) {
			agreed = t;
			agreed_score = score;
			agreed_shaped = shape;
			agreed_distance = d;
			for (int k = 0; k < loops; k++)
				hits->cut[k] = cut[k];
		}
	}
	if (!agreed)
		for (int k = 0; k < loops; k++)
			hits->cut[k] = -1;
	return agreed ? agreed : shaped ? shaped : best;
}
