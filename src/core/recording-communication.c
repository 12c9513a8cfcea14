/* The NCCL call each kernel was launched in (see recording.h): NCCL's calls listed by
 * thread and start, and a kernel's launch (its API call, else its launch point) looked
 * up among those of its thread. */
#include "core/recording.h"

#include "core/recording-internal.h"
#include "util/sort.h"

static int by_thread_then_start(const void *a, const void *b)
{
	const struct record_mpi_call *x = *(const struct record_mpi_call *const *)a;
	const struct record_mpi_call *y = *(const struct record_mpi_call *const *)b;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->start_ns != y->start_ns)
		return x->start_ns < y->start_ns ? -1 : 1;
	return x < y ? -1 : x > y;
}

void recording_index_communication(struct recording *rec)
{
	if (!rec->kernels.count)
		return;
	for (size_t i = 0; i < rec->mpi_calls.count; i++)
		if (((const struct record_mpi_call *)rec->mpi_calls.items[i])->domain ==
		    COMMUNICATION_NCCL)
			list_add(&rec->communication_calls, rec->mpi_calls.items[i]);
	sort_pointers((const void **)rec->communication_calls.items,
		      rec->communication_calls.count, by_thread_then_start);
}

uint64_t recording_kernel_call(const struct recording *rec, const struct record_kernel *k)
{
	const struct record_list *calls = &rec->communication_calls;
	if (!calls->count || k->graph_node_id)
		return 0;
	uint32_t tid, function_id;
	uint64_t at;
	const struct record_api_call *call = recording_call(rec, k->correlation_id);
	if (call) {
		tid = call->tid;
		at = call->start_ns;
	} else if (!recording_launch(rec, k->correlation_id, &tid, &at, &function_id)) {
		return 0;
	}
	/* the last call of that thread begun at or before the launch, if still open then */
	size_t lo = 0, hi = calls->count;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct record_mpi_call *m = (const void *)calls->items[mid];
		if (m->tid < tid || (m->tid == tid && m->start_ns <= at))
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return 0;
	const struct record_mpi_call *m = (const void *)calls->items[lo - 1];
	return m->tid == tid && m->end_ns >= at ? m->call_id : 0;
}
