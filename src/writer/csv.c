/* The csv format: rocprofv3's file names and column headers, one file per domain, and
 * with --stats the *_stats.csv files (docs/OUTPUTS.md maps every column). */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/domain-stats.h"
#include "util/csv-format.h"
#include "writer/output-file.h"
#include "writer/writer.h"

#define MAX_FILES 16

static const char AGENT_HEADER[] =
	"\"Node_Id\",\"Logical_Node_Id\",\"Agent_Type\",\"Cpu_Cores_Count\",\"Simd_Count\","
	"\"Cpu_Core_Id_Base\",\"Simd_Id_Base\",\"Max_Waves_Per_Simd\",\"Lds_Size_In_Kb\","
	"\"Gds_Size_In_Kb\",\"Num_Gws\",\"Wave_Front_Size\",\"Num_Xcc\",\"Cu_Count\","
	"\"Array_Count\",\"Num_Shader_Banks\",\"Simd_Arrays_Per_Engine\",\"Cu_Per_Simd_Array\","
	"\"Simd_Per_Cu\",\"Max_Slots_Scratch_Cu\",\"Gfx_Target_Version\",\"Vendor_Id\","
	"\"Device_Id\",\"Location_Id\",\"Domain\",\"Drm_Render_Minor\",\"Num_Sdma_Engines\","
	"\"Num_Sdma_Xgmi_Engines\",\"Num_Sdma_Queues_Per_Engine\",\"Num_Cp_Queues\","
	"\"Max_Engine_Clk_Ccompute\",\"Max_Engine_Clk_Fcompute\",\"Sdma_Fw_Version\","
	"\"Fw_Version\",\"Capability\",\"Cu_Per_Engine\",\"Max_Waves_Per_Cu\",\"Family_Id\","
	"\"Workgroup_Max_Size\",\"Grid_Max_Size\",\"Local_Mem_Size\",\"Hive_Id\",\"Gpu_Id\","
	"\"Workgroup_Max_Dim_X\",\"Workgroup_Max_Dim_Y\",\"Workgroup_Max_Dim_Z\","
	"\"Grid_Max_Dim_X\",\"Grid_Max_Dim_Y\",\"Grid_Max_Dim_Z\",\"Name\",\"Vendor_Name\","
	"\"Product_Name\",\"Model_Name\",\"Global_Memory_Size\",\"Driver_Version\",\"Uuid\","
	"\"Compute_Capability\",\"Pci_Location\",\"L2_Cache_Size\",\"Memory_Bandwidth\"";
static const char KERNEL_HEADER[] =
	"\"Kind\",\"Agent_Id\",\"Queue_Id\",\"Stream_Id\",\"Thread_Id\",\"Dispatch_Id\","
	"\"Kernel_Id\",\"Kernel_Name\",\"Correlation_Id\",\"Start_Timestamp\",\"End_Timestamp\","
	"\"LDS_Block_Size\",\"Scratch_Size\",\"VGPR_Count\",\"Accum_VGPR_Count\",\"SGPR_Count\","
	"\"Workgroup_Size_X\",\"Workgroup_Size_Y\",\"Workgroup_Size_Z\",\"Grid_Size_X\","
	"\"Grid_Size_Y\",\"Grid_Size_Z\",\"Static_LDS_Size\",\"Dynamic_LDS_Size\",\"Context_Id\","
	"\"Graph_Id\",\"Graph_Node_Id\"";
static const char COPY_HEADER[] =
	"\"Kind\",\"Direction\",\"Stream_Id\",\"Source_Agent_Id\",\"Destination_Agent_Id\","
	"\"Correlation_Id\",\"Start_Timestamp\",\"End_Timestamp\",\"Bytes\",\"Operation\","
	"\"Queue_Id\",\"Thread_Id\",\"Function\",\"Source_Memory_Kind\",\"Destination_Memory_Kind\"";
static const char ALLOCATION_HEADER[] =
	"\"Kind\",\"Operation\",\"Agent_Id\",\"Allocation_Size\",\"Address\",\"Correlation_Id\","
	"\"Start_Timestamp\",\"End_Timestamp\",\"Memory_Kind\",\"Thread_Id\",\"Stream_Id\"";
static const char API_HEADER[] =
	"\"Domain\",\"Function\",\"Process_Id\",\"Thread_Id\",\"Correlation_Id\","
	"\"Start_Timestamp\",\"End_Timestamp\"";
/* rocprofv3's API columns, then the range's NVTX domain ("" for the default one) and its
 * module path (a PyTorch operator's module: "Net.fc1") */
static const char MARKER_HEADER[] =
	"\"Domain\",\"Function\",\"Process_Id\",\"Thread_Id\",\"Correlation_Id\","
	"\"Start_Timestamp\",\"End_Timestamp\",\"Marker_Domain\",\"Module_Path\"";
/* rocprofv3's API columns, then what an MPI call says (docs/MPI.md) */
static const char MPI_HEADER[] =
	"\"Domain\",\"Function\",\"Process_Id\",\"Thread_Id\",\"Correlation_Id\","
	"\"Start_Timestamp\",\"End_Timestamp\",\"Communicator\",\"Communicator_Size\","
	"\"Peer\",\"Tag\",\"Root\",\"Bytes_Sent\",\"Bytes_Received\",\"Sequence\","
	"\"Request\",\"Completed_Timestamp\",\"Result\"";
static const char COUNTER_HEADER[] =
	"\"Correlation_Id\",\"Dispatch_Id\",\"Agent_Id\",\"Queue_Id\",\"Process_Id\",\"Thread_Id\","
	"\"Grid_Size\",\"Kernel_Id\",\"Kernel_Name\",\"Workgroup_Size\",\"LDS_Block_Size\","
	"\"Scratch_Size\",\"VGPR_Count\",\"Accum_VGPR_Count\",\"SGPR_Count\",\"Counter_Name\","
	"\"Counter_Value\",\"Start_Timestamp\",\"End_Timestamp\"";
static const char STATS_HEADER[] =
	"\"Name\",\"Calls\",\"TotalDurationNs\",\"AverageNs\",\"Percentage\",\"MinNs\",\"MaxNs\","
	"\"StdDev\"";
/* nested ranges (marker_api_stats): rocprofv3's columns, then the self time; the
 * percentage is of the self time */
static const char NESTED_STATS_HEADER[] =
	"\"Name\",\"Calls\",\"TotalDurationNs\",\"AverageNs\",\"Percentage\",\"MinNs\",\"MaxNs\","
	"\"StdDev\",\"SelfDurationNs\"";

struct csv_file {
	char *key;  /* "kernel_trace", "opencl_api_trace"... */
	char *path;
	FILE *out;
};

struct csv_state {
	const struct output_options *options;
	struct csv_file files[MAX_FILES];
	int file_count;
	struct strbuf line;
	struct domain_stats stats;
};

static int csv_begin(void **state, const struct output_options *options, struct error *err)
{
	struct csv_state *s = xcalloc(1, sizeof(*s));
	s->options = options;
	strbuf_init(&s->line);
	domain_stats_init(&s->stats);
	*state = s;
	return 0;
}

/* The open file for key, creating it (with its header) on first use. */
static FILE *file_for(struct csv_state *s, const char *key, const char *header,
		      struct error *err)
{
	for (int i = 0; i < s->file_count; i++)
		if (!strcmp(s->files[i].key, key))
			return s->files[i].out;
	if (s->file_count == MAX_FILES) {
		error_set(err, "too many csv files");
		return NULL;
	}
	struct strbuf path = STRBUF_INIT;
	strbuf_addf(&path, "%s_%s.csv", s->options->prefix, key);
	FILE *out = output_partial_open(path.buf, err);
	if (!out) {
		strbuf_release(&path);
		return NULL;
	}
	setvbuf(out, NULL, _IOFBF, 1 << 20);
	fprintf(out, "%s\n", header);
	struct csv_file *f = &s->files[s->file_count++];
	f->key = xstrdup(key);
	f->path = strbuf_detach(&path);
	f->out = out;
	return out;
}

static int put_line(struct csv_state *s, const char *key, const char *header,
		    struct error *err)
{
	FILE *out = file_for(s, key, header, err);
	if (!out)
		return -1;
	strbuf_addch(&s->line, '\n');
	fwrite_unlocked(s->line.buf, 1, s->line.len, out);
	strbuf_reset(&s->line);
	return 0;
}

static void agent_label(struct strbuf *line, int64_t index)
{
	char label[32];
	snprintf(label, sizeof(label), "Agent %lld", (long long)index);
	csv_text(line, label);
}

/* "OPENCL_API" -> "opencl_api" */
static void domain_key(const char *domain, const char *suffix, char *out, size_t size)
{
	size_t n = 0;
	for (; domain[n] && n + 1 < size; n++)
		out[n] = (char)tolower((unsigned char)domain[n]);
	snprintf(out + n, size - n, "%s", suffix);
}

static int csv_agent(struct csv_state *s, const struct event *e, struct error *err)
{
	struct strbuf *l = &s->line;
	const struct event *a = e;
	int cpu = !strcmp(a->agent.type_name, "CPU");
	csv_int(l, a->agent.index);
	csv_int(l, a->agent.index);
	csv_text(l, a->agent.type_name);
	csv_int(l, cpu ? a->agent.compute_units : 0);
	for (int i = 0; i < 4; i++) /* Simd_Count .. Max_Waves_Per_Simd */
		csv_int(l, 0);
	csv_int(l, a->agent.local_memory_bytes / 1024);
	for (int i = 0; i < 2; i++) /* Gds_Size_In_Kb, Num_Gws */
		csv_int(l, 0);
	csv_int(l, a->agent.warp_size);
	csv_int(l, 0); /* Num_Xcc */
	csv_int(l, cpu ? 0 : a->agent.compute_units);
	for (int i = 0; i < 6; i++) /* Array_Count .. Max_Slots_Scratch_Cu */
		csv_int(l, 0);
	/* Gfx_Target_Version: the compute capability, as 90000 for 9.0 */
	csv_int(l, a->agent.compute_major * 10000 + a->agent.compute_minor * 100);
	csv_int(l, a->agent.vendor_id);
	csv_int(l, 0); /* Device_Id */
	/* Location_Id and Domain: the PCI bus/device/function and domain */
	csv_int(l, a->agent.pci_bus << 8 | a->agent.pci_device << 3 | a->agent.pci_function);
	csv_int(l, a->agent.pci_domain);
	for (int i = 0; i < 5; i++) /* Drm_Render_Minor .. Num_Cp_Queues */
		csv_int(l, 0);
	csv_int(l, a->agent.max_clock_mhz);
	csv_int(l, a->agent.max_clock_mhz);
	for (int i = 0; i < 6; i++) /* Sdma_Fw_Version .. Family_Id */
		csv_int(l, 0);
	csv_int(l, a->agent.max_workgroup_size);
	csv_int(l, 0);
	csv_int(l, a->agent.local_memory_bytes);
	csv_int(l, 0);
	csv_int(l, a->agent.device_index);
	for (int i = 0; i < 3; i++)
		csv_int(l, a->agent.max_workgroup[i]);
	for (int i = 0; i < 3; i++)
		csv_int(l, 0);
	csv_text(l, a->name);
	csv_text(l, a->agent.vendor_name);
	csv_text(l, a->name);
	csv_text(l, a->name);
	csv_int(l, a->agent.global_memory_bytes);
	csv_text(l, a->agent.driver_version);
	csv_text(l, a->agent.uuid ? a->agent.uuid : "");
	char text[64] = "";
	if (a->agent.compute_major)
		snprintf(text, sizeof(text), "%lld.%lld", (long long)a->agent.compute_major,
			 (long long)a->agent.compute_minor);
	csv_text(l, text);
	text[0] = '\0';
	if (a->agent.pci_bus || a->agent.pci_device || a->agent.pci_domain)
		snprintf(text, sizeof(text), "%04llx:%02llx:%02llx.%llx",
			 (long long)a->agent.pci_domain, (long long)a->agent.pci_bus,
			 (long long)a->agent.pci_device, (long long)a->agent.pci_function);
	csv_text(l, text);
	csv_int(l, a->agent.l2_cache_bytes);
	csv_int(l, a->agent.memory_bandwidth);
	return put_line(s, "agent_info", AGENT_HEADER, err);
}

static int csv_kernel(struct csv_state *s, const struct event *e, struct error *err)
{
	struct strbuf *l = &s->line;
	csv_text(l, "KERNEL_DISPATCH");
	agent_label(l, e->kernel.agent);
	csv_int(l, e->kernel.queue);
	csv_int(l, e->kernel.stream);
	csv_int(l, e->tid);
	csv_int(l, e->kernel.dispatch_id);
	csv_int(l, e->kernel.kernel_id);
	csv_text(l, e->name);
	csv_int(l, e->correlation_id);
	csv_int(l, e->start_ns);
	csv_int(l, e->end_ns);
	csv_int(l, e->kernel.local_memory_bytes);
	csv_int(l, e->kernel.private_memory_bytes);
	csv_int(l, e->kernel.registers); /* VGPR_Count: registers per thread */
	csv_int(l, 0);                   /* Accum_VGPR_Count, SGPR_Count: no equivalent */
	csv_int(l, 0);
	for (int i = 0; i < 3; i++) /* empty: the runtime chose it, and does not say */
		if (e->kernel.workgroup[0])
			csv_int(l, e->kernel.workgroup[i]);
		else
			csv_empty(l);
	for (int i = 0; i < 3; i++)
		csv_int(l, e->kernel.grid[i]);
	csv_int(l, e->kernel.static_local_memory_bytes);
	csv_int(l, e->kernel.dynamic_local_memory_bytes);
	csv_int(l, e->kernel.context);
	csv_int(l, e->kernel.graph);
	csv_int(l, e->kernel.graph_node);
	return put_line(s, "kernel_trace", KERNEL_HEADER, err);
}

/* rocprofv3's counter_collection.csv: one row per kernel and counter, sizes as products
 * of the three dimensions; a counter without a value has an empty Counter_Value. */
static int csv_counters(struct csv_state *s, const struct event *e, struct error *err)
{
	struct strbuf *l = &s->line;
	for (size_t i = 0; i < e->kernel.counter_count; i++) {
		const struct event_counter *c = &e->kernel.counters[i];
		csv_int(l, e->correlation_id);
		csv_int(l, e->kernel.dispatch_id);
		agent_label(l, e->kernel.agent);
		csv_int(l, e->kernel.queue);
		csv_int(l, e->pid);
		csv_int(l, e->tid);
		csv_int(l, e->kernel.grid[0] * e->kernel.grid[1] * e->kernel.grid[2]);
		csv_int(l, e->kernel.kernel_id);
		csv_text(l, e->name);
		if (e->kernel.workgroup[0])
			csv_int(l, e->kernel.workgroup[0] * e->kernel.workgroup[1] *
					   e->kernel.workgroup[2]);
		else
			csv_empty(l);
		csv_int(l, e->kernel.local_memory_bytes);
		csv_int(l, e->kernel.private_memory_bytes);
		csv_int(l, e->kernel.registers);
		csv_int(l, 0);
		csv_int(l, 0);
		csv_text(l, c->name);
		if (isnan(c->value))
			strbuf_addch(l, ',');
		else
			strbuf_addf(l, ",%.17g", c->value);
		csv_int(l, e->start_ns);
		csv_int(l, e->end_ns);
		if (put_line(s, "counter_collection", COUNTER_HEADER, err))
			return -1;
	}
	return 0;
}

static int csv_copy(struct csv_state *s, const struct event *e, struct error *err)
{
	struct strbuf *l = &s->line;
	csv_text(l, "MEMORY_COPY");
	csv_text(l, e->copy.direction);
	csv_int(l, e->copy.stream);
	agent_label(l, e->copy.src_agent);
	agent_label(l, e->copy.dst_agent);
	csv_int(l, e->correlation_id);
	csv_int(l, e->start_ns);
	csv_int(l, e->end_ns);
	csv_int(l, e->copy.bytes);
	csv_text(l, e->copy.operation);
	csv_int(l, e->copy.queue);
	csv_int(l, e->tid);
	csv_text(l, e->name);
	csv_text(l, e->copy.src_memory_kind);
	csv_text(l, e->copy.dst_memory_kind);
	return put_line(s, "memory_copy_trace", COPY_HEADER, err);
}

static int csv_allocation(struct csv_state *s, const struct event *e, struct error *err)
{
	struct strbuf *l = &s->line;
	char address[24];
	csv_text(l, "MEMORY_ALLOCATION");
	csv_text(l, e->allocation.operation);
	agent_label(l, e->allocation.agent);
	csv_int(l, e->allocation.bytes);
	snprintf(address, sizeof(address), "0x%016llx", (unsigned long long)e->allocation.address);
	csv_text(l, address);
	csv_int(l, e->correlation_id);
	csv_int(l, e->start_ns);
	csv_int(l, e->end_ns);
	csv_text(l, e->allocation.memory_kind);
	csv_int(l, e->tid);
	csv_int(l, e->allocation.stream);
	return put_line(s, "memory_allocation_trace", ALLOCATION_HEADER, err);
}

static int csv_api(struct csv_state *s, const struct event *e, struct error *err)
{
	struct strbuf *l = &s->line;
	char key[64];
	csv_text(l, e->api.domain);
	csv_text(l, e->name);
	csv_int(l, e->pid);
	csv_int(l, e->tid);
	csv_int(l, e->correlation_id);
	csv_int(l, e->start_ns);
	csv_int(l, e->end_ns);
	if (e->api.mpi) {
		csv_text(l, e->api.communicator);
		csv_int(l, e->api.communicator_size);
		csv_int(l, e->api.peer);
		csv_int(l, e->api.tag);
		csv_int(l, e->api.root);
		csv_int(l, e->api.bytes_sent);
		csv_int(l, e->api.bytes_received);
		csv_int(l, e->api.sequence);
		csv_int(l, e->api.request);
		csv_int(l, e->api.completed_ns);
		csv_int(l, e->api.result);
	}
	domain_key(e->api.domain, "_trace", key, sizeof(key));
	return put_line(s, key, e->api.mpi ? MPI_HEADER : API_HEADER, err);
}

/* rocprofv3's marker_api_trace.csv: a range is one row, a mark has start = end; the
 * Correlation_Id is the range's id, which kernels launched inside it carry. */
static int csv_marker(struct csv_state *s, const struct event *e, struct error *err)
{
	struct strbuf *l = &s->line;
	csv_text(l, e->marker.category);
	csv_text(l, e->name);
	csv_int(l, e->pid);
	csv_int(l, e->tid);
	csv_int(l, e->marker.range_id);
	csv_int(l, e->start_ns);
	csv_int(l, e->end_ns);
	csv_text(l, e->marker.domain);
	csv_text(l, e->marker.module);
	return put_line(s, "marker_api_trace", MARKER_HEADER, err);
}

static int csv_event(void *state, const struct event *e, struct error *err)
{
	struct csv_state *s = state;
	if (s->options->stats)
		domain_stats_add(&s->stats, e);
	switch (e->kind) {
	case EVENT_PROCESS:
	case EVENT_THREAD:
	case EVENT_METRIC:
	case EVENT_SAMPLE: return 0;
	case EVENT_MARKER: return csv_marker(s, e, err);
	case EVENT_AGENT: return csv_agent(s, e, err);
	case EVENT_KERNEL: return csv_kernel(s, e, err) || csv_counters(s, e, err);
	case EVENT_MEMORY_COPY: return csv_copy(s, e, err);
	case EVENT_MEMORY_ALLOCATION: return csv_allocation(s, e, err);
	case EVENT_API_CALL: return csv_api(s, e, err);
	}
	return 0;
}

static int write_stats(struct csv_state *s, const char *key, struct stats_table *t,
		       struct error *err)
{
	for (size_t i = 0; i < t->count; i++) {
		const struct stats_row *r = &t->rows[i];
		csv_text(&s->line, r->name);
		csv_int(&s->line, (int64_t)r->calls);
		csv_int(&s->line, (int64_t)r->total_ns);
		strbuf_addf(&s->line, ",%.6f,%.2f", r->mean_ns, r->percentage);
		csv_int(&s->line, (int64_t)r->min_ns);
		csv_int(&s->line, (int64_t)r->max_ns);
		strbuf_addf(&s->line, ",%.6f", r->stddev_ns);
		if (t->nested)
			csv_int(&s->line, (int64_t)r->self_ns);
		if (put_line(s, key, t->nested ? NESTED_STATS_HEADER : STATS_HEADER, err))
			return -1;
	}
	return 0;
}

static int csv_end(void *state, int failed, struct strbuf *written, struct error *err)
{
	struct csv_state *s = state;
	int rc = 0;
	if (!failed && s->options->stats) {
		struct domain_stats *ds = &s->stats;
		char key[64];
		domain_stats_finish(ds);
		rc = write_stats(s, "kernel_stats", &ds->kernels, err);
		if (!rc)
			rc = write_stats(s, "memory_copy_stats", &ds->copies, err);
		if (!rc)
			rc = write_stats(s, "memory_allocation_stats", &ds->allocations, err);
		if (!rc)
			rc = write_stats(s, "marker_api_stats", &ds->markers, err);
		for (int i = 0; !rc && i < ds->api_count; i++) {
			domain_key(ds->apis[i].domain, "_stats", key, sizeof(key));
			rc = write_stats(s, key, &ds->apis[i].table, err);
		}
		if (!rc)
			rc = write_stats(s, "domain_stats", &ds->domains, err);
	}
	failed |= rc;
	for (int i = 0; i < s->file_count; i++) {
		struct csv_file *f = &s->files[i];
		int bad = ferror(f->out);
		int e = errno;
		if (fclose(f->out) != 0 || bad) {
			if (!failed)
				rc = error_set(err, "cannot write '%s': %s", f->path,
					       strerror(bad ? e : errno));
			failed = 1;
		}
	}
	/* the files take their names together, once all are complete */
	for (int i = 0; i < s->file_count; i++) {
		if (failed)
			output_discard(s->files[i].path);
		else if (output_publish(s->files[i].path, err))
			rc = failed = -1; /* it removed its file; the rest go too */
		else
			strbuf_addf(written, "%s\n", s->files[i].path);
		free(s->files[i].key);
		free(s->files[i].path);
	}
	domain_stats_release(&s->stats);
	strbuf_release(&s->line);
	free(s);
	return failed ? -1 : 0;
}

const struct writer_ops csv_writer = {
	.format = "csv",
	.begin = csv_begin,
	.event = csv_event,
	.end = csv_end,
};
