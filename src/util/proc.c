/* Small reads of /proc (see proc.h). */
#include "util/proc.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "util/strbuf.h"

ssize_t proc_read(const char *path, char *text, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	size_t used = 0;
	ssize_t n = 0;
	while (used + 1 < size && (n = read(fd, text + used, size - 1 - used)) > 0)
		used += (size_t)n;
	close(fd);
	text[used] = '\0';
	return n < 0 && !used ? -1 : (ssize_t)used;
}

void proc_descendants(pid_t pid, pid_t **pids, size_t *count)
{
	size_t from = *count;
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	DIR *d = opendir(path);
	if (!d)
		return;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (e->d_name[0] < '0' || e->d_name[0] > '9')
			continue;
		char file[320], text[4096];
		snprintf(file, sizeof(file), "/proc/%d/task/%s/children", (int)pid, e->d_name);
		if (proc_read(file, text, sizeof(text)) <= 0)
			continue;
		for (char *p = text, *end; *p; p = end) {
			long child = strtol(p, &end, 10);
			if (end == p)
				break;
			*pids = xrealloc(*pids, (*count + 1) * sizeof(**pids));
			(*pids)[(*count)++] = (pid_t)child;
		}
	}
	closedir(d);
	for (size_t i = from, n = *count; i < n; i++)
		proc_descendants((*pids)[i], pids, count);
}
