/* A growable, always NUL-terminated string buffer.
 *
 * Contract: after strbuf_init() `buf` is a valid empty string; every append grows the
 * buffer as needed. When memory is exhausted, gpuprof's own process ends with a message
 * (exit status 1); in a process that called strbuf_fail_softly() (gpuprof's libraries
 * inside a program, which must never end it) the append is left out instead, the
 * buffer keeps what it had and `failed` is set. strbuf_release() frees the memory and
 * leaves an empty, reusable buffer. */
#ifndef GPUPROF_UTIL_STRBUF_H
#define GPUPROF_UTIL_STRBUF_H

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

struct strbuf {
	char *buf;    /* NUL-terminated contents */
	size_t len;   /* bytes in use, excluding the NUL */
	size_t alloc; /* bytes allocated; 0 while buf points at a static empty string */
	int failed;   /* an append was left out for want of memory (strbuf_fail_softly) */
};

#define STRBUF_INIT { .buf = strbuf_empty, .len = 0, .alloc = 0, .failed = 0 }
extern char strbuf_empty[];

void strbuf_init(struct strbuf *sb);
void strbuf_release(struct strbuf *sb);
void strbuf_reset(struct strbuf *sb);
/* Room for `extra` more bytes: 0, or -1 when memory could not be had (only after
 * strbuf_fail_softly(); `failed` is then set). */
int strbuf_grow(struct strbuf *sb, size_t extra);
void strbuf_add(struct strbuf *sb, const void *data, size_t len);
/* What is left of a stream appended: 0, or -1 when reading it failed (ferror). */
int strbuf_add_stream(struct strbuf *sb, FILE *in);
void strbuf_addstr(struct strbuf *sb, const char *s);
void strbuf_addch(struct strbuf *sb, char c);
void strbuf_addf(struct strbuf *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void strbuf_vaddf(struct strbuf *sb, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));
/* Detaches and returns the malloc'd string; the buffer is left empty. */
char *strbuf_detach(struct strbuf *sb);

/* From now on, in this copy of the code (each of gpuprof's libraries has its own), an
 * append that finds no memory is left out rather than ending the process. */
void strbuf_fail_softly(void);

/* realloc/calloc/strdup that end the process with a message when memory is exhausted:
 * for gpuprof's own process only, never inside a program it profiles. */
void *xrealloc(void *ptr, size_t size);
void *xcalloc(size_t count, size_t size);
char *xstrdup(const char *s);

#endif
