/* Reading a database on a thread of its own (see store-job.h). */
#include "store/store-job.h"

#include "store/store.h"
#include "util/thread.h"

static void *job_main(void *arg)
{
	struct store_job *job = arg;
	sqlite3 *db;
	job->rc = store_open(job->path, &db, &job->err) || job->run(db, job->arg, &job->err);
	sqlite3_close(db);
	return NULL;
}

void store_job_start(struct store_job *job, const char *path,
		     int (*run)(sqlite3 *db, void *arg, struct error *err), void *arg)
{
	job->path = path;
	job->run = run;
	job->arg = arg;
	job->rc = 0;
	job->started = thread_create(&job->thread, job_main, job) == 0;
}

int store_job_finish(struct store_job *job, struct error *err)
{
	if (job->started)
		pthread_join(job->thread, NULL);
	else
		job_main(job);
	job->started = 0;
	if (job->rc && err)
		*err = job->err;
	return job->rc ? -1 : 0;
}
