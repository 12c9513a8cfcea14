/* launcher: a test target for gpuprof trace. Runs kernels on OpenCL, then ends the way
 * it is told to, so tests can check what survives each kind of death.
 *
 *   launcher KERNELS ENDING
 *
 * ENDING: exit:N (exit code N), kill (SIGKILL), segv (a real invalid access), abort,
 * _exit:N, fork-exec:PROGRAM (runs PROGRAM in a child that is also traced),
 * fork-run (a fork()ed child that does not exec and exits without OpenCL, which
 * cannot be used after fork(), while the parent launches one more kernel),
 * hold (sleeps until killed), churn:N (creates, launches once and releases N more kernel
 * objects, as programs that build kernels on the fly do), bus (a real SIGBUS: a mapped
 * file cut short), thread-exit:N (exit(N) from a second thread while the main one
 * waits), sigterm (its own SIGTERM handler, which prints a line and makes main exit 3,
 * then SIGTERM from itself), oom (its address space capped 64 MiB above what it uses,
 * then memory allocated until none is left; exits 4).
 * Before dying it waits 400 ms so the recorder's 100 ms flush has happened, except for
 * these endings, which leave at once: now-_exit:N (_exit(N), as Python's os._exit),
 * exec-self:N (execs itself N more times, each image running KERNELS kernels), chdir
 * (changes to / before it uses OpenCL, and exits 0). */
#define CL_TARGET_OPENCL_VERSION 300
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS /* clCreateCommandQueue: tested on purpose */
#include <CL/cl.h>

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cap-memory.h"

static const char *source = "__kernel void tick(__global int *x) { x[get_global_id(0)] += 1; }";

static cl_context context;
static cl_command_queue queue;
static cl_kernel kernel;
static cl_program program;
static cl_mem buffer;
static volatile uintptr_t bad_address = 16; /* for the segv ending */

static void setup(void)
{
	cl_platform_id platform;
	cl_device_id device;
	cl_int rc;
	if (clGetPlatformIDs(1, &platform, NULL) || clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL,
								   1, &device, NULL)) {
		fprintf(stderr, "launcher: no OpenCL device\n");
		exit(3);
	}
	context = clCreateContext(NULL, 1, &device, NULL, NULL, &rc);
	queue = clCreateCommandQueue(context, device, 0, &rc);
	program = clCreateProgramWithSource(context, 1, &source, NULL, &rc);
	if (clBuildProgram(program, 1, &device, "", NULL, NULL)) {
		fprintf(stderr, "launcher: build failed\n");
		exit(3);
	}
	kernel = clCreateKernel(program, "tick", &rc);
	int zero[256] = { 0 };
	buffer = clCreateBuffer(context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof(zero),
				zero, &rc);
	clSetKernelArg(kernel, 0, sizeof(buffer), &buffer);
}

static void run_kernels(int count)
{
	size_t global = 256, local = 32;
	for (int i = 0; i < count; i++)
		clEnqueueNDRangeKernel(queue, kernel, 1, NULL, &global, &local, 0, NULL, NULL);
	clFinish(queue);
}

static volatile sig_atomic_t terminated;

static void on_sigterm(int sig)
{
	(void)sig;
	terminated = 1;
}

static void *exit_from_thread(void *code)
{
	exit((int)(intptr_t)code);
}

static void pause_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };
	nanosleep(&ts, NULL);
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: launcher KERNELS ENDING\n");
		return 2;
	}
	int kernels = atoi(argv[1]);
	const char *ending = argv[2];
	if (!strcmp(ending, "chdir") && chdir("/") != 0)
		return 2;
	setup();
	run_kernels(kernels);
	printf("launcher: %d kernels done\n", kernels);
	fflush(stdout);
	if (!strncmp(ending, "now-_exit:", 10))
		_exit(atoi(ending + 10));
	if (!strncmp(ending, "exec-self:", 10)) {
		int more = atoi(ending + 10);
		if (more <= 0)
			return 0;
		char next[32];
		snprintf(next, sizeof(next), "exec-self:%d", more - 1);
		execl("/proc/self/exe", argv[0], argv[1], next, (char *)NULL);
		return 2;
	}
	if (!strcmp(ending, "chdir"))
		return 0;
	pause_ms(400);
	if (!strncmp(ending, "exit:", 5))
		exit(atoi(ending + 5));
	if (!strncmp(ending, "_exit:", 6))
		_exit(atoi(ending + 6));
	if (!strcmp(ending, "kill"))
		kill(getpid(), SIGKILL);
	if (!strcmp(ending, "segv")) {
		*(volatile int *)bad_address = 1;
	}
	if (!strcmp(ending, "abort"))
		abort();
	if (!strcmp(ending, "bus")) {
		char path[] = "/tmp/gpuprof-bus-XXXXXX";
		int fd = mkstemp(path);
		if (fd < 0 || ftruncate(fd, 8192) < 0)
			return 2;
		volatile char *p = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		unlink(path);
		if (p == MAP_FAILED || ftruncate(fd, 0) < 0)
			return 2;
		p[4096] = 1; /* beyond the end of the file: SIGBUS */
	}
	if (!strncmp(ending, "thread-exit:", 12)) {
		pthread_t t;
		pthread_create(&t, NULL, exit_from_thread, (void *)(intptr_t)atoi(ending + 12));
		for (;;)
			pause();
	}
	if (!strcmp(ending, "sigterm")) {
		struct sigaction sa = { .sa_handler = on_sigterm };
		sigaction(SIGTERM, &sa, NULL);
		kill(getpid(), SIGTERM);
		while (!terminated)
			pause_ms(10);
		printf("launcher: SIGTERM handled\n");
		exit(3);
	}
	if (!strcmp(ending, "oom")) {
		cap_address_space(64u << 20);
		unsigned long long got = 0;
		for (void *p; (p = malloc(1 << 20)); got++)
			memset(p, 1, 1 << 20);
		printf("launcher: out of memory after %llu MiB\n", got);
		exit(4);
	}
	if (!strncmp(ending, "churn:", 6)) {
		size_t global = 256, local = 32;
		for (int i = 0, n = atoi(ending + 6); i < n; i++) {
			cl_int rc;
			cl_kernel k = clCreateKernel(program, "tick", &rc);
			clSetKernelArg(k, 0, sizeof(buffer), &buffer);
			clEnqueueNDRangeKernel(queue, k, 1, NULL, &global, &local, 0, NULL, NULL);
			clReleaseKernel(k);
		}
		clFinish(queue);
		return 0;
	}
	if (!strcmp(ending, "hold"))
		for (;;)
			pause();
	if (!strncmp(ending, "fork-exec:", 10)) {
		pid_t pid = fork();
		if (pid == 0) {
			execl(ending + 10, ending + 10, "-n", "1024", "-b", "32", "-i", "3", (char *)NULL);
			_exit(127);
		}
		int status;
		waitpid(pid, &status, 0);
		return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
	}
	if (!strcmp(ending, "fork-run")) {
		pid_t pid = fork();
		if (pid == 0) {
			pause_ms(200);
			exit(0);
		}
		int status;
		waitpid(pid, &status, 0);
		run_kernels(1);
		return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
	}
	fprintf(stderr, "launcher: unknown ending '%s'\n", ending);
	return 2;
}
