/* The message rate of small messages between rank pairs (ping-pong of N messages of B
 * bytes between ranks 2k and 2k+1), for bench/mpi-overhead.sh: rank 0 prints the loop's
 * seconds and the messages per second. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank, size;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	long n = argc > 1 ? atol(argv[1]) : 100000;
	int bytes = argc > 2 ? atoi(argv[2]) : 8;
	char *buf = calloc((size_t)bytes, 1);
	int peer = rank ^ 1;
	MPI_Barrier(MPI_COMM_WORLD);
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (long i = 0; peer < size && i < n; i++) {
		if (rank % 2 == 0) {
			MPI_Send(buf, bytes, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
			MPI_Recv(buf, bytes, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		} else {
			MPI_Recv(buf, bytes, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			MPI_Send(buf, bytes, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	MPI_Barrier(MPI_COMM_WORLD);
	double s = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9;
	if (rank == 0)
		printf("%.6f %.0f\n", s, 2.0 * (double)n / s);
	free(buf);
	MPI_Finalize();
	return 0;
}
