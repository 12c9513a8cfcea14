/* A recording's marker ranges, joined from their begin and end records, and the range
 * each kernel belongs to: the one it recorded at its launch (OpenCL), or the one open on
 * its launching thread when its API call or launch point began (CUDA). See
 * recording.h. */
#include "core/recording.h"

#include <stdlib.h>
#include <string.h>

#include "core/launch-delta.h"
#include "core/recording-internal.h"
#include "util/hash.h"
#include "util/sort.h"
#include "util/strbuf.h"

/* A launch point's or a launch stack's correlation id, thread and time. */
static uint64_t launch_correlation(const struct record_header *h, uint32_t *tid, uint64_t *ns)
{
	struct record_launch l = launch_stack_call(h);
	*tid = l.tid;
	*ns = l.time_ns;
	return l.correlation_id;
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

static int clone_by_node(const void *a, const void *b)
{
	const struct record_graph_node_clone *x = *(const struct record_graph_node_clone *const *)a;
	const struct record_graph_node_clone *y = *(const struct record_graph_node_clone *const *)b;
	if (x->node_id != y->node_id)
		return x->node_id < y->node_id ? -1 : 1;
	return x < y ? -1 : x > y;
}

/* The launch (point or stack) of that id in a list sorted by it: 1, or 0. */
static int launch_in(const struct record_list *list, uint64_t correlation_id, uint32_t *tid,
		     uint64_t *ns, uint32_t *function_id)
{
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
	*function_id = launch_stack_call(list->items[lo]).function_id;
	return 1;
}

int recording_launch(const struct recording *rec, uint64_t correlation_id, uint32_t *tid,
		     uint64_t *ns, uint32_t *function_id)
{
	return launch_in(&rec->launches, correlation_id, tid, ns, function_id);
}

int recording_graph_capture(const struct recording *rec, uint64_t node_id, uint32_t *tid,
			    uint64_t *ns, uint32_t *function_id)
{
	if (!node_id)
		return 0;
	const struct record_list *clones = &rec->graph_clones;
	size_t lo = 0, hi = clones->count;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (((const struct record_graph_node_clone *)clones->items[mid])->node_id < node_id)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < clones->count &&
	    ((const struct record_graph_node_clone *)clones->items[lo])->node_id == node_id)
		node_id = ((const struct record_graph_node_clone *)clones->items[lo])->original_id;
	return launch_in(&rec->graph_captures, node_id, tid, ns, function_id);
}

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
			return record_id_of(rec->strings.items[i]);
		}
	}
	uint32_t id = rec->strings.count ? record_id_of(rec->strings.items[rec->strings.count - 1]) + 1 : 1;
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

int recording_join_markers(struct recording *rec, const struct record_list *begins,
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
		/* a module path after the text's NUL, up to its own NUL or the record's end */
		size_t room = b->header.size - sizeof(*b) - b->length;
		const char *module = b->text + b->length + 1;
		size_t module_length = room > 1 && !b->text[b->length] ? strnlen(module, room - 1) : 0;
		if (module_length)
			m->module_id = intern_text(rec, &table, module, (uint32_t)module_length);
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
void recording_attribute_kernels(struct recording *rec)
{
	sort_pointers((const void **)rec->launches.items, rec->launches.count,
		      launch_by_correlation);
	sort_pointers((const void **)rec->graph_captures.items, rec->graph_captures.count,
		      launch_by_correlation);
	sort_pointers((const void **)rec->graph_clones.items, rec->graph_clones.count,
		      clone_by_node);
	size_t ranges = 0, candidates = 0, backwards = 0;
	for (size_t i = 0; i < rec->marker_count; i++) {
		ranges += rec->markers[i].kind == MARKER_PUSH_POP;
		backwards += is_backward_call(rec, &rec->markers[i]);
	}
	for (size_t i = 0; i < rec->kernels.count; i++)
		candidates += !((const struct record_kernel *)rec->kernels.items[i])->range_id;
	if (!ranges || !candidates ||
	    (!rec->calls_by_correlation.count && !rec->launches.count && !rec->graph_captures.count))
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
		/* for a graph's kernel, the range its node was captured in (the operator that
		 * captured it), where it was; else the range the launch began in: its API
		 * call's, else its launch point's or stack's */
		const struct recording_marker *m = NULL;
		uint32_t tid, function_id;
		uint64_t start_ns;
		if (recording_graph_capture(rec, k->graph_node_id, &tid, &start_ns, &function_id))
			m = open_range(rec, by_thread, n, tid, start_ns);
		const struct record_api_call *call = m ? NULL : recording_call(rec, k->correlation_id);
		if (m) {
		} else if (call) {
			tid = call->tid;
			start_ns = call->start_ns;
		} else if (!recording_launch(rec, k->correlation_id, &tid, &start_ns, &function_id)) {
			continue;
		}
		if (!m)
			m = open_range(rec, by_thread, n, tid, start_ns);
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

