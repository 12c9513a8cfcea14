#define _GNU_SOURCE
/* A program to dump while it waits (gpuprof dump): its main thread, named "main-loop",
 * blocked in read() on its standard input under wait_for_input <- level2 <- level1 <-
 * main; a thread "locker" blocked on a mutex it already holds, under locker_body. It
 * prints "ready" when both wait, and, once a line comes in, "done" and exits 7. */
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

static pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t started;

/* no tail calls: each frame stays on the stack */
#define KEEP_FRAME() __asm__ volatile("" ::: "memory")

__attribute__((noinline)) static int wait_for_input(void)
{
	char c;
	int n = (int)read(0, &c, 1);
	KEEP_FRAME();
	return n;
}

__attribute__((noinline)) static int level2(void)
{
	int n = wait_for_input();
	KEEP_FRAME();
	return n + 1;
}

__attribute__((noinline)) static int level1(void)
{
	int n = level2();
	KEEP_FRAME();
	return n + 1;
}

__attribute__((noinline)) static void *locker_body(void *arg)
{
	pthread_mutex_lock(&mutex);
	pthread_barrier_wait(&started);
	pthread_mutex_lock(&mutex); /* never: the thread waits here until the process ends */
	KEEP_FRAME();
	return arg;
}

int main(void)
{
	pthread_t locker;
	pthread_barrier_init(&started, NULL, 2);
	pthread_setname_np(pthread_self(), "main-loop");
	pthread_create(&locker, NULL, locker_body, NULL);
	pthread_setname_np(locker, "locker");
	pthread_barrier_wait(&started);
	printf("ready\n");
	fflush(stdout);
	int n = level1();
	printf("done %d\n", n);
	return 7;
}
