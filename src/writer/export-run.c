/* The writers run over the events of an export (see export-run.h). */
#include "writer/export-run.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "util/hash.h"
#include "util/sort.h"

void writer_truncate_name(const char *name, struct strbuf *out)
{
	/* The base name ends where the parameter list or template arguments of the
	 * outermost name begin, and starts after the last "::" before that. */
	size_t end = strlen(name);
	int depth = 0;
	for (size_t i = 0; name[i]; i++) {
		char c = name[i];
		if (c == '(' && name[i + 1] == ')' && i >= 8 && !strncmp(name + i - 8, "operator", 8)) {
			i++; /* "operator()" is a name, not a parameter list */
			continue;
		}
		if ((c == '(' || c == '<') && depth == 0 && i > 0) {
			end = i;
			break;
		}
		if (c == '<' || c == '(')
			depth++;
		else if ((c == '>' || c == ')') && depth > 0)
			depth--;
	}
	size_t start = 0;
	depth = 0;
	for (size_t i = 0; i + 1 < end; i++) {
		if (name[i] == '<' || name[i] == '(')
			depth++;
		else if ((name[i] == '>' || name[i] == ')') && depth > 0)
			depth--;
		else if (depth == 0 && name[i] == ':' && name[i + 1] == ':')
			start = i + 2;
		else if (depth == 0 && name[i] == ' ')
			start = i + 1; /* a return type: "void k(...)" */
	}
	strbuf_reset(out);
	strbuf_add(out, name + start, end > start ? end - start : 0);
	if (!out->len)
		strbuf_addstr(out, name);
}

enum { FLOW_STARTED = 1, FLOW_WORK_PASSED = 2 };

static const char *truncated_name(struct truncated *t, const char *full)
{
	if (2 * (t->count + 1) > t->slot_count) {
		const char **old_full = t->full;
		char **old_names = t->names;
		size_t old_count = t->slot_count;
		t->slot_count = old_count ? 2 * old_count : 64;
		t->full = xcalloc(t->slot_count, sizeof(*t->full));
		t->names = xcalloc(t->slot_count, sizeof(*t->names));
		for (size_t i = 0; i < old_count; i++) {
			if (!old_full[i])
				continue;
			size_t j = (size_t)hash_int((uintptr_t)old_full[i]) & (t->slot_count - 1);
			while (t->full[j])
				j = (j + 1) & (t->slot_count - 1);
			t->full[j] = old_full[i];
			t->names[j] = old_names[i];
		}
		free(old_full);
		free(old_names);
	}
	size_t i = (size_t)hash_int((uintptr_t)full) & (t->slot_count - 1);
	for (; t->full[i]; i = (i + 1) & (t->slot_count - 1))
		if (t->full[i] == full)
			return t->names[i];
	struct strbuf name = STRBUF_INIT;
	writer_truncate_name(full, &name);
	t->full[i] = full;
	t->names[i] = strbuf_detach(&name);
	t->count++;
	return t->names[i];
}

static void truncated_release(struct truncated *t)
{
	for (size_t i = 0; i < t->slot_count; i++)
		free(t->names[i]);
	free(t->full);
	free(t->names);
}




static int flow_end_compare(const void *a, const void *b)
{
	const struct flow_end *x = a, *y = b;
	if (x->process_id != y->process_id)
		return x->process_id < y->process_id ? -1 : 1;
	return (x->correlation_id > y->correlation_id) - (x->correlation_id < y->correlation_id);
}

static int flow_end_order(const void *a, const void *b, void *arg)
{
	(void)arg;
	return flow_end_compare(a, b);
}

void export_flows_split(struct flows *f, unsigned parts)
{
	f->parts = parts < 1 ? 1 : parts > EXPORT_FLOW_PARTS ? EXPORT_FLOW_PARTS : parts;
}

int export_flows_add(struct flows *f, unsigned part, int64_t process_id,
		     int64_t correlation_id, struct error *err)
{
	if (!correlation_id)
		return 0;
	if (!f->adding[part])
		f->adding[part] = extsort_begin(sizeof(struct flow_end),
						extsort_memory() / (f->parts ? f->parts : 1),
						flow_end_order, NULL);
	struct flow_end end = { process_id, correlation_id, 0 };
	return extsort_add(f->adding[part], &end, err);
}

/* Called once every piece of device work was added: the parts merged, without repeats. */
int export_flows_ready(struct flows *f, struct error *err)
{
	const struct flow_end *heads[EXPORT_FLOW_PARTS] = { NULL };
	int any = 0, rc = 0;
	for (unsigned p = 0; p < EXPORT_FLOW_PARTS; p++) {
		const void *next;
		int got = 0;
		if (f->adding[p] && (rc = extsort_sorted(f->adding[p], err)) == 0)
			got = extsort_next(f->adding[p], &next, err);
		if (rc < 0 || got < 0) {
			rc = -1;
			goto out;
		}
		heads[p] = got ? next : NULL;
		any |= got;
	}
	if (!any)
		goto out;
	if ((rc = tempfile_open(&f->file, err)) < 0)
		goto out;
	f->has_file = 1;
	struct record_writer w;
	record_writer_begin(&w, &f->file, sizeof(struct flow_end), 1 << 20);
	struct flow_end last = { 0, 0, 0 };
	for (;;) {
		int first = -1;
		for (int p = 0; p < EXPORT_FLOW_PARTS; p++)
			if (heads[p] && (first < 0 || flow_end_compare(heads[p], heads[first]) < 0))
				first = p;
		if (first < 0)
			break;
		if (!f->count || flow_end_compare(&last, heads[first])) {
			last = *heads[first];
			f->count++;
			if ((rc = record_writer_add(&w, &last, err)) < 0)
				break;
		}
		const void *next;
		int got = extsort_next(f->adding[first], &next, err);
		if (got < 0) {
			rc = -1;
			break;
		}
		heads[first] = got ? next : NULL;
	}
	if (record_writer_end(&w, err))
		rc = -1;
out:
	for (unsigned p = 0; p < EXPORT_FLOW_PARTS; p++) {
		extsort_free(f->adding[p]);
		f->adding[p] = NULL;
	}
	if (rc == 0 && f->count) {
		void *map = mmap(NULL, f->file.size, PROT_READ | PROT_WRITE, MAP_SHARED, f->file.fd, 0);
		if (map == MAP_FAILED)
			return error_set(err, "cannot map a temporary file: %s", strerror(errno));
		f->work = map;
	}
	return rc < 0 ? -1 : 0;
}

static void flows_release(struct flows *f)
{
	for (unsigned p = 0; p < EXPORT_FLOW_PARTS; p++)
		extsort_free(f->adding[p]);
	if (f->work)
		munmap(f->work, f->file.size);
	if (f->has_file)
		tempfile_close(&f->file);
	memset(f, 0, sizeof(*f));
}

/* Whether e, an API call or device work, carries its flow. */
static int flows_link(struct flows *f, const struct event *e)
{
	struct flow_end key = { e->process_id, e->correlation_id };
	size_t *next = &f->next[e->kind == EVENT_API_CALL ? 0 : 1];
	size_t lo = 0, hi = f->count;
	if (*next < f->count && flow_end_compare(&f->work[*next], &key) >= 0 &&
	    (*next == 0 || flow_end_compare(&f->work[*next - 1], &key) < 0))
		lo = hi = *next; /* where the binary search below would end */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (flow_end_compare(&f->work[mid], &key) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == f->count || flow_end_compare(&f->work[lo], &key)) {
		*next = lo;
		return 0; /* a call that enqueued nothing recorded */
	}
	*next = lo + 1;
	uint8_t *state = &f->work[lo].state;
	if (e->kind == EVENT_API_CALL) {
		if (*state & FLOW_WORK_PASSED)
			return 0; /* its work went by first: too late to start a flow */
		*state |= FLOW_STARTED;
		return 1;
	}
	if (*state & FLOW_STARTED)
		return 1;
	*state |= FLOW_WORK_PASSED;
	return 0;
}


void export_counters_add(struct counter_index *ci, int64_t process_id, int64_t correlation_id,
			 const char *name, double value)
{
	if (ci->count == ci->alloc) {
		ci->alloc = ci->alloc ? ci->alloc * 2 : 256;
		ci->keys = xrealloc(ci->keys, ci->alloc * sizeof(*ci->keys));
		ci->values = xrealloc(ci->values, ci->alloc * sizeof(*ci->values));
	}
	ci->keys[ci->count][0] = process_id;
	ci->keys[ci->count][1] = correlation_id;
	ci->values[ci->count++] = (struct event_counter){ name, value };
}

static int key_below(const int64_t key[2], int64_t process_id, int64_t correlation_id)
{
	return key[0] < process_id || (key[0] == process_id && key[1] < correlation_id);
}

/* Points a kernel event at its counters. */
static void counters_attach(const struct counter_index *ci, struct event *e)
{
	size_t lo = 0, hi = ci->count;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (key_below(ci->keys[mid], e->process_id, e->correlation_id))
			lo = mid + 1;
		else
			hi = mid;
	}
	size_t end = lo;
	while (end < ci->count && ci->keys[end][0] == e->process_id &&
	       ci->keys[end][1] == e->correlation_id)
		end++;
	e->kernel.counters = ci->values + lo;
	e->kernel.counter_count = end - lo;
}


int export_run_begin(struct export_run *run, const struct writer_ops *const *writers,
		     int count, const struct output_options *options, struct error *err)
{
	memset(run, 0, sizeof(*run));
	run->writers = writers;
	run->count = count;
	run->options = options;
	if (count > 8)
		return error_set(err, "too many output formats");
	for (; run->begun < count; run->begun++) {
		run->timeline |= writers[run->begun]->timeline;
		if (writers[run->begun]->begin(&run->states[run->begun], options, err))
			return -1;
	}
	return 0;
}

/* Whether the window of the options leaves e out: a timed event wholly before its
 * process's start + from, or after its start + to. */
static int outside_window(struct export_run *run, const struct event *e)
{
	const struct output_options *o = run->options;
	if (e->kind == EVENT_PROCESS) {
		run->starts = xrealloc(run->starts, (run->start_count + 1) * sizeof(*run->starts));
		run->starts[run->start_count].process_id = e->process_id;
		run->starts[run->start_count++].start_ns = e->start_ns;
		return 0;
	}
	if (e->kind == EVENT_AGENT || e->kind == EVENT_THREAD)
		return 0;
	int64_t start = 0;
	for (size_t i = run->start_count; i-- > 0;)
		if (run->starts[i].process_id == e->process_id) {
			start = run->starts[i].start_ns;
			break;
		}
	int64_t end = e->end_ns > e->start_ns ? e->end_ns : e->start_ns;
	return end - start < o->window_from_ns ||
	       (o->window_to_ns > 0 && e->start_ns - start > o->window_to_ns);
}

int export_run_event(struct export_run *run, struct event *e, struct error *err)
{
	if (++run->events % 8192 == 0)
		progress_set(run->progress, run->events);
	if ((run->options->window_from_ns > 0 || run->options->window_to_ns > 0) &&
	    outside_window(run, e)) {
		run->outside++;
		return 0;
	}
	if (e->kind == EVENT_KERNEL && run->options->truncate_kernels)
		e->name = truncated_name(&run->truncated, e->name);
	if (e->kind == EVENT_KERNEL && run->counters.count)
		counters_attach(&run->counters, e);
	if (run->timeline && e->correlation_id && (e->kind == EVENT_API_CALL || e->kind == EVENT_KERNEL ||
				  e->kind == EVENT_MEMORY_COPY))
		e->linked = flows_link(&run->flows, e);
	if (run->timeline && e->kind == EVENT_API_CALL && run->launch_stacks.count)
		e->api.call_stack = launch_stacks_find(&run->launch_stacks, e->process_id,
						       e->correlation_id);
	for (int w = 0; w < run->count; w++)
		if (run->writers[w]->event(run->states[w], e, err))
			return -1;
	return 0;
}

/* Ends every writer that began: normally, or discarding its files when failed. */
int export_run_end(struct export_run *run, int failed, struct strbuf *written,
		   struct error *err)
{
	int rc = failed ? -1 : 0;
	for (int w = 0; w < run->begun; w++) {
		struct error end_err;
		if (run->writers[w]->end(run->states[w], failed, written, &end_err) && rc == 0) {
			*err = end_err;
			rc = -1;
		}
	}
	truncated_release(&run->truncated);
	free(run->counters.keys);
	free(run->counters.values);
	flows_release(&run->flows);
	launch_stacks_release(&run->launch_stacks);
	free(run->starts);
	progress_task_end(run->progress);
	return rc;
}


void export_event_from_slice(const struct sample_stacks *stacks, const struct sample_slice *s,
			     struct event *e)
{
	const struct stack_frame *f = &stacks->frames[s->frame];
	e->kind = EVENT_SAMPLE;
	e->tid = s->tid;
	e->start_ns = s->start;
	e->end_ns = s->end;
	e->name = f->function;
	e->sample.module = f->module;
	e->sample.depth = s->depth;
}
