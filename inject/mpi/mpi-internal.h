/* What the files of the MPI interposer share (--mpi-trace). The library is built once
 * per MPI implementation against its mpi.h (MPI's ABI is not one: a communicator is a
 * pointer in Open MPI, an int in MPICH) and preloaded into the program by `gpuprof trace`
 * when the program uses that implementation. It defines MPI's functions, records each
 * call and calls the implementation's through the standard profiling interface (PMPI_*).
 *
 * Every PMPI function and every object of the implementation it uses is found at run
 * time in the MPI library loaded in the process (mpi-bind.h): the library loads into any
 * process (the program's children, which inherit LD_PRELOAD, a shell), finds an MPI
 * loaded privately (mpi4py's), and a process whose MPI is another implementation, or
 * none, reaches the next definition of each function unchanged (MPI_FORWARD).
 *
 * mpi-state.c: the communicators' names and world ranks, the requests in flight, the
 * records, the clock exchange with rank 0; mpi-p2p.c: initialisation, point-to-point
 * calls, waits and tests; mpi-collectives.c: collectives and communicators. */
#ifndef GPUPROF_INJECT_MPI_INTERNAL_H
#define GPUPROF_INJECT_MPI_INTERNAL_H

#include <mpi.h>
#include <stdatomic.h>
#include <stdint.h>

#include "core/record.h"

/* A communicator as the records name it. */
struct mpi_comm {
	_Atomic uintptr_t handle;   /* the implementation's handle; 0: a free slot */
	_Atomic int ready;          /* the fields below are set */
	uint32_t name_id;           /* string id of name */
	char name[160];             /* "MPI_COMM_WORLD", "MPI_COMM_WORLD/2@0" (docs/MPI.md) */
	uint32_t size;              /* its ranks (the remote group's, an intercommunicator) */
	int *world;                 /* world rank of each rank; NULL: the identity */
	_Atomic uint64_t collectives; /* collectives begun on it */
	_Atomic uint64_t created;   /* communicators made from it */
};

/* Whether calls are recorded: the program's MPI is the one this library was built for,
 * the recorder runs and collection is on. */
int mpi_recording(void);
/* Whether the program's MPI is the one this library was built for. */
int mpi_matches(void);
/* The next definition of `name` (the implementation's own), for a program whose MPI is
 * not this library's: NULL when there is none. */
void *mpi_next(const char *name);

/* The communicator's record (made the first time it is seen); NULL for MPI_COMM_NULL, or
 * when it could not be followed (the table full). */
struct mpi_comm *mpi_comm_of(MPI_Comm comm);
/* A communicator made from `parent` by a collective call (dup, split, create): named
 * after it and its place among those made from it, so that every member names it so. */
void mpi_comm_made(MPI_Comm parent, MPI_Comm made);
void mpi_comm_freed(MPI_Comm comm);
/* The world rank of rank r of c; -1 for none (any source, MPI_PROC_NULL, out of range). */
int mpi_world_rank(const struct mpi_comm *c, int r);

/* Bytes of count elements of type; 0 when the type is not valid. */
uint64_t mpi_bytes(int count, MPI_Datatype type);
/* The bytes a status says were received. */
uint64_t mpi_status_bytes(const MPI_Status *status);

/* A call being recorded: its start, and the values of its record. */
struct mpi_call {
	int on;                     /* recorded */
	uint64_t start_ns;
	struct mpi_comm *comm;
	int32_t peer, tag, root;
	uint64_t sent, received, sequence, request;
	uint64_t end_ns, call_id;   /* set when it ends */
};

/* Begins a call: records nothing when mpi_recording() says no. */
void mpi_call_begin(struct mpi_call *call);
/* Sets the call's communicator, and its sequence when it is a collective. */
void mpi_call_comm(struct mpi_call *call, MPI_Comm comm, int collective);
/* Ends it: writes its record (name: "MPI_Send", interned once in *name_id) and returns
 * its call id (0 when not recorded). */
uint64_t mpi_call_end(struct mpi_call *call, const char *name, uint32_t *name_id, int result);

/* A nonblocking call's request, followed until a wait or test completes it: returns the
 * request id (0 when not followed). recv: a receive, whose completion says its source,
 * tag and bytes. */
uint64_t mpi_request_begun(MPI_Request request, struct mpi_comm *comm, int recv);
/* Requests (a copy taken before the wait or test, which sets them to MPI_REQUEST_NULL)
 * completed by the call `by` (ended: recorded or not); done[i]: whether request i completed; statuses may
 * be NULL when the caller ignored them and no receive was followed. */
void mpi_requests_completed(const MPI_Request *requests, const int *done,
			    const MPI_Status *statuses, int count, const struct mpi_call *by);
/* Whether any of these requests is a followed receive (its status is then needed). */
int mpi_requests_have_receive(const MPI_Request *requests, int count);

/* Once MPI is initialised: the world's communicators, the clock's offset to rank 0. */
void mpi_started(void);
/* Before MPI_Finalize: the offset again. */
void mpi_finishing(void);

/* A wrapper's prologue: a process whose MPI is not this library's calls the next
 * definition with the same arguments. Integer and pointer arguments travel in the same
 * registers on x86-64, so Open MPI's interposer (handles as pointers) hands MPICH's
 * integer handles on whole; MPICH's (handles as ints) would cut Open MPI's pointers to
 * 32 bits, and `gpuprof trace` never preloads it into a program that links Open MPI. */
#define MPI_FORWARD(ret, name, ...) do { \
		if (!mpi_matches()) { \
			static ret (*next)(); \
			if (!next) \
				next = (ret (*)())mpi_next(#name); \
			return next ? next(__VA_ARGS__) : MPI_ERR_INTERN; \
		} \
	} while (0)

#endif
