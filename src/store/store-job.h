/* Work that reads a database on a thread of its own, over a connection of its own
 * (SQLite's connections are each for one thread at a time), beside other work on the
 * same database: the commands that read a recording several ways split their reading
 * so, to use every CPU. Where no thread starts (or under a limit of data memory that
 * leaves a sort less than its EXTSORT_MEMORY, which threads' stacks and connections'
 * caches would use up), the job runs in the caller at its finish, with the same result. */
#ifndef GPUPROF_STORE_STORE_JOB_H
#define GPUPROF_STORE_STORE_JOB_H

#include <pthread.h>
#include <sqlite3.h>

#include "util/error.h"

struct store_job {
	sqlite3 *db;                  /* the caller's connection: where the job runs here */
	const char *path;             /* its file, opened again read-only by store_open */
	int (*run)(sqlite3 *db, void *arg, struct error *err); /* 0, or -1 with err */
	void *arg;
	pthread_t thread;
	int started, rc;
	struct error err;
};

/* Starts run(db', arg) on a connection of its own to db's file; the job must be
 * finished (before db is closed: where no thread started, run uses db then). */
void store_job_start(struct store_job *job, sqlite3 *db,
		     int (*run)(sqlite3 *db, void *arg, struct error *err), void *arg);
/* Waits for the job (or runs it here): 0, or -1 with *err its error. */
int store_job_finish(struct store_job *job, struct error *err);

#endif
