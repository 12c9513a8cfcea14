/* Error reporting helpers (see error.h). */
#include "util/error.h"

#include <stdio.h>
#include <stdlib.h>

static const char *program_name = "gpuprof";

void error_set_program(const char *name)
{
	program_name = name;
}

int error_set(struct error *err, const char *fmt, ...)
{
	if (err) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(err->message, sizeof(err->message), fmt, ap);
		va_end(ap);
	}
	return -1;
}

static __attribute__((format(printf, 1, 0))) void report(const char *fmt, va_list ap)
{
	fprintf(stderr, "%s: ", program_name);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void warn(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	report(fmt, ap);
	va_end(ap);
}

void die(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	report(fmt, ap);
	va_end(ap);
	exit(EXIT_FAILED);
}

void die_with(int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	report(fmt, ap);
	va_end(ap);
	exit(code);
}
