/* An MPI program of known shape, for --mpi-trace: each step every rank runs an OpenCL
 * kernel, sleeps (one rank, the straggler, longer), joins an MPI_Allreduce, then swaps
 * halos with its neighbours on a ring (MPI_Irecv/MPI_Isend/MPI_Waitall). After the steps:
 * a broadcast, an all-reduce on a communicator split by parity, a split that leaves rank
 * 0 out, a barrier on a copy of the world, a late sender (rank 0 sleeps, then sends to
 * rank 1), a barrier.
 *
 *   mpirun -n 4 halo [-s STEPS] [-w STRAGGLER] [-e EXTRA_MS] [-b BASE_MS] [-l LATE_MS]
 *                    [-n HALO_DOUBLES] [--no-opencl]
 *
 * Each rank prints one line: its rank, steps, and the calls it made by kind, so that a
 * test checks the trace against the program's own count. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../opencl/common.h"

static const char *source =
	"__kernel void scale(__global float *x, float a) { x[get_global_id(0)] *= a; }\n";

static void sleep_ms(unsigned long ms)
{
	struct timespec t = { (time_t)(ms / 1000), (long)(ms % 1000) * 1000000L };
	while (nanosleep(&t, &t) != 0)
		;
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank, size;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	unsigned long steps = sample_value(argc, argv, "-s", 3);
	unsigned long straggler = sample_value(argc, argv, "-w", (unsigned long)size - 1);
	unsigned long extra = sample_value(argc, argv, "-e", 150);
	unsigned long base = sample_value(argc, argv, "-b", 20);
	unsigned long late = sample_value(argc, argv, "-l", 100);
	int halo = (int)sample_value(argc, argv, "-n", 1024);
	int opencl = !sample_flag(argc, argv, "--no-opencl");

	struct sample s;
	cl_kernel kernel = NULL;
	cl_mem buffer = NULL;
	size_t work = 4096;
	if (opencl) {
		cl_int rc;
		sample_open(&s, source);
		kernel = clCreateKernel(s.program, "scale", &rc);
		CHECK(rc);
		buffer = clCreateBuffer(s.context, CL_MEM_READ_WRITE, work * sizeof(float), NULL, &rc);
		CHECK(rc);
		float a = 1.0f;
		CHECK(clSetKernelArg(kernel, 0, sizeof(buffer), &buffer));
		CHECK(clSetKernelArg(kernel, 1, sizeof(a), &a));
		/* the first launch compiles for the device: not a step's work */
		CHECK(clEnqueueNDRangeKernel(s.queue, kernel, 1, NULL, &work, NULL, 0, NULL, NULL));
		CHECK(clFinish(s.queue));
	}
	/* the steps begin together */
	MPI_Barrier(MPI_COMM_WORLD);
	double *out = calloc(2 * (size_t)halo, sizeof(double));
	double *in = calloc(2 * (size_t)halo, sizeof(double));
	int left = (rank + size - 1) % size, right = (rank + 1) % size;
	for (unsigned long step = 0; step < steps; step++) {
		if (opencl) {
			CHECK(clEnqueueNDRangeKernel(s.queue, kernel, 1, NULL, &work, NULL, 0, NULL,
						     NULL));
			CHECK(clFinish(s.queue));
		}
		sleep_ms(base + ((unsigned long)rank == straggler ? extra : 0));
		double residual = rank, sum = 0;
		MPI_Allreduce(&residual, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
		MPI_Request requests[4];
		MPI_Irecv(in, halo, MPI_DOUBLE, left, 7, MPI_COMM_WORLD, &requests[0]);
		MPI_Irecv(in + halo, halo, MPI_DOUBLE, right, 8, MPI_COMM_WORLD, &requests[1]);
		MPI_Isend(out, halo, MPI_DOUBLE, right, 7, MPI_COMM_WORLD, &requests[2]);
		MPI_Isend(out + halo, halo, MPI_DOUBLE, left, 8, MPI_COMM_WORLD, &requests[3]);
		MPI_Waitall(4, requests, MPI_STATUSES_IGNORE);
	}
	int table[16] = { 0 };
	MPI_Bcast(table, 16, MPI_INT, 0, MPI_COMM_WORLD);
	MPI_Comm parity;
	MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &parity);
	long one = 1, members = 0;
	MPI_Allreduce(&one, &members, 1, MPI_LONG, MPI_SUM, parity);
	MPI_Comm_free(&parity);
	/* a split that leaves rank 0 out, then a copy of the world: named alike on every
	 * rank, rank 0 included */
	MPI_Comm others, copy;
	MPI_Comm_split(MPI_COMM_WORLD, rank == 0 ? MPI_UNDEFINED : 1, rank, &others);
	MPI_Comm_dup(MPI_COMM_WORLD, &copy);
	MPI_Barrier(copy);
	MPI_Comm_free(&copy);
	if (others != MPI_COMM_NULL)
		MPI_Comm_free(&others);
	int message[3] = { rank, size, 42 };
	if (size > 1 && rank == 0) {
		sleep_ms(late);
		MPI_Send(message, 3, MPI_INT, 1, 99, MPI_COMM_WORLD);
	} else if (size > 1 && rank == 1) {
		MPI_Recv(message, 3, MPI_INT, MPI_ANY_SOURCE, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	}
	MPI_Barrier(MPI_COMM_WORLD);
	printf("rank %d of %d: steps %lu, straggler %lu, Allreduce %lu, Irecv %lu, Isend %lu, "
	       "Waitall %lu, Bcast 1, Barrier 3, Send %d, Recv %d\n", rank, size, steps,
	       straggler, steps + 1, 2 * steps, 2 * steps, steps, size > 1 && rank == 0,
	       size > 1 && rank == 1);
	free(out);
	free(in);
	if (opencl) {
		clReleaseMemObject(buffer);
		clReleaseKernel(kernel);
		sample_close(&s);
	}
	MPI_Finalize();
	return 0;
}
