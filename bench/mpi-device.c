/* Two MPI ranks whose device work during their MPI calls is known to the program itself,
 * for bench/mpi-device.sh: gpuprof's MPI CALLS AND THE DEVICE against the program's own
 * figures, from its clock and OpenCL's event profiling, not gpuprof's.
 *
 *   mpirun -n 2 mpi-device [STEPS]
 *
 * Each step: rank 0 enqueues a kernel of about 200 ms and enters MPI_Barrier, which
 * rank 1 joins 400 ms later: rank 0's device works for the kernel's time in that barrier
 * and idles for the rest. Then rank 1 sleeps 150 ms before an MPI_Allreduce that rank 0
 * waits in with its device idle. Rank 0 prints, per function, its calls, the time it
 * spent in them and the part of it its kernel ran: the kernel's span is taken to end
 * when its completion callback ran and to last its profiled duration. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../samples/opencl/common.h"

static const char *source =
	"__kernel void spin(__global float *x, int n) {\n"
	"	float v = x[get_global_id(0)];\n"
	"	for (int i = 0; i < n; i++) v = v * 0.999f + 1.0f;\n"
	"	x[get_global_id(0)] = v;\n"
	"}\n";

static void sleep_ms(double ms)
{
	struct timespec t = { (time_t)(ms / 1000), (long)((ms - 1000 * (time_t)(ms / 1000)) * 1e6) };
	while (nanosleep(&t, &t) != 0)
		;
}

static volatile double completed_ms; /* when the last kernel's completion callback ran */

static void CL_CALLBACK completed(cl_event event, cl_int status, void *unused)
{
	(void)event, (void)status, (void)unused;
	completed_ms = sample_now_ms();
}

struct tally {
	const char *function;
	int calls;
	double in_ms, busy_ms;
};

/* Adds a call over [from, to] ms, the kernel running over [k0, k1] (k1 < k0: none). */
static void add(struct tally *t, double from, double to, double k0, double k1)
{
	double a = from > k0 ? from : k0, b = to < k1 ? to : k1;
	t->calls++;
	t->in_ms += to - from;
	t->busy_ms += b > a ? b - a : 0;
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank, size;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	int steps = argc > 1 ? atoi(argv[1]) : 3;
	struct sample s;
	sample_open(&s, source);
	cl_int rc;
	cl_queue_properties profiled[] = { CL_QUEUE_PROPERTIES, CL_QUEUE_PROFILING_ENABLE, 0 };
	cl_command_queue queue = clCreateCommandQueueWithProperties(s.context, s.device, profiled,
								   &rc);
	CHECK(rc);
	cl_kernel kernel = clCreateKernel(s.program, "spin", &rc);
	CHECK(rc);
	size_t work = 2;
	cl_mem x = clCreateBuffer(s.context, CL_MEM_READ_WRITE, work * sizeof(float), NULL, &rc);
	CHECK(rc);
	CHECK(clSetKernelArg(kernel, 0, sizeof(x), &x));
	/* the spin's length for about 200 ms, from a run of 10^6 iterations */
	int n = 1000000;
	CHECK(clSetKernelArg(kernel, 1, sizeof(n), &n));
	double t0 = sample_now_ms();
	CHECK(clEnqueueNDRangeKernel(queue, kernel, 1, NULL, &work, NULL, 0, NULL, NULL));
	CHECK(clFinish(queue));
	CHECK(clEnqueueNDRangeKernel(queue, kernel, 1, NULL, &work, NULL, 0, NULL, NULL));
	CHECK(clFinish(queue));
	double once = (sample_now_ms() - t0) / 2;
	n = (int)(n * 200.0 / (once > 0.01 ? once : 0.01));
	MPI_Bcast(&n, 1, MPI_INT, 0, MPI_COMM_WORLD);
	CHECK(clSetKernelArg(kernel, 1, sizeof(n), &n));

	struct tally barrier = { "MPI_Barrier", 0, 0, 0 }, allreduce = { "MPI_Allreduce", 0, 0, 0 };
	double from = sample_now_ms();
	MPI_Barrier(MPI_COMM_WORLD); /* the steps begin together */
	add(&barrier, from, sample_now_ms(), 0, -1);
	for (int step = 0; step < steps; step++) {
		cl_event event = NULL;
		double k0 = 0, k1 = -1;
		if (rank == 0) {
			completed_ms = 0;
			CHECK(clEnqueueNDRangeKernel(queue, kernel, 1, NULL, &work, NULL, 0, NULL,
						     &event));
			CHECK(clSetEventCallback(event, CL_COMPLETE, completed, NULL));
			CHECK(clFlush(queue));
		} else {
			sleep_ms(400);
		}
		from = sample_now_ms();
		MPI_Barrier(MPI_COMM_WORLD);
		double to = sample_now_ms();
		if (rank == 0) {
			CHECK(clWaitForEvents(1, &event));
			while (!completed_ms) /* the callback runs after the event completes */
				sleep_ms(1);
			cl_ulong start, end;
			CHECK(clGetEventProfilingInfo(event, CL_PROFILING_COMMAND_START, sizeof(start),
						      &start, NULL));
			CHECK(clGetEventProfilingInfo(event, CL_PROFILING_COMMAND_END, sizeof(end),
						      &end, NULL));
			k1 = completed_ms;
			k0 = k1 - (double)(end - start) / 1e6;
			clReleaseEvent(event);
		}
		add(&barrier, from, to, k0, k1);
		if (rank == 1)
			sleep_ms(150);
		double one = 1, sum = 0;
		from = sample_now_ms();
		MPI_Allreduce(&one, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
		add(&allreduce, from, sample_now_ms(), 0, -1);
	}
	if (rank == 0)
		for (int i = 0; i < 2; i++) {
			const struct tally *t = i ? &allreduce : &barrier;
			printf("%s %d %.3f %.3f\n", t->function, t->calls, t->in_ms, t->busy_ms);
		}
	clReleaseMemObject(x);
	clReleaseKernel(kernel);
	clReleaseCommandQueue(queue);
	sample_close(&s);
	MPI_Finalize();
	return 0;
}
