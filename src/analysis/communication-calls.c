/* NCCL's operations and the kernels they launched, with nccl-tests' bandwidths (see
 * communication.h). A process's NCCL calls are read by thread and start, so that a
 * group's collectives are found between its ncclGroupStart and the ncclGroupEnd that
 * launched its kernels; the kernels tied to a call (gpuprof_kernel.call_id) are then
 * merged per operation, and the operations summed per function and communicator size. */
#include "analysis/communication.h"

#include <stdlib.h>
#include <string.h>

#include "analysis/insight.h"
#include "core/record.h"
#include "store/store.h"
#include "util/hash.h"
#include "util/sort.h"
#include "util/strbuf.h"

#define NO_OPERATION SIZE_MAX

double communication_bus_factor(const char *function, int64_t ranks)
{
	if (ranks <= 0)
		return 0;
	double n = (double)ranks;
	if (!strcmp(function, "ncclAllReduce"))
		return 2 * (n - 1) / n;
	if (!strcmp(function, "ncclAllGather") || !strcmp(function, "ncclReduceScatter"))
		return (n - 1) / n;
	if (!strcmp(function, "ncclBroadcast") || !strcmp(function, "ncclReduce") ||
	    !strcmp(function, "ncclSend") || !strcmp(function, "ncclRecv"))
		return 1;
	return 0;
}

struct call {
	int64_t process_id, call_id;
	size_t operation;             /* NO_OPERATION: in none */
};

/* A call or a group: its collectives, and its kernels' union. */
struct operation {
	int64_t process_id, pid;
	struct strbuf function;       /* the collectives' names, each once, joined by "+" */
	int64_t ranks;                /* -1: none seen yet; 0: several */
	uint64_t calls, sent, received, kernels;
	double factor;                /* -1: none seen yet; 0: several or unknown */
	/* a group's sends and receives: how many, and the sum of their peers' hashes
	 * (modulo 2^64), which is that of 0..n-1 when they are each rank once: a send to and
	 * a receive from every rank, itself included, is an all-to-all */
	uint64_t sends, receives, send_peers, receive_peers;
	int unknown_peer;          /* a send or receive of no peer known */
	int64_t device_ns, open_start, open_end; /* the union so far, and its open interval */
};

struct tied_kernel {
	size_t operation;
	int64_t start, end;
};

static int by_call(const void *a, const void *b)
{
	const struct call *x = a, *y = b;
	if (x->process_id != y->process_id)
		return x->process_id < y->process_id ? -1 : 1;
	return (x->call_id > y->call_id) - (x->call_id < y->call_id);
}

static int by_operation_then_start(const void *a, const void *b)
{
	const struct tied_kernel *x = a, *y = b;
	if (x->operation != y->operation)
		return x->operation < y->operation ? -1 : 1;
	return (x->start > y->start) - (x->start < y->start);
}

/* Room for one more item in an array of *alloc, count in use: doubled when full. */
static void *grow(void *array, size_t *alloc, size_t count, size_t size)
{
	if (count < *alloc)
		return array;
	*alloc = *alloc ? 2 * *alloc : 256;
	return xrealloc(array, *alloc * size);
}

static size_t operation_new(struct operation **ops, size_t *count, size_t *alloc,
			    int64_t process_id, int64_t pid)
{
	*ops = grow(*ops, alloc, *count, sizeof(**ops));
	(*ops)[*count] = (struct operation){ .process_id = process_id, .pid = pid,
					     .function = STRBUF_INIT, .ranks = -1, .factor = -1 };
	return (*count)++;
}

/* Whether function is one of the names of list ("a+b"). */
static int named_in(const char *list, const char *function)
{
	size_t length = strlen(function);
	for (const char *p = list; p; p = strchr(p, '+'), p = p ? p + 1 : NULL)
		if (!strncmp(p, function, length) && (p[length] == '+' || !p[length]))
			return 1;
	return 0;
}

/* A collective joins an operation: its name (once), bytes, ranks and factor. The
 * operation's bytes are the larger of all it sends and all it receives: a call's as
 * nccl-tests sizes it, and a group's send and receive of one buffer counted once. */
static void operation_join(struct operation *op, const char *function, int64_t ranks,
			   int64_t peer, uint64_t sent, uint64_t received)
{
	int send = !strcmp(function, "ncclSend"), receive = !strcmp(function, "ncclRecv");
	if (send || receive) {
		*(send ? &op->sends : &op->receives) += 1;
		*(send ? &op->send_peers : &op->receive_peers) += hash_int((uint64_t)peer);
		if (peer < 0)
			op->unknown_peer = 1;
	}
	if (!op->function.len || !named_in(op->function.buf, function))
		strbuf_addf(&op->function, "%s%s", op->function.len ? "+" : "", function);
	op->ranks = op->ranks == -1 || op->ranks == ranks ? ranks : 0;
	double factor = communication_bus_factor(function, ranks);
	op->factor = op->factor == -1 || op->factor == factor ? factor : 0;
	op->calls++;
	op->sent += sent;
	op->received += received;
}

/* A group of only sends and receives, one to and one from each of the communicator's
 * ranks, itself included (as PyTorch's all_to_all makes it): nccl-tests' alltoall, whose
 * bus bandwidth is (n-1)/n of the algorithm's (the part to itself crosses no link). */
static void all_to_all(struct operation *op)
{
	int64_t n = op->ranks;
	if (n < 2 || op->unknown_peer || op->sends != (uint64_t)n ||
	    op->receives != (uint64_t)n || op->sends + op->receives != op->calls)
		return;
	uint64_t every = 0;
	for (int64_t rank = 0; rank < n; rank++)
		every += hash_int((uint64_t)rank);
	if (op->send_peers != every || op->receive_peers != every)
		return;
	strbuf_reset(&op->function);
	strbuf_addstr(&op->function, "all-to-all (ncclSend+ncclRecv)");
	op->factor = (double)(n - 1) / (double)n;
}

/* Reads the NCCL calls: each gets its operation (a group's collectives and its
 * ncclGroupEnd share one). */
static int read_calls(sqlite3 *db, struct call **calls, size_t *call_count,
		      struct operation **ops, size_t *op_count, struct error *err)
{
	sqlite3_stmt *q;
	struct strbuf sql = STRBUF_INIT;
	strbuf_addf(&sql, "SELECT c.process_id, p.pid, c.call_id, c.tid, f.string, "
			  "c.communicator_size, c.bytes_sent, c.bytes_received, c.peer "
			  "FROM gpuprof_mpi_call c JOIN gpuprof_process p ON p.id = c.process_id "
			  "LEFT JOIN gpuprof_string f ON f.id = c.function_id WHERE c.domain = %d "
			  "ORDER BY c.process_id, c.tid, c.start, c.id", COMMUNICATION_NCCL);
	int rc = store_prepare(db, sql.buf, &q, err);
	strbuf_release(&sql);
	if (rc)
		return -1;
	int64_t process_id = 0, tid = 0;
	int depth = 0;
	size_t group = NO_OPERATION, first_member = 0, call_alloc = 0, op_alloc = 0;
	int row;
	while ((row = sqlite3_step(q)) == SQLITE_ROW) {
		int64_t p = sqlite3_column_int64(q, 0), t = sqlite3_column_int64(q, 3);
		const char *function = (const char *)sqlite3_column_text(q, 4);
		function = function ? function : "";
		if (!*call_count || p != process_id || t != tid) { /* another thread */
			process_id = p, tid = t, depth = 0, group = NO_OPERATION;
		}
		*calls = grow(*calls, &call_alloc, *call_count, sizeof(**calls));
		struct call *c = &(*calls)[(*call_count)++];
		*c = (struct call){ p, sqlite3_column_int64(q, 2), NO_OPERATION };
		int64_t ranks = sqlite3_column_int64(q, 5);
		uint64_t sent = (uint64_t)sqlite3_column_int64(q, 6);
		uint64_t received = (uint64_t)sqlite3_column_int64(q, 7);
		int64_t peer = sqlite3_column_int64(q, 8);
		if (peer < 0 || peer >= ranks)
			peer = -1; /* none known: no all-to-all */
		/* the communicator's own calls (ncclCommInitRank...) move no data, in a group
		 * or not */
		int communicates = strncmp(function, "ncclComm", 8) != 0;
		if (!strcmp(function, "ncclGroupStart")) {
			if (depth++ == 0) {
				group = operation_new(ops, op_count, &op_alloc, p,
						      sqlite3_column_int64(q, 1));
				first_member = *call_count;
			}
		} else if (!strcmp(function, "ncclGroupEnd")) {
			if (depth > 0 && --depth == 0) { /* the outermost end: NCCL launches here */
				for (size_t i = first_member; i < *call_count; i++)
					(*calls)[i].operation = group;
				if (!(*ops)[group].calls) /* a group of no collective: its end's name */
					strbuf_addstr(&(*ops)[group].function, function);
				all_to_all(&(*ops)[group]);
				group = NO_OPERATION;
			}
		} else if (depth > 0 && communicates) {
			operation_join(&(*ops)[group], function, ranks, peer, sent, received);
		} else if (communicates) {
			c->operation = operation_new(ops, op_count, &op_alloc, p,
						     sqlite3_column_int64(q, 1));
			operation_join(&(*ops)[c->operation], function, ranks, peer, sent, received);
		}
	}
	rc = row == SQLITE_DONE ? 0 : error_set(err, "%s", sqlite3_errmsg(db));
	sqlite3_finalize(q);
	return rc;
}

/* The kernels tied to a call, each with its call's operation. */
static int read_kernels(sqlite3 *db, const struct call *calls, size_t call_count,
			struct tied_kernel **kernels, size_t *count, struct error *err)
{
	sqlite3_stmt *q;
	size_t alloc = 0;
	if (store_prepare(db, "SELECT k.process_id, k.call_id, k.start, k.end FROM gpuprof_kernel "
			      "k WHERE k.call_id != 0 AND " INSIGHT_VALID_TIMES("k"), &q, err))
		return -1;
	int row;
	while ((row = sqlite3_step(q)) == SQLITE_ROW) {
		struct call key = { sqlite3_column_int64(q, 0), sqlite3_column_int64(q, 1), 0 };
		const struct call *c = calls ? bsearch(&key, calls, call_count, sizeof(*calls), by_call)
					     : NULL;
		if (!c || c->operation == NO_OPERATION)
			continue;
		*kernels = grow(*kernels, &alloc, *count, sizeof(**kernels));
		(*kernels)[(*count)++] = (struct tied_kernel){
			c->operation, insight_bounded(sqlite3_column_int64(q, 2)),
			insight_bounded(sqlite3_column_int64(q, 3)) };
	}
	int rc = row == SQLITE_DONE ? 0 : error_set(err, "%s", sqlite3_errmsg(db));
	sqlite3_finalize(q);
	return rc;
}

/* Each operation's kernels merged: its device time. */
static void merge_kernels(struct operation *ops, struct tied_kernel *kernels, size_t count)
{
	sort_array(kernels, count, sizeof(*kernels), by_operation_then_start);
	for (size_t i = 0; i < count; i++) {
		struct operation *op = &ops[kernels[i].operation];
		if (op->kernels && kernels[i].start <= op->open_end) {
			if (kernels[i].end > op->open_end)
				op->open_end = kernels[i].end;
		} else {
			op->device_ns += op->open_end - op->open_start;
			op->open_start = kernels[i].start;
			op->open_end = kernels[i].end;
		}
		op->kernels++;
	}
	for (size_t i = 0; i < count; i++) { /* each operation's last interval, once */
		struct operation *op = &ops[kernels[i].operation];
		op->device_ns += op->open_end - op->open_start;
		op->open_start = op->open_end;
	}
}

/* The operations that launched kernels, summed by process, function and ranks. */
static void sum_operations(const struct operation *ops, size_t count, int input,
			   struct communication_report *r)
{
	size_t first = r->call_count;
	for (size_t i = 0; i < count; i++) {
		const struct operation *op = &ops[i];
		if (!op->kernels)
			continue;
		int64_t ranks = op->ranks > 0 ? op->ranks : 0;
		struct communication_calls *row = NULL;
		for (size_t k = first; k < r->call_count && !row; k++)
			if (r->calls[k].process_id == op->process_id && r->calls[k].ranks == ranks &&
			    !strcmp(r->calls[k].function, op->function.buf))
				row = &r->calls[k];
		if (!row) {
			r->calls = xrealloc(r->calls, (r->call_count + 1) * sizeof(*r->calls));
			row = &r->calls[r->call_count++];
			*row = (struct communication_calls){ .input = input,
							     .process_id = op->process_id,
							     .pid = op->pid,
							     .function = xstrdup(op->function.buf),
							     .ranks = ranks,
							     .bus_factor = op->factor > 0 ? op->factor : 0 };
		}
		row->calls += op->calls;
		row->operations++;
		row->kernels += op->kernels;
		row->bytes += op->sent > op->received ? op->sent : op->received;
		row->device_ns = insight_add(row->device_ns, op->device_ns);
		if (row->bus_factor != (op->factor > 0 ? op->factor : 0))
			row->bus_factor = 0;
	}
}

int communication_gather_calls(sqlite3 *db, int input, struct communication_report *r,
			       struct error *err)
{
	if (!store_has_table(db, "gpuprof_mpi_call") ||
	    !store_has_column(db, "gpuprof_kernel", "call_id")) /* before schema 3.9 */
		return 0;
	struct call *calls = NULL;
	struct operation *ops = NULL;
	struct tied_kernel *kernels = NULL;
	size_t call_count = 0, op_count = 0, kernel_count = 0;
	int rc = read_calls(db, &calls, &call_count, &ops, &op_count, err);
	sort_array(calls, call_count, sizeof(*calls), by_call);
	rc = rc || read_kernels(db, calls, call_count, &kernels, &kernel_count, err);
	if (rc == 0) {
		merge_kernels(ops, kernels, kernel_count);
		sum_operations(ops, op_count, input, r);
	}
	for (size_t i = 0; i < op_count; i++)
		strbuf_release(&ops[i].function);
	free(ops);
	free(calls);
	free(kernels);
	return rc ? -1 : 0;
}
