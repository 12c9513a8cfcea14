/* Single-file outputs (see output-file.h). */
#include "writer/output-file.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/unfinished.h"

void output_partial_name(struct strbuf *out, const char *path)
{
	strbuf_reset(out);
	strbuf_addf(out, "%s.partial", path);
}

int output_publish(const char *path, struct error *err)
{
	struct strbuf partial = STRBUF_INIT;
	output_partial_name(&partial, path);
	int rc = 0;
	unfinished_forget(partial.buf);
	if (rename(partial.buf, path) < 0) {
		rc = error_set(err, "cannot rename '%s' to '%s': %s", partial.buf, path,
			       strerror(errno));
		unlink(partial.buf);
	}
	strbuf_release(&partial);
	return rc;
}

void output_discard(const char *path)
{
	struct strbuf partial = STRBUF_INIT;
	output_partial_name(&partial, path);
	unfinished_forget(partial.buf);
	unlink(partial.buf);
	strbuf_release(&partial);
}

FILE *output_partial_open(const char *path, struct error *err)
{
	struct strbuf partial = STRBUF_INIT;
	output_partial_name(&partial, path);
	unfinished_add(partial.buf);
	FILE *out = fopen(partial.buf, "we");
	if (!out) {
		error_set(err, "cannot create '%s': %s", partial.buf, strerror(errno));
		unfinished_forget(partial.buf);
	} else {
		unfinished_created(partial.buf);
	}
	strbuf_release(&partial);
	return out;
}

int output_file_open(struct output_file *f, const char *prefix, const char *suffix,
		     struct error *err)
{
	struct strbuf path = STRBUF_INIT;
	strbuf_addf(&path, "%s%s", prefix, suffix);
	f->path = strbuf_detach(&path);
	f->out = output_partial_open(f->path, err);
	return f->out ? 0 : -1;
}

int output_file_write(struct output_file *f, const void *data, size_t size, struct error *err)
{
	if (size && fwrite_unlocked(data, 1, size, f->out) != size)
		return error_set(err, "cannot write '%s': %s", f->path, strerror(errno));
	return 0;
}

int output_file_close(struct output_file *f, int failed, struct strbuf *written,
		      struct error *err)
{
	if (f->out) {
		int bad = ferror(f->out), e = errno;
		if ((fclose(f->out) != 0 || bad) && !failed) {
			error_set(err, "cannot write '%s': %s", f->path, strerror(bad ? e : errno));
			failed = 1;
		}
		if (failed) {
			output_discard(f->path);
		} else if (output_publish(f->path, err)) {
			failed = 1;
		} else {
			strbuf_addf(written, "%s\n", f->path);
		}
	}
	free(f->path);
	f->path = NULL;
	f->out = NULL;
	return failed ? -1 : 0;
}
