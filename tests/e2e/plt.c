/* plt: calls functions of the C library through its procedure linkage table (stubs in
 * .plt; __cxa_finalize's, bound at load, in .plt.got); built as it is and as
 * build/tests/plt-ibt (-fcf-protection, -z ibtplt: lazy entries that push their index,
 * and .plt.sec), for the tests that name the stubs (test_frame_names.py). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
	const char *more = argc > 1 ? argv[1] : "";
	size_t n = strlen(argv[0]) + strlen(more);
	char *copy = malloc(n + 1);
	if (!copy)
		return 1;
	snprintf(copy, n + 1, "%s%s", argv[0], more);
	puts(copy);
	free(copy);
	return 0;
}
