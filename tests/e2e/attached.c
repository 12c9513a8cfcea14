/* attached: a program that runs before gpuprof and goes on after it, for gpuprof sys --pid.
 * A thread ("worker") spins for ever in rounds of seventy() then thirty() (70 % and 30 %
 * of its work, 1 to 4 ms a round at random), measuring the CPU time it spends in each
 * (CLOCK_THREAD_CPUTIME_ID, read between them: its system calls are under 0.3 % of it);
 * the main thread reads commands on stdin:
 *   thread   starts a thread ("late") that spins in late_worker() for 0.3 s of its CPU
 *            time, and prints "late CPU" (seconds) once it ended
 *   fork     fork()s a child that spins in child_spin() for 0.3 s of its CPU time, waits
 *            for it, and prints "child STATUS CPU" (the child's CPU seconds)
 *   exec PATH ARG  fork()s a child that executes PATH ARG, waits for it, and prints
 *            "exec STATUS"
 *   quit     prints "seventy S thirty S" (the worker's CPU seconds in each so far) and
 *            exits with status 5
 * It prints "ready" once the worker runs. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static _Thread_local volatile unsigned long sink; /* each thread its own: no race */
static double seventy_seconds, thirty_seconds;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static double thread_cpu(void)
{
	struct timespec t;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

__attribute__((noinline)) static void work(unsigned long units)
{
	for (unsigned long i = 0; i < units * 1000; i++)
		sink += i;
}

/* each does something after work(), so that it stays on the stack (no tail call) */
__attribute__((noinline)) static void seventy(unsigned long k)
{
	work(700 * k);
	sink++;
}

__attribute__((noinline)) static void thirty(unsigned long k)
{
	work(300 * k);
	sink++;
}

static void *worker(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "worker");
	/* rounds of 1 to 4 ms in turn, at random: a round of one length would keep step with
	 * the samples' period (1 ms at 1,000 a second) and bias their split */
	unsigned long lcg = 12345;
	for (;;) {
		lcg = lcg * 6364136223846793005ul + 1442695040888963407ul;
		unsigned long k = 1 + (lcg >> 33) % 4;
		double a = thread_cpu();
		seventy(k);
		double b = thread_cpu();
		thirty(k);
		double c = thread_cpu();
		pthread_mutex_lock(&lock);
		seventy_seconds += b - a;
		thirty_seconds += c - b;
		pthread_mutex_unlock(&lock);
	}
	return NULL;
}

/* Spins until the calling thread used `seconds` of CPU time, reading its clock (a system
 * call, whose time is not sampled in user space) once a millisecond or so. */
static double spin_for(double seconds)
{
	double start = thread_cpu();
	while (thread_cpu() - start < seconds)
		work(1000);
	return thread_cpu() - start;
}

__attribute__((noinline)) static void *late_worker(void *arg)
{
	pthread_setname_np(pthread_self(), "late");
	*(double *)arg = spin_for(0.3);
	return NULL;
}

__attribute__((noinline)) static void child_spin(void)
{
	spin_for(0.3);
	sink++;
}

int main(void)
{
	pthread_t t;
	pthread_create(&t, NULL, worker, NULL);
	printf("ready\n");
	fflush(stdout);
	char line[4352];
	while (fgets(line, sizeof(line), stdin)) {
		if (!strcmp(line, "thread\n")) {
			pthread_t late;
			double used = 0;
			pthread_create(&late, NULL, late_worker, &used);
			pthread_join(late, NULL);
			printf("late %.6f\n", used);
		} else if (!strcmp(line, "fork\n")) {
			pid_t child = fork();
			if (child == 0) {
				child_spin();
				_exit(3);
			}
			int status = 0;
			struct rusage used;
			memset(&used, 0, sizeof(used));
			wait4(child, &status, 0, &used);
			printf("child %d %.6f\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1,
			       (double)(used.ru_utime.tv_sec + used.ru_stime.tv_sec) +
				       (double)(used.ru_utime.tv_usec + used.ru_stime.tv_usec) / 1e6);
		} else if (!strncmp(line, "exec ", 5)) {
			char *path = line + 5, *arg = strchr(path, ' ');
			if (!arg)
				continue;
			*arg++ = '\0';
			arg[strcspn(arg, "\n")] = '\0';
			pid_t child = fork();
			if (child == 0) {
				execl(path, path, arg, (char *)NULL);
				_exit(127);
			}
			int status = 0;
			waitpid(child, &status, 0);
			printf("exec %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
		} else if (!strcmp(line, "quit\n")) {
			pthread_mutex_lock(&lock);
			printf("seventy %.6f thirty %.6f\n", seventy_seconds, thirty_seconds);
			fflush(stdout);
			_exit(5);
		}
		fflush(stdout);
	}
	return 0;
}
