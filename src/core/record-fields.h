/* The fields of the records that every output carries (kernels, copies, allocations,
 * API calls), each declared once. From these lists are made the store's INSERT and the
 * binding of a record's values (store/store.c), the export's SELECT and the events it
 * reads from a database (writer/export.c), and the events of a spool read into memory
 * (writer/export-recording.c): a new field is one line here, beside its declarations
 * (the record's struct in record.h, its column in store/schema.sql, its field of struct
 * event in event.h).
 *
 * Each list calls X(column, value, event, to_event) once per field, in one order:
 *   column    the field's column in the store's table (after process_id)
 *   value     its value, an integer, read from a resolved record `k` (core/recording.h:
 *             the record as written, with what the recording resolves for it: the
 *             launching thread, the kernel's name, its marker range)
 *   event     the field of struct event `e` (core/event.h) it becomes
 *   to_event  how the integer becomes that field: FIELD_INT (as it is), FIELD_STRING (a
 *             string id: its text), or one of record.h's name functions
 * The fields of struct event that no list sets (kind, pid, name, process_id) are set by
 * each reader. */
#ifndef GPUPROF_CORE_RECORD_FIELDS_H
#define GPUPROF_CORE_RECORD_FIELDS_H

#define KERNEL_FIELDS(X) \
	KERNEL_FIELDS_BEFORE_3_9(X) \
	X(call_id, (int64_t)k->call_id, e->kernel.call_id, FIELD_INT)

/* those a database of schema 3.8 or earlier has (call_id added in 3.9) */
#define KERNEL_FIELDS_BEFORE_3_9(X) \
	X(tid, k->tid, e->tid, FIELD_INT) \
	X(agent_index, k->r->agent_id, e->kernel.agent, FIELD_INT) \
	X(queue_index, k->r->queue_id, e->kernel.queue, FIELD_INT) \
	X(name_id, k->name_id, e->kernel.kernel_id, FIELD_INT) \
	X(correlation_id, (int64_t)k->r->correlation_id, e->correlation_id, FIELD_INT) \
	X(dispatch_id, (int64_t)k->r->dispatch_id, e->kernel.dispatch_id, FIELD_INT) \
	X(start, (int64_t)k->r->start_ns, e->start_ns, FIELD_INT) \
	X(end, (int64_t)k->r->end_ns, e->end_ns, FIELD_INT) \
	X(grid_x, (int64_t)k->r->grid[0], e->kernel.grid[0], FIELD_INT) \
	X(grid_y, (int64_t)k->r->grid[1], e->kernel.grid[1], FIELD_INT) \
	X(grid_z, (int64_t)k->r->grid[2], e->kernel.grid[2], FIELD_INT) \
	X(workgroup_x, k->r->workgroup[0], e->kernel.workgroup[0], FIELD_INT) \
	X(workgroup_y, k->r->workgroup[1], e->kernel.workgroup[1], FIELD_INT) \
	X(workgroup_z, k->r->workgroup[2], e->kernel.workgroup[2], FIELD_INT) \
	X(local_memory_bytes, k->r->local_memory_bytes, e->kernel.local_memory_bytes, FIELD_INT) \
	X(private_memory_bytes, k->r->private_memory_bytes, e->kernel.private_memory_bytes, \
	  FIELD_INT) \
	X(status, k->r->status, e->kernel.status, FIELD_INT) \
	X(registers, k->r->registers, e->kernel.registers, FIELD_INT) \
	X(static_local_memory_bytes, k->r->static_local_memory_bytes, \
	  e->kernel.static_local_memory_bytes, FIELD_INT) \
	X(dynamic_local_memory_bytes, k->r->dynamic_local_memory_bytes, \
	  e->kernel.dynamic_local_memory_bytes, FIELD_INT) \
	X(stream_id, k->r->stream_id, e->kernel.stream, FIELD_INT) \
	X(context_id, k->r->context_id, e->kernel.context, FIELD_INT) \
	X(graph_id, k->r->graph_id, e->kernel.graph, FIELD_INT) \
	X(graph_node_id, (int64_t)k->r->graph_node_id, e->kernel.graph_node, FIELD_INT) \
	X(range_id, (int64_t)k->range_id, e->kernel.range_id, FIELD_INT)

#define COPY_FIELDS(X) \
	X(tid, k->tid, e->tid, FIELD_INT) \
	X(function_id, k->function_id, e->name, FIELD_STRING) \
	X(operation, k->r->operation, e->copy.operation, record_operation_name) \
	X(direction, k->r->direction, e->copy.direction, record_direction_name) \
	X(src_agent_index, k->r->src_agent_id, e->copy.src_agent, FIELD_INT) \
	X(dst_agent_index, k->r->dst_agent_id, e->copy.dst_agent, FIELD_INT) \
	X(queue_index, k->r->queue_id, e->copy.queue, FIELD_INT) \
	X(bytes, (int64_t)k->r->bytes, e->copy.bytes, FIELD_INT) \
	X(start, (int64_t)k->r->start_ns, e->start_ns, FIELD_INT) \
	X(end, (int64_t)k->r->end_ns, e->end_ns, FIELD_INT) \
	X(correlation_id, (int64_t)k->r->correlation_id, e->correlation_id, FIELD_INT) \
	X(status, k->r->status, e->copy.status, FIELD_INT) \
	X(src_memory_kind, k->r->src_memory_kind, e->copy.src_memory_kind, \
	  record_memory_kind_name) \
	X(dst_memory_kind, k->r->dst_memory_kind, e->copy.dst_memory_kind, \
	  record_memory_kind_name) \
	X(stream_id, k->r->stream_id, e->copy.stream, FIELD_INT) \
	X(context_id, k->r->context_id, e->copy.context, FIELD_INT)

#define ALLOCATION_FIELDS(X) \
	X(tid, k->tid, e->tid, FIELD_INT) \
	X(agent_index, k->r->agent_id, e->allocation.agent, FIELD_INT) \
	X(operation, k->r->operation, e->allocation.operation, record_allocation_name) \
	X(memory_kind, k->r->memory_kind, e->allocation.memory_kind, record_memory_kind_name) \
	X(address, (int64_t)k->r->address, e->allocation.address, FIELD_INT) \
	X(bytes, (int64_t)k->r->bytes, e->allocation.bytes, FIELD_INT) \
	X(correlation_id, (int64_t)k->r->correlation_id, e->correlation_id, FIELD_INT) \
	X(start, (int64_t)k->r->start_ns, e->start_ns, FIELD_INT) \
	X(end, (int64_t)k->r->end_ns, e->end_ns, FIELD_INT) \
	X(stream_id, k->r->stream_id, e->allocation.stream, FIELD_INT) \
	X(context_id, k->r->context_id, e->allocation.context, FIELD_INT)

/* An API call needs nothing resolved: `k` is the record itself. */
#define API_CALL_FIELDS(X) \
	X(domain, k->domain, e->api.domain, record_domain_name) \
	X(function_id, k->function_id, e->name, FIELD_STRING) \
	X(tid, k->tid, e->tid, FIELD_INT) \
	X(start, (int64_t)k->start_ns, e->start_ns, FIELD_INT) \
	X(end, (int64_t)k->end_ns, e->end_ns, FIELD_INT) \
	X(correlation_id, (int64_t)k->correlation_id, e->correlation_id, FIELD_INT) \
	X(result, k->result, e->api.result, FIELD_INT)

/* Pieces to make statements from a list: its columns (", tid, agent_index, ..."), one
 * "?" per column (",?,?..."). */
#define FIELD_COLUMN(column, value, event, to_event) ", " #column
#define FIELD_PLACEHOLDER(column, value, event, to_event) ",?"

#endif
