/* The files being written under a temporary name (see unfinished.h). */
#include "util/unfinished.h"

#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

enum { FREE, LISTED };

/* outputs written at once: the database, three file writers, a copy, a report */
#define UNFINISHED_MAX 32

/* how long the removal waits for another thread to finish making a file (a thread
 * preempted on a loaded machine, a slow file system) */
#define CREATION_WAIT_MS 5000

/* A slot's path is written only while the slot is FREE, under the lock; the signal
 * handler reads the paths of the LISTED slots without it. creator is the thread making
 * the file, from unfinished_add() until the file exists (unfinished_created()), or 0. */
static struct {
	atomic_int state;
	atomic_int creator;
	char path[PATH_MAX];
} slots[UNFINISHED_MAX];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_int removing; /* unfinished_remove_all ran: the process is ending */

static int this_thread(void)
{
	return (int)syscall(SYS_gettid); /* async-signal-safe, unlike pthread_self() */
}

/* A thread that would make a file after the removal waits for the process's end. */
static void wait_for_the_end(void)
{
	for (;;)
		pause();
}

/* Lists path, made by creator (0: none yet); a path listed already without one takes
 * this creator in the same slot. */
static int list(const char *path, int creator)
{
	size_t length = strlen(path);
	if (length >= PATH_MAX)
		return -1;
	int found = -1;
	pthread_mutex_lock(&lock);
	for (int i = 0; i < UNFINISHED_MAX && found < 0 && creator; i++)
		if (atomic_load(&slots[i].state) == LISTED && !atomic_load(&slots[i].creator) &&
		    !strcmp(slots[i].path, path)) {
			atomic_store(&slots[i].creator, creator);
			found = i;
		}
	for (int i = 0; i < UNFINISHED_MAX && found < 0; i++)
		if (atomic_load(&slots[i].state) == FREE) {
			memcpy(slots[i].path, path, length + 1);
			atomic_store(&slots[i].creator, creator);
			atomic_store(&slots[i].state, LISTED);
			found = i;
		}
	pthread_mutex_unlock(&lock);
	return found;
}

void unfinished_add(const char *path)
{
	/* listed first, then the removal looked at: a removal that began meanwhile either
	 * sees this thread making the file and waits for it, or is seen here */
	int slot = list(path, this_thread());
	if (atomic_load(&removing)) {
		if (slot >= 0)
			atomic_store(&slots[slot].creator, 0);
		wait_for_the_end();
	}
}

void unfinished_list(const char *path)
{
	list(path, 0);
}

int unfinished_listed(const char *path)
{
	int listed = 0;
	pthread_mutex_lock(&lock);
	for (int i = 0; i < UNFINISHED_MAX && !listed; i++)
		listed = atomic_load(&slots[i].state) == LISTED && !strcmp(slots[i].path, path);
	pthread_mutex_unlock(&lock);
	return listed;
}

void unfinished_forget(const char *path)
{
	pthread_mutex_lock(&lock);
	for (int i = 0; i < UNFINISHED_MAX; i++)
		if (atomic_load(&slots[i].state) == LISTED && !strcmp(slots[i].path, path)) {
			atomic_store(&slots[i].creator, 0);
			atomic_store(&slots[i].state, FREE);
			break;
		}
	pthread_mutex_unlock(&lock);
}

void unfinished_created(const char *path)
{
	pthread_mutex_lock(&lock);
	for (int i = 0; i < UNFINISHED_MAX; i++)
		if (atomic_load(&slots[i].state) == LISTED && atomic_load(&slots[i].creator) &&
		    !strcmp(slots[i].path, path)) {
			atomic_store(&slots[i].creator, 0);
			break;
		}
	pthread_mutex_unlock(&lock);
	/* a removal that began before the line above waited for it, then removed the file;
	 * one that began after it is seen here */
	if (atomic_load(&removing)) {
		unlink(path);
		wait_for_the_end();
	}
}

/* Whether a thread other than self is making a listed file. */
static int others_creating(int self)
{
	for (int i = 0; i < UNFINISHED_MAX; i++) {
		int creator = atomic_load(&slots[i].creator);
		if (atomic_load(&slots[i].state) == LISTED && creator && creator != self)
			return 1;
	}
	return 0;
}

void unfinished_remove_all(void)
{
	atomic_store(&removing, 1);
	/* a file another thread is making may appear after the unlink() below, and that
	 * thread be ended (_exit) before it sees the removal: wait until it has made it or
	 * stopped */
	int self = this_thread();
	struct timespec millisecond = { 0, 1000000 };
	for (int waited = 0; waited < CREATION_WAIT_MS && others_creating(self); waited++)
		nanosleep(&millisecond, NULL);
	for (int i = 0; i < UNFINISHED_MAX; i++)
		if (atomic_load(&slots[i].state) == LISTED)
			unlink(slots[i].path);
}
