/* markers: an OpenCL program annotated with the gpuprof marker API, for the marker,
 * --kernel-rename and --selected-regions tests.
 *
 *   markers nest      push "outer", push "inner", mark "tick", pop, pop; a range
 *                     started on the main thread and stopped by a thread named "worker",
 *                     which also pushes "work"; prints each return value
 *   markers kernels   launches "scale" once outside any range, twice inside "step", once
 *                     inside "inner" nested in "step", once more outside
 *   markers regions   launches 1 kernel, resumes, 2, pauses, 3, resumes, 1, pauses, 1:
 *                     under --selected-regions 3 are collected
 *   markers periods   launches 2 kernels at 1 s, 3 at 2 s and 4 at 3 s after the
 *                     process started (or as soon after as set-up allows), printing
 *                     the ages each phase began and ended at
 *   markers names N.. names the thread after the first N and pushes and pops a range
 *                     named after each N (any bytes: the hostile-name tests)
 *   markers fork      launches 1 kernel, then fork()s without exec: the child names its
 *                     thread "child" and pushes and pops 1000 ranges "child" (OpenCL
 *                     cannot be used after fork) while the parent launches 1000 kernels,
 *                     each in a range "parent"; then the parent launches 1 more */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cl-check.h"
#include "gpuprof/markers.h"

static cl_command_queue queue;
static cl_kernel kernel;
static cl_mem buffer;

static void setup(void)
{
	cl_platform_id platform;
	cl_device_id device;
	cl_int rc;
	CHECK(clGetPlatformIDs(1, &platform, NULL));
	CHECK(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, NULL));
	cl_context context = clCreateContext(NULL, 1, &device, NULL, NULL, &rc);
	CHECK(rc);
	queue = clCreateCommandQueueWithProperties(context, device, NULL, &rc);
	CHECK(rc);
	const char *source = "__kernel void scale(__global float *a) "
			     "{ a[get_global_id(0)] *= 2.0f; }";
	cl_program program = clCreateProgramWithSource(context, 1, &source, NULL, &rc);
	CHECK(rc);
	CHECK(clBuildProgram(program, 1, &device, "", NULL, NULL));
	kernel = clCreateKernel(program, "scale", &rc);
	CHECK(rc);
	buffer = clCreateBuffer(context, CL_MEM_READ_WRITE, 1024 * sizeof(float), NULL, &rc);
	CHECK(rc);
	CHECK(clSetKernelArg(kernel, 0, sizeof(buffer), &buffer));
}

static void launch(int count)
{
	size_t global = 1024;
	for (int i = 0; i < count; i++)
		CHECK(clEnqueueNDRangeKernel(queue, kernel, 1, NULL, &global, NULL, 0, NULL, NULL));
	CHECK(clFinish(queue));
}

static uint64_t crossing;

static void *worker(void *unused)
{
	(void)unused;
	gpuprof_name_thread("worker");
	printf("worker push work: %d\n", gpuprof_range_push("work"));
	gpuprof_range_stop(crossing);
	printf("worker pop: %d\n", gpuprof_range_pop());
	return NULL;
}

/* Seconds since the process started (its start time from /proc, in clock ticks, as the
 * recorder's collection periods count it). */
static double age(void)
{
	FILE *f = fopen("/proc/self/stat", "r");
	char line[1024] = "";
	if (!f || !fgets(line, sizeof(line), f))
		exit(1);
	fclose(f);
	char *p = strrchr(line, ')');
	unsigned long long ticks = 0;
	for (int field = 3; p && field <= 22; field++) {
		p = strchr(p + 1, ' ');
		if (p && field == 22)
			ticks = strtoull(p + 1, NULL, 10);
	}
	struct timespec boot;
	clock_gettime(CLOCK_BOOTTIME, &boot);
	return (double)boot.tv_sec + boot.tv_nsec / 1e9 - (double)ticks / (double)sysconf(_SC_CLK_TCK);
}

/* Sleeps until `seconds` after the process started. */
static void at_age(double seconds)
{
	double now = age();
	if (now < seconds) {
		double wait = seconds - now;
		struct timespec t = { (time_t)wait, (long)((wait - (time_t)wait) * 1e9) };
		nanosleep(&t, NULL);
	}
}

/* One phase of "periods": its kernels, and the ages at which it began and ended (a phase
 * is late when the set-up took longer than its time: a loaded machine). */
static void phase(int number, double seconds, int kernels)
{
	at_age(seconds);
	double began = age();
	launch(kernels);
	printf("phase %d: %d kernels from %.3f to %.3f s\n", number, kernels, began, age());
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "nest";
	if (!strcmp(mode, "nest")) {
		printf("push outer: %d\n", gpuprof_range_push("outer"));
		printf("push inner: %d\n", gpuprof_range_push("inner"));
		gpuprof_mark("tick");
		printf("pop: %d\n", gpuprof_range_pop());
		printf("pop: %d\n", gpuprof_range_pop());
		printf("pop: %d\n", gpuprof_range_pop());
		crossing = gpuprof_range_start("crossing");
		printf("start crossing: %s\n", crossing ? "nonzero" : "zero");
		pthread_t t;
		pthread_create(&t, NULL, worker, NULL);
		pthread_join(t, NULL);
		return 0;
	}
	if (!strcmp(mode, "deep")) { /* deep N: N nested ranges, then N pops */
		int n = argc > 2 ? atoi(argv[2]) : 300, last = 0;
		for (int i = 0; i < n; i++)
			gpuprof_range_push(i % 2 ? "odd" : "even");
		for (int i = 0; i < n; i++)
			last = gpuprof_range_pop();
		printf("last pop: %d, one more: %d\n", last, gpuprof_range_pop());
		return 0;
	}
	if (!strcmp(mode, "names")) {
		if (argc > 2)
			gpuprof_name_thread(argv[2]);
		for (int i = 2; i < argc; i++) {
			gpuprof_range_push(argv[i]);
			gpuprof_range_pop();
		}
		return 0;
	}
	setup();
	if (!strcmp(mode, "kernels")) {
		launch(1);
		gpuprof_range_push("step");
		launch(2);
		gpuprof_range_push("inner");
		launch(1);
		gpuprof_range_pop();
		gpuprof_range_pop();
		launch(1);
	} else if (!strcmp(mode, "regions")) {
		launch(1);
		gpuprof_resume();
		launch(2);
		gpuprof_pause();
		launch(3);
		gpuprof_resume();
		launch(1);
		gpuprof_pause();
		launch(1);
	} else if (!strcmp(mode, "fork")) {
		launch(1);
		fflush(stdout);
		pid_t child = fork();
		if (child == 0) {
			gpuprof_name_thread("child");
			for (int i = 0; i < 1000; i++) {
				gpuprof_range_push("child");
				gpuprof_range_pop();
			}
			exit(0);
		}
		for (int i = 0; i < 1000; i++) {
			gpuprof_range_push("parent");
			launch(1);
			gpuprof_range_pop();
		}
		int status;
		if (child < 0 || waitpid(child, &status, 0) != child || !WIFEXITED(status) ||
		    WEXITSTATUS(status) != 0) {
			fprintf(stderr, "markers: the forked child failed\n");
			return 1;
		}
		launch(1);
	} else if (!strcmp(mode, "periods")) {
		phase(1, 1.0, 2);
		phase(2, 2.0, 3);
		phase(3, 3.0, 4);
	} else {
		fprintf(stderr, "markers: unknown mode '%s'\n", mode);
		return 2;
	}
	return 0;
}
