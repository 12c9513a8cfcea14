/* The export of a recording (a spool read whole): the same events as export_database()
 * gives, from the records, in the same order (see writer.h). */
#include <stdlib.h>
#include <string.h>

#include "analysis/unwind.h"
#include "core/record-fields.h"
#include "core/record.h"
#include "util/sort.h"
#include "writer/export-run.h"
#include "writer/writer.h"

static void event_from_agent(const struct recording *rec, const struct record_agent *r,
			     struct event *e, char uuid[RECORD_UUID_TEXT])
{
	record_uuid_text(r->uuid, uuid);
	e->agent.uuid = uuid;
	e->kind = EVENT_AGENT;
	e->pid = rec->process->pid;
	e->agent.index = r->id;
	e->agent.type_name = record_agent_type_name(r->type);
	e->name = recording_string(rec, r->name_id);
	e->agent.vendor_name = recording_string(rec, r->vendor_name_id);
	e->agent.driver_version = recording_string(rec, r->driver_version_id);
	e->agent.vendor_id = r->vendor_id;
	e->agent.compute_units = r->compute_units;
	e->agent.max_clock_mhz = r->max_clock_mhz;
	e->agent.global_memory_bytes = (int64_t)r->global_memory_bytes;
	e->agent.local_memory_bytes = (int64_t)r->local_memory_bytes;
	e->agent.max_workgroup_size = r->max_workgroup_size;
	for (int i = 0; i < 3; i++)
		e->agent.max_workgroup[i] = r->max_workgroup_dim[i];
	e->agent.pci_domain = r->pci_domain;
	e->agent.pci_bus = r->pci_bus;
	e->agent.pci_device = r->pci_device;
	e->agent.pci_function = r->pci_function;
	e->agent.compute_major = r->compute_major;
	e->agent.compute_minor = r->compute_minor;
	e->agent.warp_size = r->warp_size;
	e->agent.l2_cache_bytes = r->l2_cache_bytes;
	e->agent.memory_bandwidth = (int64_t)r->memory_bandwidth;
	e->agent.device_index = r->device_index;
}

/* The lists of core/record-fields.h: each field from the resolved record. */
#define FIELD_INT(value) (value)
#define FIELD_STRING(id) recording_string(rec, id)
#define FROM_RECORD(column, value, event, to_event) event = to_event(value);

static void event_from_kernel(const struct recording *rec, const struct record_kernel *r,
			      struct event *e)
{
	struct resolved_kernel resolved, *k = &resolved;
	recording_resolve_kernel(rec, r, k);
	e->kind = EVENT_KERNEL;
	e->pid = rec->process->pid;
	KERNEL_FIELDS(FROM_RECORD)
	e->name = recording_string(rec, k->name_id);
}

static void event_from_copy(const struct recording *rec, const struct record_memory_copy *r,
			    struct event *e)
{
	struct resolved_copy resolved, *k = &resolved;
	recording_resolve_copy(rec, r, k);
	e->kind = EVENT_MEMORY_COPY;
	e->pid = rec->process->pid;
	COPY_FIELDS(FROM_RECORD)
}

static void event_from_allocation(const struct recording *rec,
				  const struct record_memory_allocation *r, struct event *e)
{
	struct resolved_allocation resolved, *k = &resolved;
	recording_resolve_allocation(rec, r, k);
	e->kind = EVENT_MEMORY_ALLOCATION;
	e->pid = rec->process->pid;
	ALLOCATION_FIELDS(FROM_RECORD)
}

static void event_from_api(const struct recording *rec, const struct record_api_call *k,
			   struct event *e)
{
	e->kind = EVENT_API_CALL;
	e->pid = rec->process->pid;
	API_CALL_FIELDS(FROM_RECORD)
}

#undef FROM_RECORD
#undef FIELD_STRING
#undef FIELD_INT

static int completion_by_request(const void *a, const void *b)
{
	const struct record_mpi_completion *x = *(const struct record_mpi_completion *const *)a;
	const struct record_mpi_completion *y = *(const struct record_mpi_completion *const *)b;
	return x->request < y->request ? -1 : x->request > y->request;
}

/* The completion of request in completions (sorted by request), NULL when none. */
static const struct record_mpi_completion *completion_of(const struct record_list *completions,
							   uint64_t request)
{
	size_t lo = 0, hi = request ? completions->count : 0;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct record_mpi_completion *d = (const void *)completions->items[mid];
		if (d->request == request)
			return d;
		if (d->request < request)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* An MPI call as export.c's fill_mpi() reads it from a database. */
static void event_from_mpi(const struct recording *rec, const struct record_list *completions,
			   const struct record_mpi_call *r, struct event *e)
{
	const struct record_mpi_completion *d = completion_of(completions, r->request);
	e->kind = EVENT_API_CALL;
	e->pid = rec->process->pid;
	e->tid = r->tid;
	e->name = recording_string(rec, r->function_id);
	e->start_ns = (int64_t)r->start_ns;
	e->end_ns = (int64_t)r->end_ns;
	e->correlation_id = (int64_t)r->call_id;
	e->api.domain = record_communication_name(r->domain);
	e->api.mpi = 1;
	e->api.communicator = r->communicator_id ? recording_string(rec, r->communicator_id) : "";
	e->api.communicator_size = r->communicator_size;
	e->api.peer = d && d->peer >= 0 ? d->peer : r->peer;
	e->api.tag = d && d->tag >= 0 ? d->tag : r->tag;
	e->api.root = r->root;
	e->api.result = r->result;
	e->api.bytes_sent = (int64_t)r->bytes_sent;
	e->api.bytes_received = (int64_t)(d && d->bytes_received ? d->bytes_received
							       : r->bytes_received);
	e->api.sequence = (int64_t)r->sequence;
	e->api.request = (int64_t)r->request;
	e->api.completed_ns = d ? (int64_t)d->time_ns : 0;
}

static void event_from_marker(const struct recording *rec, const struct recording_marker *m,
			      struct event *e)
{
	e->kind = EVENT_MARKER;
	e->pid = rec->process->pid;
	e->tid = m->tid;
	e->name = recording_string(rec, m->name_id);
	e->start_ns = (int64_t)m->start_ns;
	e->end_ns = (int64_t)m->end_ns;
	e->marker.category = record_marker_domain(m->kind);
	e->marker.domain = m->domain_id ? recording_string(rec, m->domain_id) : "";
	e->marker.module = m->module_id ? recording_string(rec, m->module_id) : "";
	e->marker.kind = m->kind;
	e->marker.range_id = (int64_t)m->id;
	e->marker.parent_id = (int64_t)m->parent_id;
	e->marker.end_tid = m->end_tid;
	e->marker.ended = m->ended;
}

static void event_from_metric(const struct recording *rec, const struct record_metric *m,
			      struct event *e)
{
	const struct record_metric_series *r = recording_metric_series(rec, m->series_id);
	e->kind = EVENT_METRIC;
	e->pid = rec->process->pid;
	e->start_ns = e->end_ns = (int64_t)m->time_ns;
	e->metric.series = m->series_id;
	e->metric.value = m->value;
	/* the names are NUL-terminated by the writer; a corrupt spool's are cut at the field */
	e->name = r && memchr(r->name, 0, sizeof(r->name)) ? r->name : "";
	e->metric.unit = r && memchr(r->unit, 0, sizeof(r->unit)) ? r->unit : "";
	e->metric.source = writer_metric_source_name(r ? r->source : 0);
	e->metric.device = r ? r->device : -1;
	e->metric.pid = r ? r->pid : 0;
}

static void event_from_process(const struct recording *rec, struct event *e)
{
	const struct record_process *p = rec->process;
	e->kind = EVENT_PROCESS;
	e->process.hostname = recording_string(rec, p->hostname_id);
	e->pid = p->pid;
	e->process.ppid = p->ppid;
	e->process.rank = p->rank;
	e->process.size = p->size;
	e->name = e->process.command = recording_string(rec, p->command_id);
	uint64_t began = record_process_life_start(p); /* as the database has it */
	e->start_ns = (int64_t)began;
	e->end_ns = (int64_t)rec->end_ns;
	e->process.realtime_start_ns = (int64_t)(p->realtime_ns - (p->start_ns - began));
	e->process.recording_start_ns = (int64_t)p->start_ns;
}

/* The start of a timed record: kernels, copies, allocations and API calls. */
static uint64_t record_start(const struct record_header *h)
{
	switch (h->type) {
	case RECORD_KERNEL: return ((const struct record_kernel *)h)->start_ns;
	case RECORD_MEMORY_COPY: return ((const struct record_memory_copy *)h)->start_ns;
	case RECORD_MEMORY_ALLOCATION:
		return ((const struct record_memory_allocation *)h)->start_ns;
	case RECORD_MPI_CALL:
		return ((const struct record_mpi_call *)h)->start_ns;
	default: return ((const struct record_api_call *)h)->start_ns;
	}
}

int export_recording(const struct recording *rec, const struct writer_ops *const *writers,
		     int count, const struct output_options *options, struct strbuf *written,
		     struct error *err)
{
	struct export_run run;
	struct event e;
	char uuid[RECORD_UUID_TEXT];
	int failed = export_run_begin(&run, writers, count, options, err);
	for (size_t i = 0; !failed && run.timeline && i < rec->kernels.count; i++)
		failed = export_flows_add(&run.flows, 0, 1, (int64_t)((const struct record_kernel *)
							 rec->kernels.items[i])->correlation_id, err);
	for (size_t i = 0; !failed && run.timeline && i < rec->copies.count; i++)
		failed = export_flows_add(&run.flows, 0, 1, (int64_t)((const struct record_memory_copy *)
							 rec->copies.items[i])->correlation_id, err);
	if (!failed)
		failed = export_flows_ready(&run.flows, err);
	if (run.timeline)
		launch_stacks_from_recording(rec, &run.launch_stacks);
	for (size_t i = 0; i < rec->counters.count; i++) { /* sorted by correlation id */
		const struct record_counter *c = (const void *)rec->counters.items[i];
		export_counters_add(&run.counters, 1, (int64_t)c->correlation_id,
			     recording_string(rec, c->name_id), c->value);
	}
	run.progress = progress_task_begin("files", rec->kernels.count + rec->copies.count +
					   rec->allocations.count + rec->api_calls.count +
					   rec->mpi_calls.count +
					   rec->marker_count);
	/* the order of export_database(): the process, agents, threads, then the timed lists
	 * (each sorted by start) merged by start */
	if (!failed) {
		memset(&e, 0, sizeof(e));
		event_from_process(rec, &e);
		e.process_id = 1;
		failed = export_run_event(&run, &e, err);
	}
	for (size_t i = 0; !failed && i < rec->agents.count; i++) {
		memset(&e, 0, sizeof(e));
		event_from_agent(rec, (const void *)rec->agents.items[i], &e, uuid);
		e.process_id = 1;
		failed = export_run_event(&run, &e, err);
	}
	for (size_t i = 0; !failed && i < rec->thread_names.count; i++) {
		const struct record_thread_name *t = (const void *)rec->thread_names.items[i];
		memset(&e, 0, sizeof(e));
		e.kind = EVENT_THREAD;
		e.process_id = 1;
		e.pid = rec->process->pid;
		e.tid = t->tid;
		e.name = recording_string(rec, t->name_id);
		failed = export_run_event(&run, &e, err);
	}
	const struct record_list *lists[] = { &rec->kernels, &rec->copies, &rec->allocations,
					      &rec->api_calls, &rec->mpi_calls };
	enum { LISTS = 5, MARKERS = LISTS, METRICS, SLICES, SOURCES };
	struct record_list completions = { 0 };
	for (size_t i = 0; i < rec->mpi_completions.count; i++)
		record_list_add(&completions, rec->mpi_completions.items[i]);
	sort_pointers((const void **)completions.items, completions.count, completion_by_request);
	/* the sampled stacks as slices, for the timelines */
	struct sample_slice *slices = NULL;
	size_t slice_count = 0;
	if (run.timeline && rec->stacks && rec->samples.count) {
		struct sample_input *in = xcalloc(rec->samples.count, sizeof(*in));
		for (size_t i = 0; i < rec->samples.count; i++) {
			const struct record_sample *r = (const void *)rec->samples.items[i];
			in[i] = (struct sample_input){ r->tid, (int64_t)r->time_ns, rec->stacks->leaf[i] };
		}
		slice_count = sample_slices_build(rec->stacks, in, rec->samples.count, &slices);
		free(in);
	}
	size_t at[SOURCES] = { 0 }; /* the lists, the markers, the metrics, the stacks' slices */
	while (!failed) {
		int next = -1;
		uint64_t next_start = 0;
		for (int l = 0; l < SOURCES; l++) {
			size_t n = l < LISTS ? lists[l]->count : l == MARKERS ? rec->marker_count
				 : l == METRICS ? rec->metrics.count : slice_count;
			if (at[l] == n)
				continue;
			uint64_t start = l < LISTS ? record_start(lists[l]->items[at[l]])
				       : l == MARKERS ? rec->markers[at[l]].start_ns
				       : l == METRICS ? ((const struct record_metric *)
							 rec->metrics.items[at[l]])->time_ns
				       : (uint64_t)slices[at[l]].start;
			if (next < 0 || start < next_start) {
				next = l;
				next_start = start;
			}
		}
		if (next < 0)
			break;
		memset(&e, 0, sizeof(e));
		if (next == MARKERS) {
			event_from_marker(rec, &rec->markers[at[MARKERS]++], &e);
		} else if (next == METRICS) {
			event_from_metric(rec, (const void *)rec->metrics.items[at[METRICS]++], &e);
		} else if (next == SLICES) {
			export_event_from_slice(rec->stacks, &slices[at[SLICES]++], &e);
			e.pid = rec->process->pid;
		} else {
			const struct record_header *h = lists[next]->items[at[next]++];
			if (h->type == RECORD_KERNEL)
				event_from_kernel(rec, (const void *)h, &e);
			else if (h->type == RECORD_MEMORY_COPY)
				event_from_copy(rec, (const void *)h, &e);
			else if (h->type == RECORD_MEMORY_ALLOCATION)
				event_from_allocation(rec, (const void *)h, &e);
			else if (h->type == RECORD_MPI_CALL)
				event_from_mpi(rec, &completions, (const void *)h, &e);
			else
				event_from_api(rec, (const void *)h, &e);
		}
		e.process_id = 1;
		failed = export_run_event(&run, &e, err);
	}
	record_list_release(&completions);
	free(slices);
	return export_run_end(&run, failed, written, err);
}
