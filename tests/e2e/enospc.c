/* libenospc.so: a full disk for spools, for the resource-fault tests. Preloaded, it lets
 * the first GPUPROF_TEST_SPOOL_BYTES bytes written (writev) to files named *.spool
 * through, cuts the write that crosses that line short, and fails every later one with
 * ENOSPC, as a disk that fills up does. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

static _Atomic long long written;

static int is_spool(int fd)
{
	char link[64], path[4096];
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	ssize_t n = readlink(link, path, sizeof(path) - 1);
	if (n < 6)
		return 0;
	path[n] = '\0';
	return !strcmp(path + n - 6, ".spool");
}

__attribute__((visibility("default"))) ssize_t writev(int fd, const struct iovec *iov, int count)
{
	static ssize_t (*real)(int, const struct iovec *, int);
	if (!real)
		real = (ssize_t (*)(int, const struct iovec *, int))dlsym(RTLD_NEXT, "writev");
	const char *limit_text = getenv("GPUPROF_TEST_SPOOL_BYTES");
	if (!limit_text || !is_spool(fd))
		return real(fd, iov, count);
	long long limit = atoll(limit_text), room = limit - atomic_load(&written);
	size_t total = 0;
	for (int i = 0; i < count; i++)
		total += iov[i].iov_len;
	if (room <= 0) {
		errno = ENOSPC;
		return -1;
	}
	if ((long long)total <= room) {
		ssize_t n = real(fd, iov, count);
		if (n > 0)
			atomic_fetch_add(&written, n);
		return n;
	}
	/* the part that still fits: the first bytes of the first buffers */
	struct iovec part[64];
	int parts = 0;
	for (int i = 0; i < count && room > 0 && parts < 64; i++) {
		part[parts] = iov[i];
		if ((long long)part[parts].iov_len > room)
			part[parts].iov_len = (size_t)room;
		room -= (long long)part[parts++].iov_len;
	}
	ssize_t n = real(fd, part, parts);
	if (n > 0)
		atomic_fetch_add(&written, n);
	return n;
}
