/* libclwork.so: a library of the program's own, linked against OpenCL, that the
 * private-opencl test program loads with dlopen(RTLD_LOCAL), as Python loads pyopencl. */
#include "clwork.h"

__attribute__((visibility("default"))) int clwork_linked(int kernels)
{
	static const struct clwork_api api = {
#define LINKED(name) .name = cl##name,
		CLWORK_FUNCTIONS(LINKED)
	};
	return clwork_run(&api, kernels);
}
