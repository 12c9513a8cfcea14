/* The files being written under a temporary name (see unfinished.h). */
#include "util/unfinished.h"

#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

enum { FREE, LISTED };

/* outputs written at once: the database, three file writers, a copy, a report */
#define UNFINISHED_MAX 32

/* A slot's path is written only while the slot is FREE, under the lock; the signal
 * handler reads the paths of the LISTED slots without it. */
static struct {
	atomic_int state;
	char path[PATH_MAX];
} slots[UNFINISHED_MAX];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_int removing; /* unfinished_remove_all ran: the process is ending */

/* A thread that would make a file after the removal waits for the process's end. */
static void wait_for_the_end(void)
{
	for (;;)
		pause();
}

void unfinished_add(const char *path)
{
	if (atomic_load(&removing))
		wait_for_the_end();
	size_t length = strlen(path);
	if (length >= PATH_MAX)
		return;
	pthread_mutex_lock(&lock);
	for (int i = 0; i < UNFINISHED_MAX; i++)
		if (atomic_load(&slots[i].state) == FREE) {
			memcpy(slots[i].path, path, length + 1);
			atomic_store(&slots[i].state, LISTED);
			break;
		}
	pthread_mutex_unlock(&lock);
}

void unfinished_forget(const char *path)
{
	pthread_mutex_lock(&lock);
	for (int i = 0; i < UNFINISHED_MAX; i++)
		if (atomic_load(&slots[i].state) == LISTED && !strcmp(slots[i].path, path)) {
			atomic_store(&slots[i].state, FREE);
			break;
		}
	pthread_mutex_unlock(&lock);
}

void unfinished_created(const char *path)
{
	if (atomic_load(&removing)) {
		unlink(path);
		wait_for_the_end();
	}
}

void unfinished_remove_all(void)
{
	atomic_store(&removing, 1);
	for (int i = 0; i < UNFINISHED_MAX; i++)
		if (atomic_load(&slots[i].state) == LISTED)
			unlink(slots[i].path);
}
