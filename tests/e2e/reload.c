/* reload: loads a library, spins in it, unloads it, then loads another file at what is
 * most often the same address (the first's range is the free one nearest the top), and
 * spins in that, for the test that samples are named after the file mapped when they
 * were taken.
 *
 *   reload FIRST SECOND   in_library(0.4) of FIRST, dlclose, in_library(0.6) of SECOND;
 *                         prints "reload: FIRST-BASE SECOND-BASE" (their load addresses) */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>

static void *spin_in(const char *path, double seconds, void **base)
{
	void *library = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	void (*in_library)(double) = library ? (void (*)(double))dlsym(library, "in_library") : NULL;
	Dl_info info;
	if (!in_library || !dladdr((void *)in_library, &info)) {
		fprintf(stderr, "reload: %s: %s\n", path, dlerror());
		return NULL;
	}
	*base = info.dli_fbase;
	in_library(seconds);
	return library;
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: reload FIRST SECOND\n");
		return 2;
	}
	void *first_base, *second_base;
	void *first = spin_in(argv[1], 0.4, &first_base);
	if (!first)
		return 1;
	dlclose(first);
	if (!spin_in(argv[2], 0.6, &second_base))
		return 1;
	printf("reload: %p %p\n", first_base, second_base);
	return 0;
}
