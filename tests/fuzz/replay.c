/* Runs a fuzz target over its committed corpus, tests/fuzz/corpus/NAME (or the files
 * and directories given), one input at a time, as libFuzzer would. An input that
 * crashes the target or trips a sanitizer fails the run. Prints
 * "fuzz-NAME: N passed, 0 failed". */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "fuzz.h"

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
	int count = 0, failed = 0;
	for (; *paths; paths++)
		run_path(*paths, &count, &failed);
	if (count == 0) {
		fprintf(stderr, "fuzz-%s: no inputs to replay\n", FUZZ_NAME);
		failed++;
	}
	printf("fuzz-%s: %d passed, %d failed\n", FUZZ_NAME, count - failed, failed);
	return failed != 0;
}
