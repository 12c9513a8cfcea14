/* The recorder's files (see recorder-internal.h): its own descriptors, the spool's name
 * and creation, its registration with `gpuprof trace`, and the command line it records. */
#include "runtime/recorder-internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/paths.h"
#include "core/spool.h"
#include "runtime/recorder.h"
#include "util/error.h"
#include "util/strbuf.h"

/* A descriptor of the recorder's own, never 0, 1 or 2: a program started with its
 * standard streams closed must not find its output written into the spool. Takes fd. */
int recorder_fd_above_stdio(int fd)
{
	if (fd < 0 || fd > STDERR_FILENO)
		return fd;
	int moved = fcntl(fd, F_DUPFD_CLOEXEC, STDERR_FILENO + 1);
	int saved = errno;
	close(fd);
	errno = saved;
	return moved;
}

int recorder_open_private(const char *path, int flags, mode_t mode)
{
	return recorder_fd_above_stdio(open(path, flags | O_CLOEXEC, mode));
}

void recorder_command_line(struct strbuf *out)
{
	char buffer[4096];
	int fd = recorder_open_private("/proc/self/cmdline", O_RDONLY, 0);
	ssize_t n = fd >= 0 ? read(fd, buffer, sizeof(buffer) - 1) : -1;
	if (fd >= 0)
		close(fd);
	for (ssize_t i = 0; i < n; i++)
		strbuf_addch(out, buffer[i] ? buffer[i] : ' ');
	while (out->len && out->buf[out->len - 1] == ' ')
		out->buf[--out->len] = '\0';
}

/* Bound on the spools of one process: its images (exec()) and name collisions. */
#define MAX_IMAGES 1000

int recorder_spool_create(const struct path_context *ctx, char *spool_path, size_t size)
{
	const char *dir = getenv("GPUPROF_OUTPUT_PATH");
	const char *file = getenv("GPUPROF_OUTPUT_FILE");
	struct strbuf template = STRBUF_INIT, prefix = STRBUF_INIT;
	struct error err;
	path_output_template(&template, dir && *dir ? dir : ".",
			     file && *file ? file : "%hostname%/%pid%");
	int fd = -1;
	if (path_expand(template.buf, ctx, &prefix, &err) < 0) {
		recorder_report("%s; collection disabled", err.message);
		goto out;
	}
	if (template.failed || prefix.failed)
		goto no_memory;
	/* Taken already: by another process when the name has no pid (then <name>_<pid>), or
	 * by an earlier image of this process, which exec()ed this one (then <name>-2, -3...) */
	size_t base = prefix.len;
	int named_by_pid = strstr(template.buf, "%pid%") != NULL;
	for (int attempt = 0; attempt < MAX_IMAGES; attempt++) {
		prefix.len = base;
		prefix.buf[base] = '\0';
		if (attempt && !named_by_pid)
			strbuf_addf(&prefix, "_%d", (int)ctx->pid);
		int image = named_by_pid ? attempt + 1 : attempt;
		if (image > 1)
			strbuf_addf(&prefix, "-%d", image);
		if (prefix.failed)
			goto no_memory;
		snprintf(spool_path, size, "%s.spool", prefix.buf);
		if (path_make_parents(spool_path, 1, &err) < 0) {
			recorder_report("%s; collection disabled", err.message);
			goto out;
		}
		fd = recorder_open_private(spool_path, O_RDWR | O_CREAT | O_EXCL | O_APPEND, 0666);
		if (fd >= 0 || errno != EEXIST)
			break;
	}
	if (fd < 0)
		recorder_report("cannot create '%s': %s; collection disabled", spool_path, strerror(errno));
	else if (spool_write_header(fd, &err) < 0) {
		recorder_report("cannot write '%s': %s; collection disabled", spool_path, err.message);
		close(fd);
		fd = -1;
	}
	goto out;
no_memory:
	recorder_report("out of memory for the spool's name; collection disabled");
out:
	strbuf_release(&template);
	strbuf_release(&prefix);
	return fd;
}

void recorder_spool_register(const char *spool_path)
{
	const char *manifest = getenv("GPUPROF_MANIFEST");
	if (!manifest || !*manifest)
		return;
	int fd = recorder_open_private(manifest, O_WRONLY | O_APPEND, 0);
	if (fd < 0)
		return;
	/* one write of the path and its NUL: appends of processes never interleave */
	ssize_t ignored = write(fd, spool_path, strlen(spool_path) + 1);
	(void)ignored;
	close(fd);
}

/* The writer takes metadata_lock inside writer_lock, so fork() does too. */
