/* A spool read into memory for post-processing (see recording.h). */
#include "core/recording.h"

#include <stdlib.h>
#include <string.h>

#include "core/kernel-filter.h"
#include "util/hash.h"
#include "util/progress.h"
#include "util/sort.h"
#include "util/strbuf.h"

#define list_add record_list_add

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
	}
}

/* The id of a string, agent or queue record (each starts with a u32 id). */
static uint32_t id_of(const struct record_header *h)
{
	uint32_t id;
	memcpy(&id, h + 1, sizeof(id));
	return id;
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
	uint32_t ix = id_of(x), iy = id_of(y);
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
		if (kept && id_of(list->items[kept - 1]) == id_of(list->items[i]))
			kept--;
		list->items[kept++] = list->items[i];
	}
	list->count = kept;
}

static int needs_enqueuers(const struct recording *rec);
static int by_correlation(const void *a, const void *b);
static int join_markers(struct recording *rec, const struct record_list *begins,
			const struct record_list *ends, struct error *err);
static void attribute_kernels(struct recording *rec);

/* A launch point's or a launch stack's correlation id, thread and time. */
static uint64_t launch_correlation(const struct record_header *h, uint32_t *tid, uint64_t *ns)
{
	if (h->type == RECORD_LAUNCH) {
		const struct record_launch *l = (const void *)h;
		*tid = l->tid;
		*ns = l->time_ns;
		return l->correlation_id;
	}
	const struct record_launch_stack *l = (const void *)h;
	*tid = l->sample.tid;
	*ns = l->sample.time_ns;
	return l->correlation_id;
}

static int launch_by_correlation(const void *a, const void *b)
{
	const struct record_header *x = *(const struct record_header *const *)a;
	const struct record_header *y = *(const struct record_header *const *)b;
	uint32_t tid;
	uint64_t ns, cx = launch_correlation(x, &tid, &ns), cy = launch_correlation(y, &tid, &ns);
	if (cx != cy)
		return cx < cy ? -1 : 1;
	return x < y ? -1 : x > y;
}

/* The thread and time of the launch whose correlation id is given (the first recorded),
 * and its function's name: 0 when none was recorded. */
static int recording_launch(const struct recording *rec, uint64_t correlation_id, uint32_t *tid,
			    uint64_t *ns, uint32_t *function_id)
{
	const struct record_list *list = &rec->launches;
	size_t lo = 0, hi = list->count;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (launch_correlation(list->items[mid], tid, ns) < correlation_id)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == list->count || launch_correlation(list->items[lo], tid, ns) != correlation_id)
		return 0;
	const struct record_header *h = list->items[lo];
	*function_id = h->type == RECORD_LAUNCH ? ((const struct record_launch *)h)->function_id
						: ((const struct record_launch_stack *)h)->function_id;
	return 1;
}

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
		case RECORD_MARKER: list_add(&marker_begins, h); break;
		case RECORD_MARKER_END: list_add(&marker_ends, h); break;
		case RECORD_THREAD_NAME: list_add(&rec->thread_names, h); break;
		case RECORD_METRIC_SERIES: list_add(&rec->metric_series, h); break;
		case RECORD_METRIC: list_add(&rec->metrics, h); break;
		case RECORD_SAMPLE: list_add(&rec->samples, h); break;
		case RECORD_SAMPLES_LOST: list_add(&rec->samples_lost, h); break;
		case RECORD_LAUNCH_STACK:
			list_add(&rec->launch_stacks, h);
			list_add(&rec->launches, h);
			break;
		case RECORD_LAUNCH: list_add(&rec->launches, h); break;
		case RECORD_MODULE: list_add(&rec->modules, h); break;
		case RECORD_PYTHON_STACK: list_add(&rec->python_stacks, h); break;
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
	int joined = join_markers(rec, &marker_begins, &marker_ends, err);
	record_list_release(&marker_begins);
	record_list_release(&marker_ends);
	if (joined < 0) {
		recording_release(rec);
		return -1;
	}
	struct record_list *timed[] = { &rec->api_calls, &rec->kernels, &rec->copies,
					&rec->allocations, &rec->synchronizations, &rec->overheads };
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
	sort_pointers((const void **)rec->launches.items, rec->launches.count,
		      launch_by_correlation);
	attribute_kernels(rec);
	return 0;
}

/* ---- markers ---------------------------------------------------------------------- */

static int end_by_id(const void *a, const void *b)
{
	const struct record_marker_end *x = *(const struct record_marker_end *const *)a;
	const struct record_marker_end *y = *(const struct record_marker_end *const *)b;
	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return x < y ? -1 : x > y;
}

/* The markers' orders, through pointers; of equal keys, by address (the order the
 * markers were in, so that an in-place sort keeps it). */
static int marker_by_id(const void *a, const void *b)
{
	const struct recording_marker *x = *(const struct recording_marker *const *)a;
	const struct recording_marker *y = *(const struct recording_marker *const *)b;
	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return x < y ? -1 : x > y;
}

static int marker_by_start(const void *a, const void *b)
{
	const struct recording_marker *x = *(const struct recording_marker *const *)a;
	const struct recording_marker *y = *(const struct recording_marker *const *)b;
	if (x->start_ns != y->start_ns)
		return x->start_ns < y->start_ns ? -1 : 1;
	if (x->end_ns != y->end_ns)
		return x->end_ns > y->end_ns ? -1 : 1;
	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return x < y ? -1 : x > y;
}

/* Interns marker texts as strings of the recording, with ids after the spool's own. */
struct text_table {
	uint32_t *ids; /* slot -> string id, 0 when free */
	size_t slots;
};

static uint32_t intern_text(struct recording *rec, struct text_table *t, const char *text,
			    uint32_t length)
{
	if (2 * (rec->strings.count + 1) > t->slots) {
		free(t->ids);
		t->slots = t->slots ? 2 * t->slots : 1024;
		while (t->slots < 2 * (rec->strings.count + 1))
			t->slots *= 2;
		t->ids = xcalloc(t->slots, sizeof(*t->ids));
		for (size_t i = 0; i < rec->strings.count; i++) {
			size_t j = (size_t)hash_string(rec->texts[i]) & (t->slots - 1);
			while (t->ids[j])
				j = (j + 1) & (t->slots - 1);
			t->ids[j] = (uint32_t)i + 1; /* index + 1 */
		}
	}
	char *copy = xrealloc(NULL, (size_t)length + 1);
	memcpy(copy, text, length);
	copy[length] = '\0';
	size_t j = (size_t)hash_string(copy) & (t->slots - 1);
	for (; t->ids[j]; j = (j + 1) & (t->slots - 1)) {
		size_t i = t->ids[j] - 1;
		if (!strcmp(rec->texts[i], copy)) {
			free(copy);
			return id_of(rec->strings.items[i]);
		}
	}
	uint32_t id = rec->strings.count ? id_of(rec->strings.items[rec->strings.count - 1]) + 1 : 1;
	struct record_string *s = xrealloc(NULL, sizeof(*s) + length);
	*s = (struct record_string){ .header = { (uint32_t)(sizeof(*s) + length), RECORD_STRING, 0 },
				     .id = id, .length = length };
	memcpy(s->text, text, length);
	list_add(&rec->owned, &s->header);
	list_add(&rec->strings, &s->header);
	rec->texts = xrealloc(rec->texts, rec->strings.alloc * sizeof(*rec->texts));
	rec->texts[rec->strings.count - 1] = copy;
	t->ids[j] = (uint32_t)rec->strings.count;
	return id;
}

/* Joins each range's start with its end (by id); a range never ended ends with the
 * recording. Texts are checked against their record's size. */
static int join_markers(struct recording *rec, const struct record_list *begins,
			const struct record_list *ends, struct error *err)
{
	sort_pointers((const void **)ends->items, ends->count, end_by_id);
	struct record_block unsorted;
	struct recording_marker *read = record_block_alloc(&unsorted, begins->count *
							   sizeof(*rec->markers));
	struct text_table table = { NULL, 0 };
	for (size_t i = 0; i < begins->count; i++) {
		const struct record_marker *b = (const void *)begins->items[i];
		if (b->length > b->header.size - sizeof(*b)) {
			free(table.ids);
			record_block_free(&unsorted);
			return error_set(err, "marker record %llu is corrupt: its text of %u bytes "
					 "overruns the record", (unsigned long long)b->id, b->length);
		}
		struct recording_marker *m = &read[rec->marker_count++];
		*m = (struct recording_marker){
			.id = b->id, .parent_id = b->parent_id, .start_ns = b->start_ns,
			.end_ns = b->start_ns, .tid = b->tid, .end_tid = b->tid, .kind = b->kind,
			.domain_id = b->domain_id, .ended = 1,
			.name_id = intern_text(rec, &table, b->text, b->length),
		};
		if (b->kind == MARKER_MARK)
			continue;
		size_t lo = 0, hi = ends->count;
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			if (((const struct record_marker_end *)ends->items[mid])->id < b->id)
				lo = mid + 1;
			else
				hi = mid;
		}
		const struct record_marker_end *e = lo < ends->count ? (const void *)ends->items[lo] : NULL;
		if (e && e->id == b->id && e->end_ns >= b->start_ns) {
			m->end_ns = e->end_ns;
			m->end_tid = e->tid;
		} else {
			m->end_ns = rec->end_ns > b->start_ns ? rec->end_ns : b->start_ns;
			m->ended = 0;
		}
	}
	free(table.ids);
	/* by start: pointers sorted in place, then the markers copied in their order (of
	 * equal keys, in the order read: the pointers' order) */
	size_t n = rec->marker_count;
	const struct recording_marker **order = record_block_alloc(&rec->markers_by_id_block,
								   n * sizeof(*order));
	for (size_t i = 0; i < n; i++)
		order[i] = &read[i];
	sort_pointers((const void **)order, n, marker_by_start);
	rec->markers = record_block_alloc(&rec->markers_block, n * sizeof(*rec->markers));
	for (size_t i = 0; i < n; i++)
		rec->markers[i] = *order[i];
	record_block_free(&unsorted);
	/* by id for recording_marker(): ids rise with start within a thread, not across */
	rec->markers_by_id = (struct recording_marker **)order;
	for (size_t i = 0; i < n; i++)
		rec->markers_by_id[i] = &rec->markers[i];
	sort_pointers((const void **)rec->markers_by_id, n, marker_by_id);
	return 0;
}

const struct recording_marker *recording_marker(const struct recording *rec, uint64_t id)
{
	size_t lo = 0, hi = rec->marker_count;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (rec->markers_by_id[mid]->id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < rec->marker_count && rec->markers_by_id[lo]->id == id ? rec->markers_by_id[lo] : NULL;
}

uint64_t recording_kernel_range(const struct recording *rec, const struct record_kernel *k)
{
	if (k->range_id || !rec->attributed.slots)
		return k->range_id;
	size_t mask = rec->attributed.slots - 1;
	for (size_t i = (size_t)hash_int((uintptr_t)k) & mask; rec->attributed.kernels[i];
	     i = (i + 1) & mask)
		if (rec->attributed.kernels[i] == &k->header)
			return rec->attributed.ranges[i];
	return 0;
}

uint32_t recording_kernel_name(const struct recording *rec, const struct record_kernel *k)
{
	const struct recording_marker *m;
	uint64_t range = rec->rename_kernels ? recording_kernel_range(rec, k) : 0;
	if (range && (m = recording_marker(rec, range)))
		return m->name_id;
	return k->name_id;
}

static int by_thread_then_start(const void *a, const void *b)
{
	const struct recording_marker *x = *(const struct recording_marker *const *)a;
	const struct recording_marker *y = *(const struct recording_marker *const *)b;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->start_ns != y->start_ns)
		return x->start_ns < y->start_ns ? -1 : 1;
	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return x < y ? -1 : x > y;
}

/* PyTorch runs a backward pass on its autograd engine's threads (one per device) while
 * the thread that called it waits in the range gpuprof_torch.py opens around the call:
 * work those threads launch outside any range of their own is that call's. */
#define TORCH_DOMAIN "torch"
#define TORCH_BACKWARD "torch.autograd.backward"

static int is_backward_call(const struct recording *rec, const struct recording_marker *m)
{
	if (m->kind != MARKER_PUSH_POP || !m->domain_id ||
	    strcmp(recording_string(rec, m->domain_id), TORCH_DOMAIN))
		return 0;
	const char *name = recording_string(rec, m->name_id);
	size_t n = strlen(name), k = strlen(TORCH_BACKWARD);
	return n >= k && !strcmp(name + n - k, TORCH_BACKWARD) &&
	       (n == k || name[n - k - 1] == '/');
}

/* The innermost range open on thread tid at time ns (by_thread: the thread's ranges by
 * start, n in all), NULL when none. */
static const struct recording_marker *open_range(const struct recording *rec,
						 struct recording_marker *const *by_thread, size_t n,
						 uint32_t tid, uint64_t ns)
{
	/* the last range of the thread that began at or before ns ... */
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct recording_marker *m = by_thread[mid];
		if (m->tid < tid || (m->tid == tid && m->start_ns <= ns))
			lo = mid + 1;
		else
			hi = mid;
	}
	const struct recording_marker *m = lo ? by_thread[lo - 1] : NULL;
	if (!m || m->tid != tid)
		return NULL;
	/* ... or, when it had ended, the innermost of its ancestors still open */
	for (int depth = 0; m && m->end_ns < ns; depth++)
		m = m->parent_id && depth < RECORD_RANGE_DEPTH ? recording_marker(rec, m->parent_id)
							       : NULL;
	return m;
}

/* The backward call open at ns (backward: those calls by start, n in all): the last to
 * begin at or before ns, if it had not ended; NULL otherwise. */
static const struct recording_marker *backward_at(struct recording_marker *const *backward,
						  size_t n, uint64_t ns)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (backward[mid]->start_ns <= ns)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo && backward[lo - 1]->end_ns >= ns ? backward[lo - 1] : NULL;
}

/* Kernels that recorded no range but name their launching API call or launch (CUDA):
 * the innermost push/pop range open on that thread when it began; failing one, the
 * PyTorch backward call open then on another thread (above). */
static void attribute_kernels(struct recording *rec)
{
	size_t ranges = 0, candidates = 0, backwards = 0;
	for (size_t i = 0; i < rec->marker_count; i++) {
		ranges += rec->markers[i].kind == MARKER_PUSH_POP;
		backwards += is_backward_call(rec, &rec->markers[i]);
	}
	for (size_t i = 0; i < rec->kernels.count; i++)
		candidates += !((const struct record_kernel *)rec->kernels.items[i])->range_id;
	if (!ranges || !candidates || (!rec->calls_by_correlation.count && !rec->launches.count))
		return;
	struct record_block block, backward_block;
	struct recording_marker **by_thread = record_block_alloc(&block, ranges * sizeof(*by_thread));
	struct recording_marker **backward = record_block_alloc(
		&backward_block, (backwards ? backwards : 1) * sizeof(*backward));
	size_t n = 0, b = 0;
	for (size_t i = 0; i < rec->marker_count; i++) {
		if (rec->markers[i].kind == MARKER_PUSH_POP)
			by_thread[n++] = &rec->markers[i];
		if (b < backwards && is_backward_call(rec, &rec->markers[i]))
			backward[b++] = &rec->markers[i];
	}
	sort_pointers((const void **)by_thread, n, by_thread_then_start);
	sort_pointers((const void **)backward, b, marker_by_start);
	rec->attributed.slots = 64;
	while (rec->attributed.slots < 2 * candidates)
		rec->attributed.slots *= 2;
	rec->attributed.kernels = record_block_alloc(&rec->attributed.kernels_block,
						     rec->attributed.slots *
						     sizeof(*rec->attributed.kernels));
	rec->attributed.ranges = record_block_alloc(&rec->attributed.ranges_block,
						    rec->attributed.slots *
						    sizeof(*rec->attributed.ranges));
	size_t mask = rec->attributed.slots - 1;
	for (size_t i = 0; i < rec->kernels.count; i++) {
		const struct record_kernel *k = (const void *)rec->kernels.items[i];
		if (k->range_id)
			continue;
		/* where the launch began: its API call, else its launch point or stack */
		const struct record_api_call *call = recording_call(rec, k->correlation_id);
		uint32_t tid, function_id;
		uint64_t start_ns;
		if (call) {
			tid = call->tid;
			start_ns = call->start_ns;
		} else if (!recording_launch(rec, k->correlation_id, &tid, &start_ns, &function_id)) {
			continue;
		}
		const struct recording_marker *m = open_range(rec, by_thread, n, tid, start_ns);
		if (!m)
			m = backward_at(backward, b, start_ns);
		if (!m)
			continue;
		size_t j = (size_t)hash_int((uintptr_t)k) & mask;
		while (rec->attributed.kernels[j])
			j = (j + 1) & mask;
		rec->attributed.kernels[j] = &k->header;
		rec->attributed.ranges[j] = m->id;
	}
	record_block_free(&backward_block);
	record_block_free(&block);
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

/* Whether any device record leaves its thread to its API call (see recording.h). */
static int needs_enqueuers(const struct recording *rec)
{
	for (size_t i = 0; i < rec->kernels.count; i++)
		if (!((const struct record_kernel *)rec->kernels.items[i])->tid)
			return 1;
	for (size_t i = 0; i < rec->copies.count; i++)
		if (!((const struct record_memory_copy *)rec->copies.items[i])->tid)
			return 1;
	return rec->allocations.count || rec->synchronizations.count;
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

const struct record_metric_series *recording_metric_series(const struct recording *rec,
							   uint32_t id)
{
	size_t lo = 0, hi = rec->metric_series.count;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		uint32_t at = id_of(rec->metric_series.items[mid]);
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
		uint32_t at = id_of(rec->strings.items[mid]);
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
	       !rec->pc_samples.count && !rec->pc_sampling.count &&
	       !rec->stats.dropped_records;
}

void recording_release(struct recording *rec)
{
	struct record_list *lists[] = { &rec->strings, &rec->agents, &rec->queues,
					&rec->api_calls, &rec->kernels, &rec->copies,
					&rec->allocations, &rec->synchronizations, &rec->overheads,
					&rec->calls_by_correlation, &rec->launches,
					&rec->thread_names,
					&rec->metric_series, &rec->metrics, &rec->samples,
					&rec->samples_lost, &rec->launch_stacks,
					&rec->modules, &rec->python_stacks,
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
