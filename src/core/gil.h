/* Which thread held Python's GIL, and when (gpuprof sys --gil: only the samples of the
 * thread holding it are kept, as py-spy's --gil does). The holder is read at each tick
 * of the sampler (runtime/python.c inside the process, commands/attach.c from outside)
 * and kept as the changes of holder; a sample, drained later from the kernel's buffer,
 * is kept when its thread held the GIL at the last tick before it. Shared by the ticking
 * thread that notes and the thread that drains (a lock); no allocation. */
#ifndef GPUPROF_CORE_GIL_H
#define GPUPROF_CORE_GIL_H

#include <pthread.h>
#include <stdint.h>

#define GIL_CHANGES 4096 /* the last changes of holder kept: seconds of them at the most */

struct gil_history {
	pthread_mutex_t lock;
	struct gil_change {
		uint64_t time_ns;
		uint32_t tid;      /* the holder from then on; 0: nobody */
	} changes[GIL_CHANGES];
	uint64_t count;            /* changes noted, of which the last GIL_CHANGES are kept */
};

void gil_history_init(struct gil_history *h);
void gil_history_release(struct gil_history *h);

/* The holder read at a tick at time_ns (0: the GIL was free). */
void gil_note(struct gil_history *h, uint64_t time_ns, uint32_t holder);

/* Whether a sample of thread tid at time_ns is kept: its thread held the GIL at the last
 * tick before it; kept too where no tick before it is known (before the interpreter was
 * first read, or older than the changes kept). */
int gil_keep(struct gil_history *h, uint32_t tid, uint64_t time_ns);

#endif
