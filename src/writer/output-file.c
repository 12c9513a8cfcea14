/* Single-file outputs (see output-file.h). */
#include "writer/output-file.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int output_file_open(struct output_file *f, const char *prefix, const char *suffix,
		     struct error *err)
{
	struct strbuf path = STRBUF_INIT;
	strbuf_addf(&path, "%s%s", prefix, suffix);
	f->path = strbuf_detach(&path);
	f->out = fopen(f->path, "we");
	if (!f->out)
		return error_set(err, "cannot create '%s': %s", f->path, strerror(errno));
	return 0;
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
		if (failed)
			unlink(f->path);
		else
			strbuf_addf(written, "%s\n", f->path);
	}
	free(f->path);
	f->path = NULL;
	f->out = NULL;
	return failed ? -1 : 0;
}
