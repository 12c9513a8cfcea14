/* split: a CPU-bound program whose time splits in known parts, for the call-stack
 * sampling tests.
 *
 *   split N        N rounds of seventy() then thirty(): 70 % and 30 % of the CPU time in
 *                  work() called from each; prints the CPU seconds it used, the wall
 *                  seconds of its loop and the CPU seconds of its thread
 *   split late     spins in main_spin() for 1.2 s of CPU time, then starts a thread that
 *                  spins in late_worker() for 0.4 s, and joins it; prints each one's CPU
 *                  seconds
 *   split range N  N rounds, each seventy() inside a marker range "loop/hot" (a name of
 *                  levels, as PyTorch operators' are) and thirty() outside any
 *   split regions N  N rounds, each seventy() while collection is paused, then
 *                  gpuprof_resume(), thirty(), gpuprof_pause(): under --selected-regions
 *                  only thirty()'s time is collected
 *   split fork     fork()s a child (no exec) that spins 0.3 s and exits 3; the parent
 *                  spins 0.3 s in main_spin_short(), waits, and exits with the child's
 *                  status; prints the CPU seconds of the parent's spin and the child's
 *   split wait     starts a thread that spins in waited_for() for 0.8 s of CPU time and
 *                  waits for it in pthread_join(), called from wait_for_worker(); then
 *                  sleeps 0.3 s in nanosleep(); prints the wall seconds of each wait and
 *                  the worker's CPU seconds
 *   split sigprof N  N rounds under its own profiling timer: a SIGPROF handler and
 *                  ITIMER_PROF every 10 ms of CPU time, every real-time signal handled
 *                  and counted too; prints the counts, the process's CPU seconds and
 *                  its thread's in user space
 *   split recurse DEPTH  descend() calls itself DEPTH times (DEPTH + 1 calls) and spins
 *                  1 s of CPU time at the bottom
 *   split clock    reads the clock in read_clock() for 1 s of CPU time: its time is in
 *                  the vDSO's clock_gettime
 *   split crowd N MS  N threads each spin in crowd_worker() for MS ms of real time, more
 *                  threads than CPUs: each waits for a CPU part of the time; prints
 *                  "split: crowd TID WALL USER CPU" per thread (seconds of real time it
 *                  spun, seconds of user CPU time it got, and of user and system time: the
 *                  kernel splits a thread's time between the two by the ticks that saw
 *                  each, so a short run's USER alone is only about right) */
#define _GNU_SOURCE /* RUSAGE_THREAD */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "gpuprof/markers.h"

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

/* This thread's CPU time, in seconds, exact (the kernel's split of it into user and
 * system time is by its ticks, and can be far off: 0.65 s of user time reported for a
 * thread that spun 1.2 s in user space) */
static double thread_seconds(void)
{
	struct timespec t;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
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

static double late_cpu; /* late_worker's CPU seconds */

__attribute__((noinline)) void *late_worker(void *unused)
{
	spin_for(0.4);
	late_cpu = thread_seconds();
	return unused;
}

__attribute__((noinline)) void main_spin_short(void)
{
	spin_for(0.3);
}

static double waited_for_cpu; /* waited_for's CPU seconds */

__attribute__((noinline)) void *waited_for(void *unused)
{
	spin_for(0.8);
	waited_for_cpu = thread_seconds();
	return unused;
}

static double wall_seconds(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

__attribute__((noinline)) int wait_for_worker(void)
{
	pthread_t thread;
	if (pthread_create(&thread, NULL, waited_for, NULL))
		return 1;
	double start = wall_seconds();
	pthread_join(thread, NULL);
	double joined = wall_seconds();
	struct timespec pause = { 0, 300000000 };
	while (nanosleep(&pause, &pause))
		;
	printf("split: joined after %.6f s, slept %.6f s, worker %.3f CPU seconds\n",
	       joined - start, wall_seconds() - joined, waited_for_cpu);
	return 0;
}

__attribute__((noinline)) void descend(int depth)
{
	if (depth > 0)
		descend(depth - 1);
	else
		spin_for(1.0);
	sink += 1; /* work after the call: no tail call */
}

__attribute__((noinline)) void read_clock(void)
{
	struct timespec t, until;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &until);
	until.tv_sec += 1;
	do {
		for (int i = 0; i < 1000; i++)
			clock_gettime(CLOCK_MONOTONIC, &t);
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	} while (t.tv_sec < until.tv_sec || (t.tv_sec == until.tv_sec && t.tv_nsec < until.tv_nsec));
}

struct crowd {
	pthread_t thread;
	double milliseconds, wall, user, cpu;
	long tid;
};

__attribute__((noinline)) void *crowd_worker(void *arg)
{
	struct crowd *c = arg;
	c->tid = (long)gettid();
	double start = wall_seconds(), now;
	do {
		work(20000);
		now = wall_seconds();
	} while (now - start < c->milliseconds / 1000);
	struct rusage mine;
	getrusage(RUSAGE_THREAD, &mine);
	c->wall = now - start;
	c->user = (double)mine.ru_utime.tv_sec + (double)mine.ru_utime.tv_usec / 1e6;
	c->cpu = c->user + (double)mine.ru_stime.tv_sec + (double)mine.ru_stime.tv_usec / 1e6;
	return NULL;
}

static int crowd(int n, double milliseconds)
{
	struct crowd *threads = calloc((size_t)n, sizeof(*threads));
	for (int i = 0; i < n; i++) {
		threads[i].milliseconds = milliseconds;
		if (pthread_create(&threads[i].thread, NULL, crowd_worker, &threads[i]))
			return 1;
	}
	for (int i = 0; i < n; i++) {
		pthread_join(threads[i].thread, NULL);
		printf("split: crowd %ld %.6f %.6f %.6f\n", threads[i].tid, threads[i].wall,
		       threads[i].user, threads[i].cpu);
	}
	free(threads);
	return 0;
}

static volatile sig_atomic_t profiling_signals, other_signals;

static void count_signal(int number)
{
	if (number == SIGPROF)
		profiling_signals++;
	else
		other_signals++;
}

static int own_profiler(int rounds)
{
	struct sigaction a = { .sa_handler = count_signal, .sa_flags = SA_RESTART };
	sigemptyset(&a.sa_mask);
	sigaction(SIGPROF, &a, NULL);
	for (int n = SIGRTMIN; n <= SIGRTMAX; n++)
		sigaction(n, &a, NULL);
	struct itimerval every = { { 0, 10000 }, { 0, 10000 } }, off = { { 0, 0 }, { 0, 0 } };
	setitimer(ITIMER_PROF, &every, NULL);
	for (int i = 0; i < rounds; i++) {
		seventy();
		thirty();
	}
	setitimer(ITIMER_PROF, &off, NULL);
	/* ITIMER_PROF counts the process's CPU time; samples, this thread's in user space */
	struct rusage mine;
	getrusage(RUSAGE_THREAD, &mine);
	printf("split: %d SIGPROF, %d other signals, %.3f CPU seconds, %.3f of this thread\n",
	       (int)profiling_signals, (int)other_signals, cpu_seconds(),
	       (double)mine.ru_utime.tv_sec + (double)mine.ru_utime.tv_usec / 1e6);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "crowd"))
		return crowd(atoi(argv[2]), atof(argv[3]));
	if (argc == 2 && !strcmp(argv[1], "clock")) {
		read_clock();
		printf("split: read the clock\n");
		return 0;
	}
	if (argc == 3 && !strcmp(argv[1], "recurse")) {
		descend(atoi(argv[2]));
		printf("split: recursed\n");
		return 0;
	}
	if (argc == 3 && !strcmp(argv[1], "sigprof"))
		return own_profiler(atoi(argv[2]));
	if (argc == 2 && !strcmp(argv[1], "wait"))
		return wait_for_worker();
	if (argc == 2 && !strcmp(argv[1], "fork")) {
		pid_t child = fork();
		if (child == 0) {
			spin_for(0.3);
			_exit(3);
		}
		double before = thread_seconds();
		main_spin_short();
		double spun = thread_seconds() - before;
		int status = 0;
		struct rusage used;
		memset(&used, 0, sizeof(used));
		wait4(child, &status, 0, &used);
		printf("split: child exited %d; CPU seconds: parent's spin %.3f, child %.3f\n",
		       WEXITSTATUS(status), spun,
		       (double)(used.ru_utime.tv_sec + used.ru_stime.tv_sec) +
			       (double)(used.ru_utime.tv_usec + used.ru_stime.tv_usec) / 1e6);
		return WEXITSTATUS(status);
	}
	if (argc == 2 && !strcmp(argv[1], "late")) {
		main_spin();
		double main_cpu = thread_seconds();
		pthread_t thread;
		if (pthread_create(&thread, NULL, late_worker, NULL))
			return 1;
		pthread_join(thread, NULL);
		printf("split: late thread done: main %.3f, late %.3f CPU seconds\n", main_cpu,
		       late_cpu);
		return 0;
	}
	if (argc == 3 && !strcmp(argv[1], "regions")) {
		for (int i = 0; i < atoi(argv[2]); i++) {
			seventy();
			gpuprof_resume();
			thirty();
			gpuprof_pause();
		}
		printf("split: regions done\n");
		return 0;
	}
	if (argc == 3 && !strcmp(argv[1], "range")) {
		for (int i = 0; i < atoi(argv[2]); i++) {
			gpuprof_range_push("loop/hot");
			seventy();
			gpuprof_range_pop();
			thirty();
		}
		printf("split: ranges done\n");
		return 0;
	}
	int rounds = argc > 1 ? atoi(argv[1]) : 100;
	struct timespec start, end;
	clock_gettime(CLOCK_MONOTONIC, &start);
	for (int i = 0; i < rounds; i++) {
		seventy();
		thirty();
	}
	clock_gettime(CLOCK_MONOTONIC, &end);
	printf("split: %.3f CPU seconds, loop %.6f s, %.3f CPU seconds of its thread\n",
	       cpu_seconds(),
	       (double)(end.tv_sec - start.tv_sec) + (double)(end.tv_nsec - start.tv_nsec) / 1e9,
	       thread_seconds());
	return 0;
}
