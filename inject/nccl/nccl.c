/* The NCCL interposer (--nccl-trace, --rccl-trace): preloaded into the program, it
 * defines NCCL's communication functions, records each call as a communication record
 * (record_mpi_call of domain NCCL: docs/MPI.md) and calls the next definition, NCCL's
 * own, found with dlsym(RTLD_NEXT) or in an NCCL loaded privately (inject/loaded.h):
 * nothing of NCCL is linked or included, so the
 * library loads into any process, and a function NCCL does not have fails as NCCL would
 * fail an unknown call (ncclInternalError) rather than the process.
 *
 * NCCL's C interface as its documentation gives it (nccl.h of NCCL 2.x): communicators
 * are pointers, data types small integers, the unique id 128 bytes passed by value.
 * NCCL's calls enqueue work on a CUDA stream and return: a record's times are those of
 * the call on the host. Ranks are the communicator's; a communicator is named after a
 * hash of its unique id, the same on every rank that joined it. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/record.h"
#include "runtime/recorder.h"
#include "../loaded.h"

#define EXPORT __attribute__((visibility("default")))

typedef struct nccl_comm *ncclComm_t;
typedef void *cudaStream_t;
typedef int ncclResult_t;     /* ncclSuccess = 0 */
typedef int ncclDataType_t;
typedef int ncclRedOp_t;
typedef struct {
	char internal[128];
} ncclUniqueId;

#define NCCL_INTERNAL_ERROR 3 /* ncclInternalError */

/* Bytes of an element of each data type: int8, uint8, int32, uint32, int64, uint64,
 * float16, float32, float64, bfloat16, float8e4m3, float8e5m2. */
static const unsigned type_size[] = { 1, 1, 4, 4, 8, 8, 2, 4, 8, 2, 1, 1 };

static uint64_t bytes_of(size_t count, ncclDataType_t type)
{
	return type >= 0 && (size_t)type < sizeof(type_size) / sizeof(type_size[0])
		       ? (uint64_t)count * type_size[type] : 0;
}

/* ---- communicators --------------------------------------------------------------------- */

#define COMMS 1024
static struct {
	_Atomic uintptr_t handle;
	uint32_t name_id;
	int32_t size, rank;
	_Atomic uint64_t collectives;
} comms[COMMS];

static size_t slot_of(uintptr_t h)
{
	return (size_t)((h * 0x9e3779b97f4a7c15ull) >> 54) & (COMMS - 1);
}

/* A communicator made by this rank: named by its unique id's hash. */
static void comm_made(ncclComm_t comm, const ncclUniqueId *id, int size, int rank)
{
	uint64_t h = 1469598103934665603ull;
	for (size_t i = 0; i < sizeof(id->internal); i++)
		h = (h ^ (unsigned char)id->internal[i]) * 1099511628211ull;
	char name[32];
	snprintf(name, sizeof(name), "nccl-%016llx", (unsigned long long)h);
	uintptr_t key = (uintptr_t)comm;
	for (size_t i = slot_of(key), n = 0; comm && n < COMMS; i = (i + 1) & (COMMS - 1), n++) {
		uintptr_t expected = 0;
		if (atomic_compare_exchange_strong(&comms[i].handle, &expected, key) ||
		    expected == key) {
			comms[i].name_id = recorder_intern(name);
			comms[i].size = size;
			comms[i].rank = rank;
			atomic_store(&comms[i].collectives, 0);
			return;
		}
	}
}

static int comm_find(ncclComm_t comm)
{
	uintptr_t key = (uintptr_t)comm;
	for (size_t i = slot_of(key), n = 0; comm && n < COMMS; i = (i + 1) & (COMMS - 1), n++) {
		uintptr_t h = atomic_load(&comms[i].handle);
		if (h == key)
			return (int)i;
		if (!h)
			return -1;
	}
	return -1;
}

/* ---- records --------------------------------------------------------------------------- */

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int enabled;

static void initialize(void)
{
	enabled = recorder_ready();
}

struct call {
	int on;
	uint64_t start;
};

static void begin(struct call *c)
{
	pthread_once(&once, initialize);
	c->on = enabled && recorder_ready() && recorder_collecting();
	c->start = c->on ? clock_now_ns() : 0;
}

/* The record of a call on comm; collective: numbered on its communicator (counted
 * whether recorded or not, so that the numbers stay alike on every rank). */
static void end(struct call *c, const char *function, uint32_t *function_id, ncclComm_t comm,
		int collective, int32_t peer, int32_t root, uint64_t sent, uint64_t received,
		ncclResult_t result)
{
	int slot = comm_find(comm);
	uint64_t sequence = collective && slot >= 0
				    ? atomic_fetch_add(&comms[slot].collectives, 1) + 1 : 0;
	if (!c->on)
		return;
	if (!*function_id)
		*function_id = recorder_intern(function);
	struct record_mpi_call r = {
		.header = { .size = sizeof(r), .type = RECORD_MPI_CALL },
		.tid = recorder_thread_id(),
		.function_id = *function_id,
		.start_ns = c->start,
		.end_ns = clock_now_ns(),
		.call_id = recorder_new_call_id(),
		.communicator_id = slot >= 0 ? comms[slot].name_id : 0,
		.communicator_size = slot >= 0 ? (uint32_t)comms[slot].size : 0,
		.peer = peer,
		.tag = -1,
		.root = root,
		.result = result,
		.bytes_sent = sent,
		.bytes_received = received,
		.sequence = sequence,
		.domain = COMMUNICATION_NCCL,
	};
	recorder_emit(&r);
}

/* NCCL or RCCL's library, wherever it was loaded (PyTorch loads it privately). */
static int nccl_library(const char *base)
{
	return !strncmp(base, "libnccl.so", 10) || !strncmp(base, "librccl.so", 10);
}

/* NCCL's own `name`, NULL when there is none. */
#define NEXT(type, name) \
	static __typeof__(type) next; \
	if (!next) \
		next = (type)loaded_next(nccl_library, name); \
	if (!next) \
		return NCCL_INTERNAL_ERROR

static int rank_in(ncclComm_t comm)
{
	int slot = comm_find(comm);
	return slot >= 0 ? comms[slot].rank : -1;
}

/* ---- the functions ----------------------------------------------------------------------- */

EXPORT ncclResult_t ncclCommInitRank(ncclComm_t *comm, int nranks, ncclUniqueId id, int rank)
{
	NEXT(ncclResult_t (*)(ncclComm_t *, int, ncclUniqueId, int), "ncclCommInitRank");
	static uint32_t name;
	struct call c;
	begin(&c);
	ncclResult_t rc = next(comm, nranks, id, rank);
	if (rc == 0)
		comm_made(*comm, &id, nranks, rank);
	end(&c, "ncclCommInitRank", &name, rc == 0 ? *comm : NULL, 0, -1, -1, 0, 0, rc);
	return rc;
}

EXPORT ncclResult_t ncclCommInitRankConfig(ncclComm_t *comm, int nranks, ncclUniqueId id,
					   int rank, void *config)
{
	NEXT(ncclResult_t (*)(ncclComm_t *, int, ncclUniqueId, int, void *),
	     "ncclCommInitRankConfig");
	static uint32_t name;
	struct call c;
	begin(&c);
	ncclResult_t rc = next(comm, nranks, id, rank, config);
	if (rc == 0)
		comm_made(*comm, &id, nranks, rank);
	end(&c, "ncclCommInitRankConfig", &name, rc == 0 ? *comm : NULL, 0, -1, -1, 0, 0, rc);
	return rc;
}

EXPORT ncclResult_t ncclAllReduce(const void *send, void *recv, size_t count,
				  ncclDataType_t type, ncclRedOp_t op, ncclComm_t comm,
				  cudaStream_t stream)
{
	NEXT(ncclResult_t (*)(const void *, void *, size_t, ncclDataType_t, ncclRedOp_t,
			      ncclComm_t, cudaStream_t), "ncclAllReduce");
	static uint32_t name;
	struct call c;
	begin(&c);
	ncclResult_t rc = next(send, recv, count, type, op, comm, stream);
	uint64_t b = bytes_of(count, type);
	end(&c, "ncclAllReduce", &name, comm, 1, -1, -1, b, b, rc);
	return rc;
}

EXPORT ncclResult_t ncclBroadcast(const void *send, void *recv, size_t count,
				  ncclDataType_t type, int root, ncclComm_t comm,
				  cudaStream_t stream)
{
	NEXT(ncclResult_t (*)(const void *, void *, size_t, ncclDataType_t, int, ncclComm_t,
			      cudaStream_t), "ncclBroadcast");
	static uint32_t name;
	struct call c;
	begin(&c);
	ncclResult_t rc = next(send, recv, count, type, root, comm, stream);
	uint64_t b = bytes_of(count, type);
	int me = rank_in(comm);
	end(&c, "ncclBroadcast", &name, comm, 1, -1, root, me == root ? b : 0, me == root ? 0 : b, rc);
	return rc;
}

EXPORT ncclResult_t ncclReduce(const void *send, void *recv, size_t count, ncclDataType_t type,
			       ncclRedOp_t op, int root, ncclComm_t comm, cudaStream_t stream)
{
	NEXT(ncclResult_t (*)(const void *, void *, size_t, ncclDataType_t, ncclRedOp_t, int,
			      ncclComm_t, cudaStream_t), "ncclReduce");
	static uint32_t name;
	struct call c;
	begin(&c);
	ncclResult_t rc = next(send, recv, count, type, op, root, comm, stream);
	uint64_t b = bytes_of(count, type);
	end(&c, "ncclReduce", &name, comm, 1, -1, root, b, rank_in(comm) == root ? b : 0, rc);
	return rc;
}

EXPORT ncclResult_t ncclAllGather(const void *send, void *recv, size_t count,
				  ncclDataType_t type, ncclComm_t comm, cudaStream_t stream)
{
	NEXT(ncclResult_t (*)(const void *, void *, size_t, ncclDataType_t, ncclComm_t,
			      cudaStream_t), "ncclAllGather");
	static uint32_t name;
	struct call c;
	begin(&c);
	ncclResult_t rc = next(send, recv, count, type, comm, stream);
	int slot = comm_find(comm);
	uint64_t b = bytes_of(count, type);
	end(&c, "ncclAllGather", &name, comm, 1, -1, -1, b,
	    b * (uint64_t)(slot >= 0 ? comms[slot].size : 0), rc);
	return rc;
}

EXPORT ncclResult_t ncclReduceScatter(const void *send, void *recv, size_t count,
				      ncclDataType_t type, ncclRedOp_t op, ncclComm_t comm,
				      cudaStream_t stream)
{
	NEXT(ncclResult_t (*)(const void *, void *, size_t, ncclDataType_t, ncclRedOp_t,
			      ncclComm_t, cudaStream_t), "ncclReduceScatter");
	static uint32_t name;
	struct call c;
	begin(&c);
	ncclResult_t rc = next(send, recv, count, type, op, comm, stream);
	int slot = comm_find(comm);
	uint64_t b = bytes_of(count, type);
	end(&c, "ncclReduceScatter", &name, comm, 1, -1, -1,
	    b * (uint64_t)(slot >= 0 ? comms[slot].size : 0), b, rc);
	return rc;
}

EXPORT ncclResult_t ncclSend(const void *send, size_t count, ncclDataType_t type, int peer,
			     ncclComm_t comm, cudaStream_t stream)
{
	NEXT(ncclResult_t (*)(const void *, size_t, ncclDataType_t, int, ncclComm_t,
			      cudaStream_t), "ncclSend");
	static uint32_t name;
	struct call c;
	begin(&c);
	ncclResult_t rc = next(send, count, type, peer, comm, stream);
	end(&c, "ncclSend", &name, comm, 0, peer, -1, bytes_of(count, type), 0, rc);
	return rc;
}

EXPORT ncclResult_t ncclRecv(void *recv, size_t count, ncclDataType_t type, int peer,
			     ncclComm_t comm, cudaStream_t stream)
{
	NEXT(ncclResult_t (*)(void *, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t),
	     "ncclRecv");
	static uint32_t name;
	struct call c;
	begin(&c);
	ncclResult_t rc = next(recv, count, type, peer, comm, stream);
	end(&c, "ncclRecv", &name, comm, 0, peer, -1, 0, bytes_of(count, type), rc);
	return rc;
}

EXPORT ncclResult_t ncclGroupStart(void)
{
	NEXT(ncclResult_t (*)(void), "ncclGroupStart");
	static uint32_t name;
	struct call c;
	begin(&c);
	ncclResult_t rc = next();
	end(&c, "ncclGroupStart", &name, NULL, 0, -1, -1, 0, 0, rc);
	return rc;
}

EXPORT ncclResult_t ncclGroupEnd(void)
{
	NEXT(ncclResult_t (*)(void), "ncclGroupEnd");
	static uint32_t name;
	struct call c;
	begin(&c);
	ncclResult_t rc = next();
	end(&c, "ncclGroupEnd", &name, NULL, 0, -1, -1, 0, 0, rc);
	return rc;
}

EXPORT ncclResult_t ncclCommDestroy(ncclComm_t comm)
{
	NEXT(ncclResult_t (*)(ncclComm_t), "ncclCommDestroy");
	static uint32_t name;
	struct call c;
	begin(&c);
	ncclResult_t rc = next(comm);
	end(&c, "ncclCommDestroy", &name, comm, 0, -1, -1, 0, 0, rc);
	int slot = comm_find(comm);
	if (slot >= 0) /* its address may be another's later */
		atomic_store(&comms[slot].handle, (uintptr_t)-1);
	return rc;
}
