/* The interposer's state (see mpi-internal.h): communicators, requests in flight, the
 * records of calls and completions, and the clock exchange with rank 0. */
#include "mpi-internal.h"
#include "mpi-bind.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/clock.h"
#include "../loaded.h"
#include "runtime/recorder.h"

/* ---- the implementation ------------------------------------------------------------- */

struct mpi_functions mpi_functions;
#ifdef OPEN_MPI
struct mpi_objects mpi_objects;
#endif

/* Whether a shared library's base name is this interposer's implementation's MPI
 * library: Open MPI's libmpi.so.40 (any libmpi.so but .12); MPICH's libmpich.so.12, or
 * the libmpi.so.12 of MPICH and the MPIs of its ABI. */
static int ours(const char *base)
{
#ifdef OPEN_MPI
	return !strncmp(base, "libmpi.so", 9) && strcmp(base, "libmpi.so.12");
#else
	return !strncmp(base, "libmpich.so", 11) || !strcmp(base, "libmpi.so.12");
#endif
}

static int any_mpi(const char *base)
{
	return !strncmp(base, "libmpi", 6);
}

int mpi_bind(void)
{
	void *library = loaded_find(ours, NULL, NULL);
	if (!library)
		return 0;
	int all = 1;
#define MPI_FUNCTION_BIND(name) \
	all &= (mpi_functions.name = (__typeof__(mpi_functions.name))dlsym(library, \
									 "PMPI_" #name)) != NULL;
	MPI_PMPI_USED(MPI_FUNCTION_BIND)
#undef MPI_FUNCTION_BIND
#ifdef OPEN_MPI
	/* an object the program refers to lives in the program (a copy relocation), where
	 * the global scope finds it; the library's own is that of a private load */
#define MPI_OBJECT(name) \
	(dlsym(RTLD_DEFAULT, name) ? dlsym(RTLD_DEFAULT, name) : dlsym(library, name))
	mpi_objects.comm_world = MPI_OBJECT("ompi_mpi_comm_world");
	mpi_objects.comm_self = MPI_OBJECT("ompi_mpi_comm_self");
	mpi_objects.comm_null = MPI_OBJECT("ompi_mpi_comm_null");
	mpi_objects.byte = MPI_OBJECT("ompi_mpi_byte");
	mpi_objects.request_null = MPI_OBJECT("ompi_request_null");
#undef MPI_OBJECT
	all &= mpi_objects.comm_world && mpi_objects.comm_self && mpi_objects.comm_null &&
	       mpi_objects.byte && mpi_objects.request_null;
#else
	all &= dlsym(library, "MPII_Version_string") || dlsym(library, "MPIR_Version_string");
#endif
	return all;
}

/* ---- whether to record ------------------------------------------------------------- */

static _Atomic int matches = -1; /* -1: not asked yet */

int mpi_matches(void)
{
	int m = atomic_load_explicit(&matches, memory_order_acquire);
	if (m < 0) {
		m = mpi_bind();
		atomic_store_explicit(&matches, m, memory_order_release);
	}
	return m;
}

void *mpi_next(const char *name)
{
	return loaded_next(any_mpi, name);
}

static _Atomic uint64_t next_request;
static int world_rank = -1, world_size;

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static int enabled;

static void initialize(void)
{
	enabled = recorder_ready();
}

int mpi_recording(void)
{
	if (!mpi_matches())
		return 0;
	pthread_once(&init_once, initialize);
	return enabled && recorder_ready() && recorder_collecting();
}

/* ---- communicators ------------------------------------------------------------------- */

/* Open addressing by handle; a slot once taken keeps its handle (a freed communicator's
 * slot is marked so, and a later communicator with the same handle takes a new one). */
#define COMM_SLOTS 4096
#define FREED ((uintptr_t)-1)
static struct mpi_comm comms[COMM_SLOTS];

static size_t comm_hash(uintptr_t h)
{
	return (size_t)((h * 0x9e3779b97f4a7c15ull) >> 52) & (COMM_SLOTS - 1);
}

static struct mpi_comm *comm_find(uintptr_t handle)
{
	for (size_t i = comm_hash(handle), n = 0; n < COMM_SLOTS; i = (i + 1) & (COMM_SLOTS - 1), n++) {
		uintptr_t h = atomic_load_explicit(&comms[i].handle, memory_order_acquire);
		if (h == handle)
			return &comms[i];
		if (!h)
			return NULL;
	}
	return NULL;
}

/* A slot for handle, taken; NULL when the table is full. */
static struct mpi_comm *comm_take(uintptr_t handle)
{
	for (size_t i = comm_hash(handle), n = 0; n < COMM_SLOTS; i = (i + 1) & (COMM_SLOTS - 1), n++) {
		uintptr_t expected = 0;
		if (atomic_compare_exchange_strong(&comms[i].handle, &expected, handle))
			return &comms[i];
		if (expected == handle)
			return &comms[i];
	}
	return NULL;
}

/* The world ranks of c's ranks (its remote group's, an intercommunicator); NULL: the
 * identity (the world itself) or unknown. */
static int *world_ranks_of(MPI_Comm c, int size)
{
	if (c == MPI_COMM_WORLD || size <= 0)
		return NULL;
	int inter = 0;
	MPI_Group group, world;
	P(Comm_test_inter)(c, &inter);
	if ((inter ? P(Comm_remote_group)(c, &group) : P(Comm_group)(c, &group)) != MPI_SUCCESS)
		return NULL;
	int *ranks = malloc(2 * (size_t)size * sizeof(int));
	if (ranks && P(Comm_group)(MPI_COMM_WORLD, &world) == MPI_SUCCESS) {
		for (int i = 0; i < size; i++)
			ranks[size + i] = i;
		if (P(Group_translate_ranks)(group, size, ranks + size, world, ranks) != MPI_SUCCESS) {
			free(ranks);
			ranks = NULL;
		}
		P(Group_free)(&world);
	}
	P(Group_free)(&group);
	return ranks;
}

/* Fills a taken slot: its name, size and world ranks, then publishes it. */
static void comm_fill(struct mpi_comm *slot, MPI_Comm c, const char *name)
{
	int size = 0, inter = 0;
	P(Comm_test_inter)(c, &inter);
	if (inter)
		P(Comm_remote_size)(c, &size);
	else
		P(Comm_size)(c, &size);
	slot->size = size > 0 ? (uint32_t)size : 0;
	slot->world = world_ranks_of(c, size);
	char text[96];
	if (!name) {
		/* made by a call not followed: named by its members, the same on each */
		uint64_t h = 1469598103934665603ull;
		for (int i = 0; i < size; i++) {
			h ^= (uint64_t)(slot->world ? slot->world[i] : i);
			h *= 1099511628211ull;
		}
		snprintf(text, sizeof(text), "comm-%016llx", (unsigned long long)h);
		name = text;
	}
	snprintf(slot->name, sizeof(slot->name), "%s", name);
	slot->name_id = recorder_intern(slot->name);
	atomic_store(&slot->collectives, 0);
	atomic_store(&slot->created, 0);
	atomic_store_explicit(&slot->ready, 1, memory_order_release);
}

struct mpi_comm *mpi_comm_of(MPI_Comm c)
{
	if (c == MPI_COMM_NULL)
		return NULL;
	uintptr_t handle = (uintptr_t)c;
	struct mpi_comm *slot = comm_find(handle);
	if (slot && atomic_load_explicit(&slot->ready, memory_order_acquire))
		return slot;
	if (slot) /* another thread is filling it */
		return NULL;
	slot = comm_take(handle);
	if (!slot)
		return NULL;
	comm_fill(slot, c, c == MPI_COMM_WORLD ? "MPI_COMM_WORLD" :
		  c == MPI_COMM_SELF ? "MPI_COMM_SELF" : NULL);
	return slot;
}

void mpi_comm_made(MPI_Comm parent, MPI_Comm made)
{
	struct mpi_comm *p = mpi_matches() ? mpi_comm_of(parent) : NULL;
	if (!p)
		return;
	/* counted on every member of the parent, those that got no communicator (a split's
	 * MPI_UNDEFINED) too: the next one made is numbered alike on all */
	uint64_t n = atomic_fetch_add(&p->created, 1) + 1;
	if (made == MPI_COMM_NULL)
		return;
	struct mpi_comm *slot = comm_take((uintptr_t)made);
	if (!slot)
		return;
	atomic_store(&slot->ready, 0);
	free(slot->world);
	/* of those made by one call, each new one is told apart by its first member */
	int size = 0;
	P(Comm_size)(made, &size);
	int *world = world_ranks_of(made, size);
	int first = world && size > 0 ? world[0] : 0;
	for (int i = 1; world && i < size; i++)
		first = world[i] < first ? world[i] : first;
	free(world);
	char name[sizeof(slot->name)];
	snprintf(name, sizeof(name), "%.100s/%llu@%d", p->name, (unsigned long long)n, first);
	comm_fill(slot, made, name);
}

void mpi_comm_freed(MPI_Comm c)
{
	struct mpi_comm *slot = comm_find((uintptr_t)c);
	if (!slot)
		return;
	atomic_store(&slot->ready, 0);
	atomic_store_explicit(&slot->handle, FREED, memory_order_release);
}

int mpi_world_rank(const struct mpi_comm *c, int r)
{
	if (r < 0 || !c || (uint32_t)r >= c->size)
		return -1;
	return c->world ? c->world[r] : r;
}

uint64_t mpi_bytes(int count, MPI_Datatype type)
{
	int size = 0;
	if (count <= 0 || P(Type_size)(type, &size) != MPI_SUCCESS || size <= 0)
		return 0;
	return (uint64_t)count * (uint64_t)size;
}

uint64_t mpi_status_bytes(const MPI_Status *status)
{
	int count = 0;
	if (P(Get_count)(status, MPI_BYTE, &count) != MPI_SUCCESS || count < 0)
		return 0;
	return (uint64_t)count;
}

/* ---- calls -------------------------------------------------------------------------------- */

void mpi_call_begin(struct mpi_call *call)
{
	memset(call, 0, sizeof(*call));
	call->peer = call->tag = call->root = -1;
	call->on = mpi_recording();
	if (call->on)
		call->start_ns = clock_now_ns();
}

/* Collectives are counted whether they are recorded or not (a collection period ends at
 * another call on each rank): the numbers stay the same on every rank. */
void mpi_call_comm(struct mpi_call *call, MPI_Comm comm, int collective)
{
	if (!call->on && !collective)
		return;
	call->comm = mpi_comm_of(comm);
	if (collective && call->comm)
		call->sequence = atomic_fetch_add(&call->comm->collectives, 1) + 1;
}

uint64_t mpi_call_end(struct mpi_call *call, const char *name, uint32_t *name_id, int result)
{
	call->end_ns = call->on ? clock_now_ns() : 0;
	if (!call->on)
		return 0;
	if (!*name_id)
		*name_id = recorder_intern(name);
	struct record_mpi_call r = {
		.header = { .size = sizeof(r), .type = RECORD_MPI_CALL },
		.tid = recorder_thread_id(),
		.function_id = *name_id,
		.start_ns = call->start_ns,
		.end_ns = call->end_ns,
		.call_id = recorder_new_call_id(),
		.communicator_id = call->comm ? call->comm->name_id : 0,
		.communicator_size = call->comm ? call->comm->size : 0,
		.peer = call->peer,
		.tag = call->tag,
		.root = call->root,
		.result = result,
		.bytes_sent = call->sent,
		.bytes_received = call->received,
		.sequence = call->sequence,
		.request = call->request,
		.domain = COMMUNICATION_MPI,
	};
	recorder_emit(&r);
	call->call_id = r.call_id;
	return r.call_id;
}

/* ---- requests in flight ------------------------------------------------------------------ */

/* Open addressing by handle; a completed request's slot becomes a tombstone. */
#define REQUEST_SLOTS 65536
#define TOMBSTONE ((uintptr_t)-1)
static struct {
	_Atomic uintptr_t handle;
	uint64_t id;
	struct mpi_comm *comm;
	int recv;
} requests[REQUEST_SLOTS];

static size_t request_hash(uintptr_t h)
{
	return (size_t)((h * 0x9e3779b97f4a7c15ull) >> 48) & (REQUEST_SLOTS - 1);
}

uint64_t mpi_request_begun(MPI_Request request, struct mpi_comm *comm, int recv)
{
	uintptr_t handle = (uintptr_t)request;
	if (request == MPI_REQUEST_NULL || handle == TOMBSTONE)
		return 0;
	uint64_t id = atomic_fetch_add(&next_request, 1) + 1;
	for (size_t i = request_hash(handle), n = 0; n < 64; i = (i + 1) & (REQUEST_SLOTS - 1), n++) {
		uintptr_t h = atomic_load(&requests[i].handle);
		if (h && h != TOMBSTONE)
			continue;
		/* the slot taken first, then filled: the request is the caller's, waited for
		 * only after the call that began it returned */
		if (!atomic_compare_exchange_strong(&requests[i].handle, &h, handle))
			continue;
		requests[i].id = id;
		requests[i].comm = comm;
		requests[i].recv = recv;
		return id;
	}
	return 0; /* too many in flight near this one: its completion is not followed */
}

static int request_find(uintptr_t handle)
{
	for (size_t i = request_hash(handle), n = 0; n < 64; i = (i + 1) & (REQUEST_SLOTS - 1), n++) {
		uintptr_t h = atomic_load(&requests[i].handle);
		if (h == handle)
			return (int)i;
		if (!h)
			return -1;
	}
	return -1;
}

int mpi_requests_have_receive(const MPI_Request *list, int count)
{
	for (int i = 0; i < count; i++) {
		int slot = list[i] == MPI_REQUEST_NULL ? -1 : request_find((uintptr_t)list[i]);
		if (slot >= 0 && requests[slot].recv)
			return 1;
	}
	return 0;
}

void mpi_requests_completed(const MPI_Request *list, const int *done,
			    const MPI_Status *statuses, int count, const struct mpi_call *by)
{
	for (int i = 0; i < count; i++) {
		if (!done[i] || list[i] == MPI_REQUEST_NULL)
			continue;
		int slot = request_find((uintptr_t)list[i]);
		if (slot < 0)
			continue;
		struct record_mpi_completion r = {
			.header = { .size = sizeof(r), .type = RECORD_MPI_COMPLETION },
			.request = requests[slot].id,
			.completed_by = by->call_id,
			.time_ns = by->end_ns,
			.peer = -1,
			.tag = -1,
		};
		if (requests[slot].recv && statuses) {
			r.peer = mpi_world_rank(requests[slot].comm, statuses[i].MPI_SOURCE);
			r.tag = statuses[i].MPI_TAG;
			r.bytes_received = mpi_status_bytes(&statuses[i]);
		}
		atomic_store(&requests[slot].handle, TOMBSTONE);
		if (by->call_id)
			recorder_emit(&r);
	}
}

/* ---- the clock against rank 0's ------------------------------------------------------- */

#define SYNC_ROUNDS 8
#define SYNC_TAG_PING 1
#define SYNC_TAG_PONG 2

/* Rank 0 answers each rank's pings in turn with its clock; each rank keeps the exchange
 * of the shortest round trip (Cristian's method, as Score-P measures at MPI_Init and
 * MPI_Finalize). On a communicator of its own, so that no message of the program's can
 * match one of these. */
static void clock_exchange(void)
{
	MPI_Comm sync;
	if (world_size <= 0 || P(Comm_dup)(MPI_COMM_WORLD, &sync) != MPI_SUCCESS)
		return;
	struct record_clock_sync r = {
		.header = { .size = sizeof(r), .type = RECORD_CLOCK_SYNC },
		.rank = world_rank, .size = world_size,
	};
	char ping = 0;
	if (world_rank == 0) {
		for (int peer = 1; peer < world_size; peer++)
			for (int i = 0; i < SYNC_ROUNDS; i++) {
				P(Recv)(&ping, 1, MPI_BYTE, peer, SYNC_TAG_PING, sync, MPI_STATUS_IGNORE);
				uint64_t t0 = clock_now_ns();
				P(Send)(&t0, sizeof(t0), MPI_BYTE, peer, SYNC_TAG_PONG, sync);
			}
		r.local_ns = clock_now_ns();
	} else {
		uint64_t best = UINT64_MAX;
		for (int i = 0; i < SYNC_ROUNDS; i++) {
			uint64_t t0 = 0, t1 = clock_now_ns();
			P(Send)(&ping, 1, MPI_BYTE, 0, SYNC_TAG_PING, sync);
			P(Recv)(&t0, sizeof(t0), MPI_BYTE, 0, SYNC_TAG_PONG, sync, MPI_STATUS_IGNORE);
			uint64_t t2 = clock_now_ns();
			if (t2 - t1 < best) {
				best = t2 - t1;
				r.local_ns = t1 + (t2 - t1) / 2;
				r.offset_ns = (int64_t)(t0 - r.local_ns);
			}
		}
		r.round_trip_ns = best;
	}
	P(Comm_free)(&sync);
	if (recorder_ready())
		recorder_emit(&r);
}

void mpi_started(void)
{
	if (!mpi_matches())
		return;
	P(Comm_rank)(MPI_COMM_WORLD, &world_rank);
	P(Comm_size)(MPI_COMM_WORLD, &world_size);
	if (mpi_recording()) {
		mpi_comm_of(MPI_COMM_WORLD);
		mpi_comm_of(MPI_COMM_SELF);
	}
	clock_exchange();
}

/* Every rank takes part in the exchange (the library is preloaded into every rank under
 * --mpi-trace): whether it does hangs on nothing that differs between ranks, a collection
 * period paused or a recorder that could not start on one rank, which would leave rank 0
 * waiting for it. */
void mpi_finishing(void)
{
	if (mpi_matches())
		clock_exchange();
}
