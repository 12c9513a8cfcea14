/* Rule sync-per-launch: a host thread that waits for the device after (nearly) every
 * kernel it launches, before it launches the next (the "poor device occupancy" loop of
 * the ROCm profiling guides): the device starves from each kernel's end until the host
 * has woken up and launched the next. */
#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>

#include "analysis/insight.h"

/* At least this many launches on the thread, and this share of them followed by a wait
 * before the next launch. */
#define SYNC_MIN_LAUNCHES 20
#define SYNC_MIN_SHARE 0.9

/* A launching thread: its calls' tallies, then what its waited-for kernels left idle. */
struct thread {
	int64_t tid;
	size_t launches, waited, kernels;
	int64_t wait_ns, idle;
	const char *wait_name, *launch_name, *kernel_name;
	int waiting;                  /* the last launch was waited for: its wait comes next */
	size_t where;                 /* the device of its last such kernel; SIZE_MAX: none */
};

struct sync {
	struct thread *threads;       /* by tid, as the calls stream */
	size_t thread_count;
	/* the threads whose waited-for kernel ended at the open busy interval's end so far */
	int64_t *ending, ends_at;
	size_t ending_count;
};

void *rule_sync_per_launch_begin(const struct insight_process *p)
{
	(void)p;
	return xcalloc(1, sizeof(struct sync));
}

void rule_sync_per_launch_call(void *state, const struct insight_process *p,
			       const struct insight_call *c)
{
	(void)p;
	struct sync *tally = state;
	if (!tally->thread_count || tally->threads[tally->thread_count - 1].tid != c->tid) {
		tally->threads = xrealloc(tally->threads,
					  (tally->thread_count + 1) * sizeof(*tally->threads));
		tally->threads[tally->thread_count++] =
			(struct thread){ .tid = c->tid, .where = SIZE_MAX };
	}
	struct thread *t = &tally->threads[tally->thread_count - 1];
	if (c->launch) {
		t->launches++;
		t->waited += c->waited;
		t->waiting = c->waited;
		t->launch_name = c->name;
	} else if (t->waiting && (c->blocking || insight_is_wait(c->name))) {
		t->wait_ns += c->end - c->start;
		t->wait_name = c->name;
		t->waiting = 0;
	}
}

static struct thread *thread_of(struct sync *tally, int64_t tid)
{
	size_t lo = 0, hi = tally->thread_count;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (tally->threads[mid].tid < tid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < tally->thread_count && tally->threads[lo].tid == tid ? &tally->threads[lo]
									: NULL;
}

/* A kernel its thread waited for: counted, and its thread noted when it ends its busy
 * interval so far. */
void rule_sync_per_launch_item(void *state, const struct insight_process *p,
			       const struct insight_device *d, const struct insight_activity *a)
{
	(void)p;
	struct sync *tally = state;
	struct thread *t;
	if (a->kind != INSIGHT_KERNEL || !a->call || !a->call->waited ||
	    !(t = thread_of(tally, a->call->tid)))
		return;
	t->kernels++;
	t->kernel_name = a->name;
	t->where = d->index;
	if (a->end != d->open.end)
		return;
	if (tally->ends_at != a->end)
		tally->ending_count = 0, tally->ends_at = a->end;
	for (size_t i = 0; i < tally->ending_count; i++)
		if (tally->ending[i] == t->tid)
			return;
	tally->ending = xrealloc(tally->ending, (tally->ending_count + 1) * sizeof(*tally->ending));
	tally->ending[tally->ending_count++] = t->tid;
}

/* The cost: the device's idle time after each such kernel that ended its busy interval,
 * until its next work; each gap once per thread. */
void rule_sync_per_launch_busy(void *state, const struct insight_process *p,
			       const struct insight_device *d, const struct insight_interval *b,
			       const struct insight_activity *next)
{
	(void)p, (void)d;
	struct sync *tally = state;
	if (next && tally->ending_count && tally->ends_at == b->end)
		for (size_t i = 0; i < tally->ending_count; i++)
			thread_of(tally, tally->ending[i])->idle += next->start - b->end;
	tally->ending_count = 0;
}

void rule_sync_per_launch_finish(void *state, const struct insight_process *p,
				 struct findings *out)
{
	struct sync *tally = state;
	for (size_t i = 0; i < tally->thread_count; i++) {
		const struct thread *t = &tally->threads[i];
		if (t->launches < SYNC_MIN_LAUNCHES ||
		    (double)t->waited < SYNC_MIN_SHARE * (double)t->launches)
			continue;
		struct finding *f = finding_add(out, "sync-per-launch", p,
						t->where == SIZE_MAX ? NULL : &p->devices[t->where],
						t->idle);
		strbuf_addf(&f->what, "thread %" PRId64 " waited for the device after %zu of its %zu "
				      "launches, each before launching the next; the device sat idle ",
			    t->tid, t->waited, t->launches);
		insight_duration(&f->what, t->idle);
		strbuf_addstr(&f->what, " after those kernels");
		strbuf_addf(&f->evidence, "launches: %s (kernel %s, %zu run)\nwaits: %s, the thread "
					  "blocked in them for ", t->launch_name,
			    t->kernel_name ? t->kernel_name : "?", t->kernels, t->wait_name);
		insight_duration(&f->evidence, t->wait_ns);
		strbuf_addstr(&f->evidence, "\n");
		strbuf_addstr(&f->advice, "launch the loop's kernels back to back and wait once after "
					  "the loop, or only where the host needs a result; order "
					  "dependent work with events or the queue's order instead of "
					  "waits; read results with non-blocking copies");
	}
	free(tally->threads);
	free(tally->ending);
	free(tally);
}
