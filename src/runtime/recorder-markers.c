/* The recorder's marker ranges and marks (recorder.h): push/pop ranges on a thread's
 * stack, start/stop ranges by id, marks, thread names; and the communication calls that
 * the Python hooks of the markers' domain torch record. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/clock.h"
#include "runtime/recorder-internal.h"
#include "runtime/recorder.h"

/* ---- markers ------------------------------------------------------------------------ */

#define MARKER_STACK RECORD_RANGE_DEPTH /* deeper push/pop ranges are dropped */

static int markers_traced; /* GPUPROF_TRACE names "marker" */

void recorder_markers_configure(int traced)
{
	markers_traced = traced;
}
static _Atomic uint64_t next_marker_id;
/* The thread's open push/pop ranges, outermost first: their ids and domains. Each domain
 * is a stack of its own (NVTX's rule): a pop closes its domain's innermost range, which
 * need not be the thread's innermost. */
static __thread uint64_t range_stack[MARKER_STACK];
static __thread uint32_t range_domains[MARKER_STACK];
static __thread uint8_t range_captures[MARKER_STACK]; /* a capture range (--nvtx-capture) */
static __thread int range_depth;

/* The start/stop ranges open that are capture ranges, by id. */
#define CAPTURES_BY_ID 256
static pthread_mutex_t captured_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t captured_ids[CAPTURES_BY_ID];
static size_t captured_count;

#define MARKER_ON_STACK 512 /* bytes of a marker record built on the caller's stack */

/* Emits the start of a range or a mark, with its text and, when given, its module path
 * after the text's NUL (docs/FORMAT.md); returns its id (0 when markers are not
 * traced). */
static uint64_t marker_begin(uint32_t kind, const char *text, const char *module,
			     uint32_t domain_id, uint64_t parent_id)
{
	if (!recorder_ready() || !markers_traced)
		return 0;
	/* a short text on the stack, a long one on the heap: 8 KiB on the program's stack
	 * would put its callers beyond the stack a call-stack sample copies */
	union marker_record {
		struct record_marker m;
		unsigned char bytes[MARKER_ON_STACK];
	} small, *big = NULL;
	size_t room = sizeof(small) - sizeof(small.m);
	size_t text_bytes = text ? strnlen(text, room) : 0;
	size_t module_bytes = module ? strnlen(module, room) : 0;
	if (text_bytes + (module_bytes ? module_bytes + 1 : 0) >= room)
		big = malloc(RECORD_MAX_SIZE);
	union marker_record *r = big ? big : &small;
	size_t capacity = (big ? RECORD_MAX_SIZE : sizeof(small)) - sizeof(r->m);
	/* a module path keeps its bytes and a NUL, up to half the record */
	size_t module_room = !module_bytes ? 0 : module_bytes + 1 < capacity / 2 ? module_bytes + 1
										   : capacity / 2;
	size_t length = text ? record_text_copy(r->m.text, text, capacity - module_room) : 0;
	size_t used = length;
	if (module_room) {
		r->m.text[used++] = '\0';
		used += record_text_copy(r->m.text + used, module, capacity - used);
	}
	uint64_t now = clock_now_ns();
	r->m = (struct record_marker){
		.header = { RECORD_PADDED((uint32_t)(sizeof(r->m) + used)), RECORD_MARKER, 0 },
		.id = atomic_fetch_add(&next_marker_id, 1) + 1,
		.parent_id = parent_id,
		.start_ns = now,
		.tid = recorder_thread_id(),
		.kind = kind,
		.domain_id = domain_id,
		.length = (uint32_t)length,
	};
	memset(r->m.text + used, 0, r->m.header.size - sizeof(r->m) - used);
	recorder_emit(r);
	uint64_t id = r->m.id;
	free(big);
	return id;
}

static void marker_end(uint64_t id)
{
	struct record_marker_end e = {
		.header = { sizeof(e), RECORD_MARKER_END, 0 },
		.id = id,
		.end_ns = clock_now_ns(),
		.tid = recorder_thread_id(),
	};
	if (id)
		recorder_emit(&e);
}

/* The number of the domain's ranges open on this thread. */
static int domain_depth(uint32_t domain_id)
{
	int n = 0;
	for (int i = 0; i < range_depth && i < MARKER_STACK; i++)
		n += range_domains[i] == domain_id;
	return n;
}

/* Ranges nested deeper than the stack are not recorded, only counted; the depth is
 * still followed, so that every push keeps its pop and no recorded range loses its end.
 * A range's parent is the thread's innermost open range, of any domain: the range it
 * began in. Returns the range's depth in its domain. */
int recorder_range_push_module(const char *text, const char *module, uint32_t domain_id)
{
	int in_domain = domain_depth(domain_id);
	int depth = range_depth++;
	if (depth >= MARKER_STACK) {
		if (recorder_ready() && markers_traced)
			recorder_count_dropped(DROPPED_MARKER_DEPTH, 1);
		return depth;
	}
	range_domains[depth] = domain_id;
	range_captures[depth] = (uint8_t)recorder_capture_begin(text, domain_id);
	range_stack[depth] = marker_begin(MARKER_PUSH_POP, text, module, domain_id,
					  depth > 0 ? range_stack[depth - 1] : 0);
	return in_domain;
}

int recorder_range_push(const char *text, uint32_t domain_id)
{
	return recorder_range_push_module(text, NULL, domain_id);
}

/* Ends the range at position at of the thread's stack and closes the gap it leaves. */
static void range_remove(int at)
{
	marker_end(range_stack[at]);
	if (range_captures[at])
		recorder_capture_end();
	int last = range_depth < MARKER_STACK ? range_depth : MARKER_STACK;
	memmove(&range_stack[at], &range_stack[at + 1], (size_t)(last - at - 1) * sizeof(*range_stack));
	memmove(&range_domains[at], &range_domains[at + 1],
		(size_t)(last - at - 1) * sizeof(*range_domains));
	memmove(&range_captures[at], &range_captures[at + 1],
		(size_t)(last - at - 1) * sizeof(*range_captures));
	range_depth--;
}

int recorder_range_pop(void)
{
	if (range_depth == 0)
		return -1;
	if (range_depth > MARKER_STACK) { /* one of those not recorded */
		range_depth--;
		return range_depth;
	}
	range_remove(range_depth - 1);
	return range_depth;
}

int recorder_domain_range_pop(uint32_t domain_id)
{
	if (range_depth > MARKER_STACK) { /* the domains of those not recorded are unknown */
		range_depth--;
		return domain_depth(domain_id);
	}
	for (int at = range_depth - 1; at >= 0; at--)
		if (range_domains[at] == domain_id) {
			range_remove(at);
			return domain_depth(domain_id);
		}
	return -1;
}

uint64_t recorder_range_start(const char *text, uint32_t domain_id)
{
	uint64_t parent = range_depth > 0 && range_depth <= MARKER_STACK ? range_stack[range_depth - 1] : 0;
	int capture = recorder_capture_begin(text, domain_id);
	uint64_t id = marker_begin(MARKER_START_STOP, text, NULL, domain_id, parent);
	/* ids are handed out even when markers are not traced, as ROCTX does */
	id = id ? id : atomic_fetch_add(&next_marker_id, 1) + 1;
	if (capture) {
		pthread_mutex_lock(&captured_lock);
		int kept = captured_count < CAPTURES_BY_ID;
		if (kept)
			captured_ids[captured_count++] = id;
		pthread_mutex_unlock(&captured_lock);
		if (!kept) /* more open at once than are followed: this one is not */
			recorder_capture_end();
	}
	return id;
}

void recorder_range_stop(uint64_t id)
{
	if (markers_traced)
		marker_end(id);
	int captured = 0;
	pthread_mutex_lock(&captured_lock);
	for (size_t i = 0; i < captured_count && !captured; i++)
		if (captured_ids[i] == id) {
			captured_ids[i] = captured_ids[--captured_count];
			captured = 1;
		}
	pthread_mutex_unlock(&captured_lock);
	if (captured)
		recorder_capture_end();
}

void recorder_mark(const char *text, uint32_t domain_id)
{
	uint64_t parent = range_depth > 0 && range_depth <= MARKER_STACK ? range_stack[range_depth - 1] : 0;
	marker_begin(MARKER_MARK, text, NULL, domain_id, parent);
}

void recorder_name_thread(const char *name)
{
	if (!recorder_ready())
		return;
	struct record_thread_name r = {
		.header = { sizeof(r), RECORD_THREAD_NAME, 0 },
		.tid = recorder_thread_id(),
		.name_id = recorder_intern(name ? name : ""),
	};
	recorder_emit(&r);
}

uint64_t recorder_current_range(void)
{
	return range_depth > 0 && range_depth <= MARKER_STACK ? range_stack[range_depth - 1] : 0;
}

/* ---- communication calls ------------------------------------------------------------ */

static _Atomic uint64_t next_call_id;

uint64_t recorder_new_call_id(void)
{
	return atomic_fetch_add(&next_call_id, 1) + 1;
}

uint64_t recorder_communication(uint32_t domain, uint32_t tid, const char *function,
				const char *communicator, uint32_t communicator_size,
				int32_t peer, int32_t root, uint64_t bytes_sent,
				uint64_t bytes_received, uint64_t sequence, uint64_t start_ns,
				uint64_t end_ns)
{
	if (!recorder_ready() || !markers_traced || !recorder_collected_at(start_ns) || !function)
		return 0;
	struct record_mpi_call r = {
		.header = { .size = sizeof(r), .type = RECORD_MPI_CALL },
		.tid = tid ? tid : recorder_thread_id(),
		.function_id = recorder_intern(function),
		.start_ns = start_ns,
		.end_ns = end_ns >= start_ns ? end_ns : start_ns,
		.call_id = recorder_new_call_id(),
		.communicator_id = communicator && *communicator ? recorder_intern(communicator) : 0,
		.communicator_size = communicator_size,
		.peer = peer,
		.tag = -1,
		.root = root,
		.bytes_sent = bytes_sent,
		.bytes_received = bytes_received,
		.sequence = sequence,
		.domain = domain,
	};
	return recorder_emit(&r) == 0 ? r.call_id : 0;
}

