-- gpuprof database schema (docs/SCHEMA.md). Tables hold the recorded data with
-- numeric codes; the views give it the names and units users query.
PRAGMA user_version = 3;
CREATE TABLE gpuprof_metadata (tag TEXT PRIMARY KEY, value TEXT);
CREATE TABLE gpuprof_string (id INTEGER PRIMARY KEY, string TEXT NOT NULL);
CREATE TABLE gpuprof_process (
  id INTEGER PRIMARY KEY, hostname TEXT, pid INTEGER, ppid INTEGER, rank INTEGER,
  size INTEGER, command TEXT, start INTEGER, end INTEGER, realtime_start INTEGER,
  clean_exit INTEGER, recording_start INTEGER);
CREATE TABLE gpuprof_agent (
  process_id INTEGER, agent_index INTEGER, type INTEGER, name_id INTEGER,
  vendor_name_id INTEGER, driver_version_id INTEGER, vendor_id INTEGER,
  compute_units INTEGER, max_clock_mhz INTEGER, global_memory_bytes INTEGER,
  local_memory_bytes INTEGER, max_workgroup_size INTEGER, max_workgroup_x INTEGER,
  max_workgroup_y INTEGER, max_workgroup_z INTEGER, uuid TEXT, pci_domain INTEGER,
  pci_bus INTEGER, pci_device INTEGER, pci_function INTEGER, compute_major INTEGER,
  compute_minor INTEGER, warp_size INTEGER, l2_cache_bytes INTEGER,
  memory_bandwidth INTEGER, device_index INTEGER,
  PRIMARY KEY (process_id, agent_index));
CREATE TABLE gpuprof_queue (
  process_id INTEGER, queue_index INTEGER, agent_index INTEGER, properties INTEGER,
  PRIMARY KEY (process_id, queue_index));
CREATE TABLE gpuprof_api_call (
  id INTEGER PRIMARY KEY, process_id INTEGER, tid INTEGER, domain INTEGER,
  function_id INTEGER, correlation_id INTEGER, start INTEGER, end INTEGER, result INTEGER);
CREATE TABLE gpuprof_kernel (
  id INTEGER PRIMARY KEY, process_id INTEGER, tid INTEGER, agent_index INTEGER,
  queue_index INTEGER, name_id INTEGER, correlation_id INTEGER, dispatch_id INTEGER,
  start INTEGER, end INTEGER, grid_x INTEGER, grid_y INTEGER, grid_z INTEGER,
  workgroup_x INTEGER, workgroup_y INTEGER, workgroup_z INTEGER,
  local_memory_bytes INTEGER, private_memory_bytes INTEGER, status INTEGER,
  registers INTEGER, static_local_memory_bytes INTEGER, dynamic_local_memory_bytes INTEGER,
  stream_id INTEGER, context_id INTEGER, graph_id INTEGER, graph_node_id INTEGER,
  range_id INTEGER, call_id INTEGER);
CREATE TABLE gpuprof_memory_copy (
  id INTEGER PRIMARY KEY, process_id INTEGER, tid INTEGER, queue_index INTEGER,
  src_agent_index INTEGER, dst_agent_index INTEGER, operation INTEGER, direction INTEGER,
  function_id INTEGER, bytes INTEGER, correlation_id INTEGER, start INTEGER, end INTEGER,
  status INTEGER, src_memory_kind INTEGER, dst_memory_kind INTEGER, stream_id INTEGER,
  context_id INTEGER);
CREATE TABLE gpuprof_memory_allocation (
  id INTEGER PRIMARY KEY, process_id INTEGER, tid INTEGER, agent_index INTEGER,
  operation INTEGER, memory_kind INTEGER, address INTEGER, bytes INTEGER,
  correlation_id INTEGER, start INTEGER, end INTEGER, stream_id INTEGER, context_id INTEGER);
CREATE TABLE gpuprof_synchronization (
  id INTEGER PRIMARY KEY, process_id INTEGER, tid INTEGER, type INTEGER, stream_id INTEGER,
  context_id INTEGER, event_id INTEGER, result INTEGER, correlation_id INTEGER,
  start INTEGER, end INTEGER);
CREATE TABLE gpuprof_overhead (
  id INTEGER PRIMARY KEY, process_id INTEGER, kind INTEGER, tid INTEGER,
  agent_index INTEGER, start INTEGER, end INTEGER);
CREATE TABLE gpuprof_marker (
  id INTEGER PRIMARY KEY, process_id INTEGER, tid INTEGER, end_tid INTEGER, kind INTEGER,
  domain_id INTEGER, name_id INTEGER, range_id INTEGER, parent_id INTEGER, start INTEGER,
  end INTEGER, ended INTEGER, module_id INTEGER);
CREATE INDEX gpuprof_marker_range ON gpuprof_marker (process_id, range_id);
CREATE TABLE gpuprof_thread (
  process_id INTEGER, tid INTEGER, name_id INTEGER, PRIMARY KEY (process_id, tid));
CREATE TABLE gpuprof_dropped (process_id INTEGER, reason TEXT, records INTEGER, bytes INTEGER);
CREATE TABLE gpuprof_metric_series (
  process_id INTEGER, series_id INTEGER, source INTEGER, device INTEGER, pid INTEGER,
  name TEXT, unit TEXT, PRIMARY KEY (process_id, series_id));
CREATE TABLE gpuprof_metric (
  id INTEGER PRIMARY KEY, process_id INTEGER, series_id INTEGER, time INTEGER, value REAL);
CREATE TABLE gpuprof_frame (
  process_id INTEGER, frame_id INTEGER, function TEXT, module TEXT, offset INTEGER,
  source TEXT, line INTEGER, inlined INTEGER, PRIMARY KEY (process_id, frame_id));
CREATE TABLE gpuprof_stack (
  process_id INTEGER, stack_id INTEGER, parent_id INTEGER, frame_id INTEGER,
  PRIMARY KEY (process_id, stack_id));
CREATE TABLE gpuprof_sample (
  id INTEGER PRIMARY KEY, process_id INTEGER, tid INTEGER, time INTEGER, stack_id INTEGER);
CREATE TABLE gpuprof_launch_stack (
  id INTEGER PRIMARY KEY, process_id INTEGER, correlation_id INTEGER, domain INTEGER,
  function_id INTEGER, tid INTEGER, time INTEGER, stack_id INTEGER);
CREATE INDEX gpuprof_launch_stack_call ON gpuprof_launch_stack (process_id, correlation_id);
CREATE TABLE gpuprof_graph_node_clone (
  process_id INTEGER, node_id INTEGER, original_id INTEGER,
  PRIMARY KEY (process_id, node_id));
CREATE TABLE gpuprof_sample_lost (
  id INTEGER PRIMARY KEY, process_id INTEGER, tid INTEGER, start INTEGER, end INTEGER,
  samples INTEGER);
CREATE TABLE gpuprof_counter (
  id INTEGER PRIMARY KEY, process_id INTEGER, correlation_id INTEGER, agent_index INTEGER,
  name_id INTEGER, value REAL);
CREATE INDEX gpuprof_counter_kernel ON gpuprof_counter (process_id, correlation_id);
CREATE TABLE gpuprof_pc_sample (
  id INTEGER PRIMARY KEY, process_id INTEGER, agent_index INTEGER, correlation_id INTEGER,
  function_id INTEGER, cubin_crc INTEGER, pc_offset INTEGER, reason_id INTEGER,
  samples INTEGER, file_id INTEGER, line INTEGER);
CREATE TABLE gpuprof_pc_sampling (
  process_id INTEGER, agent_index INTEGER, period_log2 INTEGER, samples INTEGER,
  dropped INTEGER, other_samples INTEGER, buffer_full INTEGER);
CREATE TABLE gpuprof_mpi_call (
  id INTEGER PRIMARY KEY, process_id INTEGER, tid INTEGER, function_id INTEGER,
  start INTEGER, end INTEGER, call_id INTEGER, communicator_id INTEGER,
  communicator_size INTEGER, peer INTEGER, tag INTEGER, root INTEGER, result INTEGER,
  bytes_sent INTEGER, bytes_received INTEGER, sequence INTEGER, request INTEGER,
  domain INTEGER);
CREATE TABLE gpuprof_mpi_completion (
  process_id INTEGER, request INTEGER, completed_by INTEGER, time INTEGER,
  bytes_received INTEGER, peer INTEGER, tag INTEGER, PRIMARY KEY (process_id, request))
  WITHOUT ROWID;
CREATE TABLE gpuprof_clock_sync (
  process_id INTEGER, local_time INTEGER, offset INTEGER, round_trip INTEGER, rank INTEGER,
  size INTEGER);

CREATE VIEW processes AS
  SELECT id, hostname, pid, ppid, rank, size, command, start, end, end - start AS duration,
         realtime_start, clean_exit, recording_start FROM gpuprof_process;
CREATE VIEW agents AS
  SELECT a.process_id, p.pid, a.agent_index AS agent_id,
         CASE a.type WHEN 1 THEN 'CPU' WHEN 2 THEN 'GPU' WHEN 3 THEN 'ACCELERATOR'
                     ELSE 'OTHER' END AS type,
         n.string AS name, v.string AS vendor_name, d.string AS driver_version, a.vendor_id,
         a.compute_units, a.max_clock_mhz, a.global_memory_bytes, a.local_memory_bytes,
         a.max_workgroup_size, a.max_workgroup_x, a.max_workgroup_y, a.max_workgroup_z,
         a.uuid, a.pci_domain, a.pci_bus, a.pci_device, a.pci_function, a.compute_major,
         a.compute_minor, a.warp_size, a.l2_cache_bytes, a.memory_bandwidth, a.device_index
  FROM gpuprof_agent a JOIN gpuprof_process p ON p.id = a.process_id
  LEFT JOIN gpuprof_string n ON n.id = a.name_id
  LEFT JOIN gpuprof_string v ON v.id = a.vendor_name_id
  LEFT JOIN gpuprof_string d ON d.id = a.driver_version_id;
CREATE VIEW regions AS
  SELECT r.id, CASE r.domain WHEN 1 THEN 'OPENCL_API' WHEN 2 THEN 'CUDA_API'
                             WHEN 3 THEN 'CUDA_DRIVER_API' ELSE 'UNKNOWN_API' END AS category,
         s.string AS name, p.pid, r.tid, r.start, r.end, r.end - r.start AS duration,
         r.correlation_id AS corr_id, r.result
  FROM gpuprof_api_call r JOIN gpuprof_process p ON p.id = r.process_id
  LEFT JOIN gpuprof_string s ON s.id = r.function_id;
CREATE VIEW kernels AS
  SELECT k.id, 'KERNEL_DISPATCH' AS category, s.string AS name, p.pid, k.tid,
         k.agent_index AS agent_id,
         CASE a.type WHEN 1 THEN 'CPU' WHEN 2 THEN 'GPU' WHEN 3 THEN 'ACCELERATOR'
                     ELSE 'OTHER' END AS agent_type,
         k.name_id AS kernel_id, k.dispatch_id, k.queue_index AS queue_id,
         k.stream_id, k.start, k.end, k.end - k.start AS duration,
         k.grid_x, k.grid_y, k.grid_z, NULLIF(k.workgroup_x, 0) AS workgroup_x,
         NULLIF(k.workgroup_y, 0) AS workgroup_y, NULLIF(k.workgroup_z, 0) AS workgroup_z,
         k.local_memory_bytes AS lds_size, k.private_memory_bytes AS scratch_size,
         k.registers AS vgpr_count, k.static_local_memory_bytes AS static_lds_size,
         k.dynamic_local_memory_bytes AS dynamic_lds_size, k.context_id, k.graph_id,
         k.graph_node_id, k.correlation_id AS corr_id, k.status, k.range_id,
         r.string AS range_name, k.call_id
  FROM gpuprof_kernel k JOIN gpuprof_process p ON p.id = k.process_id
  LEFT JOIN gpuprof_string s ON s.id = k.name_id
  LEFT JOIN gpuprof_marker m ON m.process_id = k.process_id AND m.range_id = k.range_id
  LEFT JOIN gpuprof_string r ON r.id = m.name_id
  LEFT JOIN gpuprof_agent a ON a.process_id = k.process_id AND a.agent_index = k.agent_index;
CREATE VIEW memory_copies AS
  SELECT c.id, 'MEMORY_COPY' AS category, s.string AS name, p.pid, c.tid,
         CASE c.operation WHEN 1 THEN 'COPY' WHEN 2 THEN 'FILL' WHEN 3 THEN 'MAP'
                          WHEN 4 THEN 'UNMAP' WHEN 5 THEN 'MIGRATE' WHEN 6 THEN 'MARKER'
                          WHEN 7 THEN 'BARRIER' WHEN 8 THEN 'FREE'
                          ELSE 'UNKNOWN' END AS operation,
         CASE c.direction WHEN 1 THEN 'MEMORY_COPY_HOST_TO_DEVICE'
                          WHEN 2 THEN 'MEMORY_COPY_DEVICE_TO_HOST'
                          WHEN 3 THEN 'MEMORY_COPY_DEVICE_TO_DEVICE'
                          WHEN 4 THEN 'MEMORY_COPY_HOST_TO_HOST'
                          WHEN 5 THEN 'MEMORY_COPY_UNKNOWN'
                          ELSE 'MEMORY_COPY_NONE' END AS direction,
         c.src_agent_index AS src_agent_id, c.dst_agent_index AS dst_agent_id,
         c.queue_index AS queue_id, c.stream_id, c.bytes AS size,
         c.start, c.end, c.end - c.start AS duration, c.correlation_id AS corr_id, c.status,
         CASE c.src_memory_kind WHEN 1 THEN 'PAGEABLE' WHEN 2 THEN 'PINNED' WHEN 3 THEN 'DEVICE'
                          WHEN 4 THEN 'ARRAY' WHEN 5 THEN 'MANAGED' WHEN 6 THEN 'DEVICE_STATIC'
                          WHEN 7 THEN 'MANAGED_STATIC' ELSE 'UNKNOWN' END AS src_memory_kind,
         CASE c.dst_memory_kind WHEN 1 THEN 'PAGEABLE' WHEN 2 THEN 'PINNED' WHEN 3 THEN 'DEVICE'
                          WHEN 4 THEN 'ARRAY' WHEN 5 THEN 'MANAGED' WHEN 6 THEN 'DEVICE_STATIC'
                          WHEN 7 THEN 'MANAGED_STATIC' ELSE 'UNKNOWN' END AS dst_memory_kind,
         c.context_id
  FROM gpuprof_memory_copy c JOIN gpuprof_process p ON p.id = c.process_id
  LEFT JOIN gpuprof_string s ON s.id = c.function_id;
CREATE VIEW memory_allocations AS
  SELECT m.id, 'MEMORY_ALLOCATION' AS category, p.pid, m.tid, m.agent_index AS agent_id,
         CASE m.operation WHEN 1 THEN 'MEMORY_ALLOCATION_ALLOCATE'
                          WHEN 2 THEN 'MEMORY_ALLOCATION_FREE'
                          ELSE 'MEMORY_ALLOCATION_NONE' END AS operation,
         CASE m.memory_kind WHEN 1 THEN 'PAGEABLE' WHEN 2 THEN 'PINNED' WHEN 3 THEN 'DEVICE'
                          WHEN 4 THEN 'ARRAY' WHEN 5 THEN 'MANAGED' WHEN 6 THEN 'DEVICE_STATIC'
                          WHEN 7 THEN 'MANAGED_STATIC' ELSE 'UNKNOWN' END AS memory_kind,
         m.address, m.bytes AS size, m.start, m.end, m.end - m.start AS duration,
         m.correlation_id AS corr_id, m.stream_id, m.context_id
  FROM gpuprof_memory_allocation m JOIN gpuprof_process p ON p.id = m.process_id;
CREATE VIEW synchronizations AS
  SELECT y.id, p.pid, y.tid,
         CASE y.type WHEN 1 THEN 'EVENT_SYNCHRONIZE' WHEN 2 THEN 'STREAM_WAIT_EVENT'
                     WHEN 3 THEN 'STREAM_SYNCHRONIZE' WHEN 4 THEN 'CONTEXT_SYNCHRONIZE'
                     ELSE 'UNKNOWN' END AS type,
         y.stream_id, y.context_id, y.event_id, y.result, y.start, y.end,
         y.end - y.start AS duration, y.correlation_id AS corr_id
  FROM gpuprof_synchronization y JOIN gpuprof_process p ON p.id = y.process_id;
CREATE VIEW overheads AS
  SELECT o.id, p.pid, o.tid, o.agent_index AS agent_id,
         CASE o.kind WHEN 1 THEN 'COMPILER' WHEN 2 THEN 'BUFFER_FLUSH'
                     WHEN 3 THEN 'INSTRUMENTATION' WHEN 4 THEN 'RESOURCE'
                     WHEN 5 THEN 'MODULE_LOADING' WHEN 6 THEN 'COMMAND_BUFFER_FULL'
                     WHEN 7 THEN 'BUFFER_REQUEST' WHEN 8 THEN 'OTHER'
                     ELSE 'UNKNOWN' END AS kind,
         o.start, o.end, o.end - o.start AS duration
  FROM gpuprof_overhead o JOIN gpuprof_process p ON p.id = o.process_id;
CREATE VIEW markers AS
  SELECT m.id, CASE m.kind WHEN 2 THEN 'MARKER_CORE_RANGE_API' ELSE 'MARKER_CORE_API' END
           AS category,
         CASE m.kind WHEN 1 THEN 'PUSH_POP' WHEN 2 THEN 'START_STOP' WHEN 3 THEN 'MARK'
                     ELSE 'UNKNOWN' END AS kind,
         s.string AS name, COALESCE(d.string, '') AS domain, p.pid, m.tid, m.end_tid,
         m.start, m.end, m.end - m.start AS duration, m.range_id, m.parent_id, m.ended,
         COALESCE(u.string, '') AS module_path
  FROM gpuprof_marker m JOIN gpuprof_process p ON p.id = m.process_id
  LEFT JOIN gpuprof_string s ON s.id = m.name_id
  LEFT JOIN gpuprof_string d ON d.id = m.domain_id
  LEFT JOIN gpuprof_string u ON u.id = m.module_id;
CREATE VIEW threads AS
  SELECT DISTINCT p.pid, t.tid, n.string AS name FROM (
    SELECT process_id, tid FROM gpuprof_api_call UNION
    SELECT process_id, tid FROM gpuprof_kernel UNION
    SELECT process_id, tid FROM gpuprof_memory_copy UNION
    SELECT process_id, tid FROM gpuprof_memory_allocation UNION
    SELECT process_id, tid FROM gpuprof_synchronization UNION
    SELECT process_id, tid FROM gpuprof_marker UNION
    SELECT process_id, tid FROM gpuprof_thread) t
  JOIN gpuprof_process p ON p.id = t.process_id
  LEFT JOIN gpuprof_thread h ON h.process_id = t.process_id AND h.tid = t.tid
  LEFT JOIN gpuprof_string n ON n.id = h.name_id WHERE t.tid != 0;
CREATE VIEW metrics AS
  SELECT m.id, p.pid AS recorded_pid,
         CASE s.source WHEN 1 THEN 'HOST' WHEN 2 THEN 'PROCESS' WHEN 3 THEN 'GPU'
                       ELSE 'UNKNOWN' END AS source,
         s.device, CASE s.source WHEN 2 THEN s.pid END AS pid, s.name, s.unit,
         m.series_id AS series, m.time, m.value
  FROM gpuprof_metric m JOIN gpuprof_process p ON p.id = m.process_id
  JOIN gpuprof_metric_series s ON s.process_id = m.process_id AND s.series_id = m.series_id;
CREATE VIEW stacks AS
  SELECT p.pid, k.stack_id, k.parent_id, f.function, f.module, f.offset, f.source, f.line,
         f.inlined
  FROM gpuprof_stack k JOIN gpuprof_process p ON p.id = k.process_id
  JOIN gpuprof_frame f ON f.process_id = k.process_id AND f.frame_id = k.frame_id;
CREATE VIEW samples AS
  SELECT s.id, p.pid, s.tid, s.time, s.stack_id, f.function, f.module
  FROM gpuprof_sample s JOIN gpuprof_process p ON p.id = s.process_id
  LEFT JOIN gpuprof_stack k ON k.process_id = s.process_id AND k.stack_id = s.stack_id
  LEFT JOIN gpuprof_frame f ON f.process_id = k.process_id AND f.frame_id = k.frame_id;
CREATE VIEW counters AS
  SELECT c.id, p.pid, k.id AS kernel_row, k.dispatch_id, s.string AS kernel_name,
         c.agent_index AS agent_id, n.string AS name, c.value, k.correlation_id AS corr_id,
         k.start, k.end
  FROM gpuprof_counter c JOIN gpuprof_process p ON p.id = c.process_id
  JOIN gpuprof_kernel k ON k.process_id = c.process_id AND k.correlation_id = c.correlation_id
  LEFT JOIN gpuprof_string s ON s.id = k.name_id
  LEFT JOIN gpuprof_string n ON n.id = c.name_id;
CREATE VIEW pc_samples AS
  SELECT s.id, p.pid, s.agent_index AS agent_id, f.string AS kernel_name,
         s.correlation_id AS corr_id, printf('%016x', s.cubin_crc) AS cubin_crc, s.pc_offset,
         src.string AS source_file, NULLIF(s.line, 0) AS line,
         replace(replace(r.string, 'smsp__pcsamp_warps_issue_stalled_', ''), '_not_issued', '')
           AS reason,
         substr(r.string, -11) = '_not_issued' AS not_issued, r.string AS stall_reason,
         s.samples
  FROM gpuprof_pc_sample s JOIN gpuprof_process p ON p.id = s.process_id
  LEFT JOIN gpuprof_string f ON f.id = s.function_id
  LEFT JOIN gpuprof_string r ON r.id = s.reason_id
  LEFT JOIN gpuprof_string src ON src.id = s.file_id AND s.file_id != 0;
CREATE VIEW pc_sampling AS
  SELECT p.pid, t.agent_index AS agent_id, max(t.period_log2) AS period_log2,
         sum(t.samples) AS samples, sum(t.dropped) AS dropped,
         sum(t.other_samples) AS other_samples, sum(t.buffer_full) AS buffer_full
  FROM gpuprof_pc_sampling t JOIN gpuprof_process p ON p.id = t.process_id
  GROUP BY t.process_id, t.agent_index;
-- Communication calls: MPI (--mpi-trace) and torch.distributed (--torch-trace); a
-- nonblocking call's peer, tag and bytes received are its completion's where it has one
-- (a receive from any source learns its source there)
CREATE VIEW mpi_calls AS
  SELECT c.id, c.process_id, p.pid, COALESCE(p.rank, -1) AS rank, c.tid, c.call_id,
         CASE c.domain WHEN 2 THEN 'TORCH_DISTRIBUTED' WHEN 3 THEN 'NCCL' ELSE 'MPI' END
           AS domain,
         f.string AS function, c.start, c.end, c.end - c.start AS duration,
         m.string AS communicator, c.communicator_size,
         CASE WHEN d.peer IS NOT NULL AND d.peer >= 0 THEN d.peer ELSE c.peer END AS peer,
         CASE WHEN d.tag IS NOT NULL AND d.tag >= 0 THEN d.tag ELSE c.tag END AS tag,
         c.root, c.bytes_sent,
         CASE WHEN d.request IS NOT NULL AND d.bytes_received > 0 THEN d.bytes_received
              ELSE c.bytes_received END AS bytes_received,
         c.bytes_sent + CASE WHEN d.request IS NOT NULL AND d.bytes_received > 0
                             THEN d.bytes_received ELSE c.bytes_received END AS bytes,
         c.sequence, c.request, d.time AS completed, d.completed_by, c.result
  FROM gpuprof_mpi_call c JOIN gpuprof_process p ON p.id = c.process_id
  LEFT JOIN gpuprof_string f ON f.id = c.function_id
  LEFT JOIN gpuprof_string m ON m.id = c.communicator_id
  LEFT JOIN gpuprof_mpi_completion d ON d.process_id = c.process_id AND d.request = c.request
                                    AND c.request > 0;
CREATE VIEW clock_syncs AS
  SELECT s.process_id, p.pid, p.hostname, s.rank, s.size, s.local_time, s.offset,
         s.round_trip FROM gpuprof_clock_sync s JOIN gpuprof_process p ON p.id = s.process_id;
