/* Finding gpuprof's own files (see install.h). */
#include "util/install.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/sort.h"

int install_path(const char *relative, struct strbuf *out, struct error *err)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n < 0)
		return error_set(err, "cannot find the gpuprof executable: %s", strerror(errno));
	exe[n] = '\0';
	char *slash = strrchr(exe, '/');
	if (slash)
		*slash = '\0';
	strbuf_reset(out);
	strbuf_addf(out, "%s/../%s", exe, relative);
	return 0;
}

int presets_directory(struct strbuf *out, struct error *err)
{
	return install_path("share/gpuprof/presets", out, err);
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

void presets_list(const char *dir, struct strbuf *names)
{
	DIR *d = opendir(dir);
	char **found = NULL;
	size_t count = 0;
	for (struct dirent *e; d && (e = readdir(d));) {
		size_t len = strlen(e->d_name);
		if (len > 5 && !strcmp(e->d_name + len - 5, ".yaml") && e->d_name[0] != '.') {
			found = xrealloc(found, (count + 1) * sizeof(*found));
			found[count] = xstrdup(e->d_name);
			found[count++][len - 5] = '\0';
		}
	}
	if (d)
		closedir(d);
	sort_array(found, count, sizeof(*found), by_name);
	for (size_t i = 0; i < count; i++) {
		strbuf_addf(names, "%s%s", names->len ? ", " : "", found[i]);
		free(found[i]);
	}
	free(found);
}
