/* The files gpuprof is writing under a temporary name (<output>.partial), listed so that
 * a gpuprof stopped midway (a second Ctrl-C while it writes its outputs) removes them
 * instead of leaving half-written files behind. A fixed table: adding, removing and the
 * removal of all are safe from several threads, and the last from a signal handler. */
#ifndef GPUPROF_UTIL_UNFINISHED_H
#define GPUPROF_UTIL_UNFINISHED_H

/* Lists path (copied) as a file this thread is about to make (open, or rename onto);
 * does nothing when the table is full; a path another thread listed (unfinished_list())
 * is made by this one in the same entry. Called before the file is made, and followed
 * by unfinished_created() once it exists, or unfinished_forget() when it is not made: a
 * removal that comes in between waits for either. Once the files are being removed
 * (unfinished_remove_all, the process about to end) it never returns: no file is made
 * after the removal. */
void unfinished_add(const char *path);
/* Lists path as a file another thread makes, within its own unfinished_add() and
 * unfinished_created() (a rename onto it). */
void unfinished_list(const char *path);
/* Called once the listed file exists: when the removal ran between unfinished_add() and
 * here, removes it and never returns. */
void unfinished_created(const char *path);
/* Whether path is listed (by this thread or another). */
int unfinished_listed(const char *path);
/* Takes path off the list (it was completed, renamed or removed). */
void unfinished_forget(const char *path);
/* Removes every file listed, for a process that ends right after (_exit): first waits
 * (a few seconds at most) for the files other threads are making to exist, then unlinks.
 * Those threads' files made from then on are removed too, and the threads wait for the
 * end. Async-signal-safe: atomics, nanosleep(), gettid and unlink() only. */
void unfinished_remove_all(void);

#endif
