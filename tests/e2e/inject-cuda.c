/* Stands in for the CUDA driver: loads the CUDA backend the way the driver does
 * (dlopen the library named by CUDA_INJECTION64_PATH, call InitializeInjection) and
 * then goes on with its own work, so the tests can check what the backend does on a
 * machine where CUPTI cannot start. Exits with the code given as its argument. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	const char *path = getenv("CUDA_INJECTION64_PATH");
	if (!path) {
		fprintf(stderr, "inject-cuda: CUDA_INJECTION64_PATH is not set\n");
		return 100;
	}
	void *library = dlopen(path, RTLD_NOW);
	if (!library) {
		fprintf(stderr, "inject-cuda: %s\n", dlerror());
		return 101;
	}
	int (*initialize)(void) = (int (*)(void))dlsym(library, "InitializeInjection");
	if (!initialize) {
		fprintf(stderr, "inject-cuda: no InitializeInjection in %s\n", path);
		return 102;
	}
	int rc = initialize();
	printf("initialize returned %d; the program goes on\n", rc);
	return argc > 1 ? atoi(argv[1]) : 0;
}
