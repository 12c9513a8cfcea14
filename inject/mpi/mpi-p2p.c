/* MPI's initialisation, point-to-point calls, waits and tests, recorded (see
 * mpi-internal.h). */
#include "mpi-internal.h"
#include "mpi-bind.h"

#include <stdlib.h>
#include <string.h>

#define NAME_ID static uint32_t name_id

int MPI_Init(int *argc, char ***argv)
{
	MPI_FORWARD(int, MPI_Init, argc, argv);
	NAME_ID;
	struct mpi_call call;
	mpi_call_begin(&call);
	int rc = P(Init)(argc, argv);
	mpi_call_end(&call, "MPI_Init", &name_id, rc);
	if (rc == MPI_SUCCESS)
		mpi_started();
	return rc;
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
	MPI_FORWARD(int, MPI_Init_thread, argc, argv, required, provided);
	NAME_ID;
	struct mpi_call call;
	mpi_call_begin(&call);
	int rc = P(Init_thread)(argc, argv, required, provided);
	mpi_call_end(&call, "MPI_Init_thread", &name_id, rc);
	if (rc == MPI_SUCCESS)
		mpi_started();
	return rc;
}

int MPI_Finalize(void)
{
	MPI_FORWARD(int, MPI_Finalize);
	NAME_ID;
	mpi_finishing();
	struct mpi_call call;
	mpi_call_begin(&call);
	int rc = P(Finalize)();
	mpi_call_end(&call, "MPI_Finalize", &name_id, rc);
	return rc;
}

/* ---- sends and receives --------------------------------------------------------------- */

static void p2p(struct mpi_call *call, MPI_Comm comm, int peer, int tag)
{
	mpi_call_comm(call, comm, 0);
	if (call->on) {
		call->peer = mpi_world_rank(call->comm, peer);
		call->tag = tag;
	}
}

#define SEND(name, pname) \
int name(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) \
{ \
	MPI_FORWARD(int, name, buf, count, type, dest, tag, comm); \
	NAME_ID; \
	struct mpi_call call; \
	mpi_call_begin(&call); \
	p2p(&call, comm, dest, tag); \
	if (call.on) \
		call.sent = mpi_bytes(count, type); \
	int rc = P(pname)(buf, count, type, dest, tag, comm); \
	mpi_call_end(&call, #name, &name_id, rc); \
	return rc; \
}

SEND(MPI_Send, Send)
SEND(MPI_Ssend, Ssend)
SEND(MPI_Bsend, Bsend)
SEND(MPI_Rsend, Rsend)

/* What a receive got, from its status. */
static void received(struct mpi_call *call, const MPI_Status *status)
{
	if (!call->on)
		return;
	call->peer = mpi_world_rank(call->comm, status->MPI_SOURCE);
	call->tag = status->MPI_TAG;
	call->received = mpi_status_bytes(status);
}

int MPI_Recv(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
	     MPI_Status *status)
{
	MPI_FORWARD(int, MPI_Recv, buf, count, type, source, tag, comm, status);
	NAME_ID;
	struct mpi_call call;
	MPI_Status own;
	mpi_call_begin(&call);
	p2p(&call, comm, source, tag);
	MPI_Status *use = call.on && status == MPI_STATUS_IGNORE ? &own : status;
	int rc = P(Recv)(buf, count, type, source, tag, comm, use);
	if (rc == MPI_SUCCESS && use != MPI_STATUS_IGNORE)
		received(&call, use);
	mpi_call_end(&call, "MPI_Recv", &name_id, rc);
	return rc;
}

int MPI_Sendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest,
		 int sendtag, void *recvbuf, int recvcount, MPI_Datatype recvtype, int source,
		 int recvtag, MPI_Comm comm, MPI_Status *status)
{
	MPI_FORWARD(int, MPI_Sendrecv, sendbuf, sendcount, sendtype, dest, sendtag, recvbuf,
		    recvcount, recvtype, source, recvtag, comm, status);
	NAME_ID;
	struct mpi_call call;
	MPI_Status own;
	mpi_call_begin(&call);
	p2p(&call, comm, dest, sendtag);
	if (call.on)
		call.sent = mpi_bytes(sendcount, sendtype);
	MPI_Status *use = call.on && status == MPI_STATUS_IGNORE ? &own : status;
	int rc = P(Sendrecv)(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount,
			       recvtype, source, recvtag, comm, use);
	/* the record's peer and tag are the send's: the receive's bytes are counted */
	if (rc == MPI_SUCCESS && call.on && use != MPI_STATUS_IGNORE)
		call.received = mpi_status_bytes(use);
	mpi_call_end(&call, "MPI_Sendrecv", &name_id, rc);
	return rc;
}

int MPI_Sendrecv_replace(void *buf, int count, MPI_Datatype type, int dest, int sendtag,
			 int source, int recvtag, MPI_Comm comm, MPI_Status *status)
{
	MPI_FORWARD(int, MPI_Sendrecv_replace, buf, count, type, dest, sendtag, source, recvtag,
		    comm, status);
	NAME_ID;
	struct mpi_call call;
	MPI_Status own;
	mpi_call_begin(&call);
	p2p(&call, comm, dest, sendtag);
	if (call.on)
		call.sent = mpi_bytes(count, type);
	MPI_Status *use = call.on && status == MPI_STATUS_IGNORE ? &own : status;
	int rc = P(Sendrecv_replace)(buf, count, type, dest, sendtag, source, recvtag, comm, use);
	if (rc == MPI_SUCCESS && call.on && use != MPI_STATUS_IGNORE)
		call.received = mpi_status_bytes(use);
	mpi_call_end(&call, "MPI_Sendrecv_replace", &name_id, rc);
	return rc;
}

int MPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status *status)
{
	MPI_FORWARD(int, MPI_Probe, source, tag, comm, status);
	NAME_ID;
	struct mpi_call call;
	mpi_call_begin(&call);
	p2p(&call, comm, source, tag);
	int rc = P(Probe)(source, tag, comm, status);
	if (rc == MPI_SUCCESS && call.on && status != MPI_STATUS_IGNORE) {
		call.peer = mpi_world_rank(call.comm, status->MPI_SOURCE);
		call.tag = status->MPI_TAG;
	}
	mpi_call_end(&call, "MPI_Probe", &name_id, rc);
	return rc;
}

/* ---- nonblocking ------------------------------------------------------------------------ */

#define ISEND(name, pname) \
int name(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm, \
	 MPI_Request *request) \
{ \
	MPI_FORWARD(int, name, buf, count, type, dest, tag, comm, request); \
	NAME_ID; \
	struct mpi_call call; \
	mpi_call_begin(&call); \
	p2p(&call, comm, dest, tag); \
	if (call.on) \
		call.sent = mpi_bytes(count, type); \
	int rc = P(pname)(buf, count, type, dest, tag, comm, request); \
	if (rc == MPI_SUCCESS && call.on) \
		call.request = mpi_request_begun(*request, call.comm, 0); \
	mpi_call_end(&call, #name, &name_id, rc); \
	return rc; \
}

ISEND(MPI_Isend, Isend)
ISEND(MPI_Issend, Issend)
ISEND(MPI_Ibsend, Ibsend)
ISEND(MPI_Irsend, Irsend)

int MPI_Irecv(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
	      MPI_Request *request)
{
	MPI_FORWARD(int, MPI_Irecv, buf, count, type, source, tag, comm, request);
	NAME_ID;
	struct mpi_call call;
	mpi_call_begin(&call);
	p2p(&call, comm, source, tag);
	int rc = P(Irecv)(buf, count, type, source, tag, comm, request);
	if (rc == MPI_SUCCESS && call.on)
		call.request = mpi_request_begun(*request, call.comm, 1);
	mpi_call_end(&call, "MPI_Irecv", &name_id, rc);
	return rc;
}

/* ---- waits and tests ---------------------------------------------------------------------
 * The requests are copied before the call (it sets those it completes to
 * MPI_REQUEST_NULL); statuses the caller ignores are taken into an array of the
 * wrapper's when a followed receive needs one. */

#define ON_STACK 64

struct completion {
	MPI_Request requests[ON_STACK];
	MPI_Status statuses[ON_STACK];
	int done[ON_STACK];
	MPI_Request *request_copy;
	MPI_Status *own_statuses;
	int *done_flags;
	int count;
};

/* Copies the requests; returns the statuses to hand to MPI (statuses, or the
 * wrapper's). */
static MPI_Status *completion_begin(struct completion *c, const struct mpi_call *call,
				    int count, const MPI_Request *list, MPI_Status *statuses)
{
	/* followed requests are forgotten when they complete, recorded or not */
	c->count = count > 0 ? count : 0;
	c->request_copy = c->count <= ON_STACK ? c->requests : malloc(sizeof(MPI_Request) * (size_t)count);
	c->done_flags = c->count <= ON_STACK ? c->done : calloc((size_t)count, sizeof(int));
	c->own_statuses = NULL;
	if (!c->request_copy || !c->done_flags) {
		c->count = 0;
		return statuses;
	}
	memcpy(c->request_copy, list, sizeof(MPI_Request) * (size_t)c->count);
	memset(c->done_flags, 0, sizeof(int) * (size_t)c->count);
	if (c->count && statuses == MPI_STATUSES_IGNORE &&
	    mpi_requests_have_receive(c->request_copy, c->count)) {
		c->own_statuses = c->count <= ON_STACK ? c->statuses
						       : malloc(sizeof(MPI_Status) * (size_t)c->count);
		if (c->own_statuses)
			return c->own_statuses;
	}
	return statuses;
}

static void completion_end(struct completion *c, const MPI_Status *statuses,
			   const struct mpi_call *by)
{
	if (c->count)
		mpi_requests_completed(c->request_copy, c->done_flags,
				       statuses == MPI_STATUSES_IGNORE ? NULL : statuses, c->count,
				       by);
	if (c->request_copy != c->requests)
		free(c->request_copy);
	if (c->done_flags != c->done)
		free(c->done_flags);
	if (c->own_statuses && c->own_statuses != c->statuses)
		free(c->own_statuses);
}

int MPI_Wait(MPI_Request *request, MPI_Status *status)
{
	MPI_FORWARD(int, MPI_Wait, request, status);
	NAME_ID;
	struct mpi_call call;
	struct completion c;
	mpi_call_begin(&call);
	MPI_Status *use = completion_begin(&c, &call, 1, request, status);
	int rc = P(Wait)(request, use);
	if (c.count)
		c.done_flags[0] = rc == MPI_SUCCESS;
	mpi_call_end(&call, "MPI_Wait", &name_id, rc);
	completion_end(&c, use, &call);
	return rc;
}

int MPI_Test(MPI_Request *request, int *flag, MPI_Status *status)
{
	MPI_FORWARD(int, MPI_Test, request, flag, status);
	NAME_ID;
	struct mpi_call call;
	struct completion c;
	mpi_call_begin(&call);
	MPI_Status *use = completion_begin(&c, &call, 1, request, status);
	int rc = P(Test)(request, flag, use);
	if (c.count)
		c.done_flags[0] = rc == MPI_SUCCESS && *flag;
	mpi_call_end(&call, "MPI_Test", &name_id, rc);
	completion_end(&c, use, &call);
	return rc;
}

int MPI_Waitall(int count, MPI_Request requests[], MPI_Status statuses[])
{
	MPI_FORWARD(int, MPI_Waitall, count, requests, statuses);
	NAME_ID;
	struct mpi_call call;
	struct completion c;
	mpi_call_begin(&call);
	MPI_Status *use = completion_begin(&c, &call, count, requests, statuses);
	int rc = P(Waitall)(count, requests, use);
	for (int i = 0; i < c.count; i++)
		c.done_flags[i] = rc == MPI_SUCCESS;
	mpi_call_end(&call, "MPI_Waitall", &name_id, rc);
	completion_end(&c, use, &call);
	return rc;
}

int MPI_Testall(int count, MPI_Request requests[], int *flag, MPI_Status statuses[])
{
	MPI_FORWARD(int, MPI_Testall, count, requests, flag, statuses);
	NAME_ID;
	struct mpi_call call;
	struct completion c;
	mpi_call_begin(&call);
	MPI_Status *use = completion_begin(&c, &call, count, requests, statuses);
	int rc = P(Testall)(count, requests, flag, use);
	for (int i = 0; i < c.count; i++)
		c.done_flags[i] = rc == MPI_SUCCESS && *flag;
	mpi_call_end(&call, "MPI_Testall", &name_id, rc);
	completion_end(&c, use, &call);
	return rc;
}

/* One request of the list completed (Waitany, Testany): its status is the one given. */
static MPI_Status *one_of(struct completion *c, const struct mpi_call *call, int count,
			  const MPI_Request *list, MPI_Status *status, MPI_Status *own)
{
	completion_begin(c, call, count, list, MPI_STATUSES_IGNORE);
	if (c->own_statuses && c->own_statuses != c->statuses)
		free(c->own_statuses);
	c->own_statuses = NULL;
	return call->on && status == MPI_STATUS_IGNORE ? own : status;
}

static void one_done(struct completion *c, int rc, int index, int flag, MPI_Status *status,
		     const struct mpi_call *by)
{
	if (c->count && rc == MPI_SUCCESS && flag && index >= 0 && index < c->count) {
		c->done_flags[index] = 1;
		/* only the completed request's status is read */
		mpi_requests_completed(c->request_copy + index, c->done_flags + index,
				       status == MPI_STATUS_IGNORE ? NULL : status, 1, by);
	}
	c->count = 0;
	completion_end(c, NULL, by);
}

int MPI_Waitany(int count, MPI_Request requests[], int *index, MPI_Status *status)
{
	MPI_FORWARD(int, MPI_Waitany, count, requests, index, status);
	NAME_ID;
	struct mpi_call call;
	struct completion c;
	MPI_Status own;
	mpi_call_begin(&call);
	MPI_Status *use = one_of(&c, &call, count, requests, status, &own);
	int rc = P(Waitany)(count, requests, index, use);
	mpi_call_end(&call, "MPI_Waitany", &name_id, rc);
	one_done(&c, rc, *index, 1, use, &call);
	return rc;
}

int MPI_Testany(int count, MPI_Request requests[], int *index, int *flag, MPI_Status *status)
{
	MPI_FORWARD(int, MPI_Testany, count, requests, index, flag, status);
	NAME_ID;
	struct mpi_call call;
	struct completion c;
	MPI_Status own;
	mpi_call_begin(&call);
	MPI_Status *use = one_of(&c, &call, count, requests, status, &own);
	int rc = P(Testany)(count, requests, index, flag, use);
	mpi_call_end(&call, "MPI_Testany", &name_id, rc);
	one_done(&c, rc, *index, *flag, use, &call);
	return rc;
}

/* Some of the list completed (Waitsome, Testsome): their indices and statuses, in order. */
static int some(int incount, MPI_Request requests[], int *outcount, int indices[],
		MPI_Status statuses[], int wait, const char *name, uint32_t *name_id)
{
	struct mpi_call call;
	struct completion c;
	mpi_call_begin(&call);
	MPI_Status *use = completion_begin(&c, &call, incount, requests, statuses);
	int rc = wait ? P(Waitsome)(incount, requests, outcount, indices, use)
		      : P(Testsome)(incount, requests, outcount, indices, use);
	mpi_call_end(&call, name, name_id, rc);
	if (c.count && rc == MPI_SUCCESS && *outcount != MPI_UNDEFINED)
		for (int i = 0; i < *outcount; i++) {
			int k = indices[i];
			if (k < 0 || k >= c.count)
				continue;
			int one = 1;
			mpi_requests_completed(c.request_copy + k, &one,
					       use == MPI_STATUSES_IGNORE ? NULL : use + i, 1, &call);
		}
	c.count = 0;
	completion_end(&c, NULL, &call);
	return rc;
}

int MPI_Waitsome(int incount, MPI_Request requests[], int *outcount, int indices[],
		 MPI_Status statuses[])
{
	MPI_FORWARD(int, MPI_Waitsome, incount, requests, outcount, indices, statuses);
	NAME_ID;
	return some(incount, requests, outcount, indices, statuses, 1, "MPI_Waitsome", &name_id);
}

int MPI_Testsome(int incount, MPI_Request requests[], int *outcount, int indices[],
		 MPI_Status statuses[])
{
	MPI_FORWARD(int, MPI_Testsome, incount, requests, outcount, indices, statuses);
	NAME_ID;
	return some(incount, requests, outcount, indices, statuses, 0, "MPI_Testsome", &name_id);
}
