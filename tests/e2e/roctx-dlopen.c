/* roctx-dlopen: code written for ROCm that finds the ROCTX library by name at run time,
 * as Julia's `@ccall "libroctx64".roctxRangePushA(...)` does: no link-time dependency.
 * Pushes "load" and "parse" (nested), marks "checkpoint", starts and stops "async";
 * prints what each call returned. Exits 3 when no libroctx64.so can be found. */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>

int main(void)
{
	void *lib = dlopen("libroctx64.so", RTLD_NOW);
	if (!lib) {
		fprintf(stderr, "roctx-dlopen: %s\n", dlerror());
		return 3;
	}
	int (*push)(const char *) = (int (*)(const char *))dlsym(lib, "roctxRangePushA");
	int (*pop)(void) = (int (*)(void))dlsym(lib, "roctxRangePop");
	void (*mark)(const char *) = (void (*)(const char *))dlsym(lib, "roctxMarkA");
	uint64_t (*start)(const char *) = (uint64_t (*)(const char *))dlsym(lib, "roctxRangeStartA");
	void (*stop)(uint64_t) = (void (*)(uint64_t))dlsym(lib, "roctxRangeStop");
	if (!push || !pop || !mark || !start || !stop) {
		fprintf(stderr, "roctx-dlopen: a ROCTX function is missing\n");
		return 3;
	}
	printf("push load: %d\n", push("load"));
	printf("push parse: %d\n", push("parse"));
	mark("checkpoint");
	uint64_t id = start("async");
	printf("pop: %d\n", pop());
	stop(id);
	printf("pop: %d\n", pop());
	printf("pop: %d\n", pop());
	return 0;
}
