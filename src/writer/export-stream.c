/* A query's rows as events, read ahead on a thread of their own (see export-stream.h). */
#include "writer/export-stream.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "store/store.h"
#include "util/extsort.h"
#include "util/strbuf.h"
#include "util/thread.h"

/* Events of a batch read ahead, and batches ahead: about 1.3 MiB a stream read ahead */
#define AHEAD_EVENTS 1024
#define AHEAD_BATCHES 3
/* read on the caller's connection as wanted */
#define HERE_EVENTS 16

struct batch {
	struct event *events; /* allocated with its first row */
	int count;
};

struct export_stream {
	const char *sql;
	export_fill_fn fill;
	const void *arg;
	sqlite3 *db;          /* the caller's connection */
	sqlite3_stmt *here;   /* the query on it, when read here */
	int capacity;         /* events a batch */

	/* read ahead: batches head.. are full (full of them); the thread fills the next */
	int ahead;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t changed;
	struct batch batches[AHEAD_BATCHES];
	int head, full;
	int ended;            /* no more batches (from the thread, or read here) */
	int stop;             /* the reader wants no more */
	int failed;
	struct error err;     /* the thread's, when failed */

	int held, at;         /* the reader holds batch head (held), at its event at */
};

/* Up to a batch of rows of s into b: 1 while rows may remain, 0 at the end, -1. */
static int fill_batch(struct export_stream *st, sqlite3 *db, sqlite3_stmt *s, struct batch *b,
		      struct error *err)
{
	b->count = 0;
	while (b->count < st->capacity) {
		int row = store_step(db, s, err);
		if (row <= 0)
			return row;
		if (!b->events)
			b->events = xrealloc(NULL, (size_t)st->capacity * sizeof(*b->events));
		struct event *e = &b->events[b->count++];
		memset(e, 0, sizeof(*e));
		st->fill(s, st->arg, e);
	}
	return 1;
}

static void *stream_main(void *arg)
{
	struct export_stream *st = arg;
	sqlite3 *db = NULL;
	sqlite3_stmt *s = NULL;
	struct error err = { 0 };
	int rc = store_open(sqlite3_db_filename(st->db, "main"), &db, &err) ||
		 store_prepare(db, st->sql, &s, &err) ? -1 : 1;
	for (int tail = 0; rc > 0; tail = (tail + 1) % AHEAD_BATCHES) {
		pthread_mutex_lock(&st->lock);
		while (st->full == AHEAD_BATCHES && !st->stop)
			pthread_cond_wait(&st->changed, &st->lock);
		int stop = st->stop;
		pthread_mutex_unlock(&st->lock);
		if (stop)
			break;
		/* batch tail is neither full nor held: the reader waits for it to be */
		rc = fill_batch(st, db, s, &st->batches[tail], &err);
		if (st->batches[tail].count) {
			pthread_mutex_lock(&st->lock);
			st->full++;
			pthread_cond_broadcast(&st->changed);
			pthread_mutex_unlock(&st->lock);
		}
	}
	sqlite3_finalize(s);
	sqlite3_close(db);
	pthread_mutex_lock(&st->lock);
	st->ended = 1;
	if (rc < 0) {
		st->failed = 1;
		st->err = err;
	}
	pthread_cond_broadcast(&st->changed);
	pthread_mutex_unlock(&st->lock);
	return NULL;
}

struct export_stream *export_stream_open(sqlite3 *db, const char *sql, export_fill_fn fill,
					 const void *arg, int ahead, struct error *err)
{
	struct export_stream *st = xcalloc(1, sizeof(*st));
	st->sql = sql;
	st->fill = fill;
	st->arg = arg;
	st->db = db;
	const char *path = sqlite3_db_filename(db, "main");
	/* under a small limit of data memory (what leaves a sort less than its 16 MiB) a
	 * thread's stack, its batches and a connection's cache are memory the limit counts */
	if (ahead && path && *path && extsort_memory() >= EXTSORT_MEMORY) {
		st->capacity = AHEAD_EVENTS;
		pthread_mutex_init(&st->lock, NULL);
		pthread_cond_init(&st->changed, NULL);
		st->ahead = thread_create(&st->thread, stream_main, st) == 0;
		if (st->ahead)
			return st;
		pthread_mutex_destroy(&st->lock);
		pthread_cond_destroy(&st->changed);
	}
	st->capacity = HERE_EVENTS;
	if (store_prepare(db, sql, &st->here, err)) {
		free(st);
		return NULL;
	}
	return st;
}

int export_stream_peek(struct export_stream *st, struct event **e, struct error *err)
{
	struct batch *b = &st->batches[st->head];
	if (st->held && st->at < b->count) {
		*e = &b->events[st->at];
		return 1;
	}
	if (!st->ahead) { /* its one batch refilled here */
		if (st->ended)
			return 0;
		int rc = fill_batch(st, st->db, st->here, b, err);
		st->ended = rc <= 0; /* stepped again, a query done would run again */
		if (rc < 0)
			return -1;
		st->held = 1;
		st->at = 0;
		if (!b->count)
			return 0;
		*e = &b->events[0];
		return 1;
	}
	pthread_mutex_lock(&st->lock);
	if (st->held) { /* done with it: the thread may fill it again */
		st->full--;
		st->head = (st->head + 1) % AHEAD_BATCHES;
		st->held = 0;
		pthread_cond_broadcast(&st->changed);
	}
	while (!st->full && !st->ended)
		pthread_cond_wait(&st->changed, &st->lock);
	int rc = st->full ? 1 : st->failed ? -1 : 0;
	if (rc < 0)
		*err = st->err;
	pthread_mutex_unlock(&st->lock);
	if (rc <= 0)
		return rc;
	st->held = 1;
	st->at = 0;
	*e = &st->batches[st->head].events[0];
	return 1;
}

void export_stream_next(struct export_stream *st)
{
	st->at++;
}

void export_stream_close(struct export_stream *st)
{
	if (!st)
		return;
	if (st->ahead) {
		pthread_mutex_lock(&st->lock);
		st->stop = 1;
		pthread_cond_broadcast(&st->changed);
		pthread_mutex_unlock(&st->lock);
		pthread_join(st->thread, NULL);
		pthread_mutex_destroy(&st->lock);
		pthread_cond_destroy(&st->changed);
	}
	sqlite3_finalize(st->here);
	for (int i = 0; i < AHEAD_BATCHES; i++)
		free(st->batches[i].events);
	free(st);
}
