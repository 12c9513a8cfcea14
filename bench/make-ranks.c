/* make-ranks: writes the spools of a synthetic MPI run of known shape, for the scale
 * benchmark of merge and the cross-rank analysis (bench/scale-ranks.sh): RANKS ranks on
 * hosts of 64, each host's clock 1 ms ahead of the one before (its clock exchanges say
 * so); STEPS steps, each an MPI_Allreduce on MPI_COMM_WORLD that the last rank reaches
 * 1 ms after the others (who arrive spread over 100 us), then a ring exchange
 * (MPI_Irecv from the left, MPI_Isend to the right, MPI_Waitall completing both).
 *
 *   make-ranks DIRECTORY RANKS STEPS        writes DIRECTORY/rankN.spool */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "spool-writer.h"

enum { S_HOST = 1, S_COMMAND, S_INIT, S_ALLREDUCE, S_IRECV, S_ISEND, S_WAITALL, S_FINALIZE,
       S_WORLD };

static void call(int fd, uint32_t tid, uint32_t function, uint64_t start, uint64_t end,
		 uint64_t id, uint32_t comm, int32_t peer, int32_t tag, uint64_t sent,
		 uint64_t received, uint64_t sequence, uint64_t request, int size)
{
	struct record_mpi_call c = {
		.header = { sizeof(c), RECORD_MPI_CALL, 0 }, .tid = tid, .function_id = function,
		.start_ns = start, .end_ns = end, .call_id = id, .communicator_id = comm,
		.communicator_size = comm ? (uint32_t)size : 0, .peer = peer, .tag = tag,
		.root = -1, .bytes_sent = sent, .bytes_received = received, .sequence = sequence,
		.request = request, .domain = COMMUNICATION_MPI,
	};
	put(fd, &c);
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: make-ranks DIRECTORY RANKS STEPS\n");
		return 2;
	}
	int ranks = atoi(argv[2]);
	long steps = atol(argv[3]);
	for (int rank = 0; rank < ranks; rank++) {
		char path[4096], host[64];
		snprintf(path, sizeof(path), "%s/rank%d.spool", argv[1], rank);
		snprintf(host, sizeof(host), "node-%d", rank / 64);
		int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd < 0 || spool_write_header(fd, NULL) < 0) {
			perror(path);
			return 1;
		}
		static const char *names[] = { "", NULL, "make-ranks", "MPI_Init", "MPI_Allreduce",
					       "MPI_Irecv", "MPI_Isend", "MPI_Waitall",
					       "MPI_Finalize", "MPI_COMM_WORLD" };
		for (uint32_t i = 1; i < sizeof(names) / sizeof(names[0]); i++)
			put_string(fd, i, i == S_HOST ? host : names[i]);
		/* this host's clock runs ahead of rank 0's by 1 ms per host */
		int64_t ahead = (int64_t)(rank / 64) * 1000000;
		uint64_t base = 10000000000ull + (uint64_t)ahead;
		uint32_t pid = 10000 + (uint32_t)rank;
		struct record_process p = { { sizeof(p), RECORD_PROCESS, 0 }, pid, 1, base,
					    1700000000000000000ull, S_HOST, S_COMMAND, rank, ranks,
					    base };
		put(fd, &p);
		uint64_t id = 0, request = 0;
		int left = (rank + ranks - 1) % ranks, right = (rank + 1) % ranks;
		call(fd, pid, S_INIT, base, base + 1000000, ++id, 0, -1, -1, 0, 0, 0, 0, ranks);
		struct record_clock_sync sync = { { sizeof(sync), RECORD_CLOCK_SYNC, 0 },
						  base + 1000000, -ahead, rank ? 5000 : 0, rank, ranks };
		put(fd, &sync);
		uint64_t t = base + 2000000;
		for (long s = 0; s < steps; s++) {
			uint64_t arrive = t + (rank == ranks - 1 ? 1000000
							 : (uint64_t)((rank * 7 + s * 13) % 100) * 1000);
			uint64_t leave = t + 1050000;
			call(fd, pid, S_ALLREDUCE, arrive, leave, ++id, S_WORLD, -1, -1, 8, 8,
			     (uint64_t)s + 1, 0, ranks);
			call(fd, pid, S_IRECV, leave + 1000, leave + 2000, ++id, S_WORLD, left, 7, 0,
			     4096, 0, ++request, ranks);
			uint64_t recv_request = request;
			call(fd, pid, S_ISEND, leave + 3000, leave + 4000, ++id, S_WORLD, right, 7,
			     4096, 0, 0, ++request, ranks);
			uint64_t wait = ++id;
			call(fd, pid, S_WAITALL, leave + 5000, leave + 20000, wait, 0, -1, -1, 0, 0, 0,
			     0, ranks);
			struct record_mpi_completion d = { { sizeof(d), RECORD_MPI_COMPLETION, 0 },
							   recv_request, wait, leave + 20000, 4096,
							   left, 7 };
			put(fd, &d);
			d.request = request;
			d.bytes_received = 0;
			d.peer = d.tag = -1;
			put(fd, &d);
			t += 2000000;
		}
		call(fd, pid, S_FINALIZE, t, t + 100000, ++id, 0, -1, -1, 0, 0, 0, 0, ranks);
		sync.local_ns = t;
		put(fd, &sync);
		struct record_process_end end = { { sizeof(end), RECORD_PROCESS_END, 0 }, t + 200000 };
		put(fd, &end);
		put_end(fd);
		if (close(fd) < 0) {
			perror(path);
			return 1;
		}
	}
	return 0;
}
