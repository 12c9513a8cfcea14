/* jit: a program that makes code at run time and names it in /tmp/perf-PID.map, as
 * CPython 3.12's perf support and JIT compilers do, for the sampling tests.
 *
 * Two pieces of code are made: a trampoline that sets up a frame pointer and calls the
 * function it is given (CPython's shape), named "py::hot:/srv/app/jit.py", and a second
 * one named "jitted trampoline". main() calls hot() through the first and cold() through
 * the second; hot() spins 0.6 s of CPU time, cold() 0.2 s. Prints the value of
 * PYTHONPERFSUPPORT it was given and the CPU seconds of each call (the samples are of
 * its user time: the system time a loaded or sanitized run adds is not sampled), and
 * removes its map before it exits. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static volatile double sink;

__attribute__((noinline)) void spin(double seconds)
{
	struct timespec t;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	double until = (double)t.tv_sec + (double)t.tv_nsec / 1e9 + seconds;
	do {
		for (long i = 0; i < 100000; i++)
			sink += (double)i * 0.5;
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	} while ((double)t.tv_sec + (double)t.tv_nsec / 1e9 < until);
}

__attribute__((noinline)) void hot(void)
{
	spin(0.6);
}

__attribute__((noinline)) void cold(void)
{
	spin(0.2);
}

static double thread_seconds(void)
{
	struct timespec t;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int main(void)
{
	/* push %rbp; mov %rsp,%rbp; call *%rdi; pop %rbp; ret */
	static const unsigned char trampoline[] = { 0x55, 0x48, 0x89, 0xe5, 0xff, 0xd7, 0x5d, 0xc3 };
	unsigned char *code = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
				   -1, 0);
	if (code == MAP_FAILED)
		return 1;
	memcpy(code, trampoline, sizeof(trampoline));
	memcpy(code + 64, trampoline, sizeof(trampoline));
	if (mprotect(code, 4096, PROT_READ | PROT_EXEC))
		return 1;
	char path[64];
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	FILE *map = fopen(path, "a");
	if (!map)
		return 1;
	fprintf(map, "%lx %zx py::hot:/srv/app/jit.py\n", (unsigned long)code, sizeof(trampoline));
	fprintf(map, "%lx %zx jitted trampoline\n", (unsigned long)(code + 64), sizeof(trampoline));
	fclose(map);
	double start = thread_seconds();
	((void (*)(void (*)(void)))code)(hot);
	double between = thread_seconds();
	((void (*)(void (*)(void)))(code + 64))(cold);
	double end = thread_seconds();
	const char *support = getenv("PYTHONPERFSUPPORT");
	printf("jit: PYTHONPERFSUPPORT=%s\n", support ? support : "(unset)");
	printf("jit: hot %.3f, cold %.3f CPU seconds\n", between - start, end - between);
	unlink(path);
	return 0;
}
