/* Progress of long post-processing (reading a recording, building its database, writing
 * its files), shown on a terminal only: when stderr is not one (a log, a pipe, CI)
 * nothing is shown and nothing is started.
 *
 * progress_begin() starts a thread that, once the work has lasted half a second,
 * redraws one line on stderr five times a second ("gpuprof: database 45%, files 60%");
 * progress_end() stops it and clears the line, so messages printed after it start on a
 * clean line. Between the two, messages go through progress_message(), which prints
 * them on a line of their own. Work is counted with progress_set(), cheap enough for
 * every few thousand records, from any thread. */
#ifndef GPUPROF_UTIL_PROGRESS_H
#define GPUPROF_UTIL_PROGRESS_H

#include <stdint.h>

struct progress_task {
	const char *what;
	uint64_t total, done;
	int active;
};

void progress_begin(void);
/* A task of `total` units, shown as `what` and a percentage; NULL when nothing is shown
 * (the calls below accept NULL). `what` must outlive the task. */
struct progress_task *progress_task_begin(const char *what, uint64_t total);
static inline void progress_set(struct progress_task *task, uint64_t done)
{
	if (task)
		__atomic_store_n(&task->done, done, __ATOMIC_RELAXED);
}
void progress_task_end(struct progress_task *task);
/* fprintf(stderr, ...), over the progress line when one is shown. */
void progress_message(const char *format, ...) __attribute__((format(printf, 1, 2)));
void progress_end(void);

#endif
