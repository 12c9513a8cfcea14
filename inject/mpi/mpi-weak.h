/* The implementation's functions and objects the interposer uses, referenced weakly (see
 * mpi-internal.h): included by every file of it, after mpi.h. */
#ifndef GPUPROF_INJECT_MPI_WEAK_H
#define GPUPROF_INJECT_MPI_WEAK_H

#define MPI_WEAK_PRAGMA(x) _Pragma(#x)
#define MPI_WEAK(symbol) MPI_WEAK_PRAGMA(weak symbol)

#define MPI_PMPI_USED(X) \
	X(PMPI_Init) X(PMPI_Init_thread) X(PMPI_Finalize) X(PMPI_Initialized) \
	X(PMPI_Finalized) X(PMPI_Comm_rank) X(PMPI_Comm_size) X(PMPI_Comm_remote_size) \
	X(PMPI_Comm_test_inter) X(PMPI_Comm_group) X(PMPI_Comm_remote_group) \
	X(PMPI_Group_translate_ranks) X(PMPI_Group_free) X(PMPI_Comm_dup) X(PMPI_Comm_split) \
	X(PMPI_Comm_split_type) X(PMPI_Comm_create) X(PMPI_Comm_free) X(PMPI_Type_size) \
	X(PMPI_Get_count) X(PMPI_Send) X(PMPI_Ssend) X(PMPI_Bsend) X(PMPI_Rsend) X(PMPI_Recv) \
	X(PMPI_Sendrecv) X(PMPI_Sendrecv_replace) X(PMPI_Isend) X(PMPI_Issend) X(PMPI_Ibsend) \
	X(PMPI_Irsend) X(PMPI_Irecv) X(PMPI_Probe) X(PMPI_Wait) X(PMPI_Waitall) X(PMPI_Waitany) \
	X(PMPI_Waitsome) X(PMPI_Test) X(PMPI_Testall) X(PMPI_Testany) X(PMPI_Testsome) \
	X(PMPI_Barrier) X(PMPI_Bcast) X(PMPI_Reduce) X(PMPI_Allreduce) X(PMPI_Allgather) \
	X(PMPI_Allgatherv) X(PMPI_Gather) X(PMPI_Gatherv) X(PMPI_Scatter) X(PMPI_Scatterv) \
	X(PMPI_Alltoall) X(PMPI_Alltoallv) X(PMPI_Reduce_scatter) X(PMPI_Reduce_scatter_block) \
	X(PMPI_Scan) X(PMPI_Exscan) X(PMPI_Ibarrier) X(PMPI_Ibcast) X(PMPI_Ireduce) \
	X(PMPI_Iallreduce) X(PMPI_Iallgather) X(PMPI_Ialltoall)

MPI_PMPI_USED(MPI_WEAK)

#ifdef OPEN_MPI
/* the objects behind Open MPI's predefined handles */
MPI_WEAK(ompi_mpi_comm_world)
MPI_WEAK(ompi_mpi_comm_self)
MPI_WEAK(ompi_mpi_comm_null)
MPI_WEAK(ompi_mpi_byte)
MPI_WEAK(ompi_request_null)
MPI_WEAK(ompi_mpi_op_null)
/* whether the program's MPI is Open MPI: its world communicator is there */
#define MPI_IMPLEMENTATION_PRESENT() (&ompi_mpi_comm_world != NULL && PMPI_Send != NULL)
#define MPI_IMPLEMENTATION_NAME "Open MPI"
#else
/* MPICH and its derivatives (Intel MPI, MVAPICH, Cray MPICH): handles are integers */
#define MPI_IMPLEMENTATION_PRESENT() (PMPI_Send != NULL && mpi_next_is_mpich())
#define MPI_IMPLEMENTATION_NAME "MPICH"
int mpi_next_is_mpich(void);
#endif

#endif
