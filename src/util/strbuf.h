/* A growable, always NUL-terminated string buffer.
 *
 * Contract: after strbuf_init() `buf` is a valid empty string; every append grows the
 * buffer as needed and aborts the program only if memory is exhausted (xrealloc).
 * strbuf_release() frees the memory and leaves an empty, reusable buffer. */
#ifndef GPUPROF_UTIL_STRBUF_H
#define GPUPROF_UTIL_STRBUF_H

#include <stdarg.h>
#include <stddef.h>

struct strbuf {
	char *buf;    /* NUL-terminated contents */
	size_t len;   /* bytes in use, excluding the NUL */
	size_t alloc; /* bytes allocated; 0 while buf points at a static empty string */
};

#define STRBUF_INIT { .buf = strbuf_empty, .len = 0, .alloc = 0 }
extern char strbuf_empty[];

void strbuf_init(struct strbuf *sb);
void strbuf_release(struct strbuf *sb);
void strbuf_reset(struct strbuf *sb);
void strbuf_grow(struct strbuf *sb, size_t extra);
void strbuf_add(struct strbuf *sb, const void *data, size_t len);
void strbuf_addstr(struct strbuf *sb, const char *s);
void strbuf_addch(struct strbuf *sb, char c);
void strbuf_addf(struct strbuf *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void strbuf_vaddf(struct strbuf *sb, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));
/* Detaches and returns the malloc'd string; the buffer is left empty. */
char *strbuf_detach(struct strbuf *sb);

/* realloc/malloc/strdup that abort with a message when memory is exhausted. */
void *xrealloc(void *ptr, size_t size);
void *xcalloc(size_t count, size_t size);
char *xstrdup(const char *s);

#endif
