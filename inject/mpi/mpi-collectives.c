/* MPI's collectives and the calls that make and free communicators, recorded (see
 * mpi-internal.h). A collective's record says the bytes this rank sent and received in
 * it, and its sequence number on the communicator, the same on every member. */
#include "mpi-internal.h"
#include "mpi-bind.h"

#define NAME_ID static uint32_t name_id

/* Begins a collective on comm; root: the root's rank in comm, or -1 for none. */
static void collective(struct mpi_call *call, MPI_Comm comm, int root)
{
	mpi_call_begin(call);
	mpi_call_comm(call, comm, 1);
	if (call->on && root >= 0)
		call->root = mpi_world_rank(call->comm, root);
}

/* Whether this rank is the root of a rooted collective. */
static int is_root(MPI_Comm comm, int root)
{
	int rank = -1;
	P(Comm_rank)(comm, &rank);
	return rank == root;
}

static int size_of(const struct mpi_call *call)
{
	return call->comm ? (int)call->comm->size : 0;
}

static uint64_t sum_bytes(const int *counts, MPI_Datatype type, int n)
{
	uint64_t total = 0;
	for (int i = 0; counts && i < n; i++)
		total += mpi_bytes(counts[i], type);
	return total;
}

int MPI_Barrier(MPI_Comm comm)
{
	MPI_FORWARD(int, MPI_Barrier, comm);
	NAME_ID;
	struct mpi_call call;
	collective(&call, comm, -1);
	int rc = P(Barrier)(comm);
	mpi_call_end(&call, "MPI_Barrier", &name_id, rc);
	return rc;
}

int MPI_Bcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm)
{
	MPI_FORWARD(int, MPI_Bcast, buf, count, type, root, comm);
	NAME_ID;
	struct mpi_call call;
	collective(&call, comm, root);
	if (call.on) {
		if (is_root(comm, root))
			call.sent = mpi_bytes(count, type);
		else
			call.received = mpi_bytes(count, type);
	}
	int rc = P(Bcast)(buf, count, type, root, comm);
	mpi_call_end(&call, "MPI_Bcast", &name_id, rc);
	return rc;
}

int MPI_Reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
	       int root, MPI_Comm comm)
{
	MPI_FORWARD(int, MPI_Reduce, sendbuf, recvbuf, count, type, op, root, comm);
	NAME_ID;
	struct mpi_call call;
	collective(&call, comm, root);
	if (call.on) {
		call.sent = mpi_bytes(count, type);
		if (is_root(comm, root))
			call.received = call.sent;
	}
	int rc = P(Reduce)(sendbuf, recvbuf, count, type, op, root, comm);
	mpi_call_end(&call, "MPI_Reduce", &name_id, rc);
	return rc;
}

/* The collectives where every rank gives and gets count elements. */
#define ALL_TO_SAME(name, pname, params, args, count, type) \
int name params \
{ \
	MPI_FORWARD(int, name, args); \
	NAME_ID; \
	struct mpi_call call; \
	collective(&call, comm, -1); \
	if (call.on) \
		call.sent = call.received = mpi_bytes(count, type); \
	int rc = P(pname)(args); \
	mpi_call_end(&call, #name, &name_id, rc); \
	return rc; \
}

#define ARGS(...) __VA_ARGS__
ALL_TO_SAME(MPI_Allreduce, Allreduce,
	    (const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
	     MPI_Comm comm), ARGS(sendbuf, recvbuf, count, type, op, comm), count, type)
ALL_TO_SAME(MPI_Scan, Scan,
	    (const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
	     MPI_Comm comm), ARGS(sendbuf, recvbuf, count, type, op, comm), count, type)
ALL_TO_SAME(MPI_Exscan, Exscan,
	    (const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
	     MPI_Comm comm), ARGS(sendbuf, recvbuf, count, type, op, comm), count, type)

int MPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
		  int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
	MPI_FORWARD(int, MPI_Allgather, sendbuf, sendcount, sendtype, recvbuf, recvcount,
		    recvtype, comm);
	NAME_ID;
	struct mpi_call call;
	collective(&call, comm, -1);
	if (call.on) {
		call.sent = mpi_bytes(sendcount, sendtype);
		call.received = mpi_bytes(recvcount, recvtype) * (uint64_t)size_of(&call);
	}
	int rc = P(Allgather)(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
	mpi_call_end(&call, "MPI_Allgather", &name_id, rc);
	return rc;
}

int MPI_Allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
		   const int recvcounts[], const int displs[], MPI_Datatype recvtype,
		   MPI_Comm comm)
{
	MPI_FORWARD(int, MPI_Allgatherv, sendbuf, sendcount, sendtype, recvbuf, recvcounts,
		    displs, recvtype, comm);
	NAME_ID;
	struct mpi_call call;
	collective(&call, comm, -1);
	if (call.on) {
		call.sent = mpi_bytes(sendcount, sendtype);
		call.received = sum_bytes(recvcounts, recvtype, size_of(&call));
	}
	int rc = P(Allgatherv)(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
				 recvtype, comm);
	mpi_call_end(&call, "MPI_Allgatherv", &name_id, rc);
	return rc;
}

int MPI_Gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
	       int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
	MPI_FORWARD(int, MPI_Gather, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
		    root, comm);
	NAME_ID;
	struct mpi_call call;
	collective(&call, comm, root);
	if (call.on) {
		call.sent = mpi_bytes(sendcount, sendtype);
		if (is_root(comm, root))
			call.received = mpi_bytes(recvcount, recvtype) * (uint64_t)size_of(&call);
	}
	int rc = P(Gather)(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
	mpi_call_end(&call, "MPI_Gather", &name_id, rc);
	return rc;
}

int MPI_Gatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
		const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
		MPI_Comm comm)
{
	MPI_FORWARD(int, MPI_Gatherv, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
		    recvtype, root, comm);
	NAME_ID;
	struct mpi_call call;
	collective(&call, comm, root);
	if (call.on) {
		call.sent = mpi_bytes(sendcount, sendtype);
		if (is_root(comm, root))
			call.received = sum_bytes(recvcounts, recvtype, size_of(&call));
	}
	int rc = P(Gatherv)(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
			      root, comm);
	mpi_call_end(&call, "MPI_Gatherv", &name_id, rc);
	return rc;
}

int MPI_Scatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
		int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
	MPI_FORWARD(int, MPI_Scatter, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
		    root, comm);
	NAME_ID;
	struct mpi_call call;
	collective(&call, comm, root);
	if (call.on) {
		call.received = mpi_bytes(recvcount, recvtype);
		if (is_root(comm, root))
			call.sent = mpi_bytes(sendcount, sendtype) * (uint64_t)size_of(&call);
	}
	int rc = P(Scatter)(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root,
			      comm);
	mpi_call_end(&call, "MPI_Scatter", &name_id, rc);
	return rc;
}

int MPI_Scatterv(const void *sendbuf, const int sendcounts[], const int displs[],
		 MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
		 int root, MPI_Comm comm)
{
	MPI_FORWARD(int, MPI_Scatterv, sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount,
		    recvtype, root, comm);
	NAME_ID;
	struct mpi_call call;
	collective(&call, comm, root);
	if (call.on) {
		call.received = mpi_bytes(recvcount, recvtype);
		if (is_root(comm, root))
			call.sent = sum_bytes(sendcounts, sendtype, size_of(&call));
	}
	int rc = P(Scatterv)(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype,
			       root, comm);
	mpi_call_end(&call, "MPI_Scatterv", &name_id, rc);
	return rc;
}

int MPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
		 int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
	MPI_FORWARD(int, MPI_Alltoall, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
		    comm);
	NAME_ID;
	struct mpi_call call;
	collective(&call, comm, -1);
	if (call.on) {
		call.sent = mpi_bytes(sendcount, sendtype) * (uint64_t)size_of(&call);
		call.received = mpi_bytes(recvcount, recvtype) * (uint64_t)size_of(&call);
	}
	int rc = P(Alltoall)(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
	mpi_call_end(&call, "MPI_Alltoall", &name_id, rc);
	return rc;
}

int MPI_Alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
		  MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
		  const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm)
{
	MPI_FORWARD(int, MPI_Alltoallv, sendbuf, sendcounts, sdispls, sendtype, recvbuf,
		    recvcounts, rdispls, recvtype, comm);
	NAME_ID;
	struct mpi_call call;
	collective(&call, comm, -1);
	if (call.on) {
		call.sent = sum_bytes(sendcounts, sendtype, size_of(&call));
		call.received = sum_bytes(recvcounts, recvtype, size_of(&call));
	}
	int rc = P(Alltoallv)(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
				rdispls, recvtype, comm);
	mpi_call_end(&call, "MPI_Alltoallv", &name_id, rc);
	return rc;
}

int MPI_Reduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[],
		       MPI_Datatype type, MPI_Op op, MPI_Comm comm)
{
	MPI_FORWARD(int, MPI_Reduce_scatter, sendbuf, recvbuf, recvcounts, type, op, comm);
	NAME_ID;
	struct mpi_call call;
	collective(&call, comm, -1);
	if (call.on) {
		int rank = -1;
		P(Comm_rank)(comm, &rank);
		call.sent = sum_bytes(recvcounts, type, size_of(&call));
		if (rank >= 0 && rank < size_of(&call))
			call.received = mpi_bytes(recvcounts[rank], type);
	}
	int rc = P(Reduce_scatter)(sendbuf, recvbuf, recvcounts, type, op, comm);
	mpi_call_end(&call, "MPI_Reduce_scatter", &name_id, rc);
	return rc;
}

int MPI_Reduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount,
			     MPI_Datatype type, MPI_Op op, MPI_Comm comm)
{
	MPI_FORWARD(int, MPI_Reduce_scatter_block, sendbuf, recvbuf, recvcount, type, op, comm);
	NAME_ID;
	struct mpi_call call;
	collective(&call, comm, -1);
	if (call.on) {
		call.received = mpi_bytes(recvcount, type);
		call.sent = call.received * (uint64_t)size_of(&call);
	}
	int rc = P(Reduce_scatter_block)(sendbuf, recvbuf, recvcount, type, op, comm);
	mpi_call_end(&call, "MPI_Reduce_scatter_block", &name_id, rc);
	return rc;
}

/* ---- nonblocking collectives: a request each, completed by a wait or test ---------- */

static void begun(struct mpi_call *call, int rc, MPI_Request *request)
{
	if (rc == MPI_SUCCESS && call->on)
		call->request = mpi_request_begun(*request, call->comm, 0);
}

int MPI_Ibarrier(MPI_Comm comm, MPI_Request *request)
{
	MPI_FORWARD(int, MPI_Ibarrier, comm, request);
	NAME_ID;
	struct mpi_call call;
	collective(&call, comm, -1);
	int rc = P(Ibarrier)(comm, request);
	begun(&call, rc, request);
	mpi_call_end(&call, "MPI_Ibarrier", &name_id, rc);
	return rc;
}

int MPI_Ibcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm,
	       MPI_Request *request)
{
	MPI_FORWARD(int, MPI_Ibcast, buf, count, type, root, comm, request);
	NAME_ID;
	struct mpi_call call;
	collective(&call, comm, root);
	if (call.on) {
		if (is_root(comm, root))
			call.sent = mpi_bytes(count, type);
		else
			call.received = mpi_bytes(count, type);
	}
	int rc = P(Ibcast)(buf, count, type, root, comm, request);
	begun(&call, rc, request);
	mpi_call_end(&call, "MPI_Ibcast", &name_id, rc);
	return rc;
}

int MPI_Ireduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
		int root, MPI_Comm comm, MPI_Request *request)
{
	MPI_FORWARD(int, MPI_Ireduce, sendbuf, recvbuf, count, type, op, root, comm, request);
	NAME_ID;
	struct mpi_call call;
	collective(&call, comm, root);
	if (call.on) {
		call.sent = mpi_bytes(count, type);
		if (is_root(comm, root))
			call.received = call.sent;
	}
	int rc = P(Ireduce)(sendbuf, recvbuf, count, type, op, root, comm, request);
	begun(&call, rc, request);
	mpi_call_end(&call, "MPI_Ireduce", &name_id, rc);
	return rc;
}

int MPI_Iallreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type,
		   MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
	MPI_FORWARD(int, MPI_Iallreduce, sendbuf, recvbuf, count, type, op, comm, request);
	NAME_ID;
	struct mpi_call call;
	collective(&call, comm, -1);
	if (call.on)
		call.sent = call.received = mpi_bytes(count, type);
	int rc = P(Iallreduce)(sendbuf, recvbuf, count, type, op, comm, request);
	begun(&call, rc, request);
	mpi_call_end(&call, "MPI_Iallreduce", &name_id, rc);
	return rc;
}

int MPI_Iallgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
		   int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
	MPI_FORWARD(int, MPI_Iallgather, sendbuf, sendcount, sendtype, recvbuf, recvcount,
		    recvtype, comm, request);
	NAME_ID;
	struct mpi_call call;
	collective(&call, comm, -1);
	if (call.on) {
		call.sent = mpi_bytes(sendcount, sendtype);
		call.received = mpi_bytes(recvcount, recvtype) * (uint64_t)size_of(&call);
	}
	int rc = P(Iallgather)(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
				 request);
	begun(&call, rc, request);
	mpi_call_end(&call, "MPI_Iallgather", &name_id, rc);
	return rc;
}

int MPI_Ialltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
		  int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
	MPI_FORWARD(int, MPI_Ialltoall, sendbuf, sendcount, sendtype, recvbuf, recvcount,
		    recvtype, comm, request);
	NAME_ID;
	struct mpi_call call;
	collective(&call, comm, -1);
	if (call.on) {
		call.sent = mpi_bytes(sendcount, sendtype) * (uint64_t)size_of(&call);
		call.received = mpi_bytes(recvcount, recvtype) * (uint64_t)size_of(&call);
	}
	int rc = P(Ialltoall)(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
				request);
	begun(&call, rc, request);
	mpi_call_end(&call, "MPI_Ialltoall", &name_id, rc);
	return rc;
}

/* ---- communicators ---------------------------------------------------------------------- */

int MPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm)
{
	MPI_FORWARD(int, MPI_Comm_dup, comm, newcomm);
	NAME_ID;
	struct mpi_call call;
	collective(&call, comm, -1);
	int rc = P(Comm_dup)(comm, newcomm);
	if (rc == MPI_SUCCESS)
		mpi_comm_made(comm, *newcomm);
	mpi_call_end(&call, "MPI_Comm_dup", &name_id, rc);
	return rc;
}

int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm)
{
	MPI_FORWARD(int, MPI_Comm_split, comm, color, key, newcomm);
	NAME_ID;
	struct mpi_call call;
	collective(&call, comm, -1);
	int rc = P(Comm_split)(comm, color, key, newcomm);
	if (rc == MPI_SUCCESS)
		mpi_comm_made(comm, *newcomm);
	mpi_call_end(&call, "MPI_Comm_split", &name_id, rc);
	return rc;
}

int MPI_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info,
			MPI_Comm *newcomm)
{
	MPI_FORWARD(int, MPI_Comm_split_type, comm, split_type, key, info, newcomm);
	NAME_ID;
	struct mpi_call call;
	collective(&call, comm, -1);
	int rc = P(Comm_split_type)(comm, split_type, key, info, newcomm);
	if (rc == MPI_SUCCESS)
		mpi_comm_made(comm, *newcomm);
	mpi_call_end(&call, "MPI_Comm_split_type", &name_id, rc);
	return rc;
}

int MPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm)
{
	MPI_FORWARD(int, MPI_Comm_create, comm, group, newcomm);
	NAME_ID;
	struct mpi_call call;
	collective(&call, comm, -1);
	int rc = P(Comm_create)(comm, group, newcomm);
	if (rc == MPI_SUCCESS)
		mpi_comm_made(comm, *newcomm);
	mpi_call_end(&call, "MPI_Comm_create", &name_id, rc);
	return rc;
}

int MPI_Comm_free(MPI_Comm *comm)
{
	MPI_FORWARD(int, MPI_Comm_free, comm);
	NAME_ID;
	struct mpi_call call;
	collective(&call, *comm, -1);
	MPI_Comm freed = *comm;
	int rc = P(Comm_free)(comm);
	if (rc == MPI_SUCCESS)
		mpi_comm_freed(freed);
	mpi_call_end(&call, "MPI_Comm_free", &name_id, rc);
	return rc;
}
