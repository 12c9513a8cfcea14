/* Loads OpenCL only privately: dlopen(RTLD_LOCAL) of a library of its own (libclwork.so,
 * beside it) that is linked against OpenCL. Usage: private-opencl KERNELS */
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	char path[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 32);
	if (n < 0)
		return 2;
	path[n] = '\0';
	strcpy(strrchr(path, '/') + 1, "libclwork.so");
	void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	int (*run)(int) = lib ? (int (*)(int))dlsym(lib, "clwork_linked") : NULL;
	if (!run) {
		fprintf(stderr, "cannot load %s: %s\n", path, dlerror());
		return 2;
	}
	return run(argc > 1 ? atoi(argv[1]) : 10);
}
