/* The files being written under a temporary name (see unfinished.h). */
#include "util/unfinished.h"

#include <limits.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

enum { FREE, FILLING, LISTED };

/* outputs written at once: the database, three file writers, a copy, a report */
#define UNFINISHED_MAX 32

static struct {
	atomic_int state;
	char path[PATH_MAX];
} slots[UNFINISHED_MAX];

void unfinished_add(const char *path)
{
	size_t length = strlen(path);
	if (length >= PATH_MAX)
		return;
	for (int i = 0; i < UNFINISHED_MAX; i++) {
		int expected = FREE;
		if (atomic_compare_exchange_strong(&slots[i].state, &expected, FILLING)) {
			memcpy(slots[i].path, path, length + 1);
			atomic_store(&slots[i].state, LISTED);
			return;
		}
	}
}

void unfinished_forget(const char *path)
{
	for (int i = 0; i < UNFINISHED_MAX; i++) {
		int expected = LISTED;
		if (!strcmp(slots[i].path, path) &&
		    atomic_compare_exchange_strong(&slots[i].state, &expected, FILLING)) {
			slots[i].path[0] = '\0';
			atomic_store(&slots[i].state, FREE);
			return;
		}
	}
}

void unfinished_remove_all(void)
{
	for (int i = 0; i < UNFINISHED_MAX; i++)
		if (atomic_load(&slots[i].state) == LISTED)
			unlink(slots[i].path);
}
