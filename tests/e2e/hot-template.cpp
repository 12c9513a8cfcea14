// hot-template: a C++ program whose time goes to a function template instance (with a
// template inlined into it) and to a function in a library it loads with dlopen(), for
// the call-stack sampling tests.
//   hot-template LIBRARY   runs accumulate<double>() for about 0.5 s of CPU time, then
//                          loads LIBRARY and runs its in_library() for about 0.5 s;
//                          prints the CPU seconds of each
#include <dlfcn.h>
#include <time.h>

#include <cstdio>

namespace hot {
template <typename T>
__attribute__((always_inline)) inline T step(T sum, long i)
{
	return sum + static_cast<T>(i) * static_cast<T>(0.5);
}

template <typename T>
__attribute__((noinline)) T accumulate(long n)
{
	volatile T sum = 0;
	for (long i = 0; i < n; i++)
		sum = step<T>(sum, i);
	return sum;
}
} // namespace hot

static double cpu_seconds()
{
	timespec t;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) / 1e9;
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		std::fprintf(stderr, "usage: hot-template LIBRARY\n");
		return 2;
	}
	double before = cpu_seconds();
	double until = cpu_seconds() + 0.5;
	while (cpu_seconds() < until)
		hot::accumulate<double>(100000);
	double in_template = cpu_seconds() - before;
	void *library = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	if (!library) {
		std::fprintf(stderr, "hot-template: %s\n", dlerror());
		return 1;
	}
	auto in_library = reinterpret_cast<void (*)(double)>(dlsym(library, "in_library"));
	if (!in_library)
		return 1;
	before = cpu_seconds();
	in_library(0.5);
	std::printf("hot-template: done; CPU seconds: template %.3f, library %.3f\n",
		    in_template, cpu_seconds() - before);
	return 0;
}
