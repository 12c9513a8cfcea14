/* Reads the store's views and streams their rows through the writers (see writer.h). */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/unwind.h"
#include "core/record.h"
#include "store/store.h"
#include "util/hash.h"
#include "util/progress.h"
#include "util/sort.h"
#include "writer/launch-stacks.h"
#include "writer/writer.h"

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

/* The database's strings and processes, held in memory while exporting so that rows
 * are read from the tables without a join per row. */
struct names {
	int64_t *ids;      /* sorted */
	char **texts;
	size_t count;
	int64_t *process_ids, *pids;
	size_t process_count;
	struct series {              /* metric series, by process and series id */
		int64_t process_id, id, device, pid;
		const char *source;
		char *name, *unit;
	} *series;
	size_t series_count;
};

const char *writer_metric_source_name(int64_t source)
{
	return source == METRIC_HOST ? "HOST" : source == METRIC_PROCESS ? "PROCESS"
	       : source == METRIC_GPU ? "GPU" : "UNKNOWN";
}

void writer_metric_label(struct strbuf *out, const char *source, int64_t device, int64_t pid,
			 const char *name)
{
	if (!strcmp(source, "GPU"))
		strbuf_addf(out, "GPU %lld ", (long long)device);
	else if (!strcmp(source, "PROCESS"))
		strbuf_addf(out, "process %lld ", (long long)pid);
	else if (device >= 0)
		strbuf_addf(out, "CPU %lld ", (long long)device);
	else
		strbuf_addstr(out, "machine ");
	strbuf_addstr(out, name);
}

static const struct series *series_of(const struct names *n, int64_t process_id, int64_t id)
{
	size_t lo = 0, hi = n->series_count;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct series *x = &n->series[mid];
		if (x->process_id < process_id || (x->process_id == process_id && x->id < id))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n->series_count && n->series[lo].process_id == process_id &&
	       n->series[lo].id == id ? &n->series[lo] : NULL;
}

static const char *name_of(const struct names *n, int64_t id)
{
	size_t lo = 0, hi = n->count;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (n->ids[mid] < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n->count && n->ids[lo] == id ? n->texts[lo] : "";
}

static int64_t pid_of(const struct names *n, int64_t process_id)
{
	for (size_t i = 0; i < n->process_count; i++)
		if (n->process_ids[i] == process_id)
			return n->pids[i];
	return 0;
}

static void names_release(struct names *n)
{
	for (size_t i = 0; i < n->count; i++)
		free(n->texts[i]);
	free(n->ids);
	free(n->texts);
	free(n->process_ids);
	free(n->pids);
	for (size_t i = 0; i < n->series_count; i++) {
		free(n->series[i].name);
		free(n->series[i].unit);
	}
	free(n->series);
	memset(n, 0, sizeof(*n));
}

static int names_load(sqlite3 *db, struct names *n, struct error *err)
{
	sqlite3_stmt *s;
	size_t alloc = 0;
	memset(n, 0, sizeof(*n));
	if (store_prepare(db, "SELECT id, string FROM gpuprof_string ORDER BY id", &s, err))
		return -1;
	while (sqlite3_step(s) == SQLITE_ROW) {
		if (n->count == alloc) {
			alloc = alloc ? alloc * 2 : 256;
			n->ids = xrealloc(n->ids, alloc * sizeof(*n->ids));
			n->texts = xrealloc(n->texts, alloc * sizeof(*n->texts));
		}
		const unsigned char *t = sqlite3_column_text(s, 1);
		n->ids[n->count] = sqlite3_column_int64(s, 0);
		n->texts[n->count++] = xstrdup(t ? (const char *)t : "");
	}
	sqlite3_finalize(s);
	if (store_prepare(db, "SELECT id, pid FROM gpuprof_process", &s, err))
		return -1;
	alloc = 0;
	while (sqlite3_step(s) == SQLITE_ROW) {
		if (n->process_count == alloc) {
			alloc = alloc ? alloc * 2 : 4;
			n->process_ids = xrealloc(n->process_ids, alloc * sizeof(int64_t));
			n->pids = xrealloc(n->pids, alloc * sizeof(int64_t));
		}
		n->process_ids[n->process_count] = sqlite3_column_int64(s, 0);
		n->pids[n->process_count++] = sqlite3_column_int64(s, 1);
	}
	sqlite3_finalize(s);
	if (!store_has_table(db, "gpuprof_metric_series")) /* schema 3.0 */
		return 0;
	if (store_prepare(db, "SELECT process_id, series_id, source, device, pid, name, unit "
			  "FROM gpuprof_metric_series ORDER BY process_id, series_id", &s, err))
		return -1;
	alloc = 0;
	while (sqlite3_step(s) == SQLITE_ROW) {
		if (n->series_count == alloc) {
			alloc = alloc ? alloc * 2 : 64;
			n->series = xrealloc(n->series, alloc * sizeof(*n->series));
		}
		struct series *x = &n->series[n->series_count++];
		x->process_id = sqlite3_column_int64(s, 0);
		x->id = sqlite3_column_int64(s, 1);
		x->source = writer_metric_source_name(sqlite3_column_int64(s, 2));
		x->device = sqlite3_column_int64(s, 3);
		x->pid = sqlite3_column_int64(s, 4);
		const unsigned char *name = sqlite3_column_text(s, 5), *unit = sqlite3_column_text(s, 6);
		x->name = xstrdup(name ? (const char *)name : "");
		x->unit = xstrdup(unit ? (const char *)unit : "");
	}
	sqlite3_finalize(s);
	return 0;
}

static const char *text(sqlite3_stmt *s, int column)
{
	const unsigned char *t = sqlite3_column_text(s, column);
	return t ? (const char *)t : "";
}

#define I64(column) sqlite3_column_int64(s, column)

static void fill_agent(sqlite3_stmt *s, const struct names *n, struct event *e)
{
	e->kind = EVENT_AGENT;
	e->pid = I64(0);
	e->agent.index = I64(1);
	e->agent.type_name = text(s, 2);
	e->name = text(s, 3);
	e->agent.vendor_name = text(s, 4);
	e->agent.driver_version = text(s, 5);
	e->agent.vendor_id = I64(6);
	e->agent.compute_units = I64(7);
	e->agent.max_clock_mhz = I64(8);
	e->agent.global_memory_bytes = I64(9);
	e->agent.local_memory_bytes = I64(10);
	e->agent.max_workgroup_size = I64(11);
	for (int i = 0; i < 3; i++)
		e->agent.max_workgroup[i] = I64(12 + i);
	e->agent.uuid = text(s, 15);
	e->agent.pci_domain = I64(16);
	e->agent.pci_bus = I64(17);
	e->agent.pci_device = I64(18);
	e->agent.pci_function = I64(19);
	e->agent.compute_major = I64(20);
	e->agent.compute_minor = I64(21);
	e->agent.warp_size = I64(22);
	e->agent.l2_cache_bytes = I64(23);
	e->agent.memory_bandwidth = I64(24);
	e->agent.device_index = I64(25);
	e->process_id = I64(26);
}

static void fill_process(sqlite3_stmt *s, const struct names *n, struct event *e)
{
	e->kind = EVENT_PROCESS;
	e->process_id = I64(0);
	e->process.hostname = text(s, 1);
	e->pid = I64(2);
	e->process.ppid = I64(3);
	e->process.rank = I64(4);
	e->process.size = I64(5);
	e->name = e->process.command = text(s, 6);
	e->start_ns = I64(7);
	e->end_ns = I64(8);
	e->process.realtime_start_ns = I64(9);
}

static void fill_kernel(sqlite3_stmt *s, const struct names *n, struct event *e)
{
	e->kind = EVENT_KERNEL;
	e->process_id = I64(0);
	e->pid = pid_of(n, e->process_id);
	e->tid = I64(1);
	e->kernel.agent = I64(2);
	e->kernel.queue = I64(3);
	e->kernel.kernel_id = I64(4);
	e->name = name_of(n, I64(4));
	e->correlation_id = I64(5);
	e->kernel.dispatch_id = I64(6);
	e->start_ns = I64(7);
	e->end_ns = I64(8);
	for (int i = 0; i < 3; i++) {
		e->kernel.grid[i] = I64(9 + i);
		e->kernel.workgroup[i] = I64(12 + i);
	}
	e->kernel.local_memory_bytes = I64(15);
	e->kernel.private_memory_bytes = I64(16);
	e->kernel.status = I64(17);
	e->kernel.registers = I64(18);
	e->kernel.static_local_memory_bytes = I64(19);
	e->kernel.dynamic_local_memory_bytes = I64(20);
	e->kernel.stream = I64(21);
	e->kernel.context = I64(22);
	e->kernel.graph = I64(23);
	e->kernel.graph_node = I64(24);
	e->kernel.range_id = I64(25);
}

static void fill_copy(sqlite3_stmt *s, const struct names *n, struct event *e)
{
	e->kind = EVENT_MEMORY_COPY;
	e->process_id = I64(0);
	e->pid = pid_of(n, e->process_id);
	e->tid = I64(1);
	e->name = name_of(n, I64(2));
	e->copy.operation = record_operation_name((uint32_t)I64(3));
	e->copy.direction = record_direction_name((uint32_t)I64(4));
	e->copy.src_agent = I64(5);
	e->copy.dst_agent = I64(6);
	e->copy.queue = I64(7);
	e->copy.bytes = I64(8);
	e->start_ns = I64(9);
	e->end_ns = I64(10);
	e->correlation_id = I64(11);
	e->copy.status = I64(12);
	e->copy.src_memory_kind = record_memory_kind_name((uint32_t)I64(13));
	e->copy.dst_memory_kind = record_memory_kind_name((uint32_t)I64(14));
	e->copy.stream = I64(15);
}

static void fill_allocation(sqlite3_stmt *s, const struct names *n, struct event *e)
{
	e->kind = EVENT_MEMORY_ALLOCATION;
	e->process_id = I64(0);
	e->pid = pid_of(n, e->process_id);
	e->tid = I64(1);
	e->allocation.agent = I64(2);
	e->allocation.operation = record_allocation_name((uint32_t)I64(3));
	e->allocation.memory_kind = record_memory_kind_name((uint32_t)I64(4));
	e->allocation.address = I64(5);
	e->allocation.bytes = I64(6);
	e->correlation_id = I64(7);
	e->start_ns = I64(8);
	e->end_ns = I64(9);
	e->allocation.stream = I64(10);
}

static void fill_api(sqlite3_stmt *s, const struct names *n, struct event *e)
{
	e->kind = EVENT_API_CALL;
	e->process_id = I64(0);
	e->pid = pid_of(n, e->process_id);
	e->api.domain = record_domain_name((uint32_t)I64(1));
	e->name = name_of(n, I64(2));
	e->tid = I64(3);
	e->start_ns = I64(4);
	e->end_ns = I64(5);
	e->correlation_id = I64(6);
	e->api.result = I64(7);
}

static void fill_thread(sqlite3_stmt *s, const struct names *n, struct event *e)
{
	e->kind = EVENT_THREAD;
	e->process_id = I64(0);
	e->pid = pid_of(n, e->process_id);
	e->tid = I64(1);
	e->name = name_of(n, I64(2));
}

static void fill_marker(sqlite3_stmt *s, const struct names *n, struct event *e)
{
	e->kind = EVENT_MARKER;
	e->process_id = I64(0);
	e->pid = pid_of(n, e->process_id);
	e->tid = I64(1);
	e->marker.end_tid = I64(2);
	e->marker.kind = I64(3);
	e->marker.category = record_marker_domain((uint32_t)e->marker.kind);
	e->marker.domain = I64(4) ? name_of(n, I64(4)) : "";
	e->name = name_of(n, I64(5));
	e->marker.range_id = I64(6);
	e->marker.parent_id = I64(7);
	e->start_ns = I64(8);
	e->end_ns = I64(9);
	e->marker.ended = (int)I64(10);
}

static void fill_metric(sqlite3_stmt *s, const struct names *n, struct event *e)
{
	e->kind = EVENT_METRIC;
	e->process_id = I64(0);
	e->pid = pid_of(n, e->process_id);
	e->metric.series = I64(1);
	e->start_ns = e->end_ns = I64(2);
	e->metric.value = sqlite3_column_double(s, 3);
	const struct series *x = series_of(n, e->process_id, e->metric.series);
	e->name = x ? x->name : "";
	e->metric.unit = x ? x->unit : "";
	e->metric.source = x ? x->source : "UNKNOWN";
	e->metric.device = x ? x->device : -1;
	e->metric.pid = x ? x->pid : 0;
}

#undef I64

/* The processes, agents and threads, then the timed rows: each table is read in rowid order,
 * which the loader made start-time order, and the tables are merged by start. */
struct query {
	const char *sql;
	void (*fill)(sqlite3_stmt *, const struct names *, struct event *);
	int start_column; /* -1: read whole before the timed tables */
	const char *since_3_1; /* a table databases of schema 3.0 lack: read when present */
};

static const struct query queries[] = {
	{ "SELECT id, hostname, pid, ppid, rank, size, command, start, end, realtime_start "
	  "FROM gpuprof_process ORDER BY id", fill_process, -1 },
	{ "SELECT pid, agent_id, type, name, vendor_name, driver_version, vendor_id, "
	  "compute_units, max_clock_mhz, global_memory_bytes, local_memory_bytes, "
	  "max_workgroup_size, max_workgroup_x, max_workgroup_y, max_workgroup_z, uuid, "
	  "pci_domain, pci_bus, pci_device, pci_function, compute_major, compute_minor, "
	  "warp_size, l2_cache_bytes, memory_bandwidth, device_index, process_id "
	  "FROM agents ORDER BY process_id, agent_id", fill_agent, -1 },
	{ "SELECT process_id, tid, name_id FROM gpuprof_thread ORDER BY process_id, tid",
	  fill_thread, -1 },
	{ "SELECT process_id, tid, agent_index, queue_index, name_id, correlation_id, "
	  "dispatch_id, start, end, grid_x, grid_y, grid_z, workgroup_x, workgroup_y, "
	  "workgroup_z, local_memory_bytes, private_memory_bytes, status, registers, "
	  "static_local_memory_bytes, dynamic_local_memory_bytes, stream_id, context_id, "
	  "graph_id, graph_node_id, range_id FROM gpuprof_kernel ORDER BY id", fill_kernel, 7 },
	{ "SELECT process_id, tid, function_id, operation, direction, src_agent_index, "
	  "dst_agent_index, queue_index, bytes, start, end, correlation_id, status, "
	  "src_memory_kind, dst_memory_kind, stream_id "
	  "FROM gpuprof_memory_copy ORDER BY id", fill_copy, 9 },
	{ "SELECT process_id, tid, agent_index, operation, memory_kind, address, bytes, "
	  "correlation_id, start, end, stream_id "
	  "FROM gpuprof_memory_allocation ORDER BY id", fill_allocation, 8 },
	{ "SELECT process_id, domain, function_id, tid, start, end, correlation_id, result "
	  "FROM gpuprof_api_call ORDER BY id", fill_api, 4 },
	{ "SELECT process_id, tid, end_tid, kind, domain_id, name_id, range_id, parent_id, "
	  "start, end, ended FROM gpuprof_marker ORDER BY id", fill_marker, 8 },
	{ "SELECT process_id, series_id, time, value FROM gpuprof_metric ORDER BY id",
	  fill_metric, 2, "gpuprof_metric" },
};

#define QUERY_COUNT (sizeof(queries) / sizeof(queries[0]))

/* Kernel names truncated once each, kept for the whole export (see writer.h): by the
 * address of the full name, which is stable too. */
struct truncated {
	const char **full;
	char **names;
	size_t count, slot_count;
};

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

/* The ends of the flows that join an API call to the device work it enqueued (see
 * timeline_flow_id()), so that each flow is written with both its ends or none. The
 * device work in the output is known before the export begins; the calls are met as
 * they go by. Events come in start order, a call before its work: a call starts a flow
 * when its work is in the output and has not gone by, and the work ends the flow when
 * its call went by first. */
struct flow_end {
	int64_t process_id, correlation_id;
};

enum { FLOW_STARTED = 1, FLOW_WORK_PASSED = 2 };

struct flows {
	struct flow_end *work; /* sorted, without repeats */
	uint8_t *state;
	size_t count, alloc;
};

static void flows_add(struct flows *f, int64_t process_id, int64_t correlation_id)
{
	if (!correlation_id)
		return;
	if (f->count == f->alloc) {
		f->alloc = f->alloc ? 2 * f->alloc : 1024;
		f->work = xrealloc(f->work, f->alloc * sizeof(*f->work));
	}
	f->work[f->count++] = (struct flow_end){ process_id, correlation_id };
}

static int flow_end_compare(const void *a, const void *b)
{
	const struct flow_end *x = a, *y = b;
	if (x->process_id != y->process_id)
		return x->process_id < y->process_id ? -1 : 1;
	return (x->correlation_id > y->correlation_id) - (x->correlation_id < y->correlation_id);
}

/* Called once every piece of device work was added. */
static void flows_ready(struct flows *f)
{
	sort_array(f->work, f->count, sizeof(*f->work), flow_end_compare);
	size_t kept = 0;
	for (size_t i = 0; i < f->count; i++)
		if (!kept || flow_end_compare(&f->work[kept - 1], &f->work[i]))
			f->work[kept++] = f->work[i];
	f->count = kept;
	f->state = xcalloc(kept ? kept : 1, 1);
}

/* Whether e, an API call or device work, carries its flow. */
static int flows_link(struct flows *f, const struct event *e)
{
	struct flow_end key = { e->process_id, e->correlation_id };
	size_t lo = 0, hi = f->count;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (flow_end_compare(&f->work[mid], &key) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == f->count || flow_end_compare(&f->work[lo], &key))
		return 0; /* a call that enqueued nothing recorded */
	uint8_t *state = &f->state[lo];
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

/* The kernels' hardware counters, by process and correlation id: kernel events point
 * into values, which stay valid until the export ends. */
struct counter_index {
	int64_t (*keys)[2];           /* process id, correlation id; sorted */
	struct event_counter *values; /* in the order of keys */
	size_t count, alloc;
};

static void counters_add(struct counter_index *ci, int64_t process_id, int64_t correlation_id,
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

/* One pass of events through a set of writers. */
struct export_run {
	const struct writer_ops *const *writers;
	void *states[8];
	int count, begun;
	const struct output_options *options;
	struct truncated truncated;
	int timeline; /* one of the writers is a timeline */
	struct flows flows;
	struct progress_task *progress;
	uint64_t events;
	struct counter_index counters;
	struct launch_stack_index launch_stacks; /* for the timelines' API slices */
};

static int run_begin(struct export_run *run, const struct writer_ops *const *writers,
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

static int run_event(struct export_run *run, struct event *e, struct error *err)
{
	if (++run->events % 8192 == 0)
		progress_set(run->progress, run->events);
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
static int run_end(struct export_run *run, int failed, struct strbuf *written,
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
	free(run->flows.work);
	free(run->flows.state);
	launch_stacks_release(&run->launch_stacks);
	progress_task_end(run->progress);
	return rc;
}

/* Steps s to its next row: 1 for a row, 0 at the end, -1 on error. */
static int step_row(sqlite3 *db, sqlite3_stmt *s, struct error *err)
{
	int step = sqlite3_step(s);
	if (step == SQLITE_ROW)
		return 1;
	if (step == SQLITE_DONE)
		return 0;
	return error_set(err, "cannot read '%s': %s", sqlite3_db_filename(db, "main"),
			 sqlite3_errmsg(db));
}

/* Timed events go from the thread reading the database to a thread running the writers
 * in batches, so that reading and writing overlap. Their strings stay valid (writer.h),
 * so a batch can hold them. */
#define BATCH_EVENTS 1024
#define BATCHES 3

struct pipeline {
	pthread_mutex_t lock;
	pthread_cond_t changed;
	struct {
		struct event events[BATCH_EVENTS];
		int count;
	} batches[BATCHES];
	int head, tail, full; /* batches head.. are full; tail is being filled */
	int done, failed;     /* no more batches; the writers failed */
	struct export_run *run;
	struct error err;
};

static void *pipeline_writer(void *arg)
{
	struct pipeline *p = arg;
	pthread_mutex_lock(&p->lock);
	for (;;) {
		while (!p->full && !p->done)
			pthread_cond_wait(&p->changed, &p->lock);
		if (!p->full)
			break;
		int at = p->head;
		pthread_mutex_unlock(&p->lock);
		int failed = 0;
		for (int i = 0; !failed && i < p->batches[at].count; i++)
			failed = run_event(p->run, &p->batches[at].events[i], &p->err);
		pthread_mutex_lock(&p->lock);
		p->head = (p->head + 1) % BATCHES;
		p->full--;
		pthread_cond_broadcast(&p->changed);
		if (failed) {
			p->failed = 1;
			break;
		}
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

/* Hands the batch being filled to the writers; waits for a free one. Returns -1 when
 * the writers failed. */
static int pipeline_publish(struct pipeline *p)
{
	pthread_mutex_lock(&p->lock);
	p->full++;
	p->tail = (p->tail + 1) % BATCHES;
	pthread_cond_broadcast(&p->changed);
	while (p->full == BATCHES && !p->failed)
		pthread_cond_wait(&p->changed, &p->lock);
	p->batches[p->tail].count = 0;
	int failed = p->failed;
	pthread_mutex_unlock(&p->lock);
	return failed ? -1 : 0;
}

/* About how many events the database holds, for the progress: rows are numbered from 1
 * in each table. */
static uint64_t approximate_events(sqlite3 *db)
{
	sqlite3_stmt *s;
	uint64_t total = 0;
	if (sqlite3_prepare_v2(db, "SELECT (SELECT IFNULL(MAX(id), 0) FROM gpuprof_kernel) + "
			       "(SELECT IFNULL(MAX(id), 0) FROM gpuprof_memory_copy) + "
			       "(SELECT IFNULL(MAX(id), 0) FROM gpuprof_memory_allocation) + "
			       "(SELECT IFNULL(MAX(id), 0) FROM gpuprof_api_call) + "
			       "(SELECT IFNULL(MAX(id), 0) FROM gpuprof_marker)", -1, &s,
			       NULL) != SQLITE_OK)
		return 0;
	if (sqlite3_step(s) == SQLITE_ROW && sqlite3_column_int64(s, 0) > 0)
		total = (uint64_t)sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	return total;
}

/* The device work in the database, for the flows. */
static int load_flows(sqlite3 *db, struct flows *flows, struct error *err)
{
	static const char *const sql[] = {
		"SELECT process_id, correlation_id FROM gpuprof_kernel",
		"SELECT process_id, correlation_id FROM gpuprof_memory_copy",
	};
	for (size_t q = 0; q < sizeof(sql) / sizeof(sql[0]); q++) {
		sqlite3_stmt *s;
		if (store_prepare(db, sql[q], &s, err))
			return -1;
		int row;
		while ((row = step_row(db, s, err)) > 0)
			flows_add(flows, sqlite3_column_int64(s, 0), sqlite3_column_int64(s, 1));
		sqlite3_finalize(s);
		if (row < 0)
			return -1;
	}
	flows_ready(flows);
	return 0;
}

/* The kernels' counters in the database (schema 3.2 and later). */
static int load_counters(sqlite3 *db, const struct names *n, struct counter_index *ci,
			 struct error *err)
{
	sqlite3_stmt *s;
	if (!store_has_table(db, "gpuprof_counter"))
		return 0;
	if (store_prepare(db, "SELECT process_id, correlation_id, name_id, value FROM "
			  "gpuprof_counter ORDER BY process_id, correlation_id, id", &s, err))
		return -1;
	int row;
	while ((row = step_row(db, s, err)) > 0)
		counters_add(ci, sqlite3_column_int64(s, 0), sqlite3_column_int64(s, 1),
			     name_of(n, sqlite3_column_int64(s, 2)),
			     sqlite3_column_type(s, 3) == SQLITE_NULL ? NAN
			     : sqlite3_column_double(s, 3));
	sqlite3_finalize(s);
	return row < 0 ? -1 : 0;
}

/* Hands a timed event to the writers' thread (started on first use), in batches.
 * Returns -1 when the thread cannot start (*pipe stays NULL) or the writers failed. */
static int queue_event(struct export_run *run, struct pipeline **pipe, pthread_t *writer,
		       const struct event *e, struct error *err)
{
	if (!*pipe) {
		struct pipeline *p = xcalloc(1, sizeof(*p));
		pthread_mutex_init(&p->lock, NULL);
		pthread_cond_init(&p->changed, NULL);
		p->run = run;
		if (pthread_create(writer, NULL, pipeline_writer, p)) {
			pthread_mutex_destroy(&p->lock);
			pthread_cond_destroy(&p->changed);
			free(p);
			return error_set(err, "cannot start a thread: %s", strerror(errno));
		}
		*pipe = p;
	}
	struct pipeline *p = *pipe;
	p->batches[p->tail].events[p->batches[p->tail].count++] = *e;
	if (p->batches[p->tail].count == BATCH_EVENTS && pipeline_publish(p)) {
		*err = p->err;
		return -1;
	}
	return 0;
}

static void event_from_slice(const struct sample_stacks *stacks, const struct sample_slice *s,
			     struct event *e);

/* The sampled stacks of a database as slices for the timelines: each process's frames,
 * stack tree and samples loaded, then its slices built (analysis/unwind.h). */
struct database_slices {
	struct sample_stacks *stacks; /* one per process with samples */
	int64_t *process_ids;
	size_t process_count;
	struct {
		struct sample_slice slice;
		size_t process; /* index into stacks */
	} *items;
	size_t count;
};

static int by_slice_start(const void *a, const void *b)
{
	const struct sample_slice *x = a, *y = b; /* the first member of each item */
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return (x->depth > y->depth) - (x->depth < y->depth);
}

static int load_process_slices(sqlite3 *db, int64_t process_id, struct sample_stacks *st,
			       struct database_slices *out, size_t index, struct error *err)
{
	sqlite3_stmt *q;
	memset(st, 0, sizeof(*st));
	int rc = store_prepare(db, "SELECT frame_id, function, module, offset FROM gpuprof_frame "
			       "WHERE process_id = ? ORDER BY frame_id", &q, err);
	if (rc)
		return -1;
	sqlite3_bind_int64(q, 1, process_id);
	while (sqlite3_step(q) == SQLITE_ROW) { /* ids from 1: index id - 1, gaps kept empty */
		int64_t id = sqlite3_column_int64(q, 0);
		if (id < 1 || id > (int64_t)st->frame_count + 1000000)
			continue;
		while (st->frame_count < (size_t)id) {
			st->frames = xrealloc(st->frames, (st->frame_count + 1) * sizeof(*st->frames));
			st->frames[st->frame_count++] = (struct stack_frame){
				xstrdup(""), xstrdup(""), 0, xstrdup(""), 0, 0 };
		}
		struct stack_frame *f = &st->frames[id - 1];
		free(f->function);
		free(f->module);
		f->function = xstrdup(text(q, 1));
		f->module = xstrdup(text(q, 2));
		f->offset = (uint64_t)sqlite3_column_int64(q, 3);
	}
	sqlite3_finalize(q);
	st->nodes = xcalloc(1, sizeof(*st->nodes));
	st->node_count = 1;
	if (store_prepare(db, "SELECT stack_id, parent_id, frame_id FROM gpuprof_stack "
			  "WHERE process_id = ? ORDER BY stack_id", &q, err))
		return -1;
	sqlite3_bind_int64(q, 1, process_id);
	while (sqlite3_step(q) == SQLITE_ROW) {
		int64_t id = sqlite3_column_int64(q, 0), parent = sqlite3_column_int64(q, 1);
		int64_t frame = sqlite3_column_int64(q, 2);
		/* a tree in id order (a caller before its callees); anything else is cut at
		 * the root, as is a frame that does not exist */
		if (id != (int64_t)st->node_count)
			continue;
		st->nodes = xrealloc(st->nodes, (st->node_count + 1) * sizeof(*st->nodes));
		st->nodes[st->node_count++] = (struct stack_node){
			parent >= 0 && parent < id ? (uint32_t)parent : 0,
			frame >= 1 && frame <= (int64_t)st->frame_count ? (uint32_t)(frame - 1) : 0 };
	}
	sqlite3_finalize(q);
	if (!st->frame_count) { /* a frame for the nodes to name, even in a corrupt database */
		st->frames = xcalloc(1, sizeof(*st->frames));
		st->frames[0] = (struct stack_frame){ xstrdup("[unknown]"), xstrdup(""), 0,
						      xstrdup(""), 0, 0 };
		st->frame_count = 1;
	}
	struct sample_input *in = NULL;
	size_t n = 0, alloc = 0;
	if (store_prepare(db, "SELECT tid, time, stack_id FROM gpuprof_sample "
			  "WHERE process_id = ?", &q, err))
		return -1;
	sqlite3_bind_int64(q, 1, process_id);
	while (sqlite3_step(q) == SQLITE_ROW) {
		int64_t leaf = sqlite3_column_int64(q, 2);
		if (n == alloc) {
			alloc = alloc ? 2 * alloc : 1024;
			in = xrealloc(in, alloc * sizeof(*in));
		}
		in[n++] = (struct sample_input){ sqlite3_column_int64(q, 0), sqlite3_column_int64(q, 1),
						 leaf > 0 && leaf < (int64_t)st->node_count
						 ? (uint32_t)leaf : 0 };
	}
	sqlite3_finalize(q);
	struct sample_slice *slices = NULL;
	size_t count = sample_slices_build(st, in, n, &slices);
	free(in);
	out->items = xrealloc(out->items, (out->count + count + 1) * sizeof(*out->items));
	for (size_t i = 0; i < count; i++) {
		out->items[out->count].slice = slices[i];
		out->items[out->count++].process = index;
	}
	free(slices);
	return 0;
}

static int load_slices(sqlite3 *db, struct database_slices *out, struct error *err)
{
	memset(out, 0, sizeof(*out));
	if (!store_has_table(db, "gpuprof_sample")) /* schema 3.0 */
		return 0;
	sqlite3_stmt *q;
	if (store_prepare(db, "SELECT DISTINCT process_id FROM gpuprof_sample ORDER BY 1", &q, err))
		return -1;
	while (sqlite3_step(q) == SQLITE_ROW) {
		out->process_ids = xrealloc(out->process_ids,
					    (out->process_count + 1) * sizeof(*out->process_ids));
		out->process_ids[out->process_count++] = sqlite3_column_int64(q, 0);
	}
	sqlite3_finalize(q);
	out->stacks = xcalloc(out->process_count ? out->process_count : 1, sizeof(*out->stacks));
	for (size_t i = 0; i < out->process_count; i++)
		if (load_process_slices(db, out->process_ids[i], &out->stacks[i], out, i, err))
			return -1;
	sort_array(out->items, out->count, sizeof(*out->items), by_slice_start);
	return 0;
}

static void database_slices_release(struct database_slices *d)
{
	for (size_t i = 0; i < d->process_count; i++)
		sample_stacks_release(&d->stacks[i]);
	free(d->stacks);
	free(d->process_ids);
	free(d->items);
}

int export_database(sqlite3 *db, const struct writer_ops *const *writers, int count,
		    const struct output_options *options, struct strbuf *written,
		    struct error *err)
{
	struct export_run run = { 0 };
	struct names names;
	sqlite3_stmt *stmts[QUERY_COUNT] = { NULL };
	int has_row[QUERY_COUNT] = { 0 };
	struct pipeline *pipe = NULL;
	pthread_t writer;
	struct database_slices slices = { 0 };
	size_t next_slice = 0;
	int failed = names_load(db, &names, err) || run_begin(&run, writers, count, options, err) ||
		     load_counters(db, &names, &run.counters, err) ||
		     (run.timeline && (load_flows(db, &run.flows, err) ||
				       load_slices(db, &slices, err) ||
				       launch_stacks_load(db, &run.launch_stacks, err)));
	if (!failed)
		run.progress = progress_task_begin("files", approximate_events(db));
	for (size_t q = 0; !failed && q < QUERY_COUNT; q++)
		if (!queries[q].since_3_1 || store_has_table(db, queries[q].since_3_1))
			failed = store_prepare(db, queries[q].sql, &stmts[q], err) ||
				 (has_row[q] = step_row(db, stmts[q], err)) < 0;
	while (!failed) {
		/* the untimed queries first, then the timed row that starts first */
		int next = -1;
		int64_t next_start = 0;
		for (size_t q = 0; q < QUERY_COUNT; q++) {
			if (has_row[q] <= 0)
				continue;
			if (queries[q].start_column < 0) {
				next = (int)q;
				break;
			}
			int64_t start = sqlite3_column_int64(stmts[q], queries[q].start_column);
			if (next < 0 || start < next_start) {
				next = (int)q;
				next_start = start;
			}
		}
		/* the sampled stacks' slices, from memory, after the rows that start with them */
		int slice_next = next_slice < slices.count &&
				 (next < 0 || (queries[next].start_column >= 0 &&
					       slices.items[next_slice].slice.start < next_start));
		if (next < 0 && !slice_next)
			break;
		if (slice_next) {
			struct event e;
			memset(&e, 0, sizeof(e));
			size_t process = slices.items[next_slice].process;
			event_from_slice(&slices.stacks[process], &slices.items[next_slice++].slice, &e);
			e.process_id = slices.process_ids[process];
			e.pid = pid_of(&names, e.process_id);
			failed = queue_event(&run, &pipe, &writer, &e, err);
			continue;
		}
		if (queries[next].start_column < 0) { /* written at once: strings of the row */
			struct event e;
			memset(&e, 0, sizeof(e));
			queries[next].fill(stmts[next], &names, &e);
			failed = run_event(&run, &e, err);
		} else {
			struct event e;
			memset(&e, 0, sizeof(e));
			queries[next].fill(stmts[next], &names, &e);
			failed = queue_event(&run, &pipe, &writer, &e, err);
			if (failed && !pipe)
				break;
		}
		if (!failed)
			failed = (has_row[next] = step_row(db, stmts[next], err)) < 0;
	}
	if (pipe) {
		pthread_mutex_lock(&pipe->lock);
		if (!failed && pipe->batches[pipe->tail].count) {
			pipe->full++;
			pipe->tail = (pipe->tail + 1) % BATCHES;
		}
		pipe->done = 1;
		pthread_cond_broadcast(&pipe->changed);
		pthread_mutex_unlock(&pipe->lock);
		pthread_join(writer, NULL);
		if (pipe->failed && !failed) {
			*err = pipe->err;
			failed = 1;
		}
		pthread_mutex_destroy(&pipe->lock);
		pthread_cond_destroy(&pipe->changed);
		free(pipe);
	}
	for (size_t q = 0; q < QUERY_COUNT; q++)
		sqlite3_finalize(stmts[q]);
	int rc = run_end(&run, failed, written, err);
	database_slices_release(&slices);
	names_release(&names);
	return rc;
}

/* ---- the same events from a recording ------------------------------------------------- */

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

static void event_from_kernel(const struct recording *rec, const struct record_kernel *r,
			      struct event *e)
{
	uint32_t tid = r->tid;
	recording_enqueuer(rec, r->correlation_id, &tid, NULL);
	e->kind = EVENT_KERNEL;
	e->pid = rec->process->pid;
	e->tid = tid;
	e->kernel.agent = r->agent_id;
	e->kernel.queue = r->queue_id;
	e->kernel.kernel_id = recording_kernel_name(rec, r);
	e->name = recording_string(rec, (uint32_t)e->kernel.kernel_id);
	e->correlation_id = (int64_t)r->correlation_id;
	e->kernel.dispatch_id = (int64_t)r->dispatch_id;
	e->start_ns = (int64_t)r->start_ns;
	e->end_ns = (int64_t)r->end_ns;
	for (int i = 0; i < 3; i++) {
		e->kernel.grid[i] = (int64_t)r->grid[i];
		e->kernel.workgroup[i] = r->workgroup[i];
	}
	e->kernel.local_memory_bytes = r->local_memory_bytes;
	e->kernel.private_memory_bytes = r->private_memory_bytes;
	e->kernel.status = r->status;
	e->kernel.registers = r->registers;
	e->kernel.static_local_memory_bytes = r->static_local_memory_bytes;
	e->kernel.dynamic_local_memory_bytes = r->dynamic_local_memory_bytes;
	e->kernel.stream = r->stream_id;
	e->kernel.context = r->context_id;
	e->kernel.graph = r->graph_id;
	e->kernel.graph_node = (int64_t)r->graph_node_id;
	e->kernel.range_id = (int64_t)recording_kernel_range(rec, r);
}

static void event_from_copy(const struct recording *rec, const struct record_memory_copy *r,
			    struct event *e)
{
	uint32_t tid = r->tid, function_id = r->function_id;
	recording_enqueuer(rec, r->correlation_id, &tid, &function_id);
	e->kind = EVENT_MEMORY_COPY;
	e->pid = rec->process->pid;
	e->tid = tid;
	e->name = recording_string(rec, function_id);
	e->copy.operation = record_operation_name(r->operation);
	e->copy.direction = record_direction_name(r->direction);
	e->copy.src_agent = r->src_agent_id;
	e->copy.dst_agent = r->dst_agent_id;
	e->copy.queue = r->queue_id;
	e->copy.bytes = (int64_t)r->bytes;
	e->start_ns = (int64_t)r->start_ns;
	e->end_ns = (int64_t)r->end_ns;
	e->correlation_id = (int64_t)r->correlation_id;
	e->copy.status = r->status;
	e->copy.src_memory_kind = record_memory_kind_name(r->src_memory_kind);
	e->copy.dst_memory_kind = record_memory_kind_name(r->dst_memory_kind);
	e->copy.stream = r->stream_id;
}

static void event_from_allocation(const struct recording *rec,
				  const struct record_memory_allocation *r, struct event *e)
{
	uint32_t tid = r->tid;
	recording_enqueuer(rec, r->correlation_id, &tid, NULL);
	e->kind = EVENT_MEMORY_ALLOCATION;
	e->pid = rec->process->pid;
	e->tid = tid;
	e->allocation.agent = r->agent_id;
	e->allocation.operation = record_allocation_name(r->operation);
	e->allocation.memory_kind = record_memory_kind_name(r->memory_kind);
	e->allocation.address = (int64_t)r->address;
	e->allocation.bytes = (int64_t)r->bytes;
	e->correlation_id = (int64_t)r->correlation_id;
	e->start_ns = (int64_t)r->start_ns;
	e->end_ns = (int64_t)r->end_ns;
	e->allocation.stream = r->stream_id;
}

static void event_from_api(const struct recording *rec, const struct record_api_call *r,
			   struct event *e)
{
	e->kind = EVENT_API_CALL;
	e->pid = rec->process->pid;
	e->api.domain = record_domain_name(r->domain);
	e->name = recording_string(rec, r->function_id);
	e->tid = r->tid;
	e->start_ns = (int64_t)r->start_ns;
	e->end_ns = (int64_t)r->end_ns;
	e->correlation_id = (int64_t)r->correlation_id;
	e->api.result = r->result;
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

static void event_from_slice(const struct sample_stacks *stacks, const struct sample_slice *s,
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
	e->start_ns = (int64_t)p->start_ns;
	e->end_ns = (int64_t)rec->end_ns;
	e->process.realtime_start_ns = (int64_t)p->realtime_ns;
}

/* The start of a timed record: kernels, copies, allocations and API calls. */
static uint64_t record_start(const struct record_header *h)
{
	switch (h->type) {
	case RECORD_KERNEL: return ((const struct record_kernel *)h)->start_ns;
	case RECORD_MEMORY_COPY: return ((const struct record_memory_copy *)h)->start_ns;
	case RECORD_MEMORY_ALLOCATION:
		return ((const struct record_memory_allocation *)h)->start_ns;
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
	int failed = run_begin(&run, writers, count, options, err);
	for (size_t i = 0; run.timeline && i < rec->kernels.count; i++)
		flows_add(&run.flows, 1, (int64_t)((const struct record_kernel *)
						   rec->kernels.items[i])->correlation_id);
	for (size_t i = 0; run.timeline && i < rec->copies.count; i++)
		flows_add(&run.flows, 1, (int64_t)((const struct record_memory_copy *)
						   rec->copies.items[i])->correlation_id);
	flows_ready(&run.flows);
	if (run.timeline)
		launch_stacks_from_recording(rec, &run.launch_stacks);
	for (size_t i = 0; i < rec->counters.count; i++) { /* sorted by correlation id */
		const struct record_counter *c = (const void *)rec->counters.items[i];
		counters_add(&run.counters, 1, (int64_t)c->correlation_id,
			     recording_string(rec, c->name_id), c->value);
	}
	run.progress = progress_task_begin("files", rec->kernels.count + rec->copies.count +
					   rec->allocations.count + rec->api_calls.count +
					   rec->marker_count);
	/* the order of export_database(): the process, agents, threads, then the timed lists
	 * (each sorted by start) merged by start */
	if (!failed) {
		memset(&e, 0, sizeof(e));
		event_from_process(rec, &e);
		e.process_id = 1;
		failed = run_event(&run, &e, err);
	}
	for (size_t i = 0; !failed && i < rec->agents.count; i++) {
		memset(&e, 0, sizeof(e));
		event_from_agent(rec, (const void *)rec->agents.items[i], &e, uuid);
		e.process_id = 1;
		failed = run_event(&run, &e, err);
	}
	for (size_t i = 0; !failed && i < rec->thread_names.count; i++) {
		const struct record_thread_name *t = (const void *)rec->thread_names.items[i];
		memset(&e, 0, sizeof(e));
		e.kind = EVENT_THREAD;
		e.process_id = 1;
		e.pid = rec->process->pid;
		e.tid = t->tid;
		e.name = recording_string(rec, t->name_id);
		failed = run_event(&run, &e, err);
	}
	const struct record_list *lists[] = { &rec->kernels, &rec->copies, &rec->allocations,
					      &rec->api_calls };
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
	size_t at[7] = { 0 }; /* the four lists, the markers, the metrics, the stacks' slices */
	while (!failed) {
		int next = -1;
		uint64_t next_start = 0;
		for (int l = 0; l < 7; l++) {
			size_t n = l < 4 ? lists[l]->count : l == 4 ? rec->marker_count
				 : l == 5 ? rec->metrics.count : slice_count;
			if (at[l] == n)
				continue;
			uint64_t start = l < 4 ? record_start(lists[l]->items[at[l]])
				       : l == 4 ? rec->markers[at[l]].start_ns
				       : l == 5 ? ((const struct record_metric *)
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
		if (next == 4) {
			event_from_marker(rec, &rec->markers[at[4]++], &e);
		} else if (next == 5) {
			event_from_metric(rec, (const void *)rec->metrics.items[at[5]++], &e);
		} else if (next == 6) {
			event_from_slice(rec->stacks, &slices[at[6]++], &e);
			e.pid = rec->process->pid;
		} else {
			const struct record_header *h = lists[next]->items[at[next]++];
			if (h->type == RECORD_KERNEL)
				event_from_kernel(rec, (const void *)h, &e);
			else if (h->type == RECORD_MEMORY_COPY)
				event_from_copy(rec, (const void *)h, &e);
			else if (h->type == RECORD_MEMORY_ALLOCATION)
				event_from_allocation(rec, (const void *)h, &e);
			else
				event_from_api(rec, (const void *)h, &e);
		}
		e.process_id = 1;
		failed = run_event(&run, &e, err);
	}
	free(slices);
	return run_end(&run, failed, written, err);
}
