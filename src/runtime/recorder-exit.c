/* The C library's _exit() and exec() functions, defined by the recorder (recorder.h):
 * when it is preloaded, the program's calls reach these first, which end recording (a
 * flush) before the process leaves or replaces its image. */
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "runtime/recorder-internal.h"
#include "runtime/recorder.h"
#include "util/strbuf.h"

/* ---- the process's end without exit(), and exec() ------------------------------------ */

/* When the recorder is preloaded (`gpuprof trace` does), these definitions come before
 * the C library's: _exit() (Python's os._exit, forked workers) skips the exit handlers
 * that flush, and exec() replaces the image with its unflushed records. Both flush
 * first. A vfork()ed child shares the parent's memory: getpid() tells it apart, and it
 * touches nothing. */

typedef int (*exec_fn)(const char *, char *const[], char *const[]);

/* The C library's functions these stand in for, found once when the recorder loads:
 * _exit() and the exec functions run in children of fork() and in signal handlers,
 * where dlsym() is not safe (it takes the dynamic loader's lock, and allocates, whose
 * lock a thread of the parent may have held at the fork: a child of a program built
 * with AddressSanitizer hung so). Found later only if called before that. */
static struct {
	void (*exit)(int);
	exec_fn execve, execvpe;
	int (*fexecve)(int, char *const[], char *const[]);
} next_fn;

__attribute__((constructor)) static void find_next_functions(void)
{
	strbuf_fail_softly(); /* this library lives in the program: it never ends it */
	*(void **)&next_fn.exit = dlsym(RTLD_NEXT, "_exit");
	*(void **)&next_fn.execve = dlsym(RTLD_NEXT, "execve");
	*(void **)&next_fn.execvpe = dlsym(RTLD_NEXT, "execvpe");
	*(void **)&next_fn.fexecve = dlsym(RTLD_NEXT, "fexecve");
}

RECORDER_API void _exit(int status)
{
	recorder_stop_before_leaving();
	if (next_fn.exit)
		next_fn.exit(status);
	for (;;)
		syscall(SYS_exit_group, status);
}

RECORDER_API void _Exit(int status)
{
	_exit(status);
}

/* The exec function *next (named `symbol`: execve or execvpe), the spool flushed and
 * closed first and reopened if the exec fails. */
static int exec_next(exec_fn *next, const char *symbol, const char *file, char *const argv[],
		     char *const envp[])
{
	int stopped = recorder_stop_before_leaving();
	if (!*next)
		*(void **)next = dlsym(RTLD_NEXT, symbol);
	int rc = *next ? (*next)(file, argv, envp) : (errno = ENOSYS, -1);
	recorder_resume_after_failed_exec(stopped);
	return rc;
}

RECORDER_API int execve(const char *path, char *const argv[], char *const envp[])
{
	return exec_next(&next_fn.execve, "execve", path, argv, envp);
}

RECORDER_API int execv(const char *path, char *const argv[])
{
	return execve(path, argv, environ);
}

RECORDER_API int execvpe(const char *file, char *const argv[], char *const envp[])
{
	return exec_next(&next_fn.execvpe, "execvpe", file, argv, envp);
}

RECORDER_API int execvp(const char *file, char *const argv[])
{
	return execvpe(file, argv, environ);
}

RECORDER_API int fexecve(int fd, char *const argv[], char *const envp[])
{
	int stopped = recorder_stop_before_leaving();
	if (!next_fn.fexecve)
		*(void **)&next_fn.fexecve = dlsym(RTLD_NEXT, "fexecve");
	int rc = next_fn.fexecve ? next_fn.fexecve(fd, argv, envp) : (errno = ENOSYS, -1);
	recorder_resume_after_failed_exec(stopped);
	return rc;
}

/* execl(), execlp(), execle(): their arguments gathered into an argv, then as above. */
#define GATHER_ARGS(first, ap, argv) \
	size_t count = 1; \
	va_start(ap, first); \
	while (va_arg(ap, const char *)) \
		count++; \
	va_end(ap); \
	char *argv[count + 1]; \
	argv[0] = (char *)first; \
	va_start(ap, first); \
	for (size_t i = 1; i <= count; i++) \
		argv[i] = va_arg(ap, char *)

RECORDER_API int execl(const char *path, const char *arg, ...)
{
	va_list ap;
	GATHER_ARGS(arg, ap, argv);
	va_end(ap);
	return execve(path, argv, environ);
}

RECORDER_API int execlp(const char *file, const char *arg, ...)
{
	va_list ap;
	GATHER_ARGS(arg, ap, argv);
	va_end(ap);
	return execvpe(file, argv, environ);
}

RECORDER_API int execle(const char *path, const char *arg, ...)
{
	va_list ap;
	GATHER_ARGS(arg, ap, argv);
	char *const *envp = va_arg(ap, char *const *);
	va_end(ap);
	return execve(path, argv, envp);
}
