/* The files gpuprof is writing under a temporary name (<output>.partial), listed so that
 * a gpuprof stopped midway (a second Ctrl-C while it writes its outputs) removes them
 * instead of leaving half-written files behind. A fixed table: adding, removing and the
 * removal of all are safe from several threads, and the last from a signal handler. */
#ifndef GPUPROF_UTIL_UNFINISHED_H
#define GPUPROF_UTIL_UNFINISHED_H

/* Lists path (copied) as being written; does nothing when the table is full. Called
 * before the file is created: a signal that comes as it is created finds it listed.
 * Once the files are being removed (unfinished_remove_all, the process about to end) it
 * never returns: no file is made after the removal. */
void unfinished_add(const char *path);
/* Called once the listed file exists: when the removal ran between unfinished_add() and
 * its creation, removes it and never returns. */
void unfinished_created(const char *path);
/* Takes path off the list (it was completed, renamed or removed). */
void unfinished_forget(const char *path);
/* Removes every file listed (async-signal-safe: unlink() only), for a process that
 * ends right after (_exit): the other threads' files made from then on are removed too,
 * and those threads wait for the end. */
void unfinished_remove_all(void);

#endif
