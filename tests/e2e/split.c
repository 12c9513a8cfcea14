/* split: a CPU-bound program whose time splits in known parts, for the call-stack
 * sampling tests.
 *
 *   split N        N rounds of seventy() then thirty(): 70 % and 30 % of the CPU time in
 *                  work() called from each; prints the CPU seconds it used
 *   split late     spins in main_spin() for 1.2 s of CPU time, then starts a thread that
 *                  spins in late_worker() for 0.4 s, and joins it */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static volatile double sink;

__attribute__((noinline)) void work(long n)
{
	for (long i = 0; i < n; i++)
		sink += (double)i * 0.5;
}

__attribute__((noinline)) void seventy(void)
{
	work(7000000);
}

__attribute__((noinline)) void thirty(void)
{
	work(3000000);
}

static double cpu_seconds(void)
{
	struct timespec t;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Spins for `seconds` of this thread's CPU time. */
__attribute__((noinline)) static void spin_for(double seconds)
{
	struct timespec t;
	double until;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	until = (double)t.tv_sec + (double)t.tv_nsec / 1e9 + seconds;
	do {
		work(100000);
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	} while ((double)t.tv_sec + (double)t.tv_nsec / 1e9 < until);
}

__attribute__((noinline)) void main_spin(void)
{
	spin_for(1.2);
}

__attribute__((noinline)) void *late_worker(void *unused)
{
	spin_for(0.4);
	return unused;
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "late")) {
		main_spin();
		pthread_t thread;
		if (pthread_create(&thread, NULL, late_worker, NULL))
			return 1;
		pthread_join(thread, NULL);
		printf("split: late thread done\n");
		return 0;
	}
	int rounds = argc > 1 ? atoi(argv[1]) : 100;
	for (int i = 0; i < rounds; i++) {
		seventy();
		thirty();
	}
	printf("split: %.3f CPU seconds\n", cpu_seconds());
	return 0;
}
