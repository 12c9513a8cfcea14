/* Runs a fuzz target over its committed corpus, tests/fuzz/corpus/NAME, or over the
 * files and directories given, one input at a time, as libFuzzer would. An input that
 * crashes the target or trips a sanitizer fails the run. What the target prints is shown
 * only for inputs given by name (the corpus replays quietly, as in the test suite); a
 * sanitizer's report always is.
 * Prints "fuzz-NAME: N passed, 0 failed". */
#include <dirent.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz.h"

/* Where a sanitizer's runtime, when linked in, writes its reports. */
void __sanitizer_set_report_fd(void *fd) __attribute__((weak));

static int run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		perror(path);
		return -1;
	}
	size_t capacity = 1 << 16, size = 0, n;
	uint8_t *data = malloc(capacity);
	while (data && (n = fread(data + size, 1, capacity - size, f)) > 0) {
		size += n;
		if (size == capacity)
			data = realloc(data, capacity *= 2);
	}
	fclose(f);
	if (!data) {
		fprintf(stderr, "%s: out of memory\n", path);
		return -1;
	}
	LLVMFuzzerTestOneInput(data, size);
	free(data);
	return 0;
}

/* Runs every input of path (a file, or the files of a directory in name order),
 * counting them and those that could not be read. */
static void run_path(const char *path, int *count, int *failed)
{
	struct stat st;
	if (stat(path, &st) < 0) {
		perror(path);
		++*failed;
		return;
	}
	if (!S_ISDIR(st.st_mode)) {
		++*count;
		*failed += run_file(path) < 0;
		return;
	}
	struct dirent **entries;
	int n = scandir(path, &entries, NULL, alphasort);
	if (n < 0) {
		perror(path);
		++*failed;
		return;
	}
	for (int i = 0; i < n; i++) {
		if (entries[i]->d_name[0] != '.') {
			char file[4096];
			snprintf(file, sizeof(file), "%s/%s", path, entries[i]->d_name);
			++*count;
			*failed += run_file(file) < 0;
		}
		free(entries[i]);
	}
	free(entries);
}

int main(int argc, char **argv)
{
	static char *corpus[] = { "tests/fuzz/corpus/" FUZZ_NAME, NULL };
	char **paths = argc > 1 ? argv + 1 : corpus;
	int count = 0, failed = 0, quiet = argc == 1;
	int saved_out = dup(STDOUT_FILENO), saved_err = dup(STDERR_FILENO);
	if (quiet) {
		printf("fuzz-%s: replaying %s (quietly: name it to see the output)\n", FUZZ_NAME,
		       corpus[0]);
		fflush(stdout);
		if (__sanitizer_set_report_fd)
			__sanitizer_set_report_fd((void *)(intptr_t)saved_err);
		int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
		dup2(null, STDOUT_FILENO);
		dup2(null, STDERR_FILENO);
		close(null);
	}
	for (; *paths; paths++)
		run_path(*paths, &count, &failed);
	fflush(stdout);
	fflush(stderr);
	dup2(saved_out, STDOUT_FILENO);
	dup2(saved_err, STDERR_FILENO);
	if (count == 0) {
		fprintf(stderr, "fuzz-%s: no inputs to replay\n", FUZZ_NAME);
		failed++;
	}
	printf("fuzz-%s: %d passed, %d failed\n", FUZZ_NAME, count - failed, failed);
	return failed != 0;
}
