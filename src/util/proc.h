/* Small reads of /proc, for gpuprof's looks at other processes (dump, sys --pid, the
 * metrics). */
#ifndef GPUPROF_UTIL_PROC_H
#define GPUPROF_UTIL_PROC_H

#include <stddef.h>
#include <sys/types.h>

/* Reads a small file whole (at most size - 1 bytes) NUL-terminated into text: the bytes
 * read, or -1 (the file could not be opened or read: the process ended, say). */
ssize_t proc_read(const char *path, char *text, size_t size);

/* Appends to *pids (count *count, grown as needed) the processes pid started that still
 * run, each followed by its own, from /proc/PID/task/TID/children. */
void proc_descendants(pid_t pid, pid_t **pids, size_t *count);

#endif
