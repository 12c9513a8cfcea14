/* The files gpuprof is writing under a temporary name (<output>.partial), listed so that
 * a gpuprof stopped midway (a second Ctrl-C while it writes its outputs) removes them
 * instead of leaving half-written files behind. A fixed table: adding, removing and the
 * removal of all are safe from several threads, and the last from a signal handler. */
#ifndef GPUPROF_UTIL_UNFINISHED_H
#define GPUPROF_UTIL_UNFINISHED_H

/* Lists path (copied) as being written; does nothing when the table is full. Called
 * before the file is created: a signal that comes as it is created finds it listed. */
void unfinished_add(const char *path);
/* Takes path off the list (it was completed, renamed or removed). */
void unfinished_forget(const char *path);
/* Removes every file listed (async-signal-safe: unlink() only). */
void unfinished_remove_all(void);

#endif
