/* Threads of gpuprof's commands (not of the recorder in the program): started with a
 * stack of THREAD_STACK_BYTES rather than the 8 MiB glibc takes from RLIMIT_STACK, which a
 * limit of data memory (RLIMIT_DATA) counts whole though little of it is touched. */
#ifndef GPUPROF_UTIL_THREAD_H
#define GPUPROF_UTIL_THREAD_H

#include <pthread.h>

#define THREAD_STACK_BYTES (2u << 20) /* what SQLite, elfutils and the writers need */

/* The CPUs this process may run on (its affinity), at least 1. */
int thread_cpus(void);

/* As pthread_create with default attributes but the stack: 0, or the error number. */
int thread_create(pthread_t *thread, void *(*run)(void *), void *arg);

#endif
