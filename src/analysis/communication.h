/* Communication on the devices: how long each process's collective-communication kernels
 * (NCCL's and RCCL's, known by name: "nccl...") ran on each device, how much of that
 * time compute kernels ran beside them on the same device (overlapped) and how much they
 * ran alone (exposed: the time a step waits for communication), as Holistic Trace
 * Analysis and nsys's nccl_gpu_overlap_trace recipe count it. Memory copies are neither.
 * For gpuprof summary's COMMUNICATION table, the report, and advise's
 * exposed-communication rule (one sweep for all three).
 *
 * And NCCL's calls (--nccl-trace) with the kernels they launched (gpuprof_kernel.call_id):
 * each operation's device time (the union of its kernels), bytes, and nccl-tests'
 * formulas over that device time (nccl-tests times an operation on the host, launch
 * included): the algorithm bandwidth, bytes over time, with the bytes nccl-tests counts
 * (the larger of what the operation sends and what it receives: an all-gather's whole
 * output, a reduce-scatter's whole input, a send and receive of one buffer once); the
 * bus bandwidth, that times 2(n-1)/n for an all-reduce, (n-1)/n for an all-gather or
 * reduce-scatter, 1 for a broadcast, reduce, send or receive, n the communicator's ranks.
 * The collectives of a group (ncclGroupStart ... ncclGroupEnd, NCCL launching at the
 * end) are one operation. */
#ifndef GPUPROF_ANALYSIS_COMMUNICATION_H
#define GPUPROF_ANALYSIS_COMMUNICATION_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

#include "util/error.h"

/* Whether a kernel's name is a communication library's ("ncclDevKernel_AllReduce_...",
 * "ncclKernel_...", a demangled "void ncclKernel<...>"). */
int communication_kernel(const char *name);

/* One device's kernels, fed in order of start: the times of the union of the
 * communication kernels, of the compute kernels, and of their intersection. Constant
 * memory: everything fed so far started at or before pos, so each kind covers
 * [pos, its latest end) from pos on. Zeroed to begin. */
struct overlap_sweep {
	int started;
	int64_t pos, communication_end, compute_end;
	uint64_t communication_kernels, compute_kernels;
	int64_t communication_ns, compute_ns, overlapped_ns; /* exposed: the first less the last */
};

void overlap_sweep_add(struct overlap_sweep *s, int64_t start, int64_t end, int communication);
/* Counts the time after the last start; the sums are final. */
void overlap_sweep_finish(struct overlap_sweep *s);

/* A process's device that ran communication kernels. */
struct communication_device {
	int input;              /* which database (0, 1, ...) */
	int64_t pid;
	char *device;           /* the device's name */
	struct overlap_sweep sweep;
};

/* NCCL's operations of one function (or of one set of functions in a group: their
 * names joined by "+") and communicator size in a process, those that launched kernels. */
struct communication_calls {
	int input;
	int64_t process_id, pid;
	char *function;
	int64_t ranks;          /* the communicator's; 0 when unknown or several */
	uint64_t calls;         /* the collectives (a group's each counted) */
	uint64_t operations;    /* calls or groups */
	uint64_t kernels;
	uint64_t bytes;         /* each operation's, as nccl-tests counts them: the larger of
				 * what it sends and what it receives */
	int64_t device_ns;      /* each operation's kernels' union, summed */
	double bus_factor;      /* bus bandwidth over algorithm bandwidth; 0: not known */
};

struct communication_report {
	struct communication_device *devices;
	size_t count;
	struct communication_calls *calls;
	size_t call_count;
};

/* nccl-tests' bus bandwidth factor of an NCCL function for ranks ranks: 0 when unknown. */
double communication_bus_factor(const char *function, int64_t ranks);

/* Adds each process and device of db that ran communication kernels, and its NCCL
 * operations that launched kernels (input: its number among several inputs). 0, or -1
 * with err set. */
int communication_gather(sqlite3 *db, int input, struct communication_report *r,
			 struct error *err);
/* Its second part, the NCCL operations (communication-calls.c). */
int communication_gather_calls(sqlite3 *db, int input, struct communication_report *r,
			       struct error *err);
void communication_release(struct communication_report *r);

#endif
