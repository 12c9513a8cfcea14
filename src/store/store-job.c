/* Reading a database on a thread of its own (see store-job.h). */
#include "store/store-job.h"

#include "store/store.h"
#include "util/extsort.h"
#include "util/thread.h"

static void *job_main(void *arg)
{
	struct store_job *job = arg;
	sqlite3 *db;
	job->rc = store_open(job->path, &db, &job->err) || job->run(db, job->arg, &job->err);
	sqlite3_close(db);
	return NULL;
}

void store_job_start(struct store_job *job, sqlite3 *db,
		     int (*run)(sqlite3 *db, void *arg, struct error *err), void *arg)
{
	job->db = db;
	job->path = sqlite3_db_filename(db, "main");
	job->run = run;
	job->arg = arg;
	job->rc = 0;
	/* under a small limit of data memory (what leaves a sort less than its 16 MiB) a
	 * thread's stack and a connection's cache are memory the limit counts: run later */
	job->started = job->path && *job->path && extsort_memory() >= EXTSORT_MEMORY &&
		       thread_create(&job->thread, job_main, job) == 0;
}

int store_job_finish(struct store_job *job, struct error *err)
{
	if (job->started)
		pthread_join(job->thread, NULL);
	else
		job->rc = job->run(job->db, job->arg, &job->err);
	job->started = 0;
	if (job->rc && err)
		*err = job->err;
	return job->rc ? -1 : 0;
}
