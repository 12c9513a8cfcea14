/* Finds OpenCL itself, as hashcat and ctypes users do: dlopen("libOpenCL.so") (or
 * libOpenCL.so.1) and dlsym() of every function on that handle; not linked against
 * OpenCL. Usage: own-handle KERNELS */
#include <dlfcn.h>
#include <stdlib.h>

#include "clwork.h"

int main(int argc, char **argv)
{
	void *lib = dlopen("libOpenCL.so", RTLD_NOW | RTLD_LOCAL);
	if (!lib)
		lib = dlopen("libOpenCL.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		fprintf(stderr, "no OpenCL library: %s\n", dlerror());
		return 2;
	}
	struct clwork_api api;
#define LOOKUP(name) \
	if (!(api.name = (__typeof__(api.name))dlsym(lib, "cl" #name))) { \
		fprintf(stderr, "no cl" #name "\n"); \
		return 2; \
	}
	CLWORK_FUNCTIONS(LOOKUP)
	return clwork_run(&api, argc > 1 ? atoi(argv[1]) : 10);
}
