/* reload: loads a library, spins in it, unloads it, then loads another file at what is
 * most often the same address (the first's range is the free one nearest the top), and
 * spins in that, for the test that samples are named after the file mapped when they
 * were taken.
 *
 *   reload FIRST SECOND   in_library(0.4) of FIRST, dlclose, in_library(0.6) of SECOND;
 *                         prints "reload: FIRST-BASE SECOND-BASE FIRST-USER SECOND-USER"
 *                         (their load addresses, and the user seconds of each spin: the
 *                         time samples are of, without the kernel's share) */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <sys/resource.h>

static double user_seconds(void)
{
	struct rusage u;
	getrusage(RUSAGE_THREAD, &u);
	return (double)u.ru_utime.tv_sec + (double)u.ru_utime.tv_usec / 1e6;
}

static void *spin_in(const char *path, double seconds, void **base, double *user)
{
	void *library = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	void (*in_library)(double) = library ? (void (*)(double))dlsym(library, "in_library") : NULL;
	Dl_info info;
	if (!in_library || !dladdr((void *)in_library, &info)) {
		fprintf(stderr, "reload: %s: %s\n", path, dlerror());
		return NULL;
	}
	*base = info.dli_fbase;
	double before = user_seconds();
	in_library(seconds);
	*user = user_seconds() - before;
	return library;
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: reload FIRST SECOND\n");
		return 2;
	}
	void *first_base, *second_base;
	double first_user, second_user;
	void *first = spin_in(argv[1], 0.4, &first_base, &first_user);
	if (!first)
		return 1;
	dlclose(first);
	if (!spin_in(argv[2], 0.6, &second_base, &second_user))
		return 1;
	printf("reload: %p %p %.3f %.3f\n", first_base, second_base, first_user, second_user);
	return 0;
}
