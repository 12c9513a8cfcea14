/* Growable string buffer (see strbuf.h). */
#include "util/strbuf.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

char strbuf_empty[1];

static int fail_softly;

void strbuf_fail_softly(void)
{
	fail_softly = 1;
}

/* Ends gpuprof with a message and exit status 1 (an error of its own), not with SIGABRT:
 * a script sees a failure it can report, and no core dump. Only what can be formatted
 * without memory is said. */
static void out_of_memory(size_t size)
{
	char line[96];
	int n = snprintf(line, sizeof(line), "gpuprof: out of memory (%zu bytes more could not "
					     "be had)\n", size);
	ssize_t ignored = write(STDERR_FILENO, line, n > 0 ? (size_t)n : 0);
	(void)ignored;
	_exit(1);
}

void *xrealloc(void *ptr, size_t size)
{
	void *p = realloc(ptr, size ? size : 1);
	if (!p)
		out_of_memory(size);
	return p;
}

void *xcalloc(size_t count, size_t size)
{
	void *p = calloc(count ? count : 1, size ? size : 1);
	if (!p)
		out_of_memory(count * size);
	return p;
}

char *xstrdup(const char *s)
{
	size_t n = strlen(s) + 1;
	return memcpy(xrealloc(NULL, n), s, n);
}

void strbuf_init(struct strbuf *sb)
{
	sb->buf = strbuf_empty;
	sb->len = 0;
	sb->alloc = 0;
	sb->failed = 0;
}

void strbuf_release(struct strbuf *sb)
{
	if (sb->alloc)
		free(sb->buf);
	strbuf_init(sb);
}

void strbuf_reset(struct strbuf *sb)
{
	sb->len = 0;
	if (sb->alloc)
		sb->buf[0] = '\0';
}

int strbuf_grow(struct strbuf *sb, size_t extra)
{
	/* a size no doubling reaches is never had */
	size_t need = extra < SIZE_MAX / 2 - sb->len ? sb->len + extra + 1 : SIZE_MAX;
	if (need <= sb->alloc)
		return 0;
	size_t alloc = sb->alloc ? sb->alloc : 64;
	while (alloc < need && alloc <= SIZE_MAX / 4)
		alloc *= 2;
	char *old = sb->alloc ? sb->buf : NULL;
	char *grown = alloc >= need ? realloc(old, alloc) : NULL;
	if (!grown) {
		if (!fail_softly)
			out_of_memory(alloc);
		sb->failed = 1;
		return -1;
	}
	sb->buf = grown;
	if (!old)
		sb->buf[0] = '\0';
	sb->alloc = alloc;
	return 0;
}

int strbuf_add_stream(struct strbuf *sb, FILE *in)
{
	char chunk[65536];
	size_t n;
	while ((n = fread(chunk, 1, sizeof(chunk), in)) > 0)
		strbuf_add(sb, chunk, n);
	return ferror(in) ? -1 : 0;
}

void strbuf_add(struct strbuf *sb, const void *data, size_t len)
{
	if (strbuf_grow(sb, len))
		return;
	memcpy(sb->buf + sb->len, data, len);
	sb->len += len;
	sb->buf[sb->len] = '\0';
}

void strbuf_addstr(struct strbuf *sb, const char *s)
{
	strbuf_add(sb, s, strlen(s));
}

void strbuf_addch(struct strbuf *sb, char c)
{
	if (strbuf_grow(sb, 1))
		return;
	sb->buf[sb->len++] = c;
	sb->buf[sb->len] = '\0';
}

void strbuf_vaddf(struct strbuf *sb, const char *fmt, va_list ap)
{
	va_list copy;
	va_copy(copy, ap);
	int n = vsnprintf(sb->buf + sb->len, sb->alloc ? sb->alloc - sb->len : 0, fmt, copy);
	va_end(copy);
	if (n < 0)
		return;
	if ((size_t)n >= (sb->alloc ? sb->alloc - sb->len : 0)) {
		if (strbuf_grow(sb, (size_t)n)) {
			if (sb->alloc) /* what the first try wrote past the end is cut off */
				sb->buf[sb->len] = '\0';
			return;
		}
		vsnprintf(sb->buf + sb->len, sb->alloc - sb->len, fmt, ap);
	}
	sb->len += (size_t)n;
}

void strbuf_addf(struct strbuf *sb, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	strbuf_vaddf(sb, fmt, ap);
	va_end(ap);
}

char *strbuf_detach(struct strbuf *sb)
{
	char *s = sb->alloc ? sb->buf : xstrdup("");
	strbuf_init(sb);
	return s;
}
