/* The fuzz targets' shared helpers (fuzz.h). */
#include "fuzz.h"

#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "commands/commands.h"
#include "commands/output.h"
#include "store/store.h"
#include "writer/run-summary.h"

static int remove_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	return remove(path) < 0 ? -1 : 0;
}

static void remove_directory(void)
{
	if (nftw(fuzz_directory(), remove_entry, 16, FTW_DEPTH | FTW_PHYS) < 0)
		fprintf(stderr, "cannot remove %s\n", fuzz_directory());
}

const char *fuzz_directory(void)
{
	static char path[PATH_MAX];
	if (!path[0]) {
		snprintf(path, sizeof(path), "%s/gpuprof-fuzz-XXXXXX",
			 access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp");
		if (!mkdtemp(path)) {
			perror(path);
			abort();
		}
		atexit(remove_directory);
	}
	return path;
}

const char *fuzz_file(const char *name, const uint8_t *data, size_t size)
{
	static char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/%s", fuzz_directory(), name);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || write(fd, data, size) != (ssize_t)size) {
		perror(path);
		abort();
	}
	close(fd);
	return path;
}

void fuzz_read_database(char *path)
{
	char prefix[PATH_MAX], merged[PATH_MAX];
	snprintf(prefix, sizeof(prefix), "%s/out", fuzz_directory());
	snprintf(merged, sizeof(merged), "%s/merged.db", fuzz_directory());
	struct output_request request = {
		.formats = FORMAT_CSV | FORMAT_JSON | FORMAT_PFTRACE | FORMAT_HTML,
		.summary = 1,
		.options = { .truncate_kernels = 1, .stats = 1, .summary_units = "msec" },
	};
	struct error err;
	output_from_database(path, prefix, &request, &err);
	run_summary_print(&path, 1, "text", "usec", &err);
	remove(merged);
	char *twice[] = { path, path }; /* the second's recordings are all repeats */
	struct strbuf warnings = STRBUF_INIT;
	store_merge(twice, 2, NULL, 0, merged, &warnings, NULL, &err);
	strbuf_release(&warnings);
}
