/* switches: a program whose context switches happen on threads other than its first,
 * for the process metrics' test.
 *
 * main() sleeps 0.3 s, then starts a sleeper (100 sleeps of 5 ms) and two spinners
 * pinned to one CPU (0.4 s of wall time each, so that each takes the CPU from the
 * other); once all three are done, they wait 0.3 s more while the metrics look at them,
 * then end, and main() sleeps 0.3 s more. Prints each thread's own switches as
 * getrusage(RUSAGE_THREAD) counts them right after its work:
 *   switches: sleeper V I
 *   switches: spinner V I      (twice) */
#define _GNU_SOURCE /* RUSAGE_THREAD, CPU_SET, pthread_setaffinity_np */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <sys/resource.h>
#include <time.h>

static pthread_barrier_t worked, done;
static cpu_set_t one_cpu;
static _Thread_local volatile double sink; /* each spinner its own: no race */

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void say(const char *who)
{
	struct rusage mine;
	getrusage(RUSAGE_THREAD, &mine);
	printf("switches: %s %ld %ld\n", who, mine.ru_nvcsw, mine.ru_nivcsw);
	fflush(stdout);
}

static void *sleeper(void *arg)
{
	(void)arg;
	for (int i = 0; i < 100; i++)
		nanosleep(&(struct timespec){ 0, 5000000 }, NULL);
	say("sleeper");
	pthread_barrier_wait(&worked);
	pthread_barrier_wait(&done);
	return NULL;
}

static void *spinner(void *arg)
{
	(void)arg;
	pthread_setaffinity_np(pthread_self(), sizeof(one_cpu), &one_cpu);
	for (double until = now() + 0.4; now() < until;)
		for (int i = 0; i < 10000; i++)
			sink += i * 0.5;
	say("spinner");
	pthread_barrier_wait(&worked);
	pthread_barrier_wait(&done);
	return NULL;
}

int main(void)
{
	cpu_set_t allowed;
	CPU_ZERO(&one_cpu);
	if (sched_getaffinity(0, sizeof(allowed), &allowed) == 0)
		for (int c = 0; c < CPU_SETSIZE; c++)
			if (CPU_ISSET(c, &allowed)) {
				CPU_SET(c, &one_cpu);
				break;
			}
	nanosleep(&(struct timespec){ 0, 300000000 }, NULL);
	pthread_barrier_init(&worked, NULL, 4);
	pthread_barrier_init(&done, NULL, 4);
	pthread_t threads[3];
	pthread_create(&threads[0], NULL, sleeper, NULL);
	pthread_create(&threads[1], NULL, spinner, NULL);
	pthread_create(&threads[2], NULL, spinner, NULL);
	pthread_barrier_wait(&worked);
	nanosleep(&(struct timespec){ 0, 300000000 }, NULL);
	pthread_barrier_wait(&done);
	for (int i = 0; i < 3; i++)
		pthread_join(threads[i], NULL);
	nanosleep(&(struct timespec){ 0, 300000000 }, NULL);
	return 0;
}
