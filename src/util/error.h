/* Error reporting: command-level die()/warn() and a small error struct that library
 * code fills in instead of printing or exiting. */
#ifndef GPUPROF_UTIL_ERROR_H
#define GPUPROF_UTIL_ERROR_H

#include <stdarg.h>

/* Exit codes of the gpuprof command itself (the target's status passes through
 * unchanged; these are used only when gpuprof fails on its own). */
enum {
	EXIT_FAILED = 1,      /* a runtime error: unreadable input, unwritable output */
	EXIT_USAGE = 2,       /* bad command line */
	EXIT_CANNOT_RUN = 126, /* the target exists but could not be executed */
	EXIT_NOT_FOUND = 127,  /* the target was not found */
};

/* Library functions return 0 or a negative value and describe the failure here. */
struct error {
	char message[512];
};

/* Sets err->message (err may be NULL); always returns -1 so callers can
 * `return error_set(err, ...)`. */
int error_set(struct error *err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* The program name used as the prefix of every message ("gpuprof"). */
void error_set_program(const char *name);

/* "gpuprof: <message>" on stderr. */
void warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* "gpuprof: <message>" on stderr, then exit(EXIT_FAILED). */
void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
/* As die() with an explicit exit code. */
void die_with(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3), noreturn));

#endif
