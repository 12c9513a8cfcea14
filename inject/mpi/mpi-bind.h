/* The implementation's functions and objects the interposer uses (see mpi-internal.h),
 * reached through a table that mpi_bind() fills from the MPI library loaded in the
 * process: nothing of MPI is linked, so the interposer loads into any process, and an MPI
 * library loaded privately (RTLD_LOCAL: Python's mpi4py) is found as well as one the
 * program links. Included by every file of the interposer, after mpi.h: each PMPI
 * function is then called as P(Send)(...). */
#ifndef GPUPROF_INJECT_MPI_BIND_H
#define GPUPROF_INJECT_MPI_BIND_H

#define MPI_PMPI_USED(X) \
	X(Init) X(Init_thread) X(Finalize) X(Comm_rank) X(Comm_size) X(Comm_remote_size) \
	X(Comm_test_inter) X(Comm_group) X(Comm_remote_group) X(Group_translate_ranks) \
	X(Group_free) X(Comm_dup) X(Comm_split) X(Comm_split_type) X(Comm_create) X(Comm_free) \
	X(Type_size) X(Get_count) X(Send) X(Ssend) X(Bsend) X(Rsend) X(Recv) X(Sendrecv) \
	X(Sendrecv_replace) X(Isend) X(Issend) X(Ibsend) X(Irsend) X(Irecv) X(Probe) X(Wait) \
	X(Waitall) X(Waitany) X(Waitsome) X(Test) X(Testall) X(Testany) X(Testsome) X(Barrier) \
	X(Bcast) X(Reduce) X(Allreduce) X(Allgather) X(Allgatherv) X(Gather) X(Gatherv) \
	X(Scatter) X(Scatterv) X(Alltoall) X(Alltoallv) X(Reduce_scatter) \
	X(Reduce_scatter_block) X(Scan) X(Exscan) X(Ibarrier) X(Ibcast) X(Ireduce) \
	X(Iallreduce) X(Iallgather) X(Ialltoall)

struct mpi_functions {
#define MPI_FUNCTION_FIELD(name) __typeof__(&PMPI_##name) name;
	MPI_PMPI_USED(MPI_FUNCTION_FIELD)
#undef MPI_FUNCTION_FIELD
};
extern struct mpi_functions mpi_functions;
#define P(name) (mpi_functions.name)

#ifdef OPEN_MPI
/* Open MPI's predefined handles are the addresses of its objects: found in the table
 * too, the macros of mpi.h redefined to read them there */
struct mpi_objects {
	void *comm_world, *comm_self, *comm_null, *byte, *request_null;
};
extern struct mpi_objects mpi_objects;
#undef MPI_COMM_WORLD
#undef MPI_COMM_SELF
#undef MPI_COMM_NULL
#undef MPI_BYTE
#undef MPI_REQUEST_NULL
#define MPI_COMM_WORLD ((MPI_Comm)mpi_objects.comm_world)
#define MPI_COMM_SELF ((MPI_Comm)mpi_objects.comm_self)
#define MPI_COMM_NULL ((MPI_Comm)mpi_objects.comm_null)
#define MPI_BYTE ((MPI_Datatype)mpi_objects.byte)
#define MPI_REQUEST_NULL ((MPI_Request)mpi_objects.request_null)
#define MPI_IMPLEMENTATION_NAME "Open MPI"
#else
/* MPICH and the MPIs of its ABI (Intel MPI, MVAPICH, Cray MPICH): handles are integers */
#define MPI_IMPLEMENTATION_NAME "MPICH"
#endif

/* Fills the tables from the MPI library of this interposer's implementation loaded in the
 * process: 1 when every function was found there, 0 otherwise (none loaded, or another
 * implementation's). */
int mpi_bind(void);

#endif
