/* launch-sites: two functions of the program launch kernels of their own, a known number
 * of times, and copy a known number of times: light() launches `light` N times, heavy()
 * launches `heavy` (twice light's work per item) N/2 times, and reads its buffer back
 * once after each launch; with --threads, each runs on a thread of its own; with --fork,
 * a child made by fork() at the start does the same; with --jit, main calls each through
 * code it makes at run time and names in /tmp/perf-PID.map as CPython 3.12's perf
 * support does ("py::light:/srv/app/sites.py", a trampoline with a frame pointer), and
 * prints the PYTHONPERFSUPPORT it was given; the map is left for the caller to remove;
 * with --deep K, main calls them beneath K frames of descend(), each 1 KiB deep (a
 * launch's stack as deep as PyTorch's through cuDNN). What gpuprof trace --launch-stacks
 * attributes to each is checked against these counts.
 *
 *   launch-sites [-n N] [--threads] [--fork] [--jit] [--deep K] */
#include <pthread.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../samples/opencl/common.h"

static const char *source =
	"__kernel void light(__global float *x, uint rounds)\n"
	"{ size_t i = get_global_id(0); float v = x[i];\n"
	"  for (uint r = 0; r < rounds; r++) v = v * 0.5f + 1.0f;\n"
	"  x[i] = v; }\n"
	"__kernel void heavy(__global float *x, uint rounds)\n"
	"{ size_t i = get_global_id(0); float v = x[i];\n"
	"  for (uint r = 0; r < 2 * rounds; r++) v = v * 0.5f + 1.0f;\n"
	"  x[i] = v; }\n";

#define ITEMS 16384

static struct sample s;
static unsigned long launches;

struct site {
	cl_command_queue queue;
	cl_kernel kernel;
	cl_mem buffer;
};

static void site_open(struct site *w, const char *name)
{
	cl_int rc;
	w->queue = clCreateCommandQueueWithProperties(s.context, s.device, NULL, &rc);
	CHECK(rc);
	w->kernel = clCreateKernel(s.program, name, &rc);
	CHECK(rc);
	w->buffer = clCreateBuffer(s.context, CL_MEM_READ_WRITE, ITEMS * sizeof(float), NULL, &rc);
	CHECK(rc);
	cl_uint rounds = 64;
	CHECK(clSetKernelArg(w->kernel, 0, sizeof(w->buffer), &w->buffer));
	CHECK(clSetKernelArg(w->kernel, 1, sizeof(rounds), &rounds));
}

static void site_close(struct site *w)
{
	clReleaseMemObject(w->buffer);
	clReleaseKernel(w->kernel);
	clReleaseCommandQueue(w->queue);
}

__attribute__((noinline)) static void light(struct site *w)
{
	size_t global = ITEMS;
	for (unsigned long i = 0; i < launches; i++)
		CHECK(clEnqueueNDRangeKernel(w->queue, w->kernel, 1, NULL, &global, NULL, 0, NULL,
					     NULL));
	CHECK(clFinish(w->queue));
}

__attribute__((noinline)) static void heavy(struct site *w)
{
	size_t global = ITEMS;
	static float back[ITEMS];
	for (unsigned long i = 0; i < launches / 2; i++) {
		CHECK(clEnqueueNDRangeKernel(w->queue, w->kernel, 1, NULL, &global, NULL, 0, NULL,
					     NULL));
		CHECK(clEnqueueReadBuffer(w->queue, w->buffer, CL_TRUE, 0, sizeof(back), back, 0,
					  NULL, NULL));
	}
	CHECK(clFinish(w->queue));
}

static void *light_thread(void *arg)
{
	light(arg);
	return NULL;
}

static void *heavy_thread(void *arg)
{
	heavy(arg);
	return NULL;
}

/* light() and heavy() called through a trampoline each, named in the perf map. */
static void run_jitted(struct site *a, struct site *b)
{
	/* push %rbp; mov %rsp,%rbp; mov %rdi,%rax; mov %rsi,%rdi; call *%rax; pop %rbp; ret */
	static const unsigned char trampoline[] = { 0x55, 0x48, 0x89, 0xe5, 0x48, 0x89, 0xf8,
						    0x48, 0x89, 0xf7, 0xff, 0xd0, 0x5d, 0xc3 };
	unsigned char *code = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
				   -1, 0);
	if (code == MAP_FAILED)
		exit(1);
	memcpy(code, trampoline, sizeof(trampoline));
	memcpy(code + 64, trampoline, sizeof(trampoline));
	if (mprotect(code, 4096, PROT_READ | PROT_EXEC))
		exit(1);
	char path[64];
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	FILE *map = fopen(path, "a");
	if (!map)
		exit(1);
	fprintf(map, "%lx %zx py::light:/srv/app/sites.py\n", (unsigned long)code,
		sizeof(trampoline));
	fprintf(map, "%lx %zx py::heavy:/srv/app/sites.py\n", (unsigned long)(code + 64),
		sizeof(trampoline));
	fclose(map);
	((void (*)(void (*)(struct site *), struct site *))code)(light, a);
	((void (*)(void (*)(struct site *), struct site *))(code + 64))(heavy, b);
	const char *support = getenv("PYTHONPERFSUPPORT");
	printf("launch-sites: PYTHONPERFSUPPORT=%s\n", support ? support : "(unset)");
	/* the map stays, as CPython's does until it exits (the test removes it) */
}

static void run(int threads, int jit)
{
	struct site a, b;
	site_open(&a, "light");
	site_open(&b, "heavy");
	if (jit) {
		run_jitted(&a, &b);
	} else if (threads) {
		pthread_t t[2];
		pthread_create(&t[0], NULL, light_thread, &a);
		pthread_create(&t[1], NULL, heavy_thread, &b);
		pthread_join(t[0], NULL);
		pthread_join(t[1], NULL);
	} else {
		light(&a);
		heavy(&b);
	}
	site_close(&a);
	site_close(&b);
}

/* run() beneath `levels` frames of its own, each holding 1 KiB of stack. */
__attribute__((noinline)) static void descend(unsigned long levels, int threads, int jit)
{
	volatile char pad[1024];
	pad[0] = (char)levels;
	if (levels > 1)
		descend(levels - 1, threads, jit);
	else
		run(threads, jit);
	pad[1] = pad[0]; /* the frame stays until the calls return: no tail call */
}

int main(int argc, char **argv)
{
	launches = sample_value(argc, argv, "-n", 20);
	int threads = sample_flag(argc, argv, "--threads"), jit = sample_flag(argc, argv, "--jit");
	/* before OpenCL starts: a child cannot use the runtime its parent started (its
	 * threads stay behind) */
	pid_t child = sample_flag(argc, argv, "--fork") ? fork() : -1;
	sample_open(&s, source);
	unsigned long deep = sample_value(argc, argv, "--deep", 0);
	if (deep)
		descend(deep, threads, jit);
	else
		run(threads, jit);
	sample_close(&s);
	if (child == 0)
		_exit(0);
	if (child > 0) {
		int status = 0;
		waitpid(child, &status, 0);
		if (!WIFEXITED(status) || WEXITSTATUS(status))
			return 1;
	}
	printf("launch-sites: %lu light, %lu heavy launches\n", launches, launches / 2);
	return 0;
}
