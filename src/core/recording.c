/* A spool read into memory for post-processing (see recording.h). */
#include "core/recording.h"

#include <stdlib.h>
#include <string.h>

#include "core/kernel-filter.h"
#include "core/launch-delta.h"
#include "core/recording-internal.h"
#include "util/hash.h"
#include "util/progress.h"
#include "util/sort.h"
#include "util/strbuf.h"


static int by_u64(const void *a, const void *b);
static int counter_by_correlation(const void *a, const void *b);

/* The start and end of an API call, kernel or transfer; 0 and 0 for other records. */
static void interval_of(const struct record_header *h, uint64_t *start, uint64_t *end)
{
	*start = *end = 0;
	switch (h->type) {
	case RECORD_API_CALL:
		*start = ((const struct record_api_call *)h)->start_ns;
		*end = ((const struct record_api_call *)h)->end_ns;
		break;
	case RECORD_KERNEL:
		*start = ((const struct record_kernel *)h)->start_ns;
		*end = ((const struct record_kernel *)h)->end_ns;
		break;
	case RECORD_MEMORY_COPY:
		*start = ((const struct record_memory_copy *)h)->start_ns;
		*end = ((const struct record_memory_copy *)h)->end_ns;
		break;
	case RECORD_MEMORY_ALLOCATION:
		*start = ((const struct record_memory_allocation *)h)->start_ns;
		*end = ((const struct record_memory_allocation *)h)->end_ns;
		break;
	case RECORD_SYNCHRONIZATION:
		*start = ((const struct record_synchronization *)h)->start_ns;
		*end = ((const struct record_synchronization *)h)->end_ns;
		break;
	case RECORD_OVERHEAD:
		*start = ((const struct record_overhead *)h)->start_ns;
		*end = ((const struct record_overhead *)h)->end_ns;
		break;
	case RECORD_MPI_CALL:
		*start = ((const struct record_mpi_call *)h)->start_ns;
		*end = ((const struct record_mpi_call *)h)->end_ns;
		break;
	}
}

/* By start; of equal starts the one ending later first, so that an enclosing interval
 * comes before those it encloses (a runtime call before the driver call it made, which
 * was written first); then file order: records are pointers into one mapping. */
static int by_start(const void *a, const void *b)
{
	const struct record_header *x = *(const struct record_header *const *)a;
	const struct record_header *y = *(const struct record_header *const *)b;
	uint64_t sx, sy, ex, ey;
	interval_of(x, &sx, &ex);
	interval_of(y, &sy, &ey);
	if (sx != sy)
		return sx < sy ? -1 : 1;
	if (ex != ey)
		return ex > ey ? -1 : 1;
	return x < y ? -1 : x > y;
}

/* A process's own series end with its recording: a reading after the recorder's last
 * flush measures gpuprof's ending of it (its writer thread gone, what it wrote then
 * counted in the process's totals), not the program. The machine's and the GPUs' series
 * are kept whole. */
static void drop_process_metrics_after_end(struct recording *rec)
{
	size_t kept = 0;
	for (size_t i = 0; i < rec->metrics.count; i++) {
		const struct record_metric *m = (const void *)rec->metrics.items[i];
		const struct record_metric_series *s = recording_metric_series(rec, m->series_id);
		if (!(s && s->source == METRIC_PROCESS && m->time_ns > rec->end_ns))
			rec->metrics.items[kept++] = rec->metrics.items[i];
	}
	rec->metrics.count = kept;
}

static int metric_by_time(const void *a, const void *b)
{
	const struct record_metric *x = *(const struct record_metric *const *)a;
	const struct record_metric *y = *(const struct record_metric *const *)b;
	if (x->time_ns != y->time_ns)
		return x->time_ns < y->time_ns ? -1 : 1;
	return x < y ? -1 : x > y;
}

static int sample_by_time(const void *a, const void *b)
{
	const struct record_sample *x = *(const struct record_sample *const *)a;
	const struct record_sample *y = *(const struct record_sample *const *)b;
	if (x->time_ns != y->time_ns)
		return x->time_ns < y->time_ns ? -1 : 1;
	return x < y ? -1 : x > y;
}

static int is_sorted(const struct record_list *list)
{
	for (size_t i = 1; i < list->count; i++)
		if (by_start(&list->items[i - 1], &list->items[i]) > 0)
			return 0;
	return 1;
}

static int by_id(const void *a, const void *b)
{
	const struct record_header *x = *(const struct record_header *const *)a;
	const struct record_header *y = *(const struct record_header *const *)b;
	uint32_t ix = record_id_of(x), iy = record_id_of(y);
	if (ix != iy)
		return ix < iy ? -1 : 1;
	return x < y ? -1 : x > y;
}

/* Sorts by id and keeps the last record of each id. */
static void index_by_id(struct record_list *list)
{
	if (!list->count)
		return;
	sort_pointers((const void **)list->items, list->count, by_id);
	size_t kept = 0;
	for (size_t i = 0; i < list->count; i++) {
		if (kept && record_id_of(list->items[kept - 1]) == record_id_of(list->items[i]))
			kept--;
		list->items[kept++] = list->items[i];
	}
	list->count = kept;
}

static int needs_enqueuers(const struct recording *rec);
static int by_correlation(const void *a, const void *b);

int recording_read(struct recording *rec, const char *spool_path, struct error *err)
{
	memset(rec, 0, sizeof(*rec));
	if (spool_reader_open(&rec->reader, spool_path, err))
		return -1;
	struct recording_stats *stats = &rec->stats;
	uint64_t last_ns = 0;
	const struct record_header *h;
	struct record_list marker_begins = { 0 }, marker_ends = { 0 };
	struct progress_task *progress = progress_task_begin("reading", rec->reader.size);
	uint64_t records = 0;
	int more;
	while ((more = spool_reader_next(&rec->reader, &h, err)) > 0) {
		if (++records % 8192 == 0)
			progress_set(progress, rec->reader.offset);
		if (h->type < RECORD_TYPE_COUNT)
			stats->records[h->type]++;
		switch (h->type) {
		case RECORD_STRING: list_add(&rec->strings, h); break;
		case RECORD_AGENT: list_add(&rec->agents, h); break;
		case RECORD_QUEUE: list_add(&rec->queues, h); break;
		case RECORD_API_CALL: list_add(&rec->api_calls, h); break;
		case RECORD_KERNEL: list_add(&rec->kernels, h); break;
		case RECORD_MEMORY_COPY: list_add(&rec->copies, h); break;
		case RECORD_MEMORY_ALLOCATION: list_add(&rec->allocations, h); break;
		case RECORD_SYNCHRONIZATION: list_add(&rec->synchronizations, h); break;
		case RECORD_OVERHEAD: list_add(&rec->overheads, h); break;
		case RECORD_MPI_CALL: list_add(&rec->mpi_calls, h); break;
		case RECORD_MPI_COMPLETION: list_add(&rec->mpi_completions, h); break;
		case RECORD_CLOCK_SYNC: list_add(&rec->clock_syncs, h); break;
		case RECORD_MARKER: list_add(&marker_begins, h); break;
		case RECORD_MARKER_END: list_add(&marker_ends, h); break;
		case RECORD_THREAD_NAME: list_add(&rec->thread_names, h); break;
		case RECORD_METRIC_SERIES: list_add(&rec->metric_series, h); break;
		case RECORD_METRIC: list_add(&rec->metrics, h); break;
		case RECORD_SAMPLE: list_add(&rec->samples, h); break;
		case RECORD_SAMPLES_LOST: list_add(&rec->samples_lost, h); break;
		case RECORD_LAUNCH_STACK:
		case RECORD_LAUNCH_DELTA:
			list_add(&rec->launch_stacks, h);
			/* fall through */
		case RECORD_LAUNCH:
			list_add(launch_stack_call(h).domain == DOMAIN_CUDA_GRAPH_NODE
					 ? &rec->graph_captures : &rec->launches, h);
			break;
		case RECORD_GRAPH_NODE_CLONE: list_add(&rec->graph_clones, h); break;
		case RECORD_MODULE: list_add(&rec->modules, h); break;
		case RECORD_PYTHON_STACK: list_add(&rec->python_stacks, h); break;
		case RECORD_PYTHON_CODE: list_add(&rec->python_codes, h); break;
		case RECORD_SYMBOL: list_add(&rec->symbols, h); break;
		case RECORD_COUNTER: list_add(&rec->counters, h); break;
		case RECORD_PC_SAMPLE: list_add(&rec->pc_samples, h); break;
		case RECORD_PC_SAMPLING: list_add(&rec->pc_sampling, h); break;
		case RECORD_PROCESS:
			if (!rec->process)
				rec->process = (const void *)h;
			break;
		case RECORD_DROPPED: {
			const struct record_dropped *d = (const void *)h;
			uint32_t reason = d->reason < DROPPED_REASON_COUNT ? d->reason : 0;
			rec->dropped[reason][0] += d->records;
			rec->dropped[reason][1] += d->bytes;
			stats->dropped_records += d->records;
			break;
		}
		case RECORD_PROCESS_END:
			rec->end_ns = ((const struct record_process_end *)h)->end_ns;
			stats->clean_exit = 1;
			break;
		default:
			stats->unknown_records++;
			break;
		}
		uint64_t start, end;
		interval_of(h, &start, &end);
		if (end > last_ns)
			last_ns = end;
	}
	progress_task_end(progress);
	if (more < 0) {
		record_list_release(&marker_begins);
		record_list_release(&marker_ends);
		recording_release(rec);
		return -1;
	}
	stats->truncated_bytes = rec->reader.truncated_bytes;
	if (!rec->process) {
		record_list_release(&marker_begins);
		record_list_release(&marker_ends);
		recording_release(rec);
		return error_set(err, "'%s' holds no process record: it is empty or was cut off "
				 "before its first flush", spool_path);
	}
	if (!rec->end_ns)
		rec->end_ns = last_ns > rec->process->start_ns ? last_ns : rec->process->start_ns;
	index_by_id(&rec->strings);
	rec->texts = xcalloc(rec->strings.count, sizeof(*rec->texts));
	for (size_t i = 0; i < rec->strings.count; i++) {
		const struct record_string *s = (const void *)rec->strings.items[i];
		rec->texts[i] = xrealloc(NULL, (size_t)s->length + 1);
		memcpy(rec->texts[i], s->text, s->length);
		rec->texts[i][s->length] = '\0';
	}
	index_by_id(&rec->agents);
	index_by_id(&rec->queues);
	index_by_id(&rec->thread_names);
	index_by_id(&rec->metric_series);
	int joined = recording_join_markers(rec, &marker_begins, &marker_ends, err);
	record_list_release(&marker_begins);
	record_list_release(&marker_ends);
	if (joined < 0) {
		recording_release(rec);
		return -1;
	}
	struct record_list *timed[] = { &rec->api_calls, &rec->kernels, &rec->copies,
					&rec->allocations, &rec->synchronizations, &rec->overheads,
					&rec->mpi_calls };
	for (size_t i = 0; i < sizeof(timed) / sizeof(timed[0]); i++)
		if (!is_sorted(timed[i])) /* one recording thread gives sorted lists */
			sort_pointers((const void **)timed[i]->items, timed[i]->count, by_start);
	sort_pointers((const void **)rec->metrics.items, rec->metrics.count, metric_by_time);
	if (rec->stats.clean_exit)
		drop_process_metrics_after_end(rec);
	sort_pointers((const void **)rec->samples.items, rec->samples.count, sample_by_time);
	sort_pointers((const void **)rec->counters.items, rec->counters.count,
		      counter_by_correlation);
	if (needs_enqueuers(rec)) {
		for (size_t i = 0; i < rec->api_calls.count; i++)
			list_add(&rec->calls_by_correlation, rec->api_calls.items[i]);
		sort_pointers((const void **)rec->calls_by_correlation.items,
			      rec->calls_by_correlation.count, by_correlation);
	}
	recording_attribute_kernels(rec);
	recording_index_communication(rec);
	return 0;
}

static int by_address(const void *a, const void *b)
{
	const void *x = *(const void *const *)a, *y = *(const void *const *)b;
	return x < y ? -1 : x > y;
}

static int kernel_by_dispatch(const void *a, const void *b)
{
	const struct record_kernel *x = *(const struct record_kernel *const *)a;
	const struct record_kernel *y = *(const struct record_kernel *const *)b;
	if (x->dispatch_id != y->dispatch_id)
		return x->dispatch_id < y->dispatch_id ? -1 : 1;
	return x < y ? -1 : x > y;
}

size_t recording_filter_kernels(struct recording *rec, const struct kernel_filter *filter)
{
	if (!kernel_filter_active(filter) || !rec->kernels.count)
		return 0;
	size_t n = rec->kernels.count;
	const struct record_header **order = xrealloc(NULL, n * sizeof(*order));
	memcpy(order, rec->kernels.items, n * sizeof(*order));
	sort_array(order, n, sizeof(*order), kernel_by_dispatch);
	/* per name id: whether the name passes (0 unknown, 1 no, 2 yes) and its dispatches */
	size_t slots = 64;
	while (slots < 2 * rec->strings.count + 2)
		slots *= 2;
	struct name_state {
		uint32_t id;
		uint8_t passes;
		uint64_t seen;
	} *names = xcalloc(slots, sizeof(*names));
	/* kept records, marked by address: a sorted copy of those that pass */
	const struct record_header **kept = xrealloc(NULL, n * sizeof(*kept));
	size_t kept_count = 0;
	for (size_t i = 0; i < n; i++) {
		const struct record_kernel *k = (const void *)order[i];
		size_t j = (size_t)hash_int(k->name_id) & (slots - 1);
		while (names[j].passes && names[j].id != k->name_id)
			j = (j + 1) & (slots - 1);
		if (!names[j].passes) {
			names[j].id = k->name_id;
			names[j].passes = kernel_filter_name(filter, recording_string(rec, k->name_id)) ? 2 : 1;
		}
		if (names[j].passes == 2 && kernel_filter_iteration(filter, ++names[j].seen))
			kept[kept_count++] = order[i];
	}
	/* keep the start-time order of the list */
	sort_array(kept, kept_count, sizeof(*kept), by_address);
	size_t out = 0;
	for (size_t i = 0; i < n; i++) {
		const struct record_header *h = rec->kernels.items[i];
		if (bsearch(&h, kept, kept_count, sizeof(*kept), by_address))
			rec->kernels.items[out++] = h;
	}
	rec->kernels.count = out;
	/* the counters of the kernels kept: those of a dropped kernel go with it */
	uint64_t *correlations = xrealloc(NULL, (out + 1) * sizeof(*correlations));
	for (size_t i = 0; i < out; i++)
		correlations[i] = ((const struct record_kernel *)rec->kernels.items[i])->correlation_id;
	sort_array(correlations, out, sizeof(*correlations), by_u64);
	size_t counters = 0;
	for (size_t i = 0; i < rec->counters.count; i++) {
		uint64_t id = ((const struct record_counter *)rec->counters.items[i])->correlation_id;
		if (bsearch(&id, correlations, out, sizeof(*correlations), by_u64))
			rec->counters.items[counters++] = rec->counters.items[i];
	}
	rec->counters.count = counters;
	/* PC samples by their kernel's name: continuous sampling counts a function's samples
	 * over all its launches, so the iteration range cannot select among them */
	size_t pcs = 0;
	for (size_t i = 0; i < rec->pc_samples.count; i++) {
		const struct record_pc_sample *p = (const void *)rec->pc_samples.items[i];
		if (kernel_filter_name(filter, recording_string(rec, p->function_id)))
			rec->pc_samples.items[pcs++] = rec->pc_samples.items[i];
	}
	rec->pc_samples.count = pcs;
	free(correlations);
	free(order);
	free(names);
	free(kept);
	return n - out;
}

static int by_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static int counter_by_correlation(const void *a, const void *b)
{
	const struct record_counter *x = *(const struct record_counter *const *)a;
	const struct record_counter *y = *(const struct record_counter *const *)b;
	if (x->correlation_id != y->correlation_id)
		return x->correlation_id < y->correlation_id ? -1 : 1;
	return x < y ? -1 : x > y;
}

size_t recording_counters(const struct recording *rec, uint64_t correlation_id,
			  const struct record_counter *const **first)
{
	const struct record_list *list = &rec->counters;
	size_t lo = 0, hi = list->count;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (((const struct record_counter *)list->items[mid])->correlation_id < correlation_id)
			lo = mid + 1;
		else
			hi = mid;
	}
	size_t end = lo;
	while (end < list->count &&
	       ((const struct record_counter *)list->items[end])->correlation_id == correlation_id)
		end++;
	*first = (const struct record_counter *const *)(list->items + lo);
	return end - lo;
}

/* Whether any device record leaves its thread to its API call (see recording.h), or
 * needs the time its API call began. */
static int needs_enqueuers(const struct recording *rec)
{
	for (size_t i = 0; i < rec->kernels.count; i++)
		if (!((const struct record_kernel *)rec->kernels.items[i])->tid)
			return 1;
	for (size_t i = 0; i < rec->copies.count; i++)
		if (!((const struct record_memory_copy *)rec->copies.items[i])->tid)
			return 1;
	if (rec->allocations.count || rec->synchronizations.count)
		return 1;
	/* the kernels' launches placed in NCCL's calls (recording_kernel_call()) */
	for (size_t i = 0; rec->kernels.count && i < rec->mpi_calls.count; i++)
		if (((const struct record_mpi_call *)rec->mpi_calls.items[i])->domain ==
		    COMMUNICATION_NCCL)
			return 1;
	return 0;
}

static int by_correlation(const void *a, const void *b)
{
	const struct record_api_call *x = *(const struct record_api_call *const *)a;
	const struct record_api_call *y = *(const struct record_api_call *const *)b;
	if (x->correlation_id != y->correlation_id)
		return x->correlation_id < y->correlation_id ? -1 : 1;
	if (x->domain != y->domain)
		return x->domain < y->domain ? -1 : 1;
	return x < y ? -1 : x > y;
}

const struct record_api_call *recording_call(const struct recording *rec, uint64_t correlation_id)
{
	const struct record_list *list = &rec->calls_by_correlation;
	size_t lo = 0, hi = list->count;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (((const struct record_api_call *)list->items[mid])->correlation_id < correlation_id)
			lo = mid + 1;
		else
			hi = mid;
	}
	const struct record_api_call *call = lo < list->count ? (const void *)list->items[lo] : NULL;
	return call && call->correlation_id == correlation_id ? call : NULL;
}

void recording_enqueuer(const struct recording *rec, uint64_t correlation_id, uint32_t *tid,
			uint32_t *function_id)
{
	if (*tid)
		return;
	const struct record_api_call *call = recording_call(rec, correlation_id);
	uint32_t launch_tid, launch_function;
	uint64_t ns;
	if (call) {
		*tid = call->tid;
		if (function_id && !*function_id)
			*function_id = call->function_id;
	} else if (recording_launch(rec, correlation_id, &launch_tid, &ns, &launch_function)) {
		*tid = launch_tid; /* no API trace: the launch's own record */
		if (function_id && !*function_id)
			*function_id = launch_function;
	}
}

void recording_resolve_kernel(const struct recording *rec, const struct record_kernel *r,
			      struct resolved_kernel *k)
{
	k->r = r;
	k->tid = r->tid;
	recording_enqueuer(rec, r->correlation_id, &k->tid, NULL);
	k->name_id = recording_kernel_name(rec, r);
	k->range_id = recording_kernel_range(rec, r);
	k->call_id = recording_kernel_call(rec, r);
}

void recording_resolve_copy(const struct recording *rec, const struct record_memory_copy *r,
			    struct resolved_copy *k)
{
	k->r = r;
	k->tid = r->tid;
	k->function_id = r->function_id;
	recording_enqueuer(rec, r->correlation_id, &k->tid, &k->function_id);
}

void recording_resolve_allocation(const struct recording *rec,
				  const struct record_memory_allocation *r,
				  struct resolved_allocation *k)
{
	k->r = r;
	k->tid = r->tid;
	recording_enqueuer(rec, r->correlation_id, &k->tid, NULL);
}

const struct record_metric_series *recording_metric_series(const struct recording *rec,
							   uint32_t id)
{
	size_t lo = 0, hi = rec->metric_series.count;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		uint32_t at = record_id_of(rec->metric_series.items[mid]);
		if (at == id)
			return (const void *)rec->metric_series.items[mid];
		if (at < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

const char *recording_string(const struct recording *rec, uint32_t id)
{
	size_t lo = 0, hi = rec->strings.count;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		uint32_t at = record_id_of(rec->strings.items[mid]);
		if (at == id)
			return rec->texts[mid];
		if (at < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return "";
}

int recording_empty(const struct recording *rec)
{
	return !rec->api_calls.count && !rec->kernels.count && !rec->copies.count &&
	       !rec->allocations.count && !rec->synchronizations.count && !rec->marker_count &&
	       !rec->samples.count && !rec->counters.count && !rec->overheads.count &&
	       !rec->pc_samples.count && !rec->pc_sampling.count && !rec->mpi_calls.count &&
	       !rec->stats.dropped_records;
}

void recording_release(struct recording *rec)
{
	struct record_list *lists[] = { &rec->strings, &rec->agents, &rec->queues,
					&rec->api_calls, &rec->kernels, &rec->copies,
					&rec->allocations, &rec->synchronizations, &rec->overheads,
					&rec->mpi_calls, &rec->mpi_completions, &rec->clock_syncs,
					&rec->calls_by_correlation, &rec->launches,
					&rec->graph_captures, &rec->graph_clones,
					&rec->communication_calls, &rec->thread_names,
					&rec->metric_series, &rec->metrics, &rec->samples,
					&rec->samples_lost, &rec->launch_stacks,
					&rec->modules, &rec->python_stacks, &rec->python_codes,
					&rec->symbols, &rec->counters, &rec->pc_samples,
					&rec->pc_sampling, &rec->owned };
	for (size_t i = 0; i < rec->owned.count; i++)
		free((void *)rec->owned.items[i]);
	record_block_free(&rec->markers_block);
	record_block_free(&rec->markers_by_id_block);
	record_block_free(&rec->attributed.kernels_block);
	record_block_free(&rec->attributed.ranges_block);
	for (size_t i = 0; rec->texts && i < rec->strings.count; i++)
		free(rec->texts[i]);
	free(rec->texts);
	for (size_t i = 0; i < sizeof(lists) / sizeof(lists[0]); i++)
		record_list_release(lists[i]);
	spool_reader_release(&rec->reader);
	memset(rec, 0, sizeof(*rec));
}
