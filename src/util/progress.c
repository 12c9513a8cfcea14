/* Progress on a terminal (see progress.h). */
#include "util/progress.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "util/strbuf.h"
#include "util/thread.h"

#define TASKS 4
#define FIRST_DRAW_MS 500 /* quick work shows nothing */
#define REDRAW_MS 200

static struct {
	pthread_mutex_t lock;
	pthread_cond_t stopping;
	pthread_t thread;
	int running, stop;
	struct progress_task tasks[TASKS];
	size_t shown; /* characters of the line on the terminal */
} progress = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER };

static void deadline_in(struct timespec *t, long ms)
{
	clock_gettime(CLOCK_MONOTONIC, t);
	t->tv_sec += ms / 1000;
	t->tv_nsec += (ms % 1000) * 1000000;
	if (t->tv_nsec >= 1000000000) {
		t->tv_sec++;
		t->tv_nsec -= 1000000000;
	}
}

/* Blanks the line; called with the lock held. */
static void clear(void)
{
	if (progress.shown)
		fprintf(stderr, "\r%*s\r", (int)progress.shown, "");
	progress.shown = 0;
}

/* Redraws the line over the last one; called with the lock held. */
static void draw(struct strbuf *line)
{
	strbuf_reset(line);
	for (int i = 0; i < TASKS; i++) {
		const struct progress_task *t = &progress.tasks[i];
		if (!t->active)
			continue;
		uint64_t done = __atomic_load_n(&t->done, __ATOMIC_RELAXED);
		unsigned percent = !t->total ? 0 : done >= t->total ? 100
				 : (unsigned)((double)done * 100.0 / (double)t->total);
		strbuf_addf(line, "%s%s %u%%", line->len ? ", " : "gpuprof: ", t->what, percent);
	}
	if (!line->len) {
		clear();
		return;
	}
	size_t length = line->len;
	while (line->len < progress.shown) /* spaces over what the last line had more */
		strbuf_addch(line, ' ');
	fprintf(stderr, "\r%s", line->buf);
	fflush(stderr);
	progress.shown = length;
}

static void *run(void *unused)
{
	(void)unused;
	struct strbuf line = STRBUF_INIT;
	struct timespec next;
	deadline_in(&next, FIRST_DRAW_MS);
	pthread_mutex_lock(&progress.lock);
	while (!progress.stop) {
		if (pthread_cond_timedwait(&progress.stopping, &progress.lock, &next) == ETIMEDOUT) {
			draw(&line);
			deadline_in(&next, REDRAW_MS);
		}
	}
	for (int i = 0; i < TASKS; i++)
		progress.tasks[i].active = 0;
	draw(&line); /* clears the line */
	pthread_mutex_unlock(&progress.lock);
	strbuf_release(&line);
	return NULL;
}

void progress_begin(void)
{
	if (progress.running || !isatty(STDERR_FILENO))
		return;
	pthread_condattr_t attr;
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_destroy(&progress.stopping);
	pthread_cond_init(&progress.stopping, &attr);
	pthread_condattr_destroy(&attr);
	memset(progress.tasks, 0, sizeof(progress.tasks));
	progress.stop = 0;
	progress.shown = 0;
	progress.running = thread_create(&progress.thread, run, NULL) == 0;
}

struct progress_task *progress_task_begin(const char *what, uint64_t total)
{
	if (!progress.running)
		return NULL;
	struct progress_task *task = NULL;
	pthread_mutex_lock(&progress.lock);
	for (int i = 0; i < TASKS && !task; i++)
		if (!progress.tasks[i].active) {
			task = &progress.tasks[i];
			*task = (struct progress_task){ .what = what, .total = total, .active = 1 };
		}
	pthread_mutex_unlock(&progress.lock);
	return task;
}

void progress_task_end(struct progress_task *task)
{
	if (!task)
		return;
	pthread_mutex_lock(&progress.lock);
	task->active = 0;
	pthread_mutex_unlock(&progress.lock);
}

void progress_message(const char *format, ...)
{
	va_list args;
	va_start(args, format);
	pthread_mutex_lock(&progress.lock);
	clear();
	vfprintf(stderr, format, args);
	pthread_mutex_unlock(&progress.lock);
	va_end(args);
}

void progress_end(void)
{
	if (!progress.running)
		return;
	pthread_mutex_lock(&progress.lock);
	progress.stop = 1;
	pthread_cond_signal(&progress.stopping);
	pthread_mutex_unlock(&progress.lock);
	pthread_join(progress.thread, NULL);
	progress.running = 0;
}
