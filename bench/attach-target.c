/* The program bench/attach-overhead.sh samples while it runs: it waits for a line on
 * stdin (so that the profiler is attached before it starts), then runs ROUNDS rounds of
 * a fixed amount of CPU work through a few levels of calls, and prints the wall seconds
 * of that loop.
 *   attach-target [ROUNDS]   (default 2000, about 0.9 s on the development VM) */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile unsigned long sink;

__attribute__((noinline)) static void leaf(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		sink += i * i;
	sink++;
}

__attribute__((noinline)) static void middle(unsigned long n)
{
	leaf(n / 2);
	leaf(n - n / 2);
	sink++;
}

__attribute__((noinline)) static void outer(unsigned long n)
{
	middle(n);
	sink++;
}

int main(int argc, char **argv)
{
	unsigned long rounds = argc > 1 ? strtoul(argv[1], NULL, 10) : 2000;
	char line[16];
	if (!fgets(line, sizeof(line), stdin))
		return 1;
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (unsigned long r = 0; r < rounds; r++)
		outer(1000000);
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("%.6f\n", (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9);
	return 0;
}
