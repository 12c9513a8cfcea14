-- gpuprof database schema (docs/SCHEMA.md). Tables hold the recorded data with
-- numeric codes; the views give it the names and units users query.
PRAGMA user_version = 1;
CREATE TABLE gpuprof_metadata (tag TEXT PRIMARY KEY, value TEXT);
CREATE TABLE gpuprof_string (id INTEGER PRIMARY KEY, string TEXT NOT NULL);
CREATE TABLE gpuprof_process (
  id INTEGER PRIMARY KEY, hostname TEXT, pid INTEGER, ppid INTEGER, rank INTEGER,
  size INTEGER, command TEXT, start INTEGER, end INTEGER, realtime_start INTEGER,
  clean_exit INTEGER);
CREATE TABLE gpuprof_agent (
  process_id INTEGER, agent_index INTEGER, type INTEGER, name_id INTEGER,
  vendor_name_id INTEGER, driver_version_id INTEGER, vendor_id INTEGER,
  compute_units INTEGER, max_clock_mhz INTEGER, global_memory_bytes INTEGER,
  local_memory_bytes INTEGER, max_workgroup_size INTEGER, max_workgroup_x INTEGER,
  max_workgroup_y INTEGER, max_workgroup_z INTEGER,
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
  local_memory_bytes INTEGER, private_memory_bytes INTEGER, status INTEGER);
CREATE TABLE gpuprof_memory_copy (
  id INTEGER PRIMARY KEY, process_id INTEGER, tid INTEGER, queue_index INTEGER,
  src_agent_index INTEGER, dst_agent_index INTEGER, operation INTEGER, direction INTEGER,
  function_id INTEGER, bytes INTEGER, correlation_id INTEGER, start INTEGER, end INTEGER,
  status INTEGER);
CREATE TABLE gpuprof_dropped (process_id INTEGER, reason TEXT, records INTEGER, bytes INTEGER);

CREATE VIEW processes AS
  SELECT id, hostname, pid, ppid, rank, size, command, start, end, end - start AS duration,
         realtime_start, clean_exit FROM gpuprof_process;
CREATE VIEW agents AS
  SELECT a.process_id, p.pid, a.agent_index AS agent_id,
         CASE a.type WHEN 1 THEN 'CPU' WHEN 2 THEN 'GPU' WHEN 3 THEN 'ACCELERATOR'
                     ELSE 'OTHER' END AS type,
         n.string AS name, v.string AS vendor_name, d.string AS driver_version, a.vendor_id,
         a.compute_units, a.max_clock_mhz, a.global_memory_bytes, a.local_memory_bytes,
         a.max_workgroup_size, a.max_workgroup_x, a.max_workgroup_y, a.max_workgroup_z
  FROM gpuprof_agent a JOIN gpuprof_process p ON p.id = a.process_id
  LEFT JOIN gpuprof_string n ON n.id = a.name_id
  LEFT JOIN gpuprof_string v ON v.id = a.vendor_name_id
  LEFT JOIN gpuprof_string d ON d.id = a.driver_version_id;
CREATE VIEW regions AS
  SELECT r.id, CASE r.domain WHEN 1 THEN 'OPENCL_API' ELSE 'UNKNOWN_API' END AS category,
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
         k.queue_index AS stream_id, k.start, k.end, k.end - k.start AS duration,
         k.grid_x, k.grid_y, k.grid_z, k.workgroup_x, k.workgroup_y, k.workgroup_z,
         k.local_memory_bytes AS lds_size, k.private_memory_bytes AS scratch_size,
         k.correlation_id AS corr_id, k.status
  FROM gpuprof_kernel k JOIN gpuprof_process p ON p.id = k.process_id
  LEFT JOIN gpuprof_string s ON s.id = k.name_id
  LEFT JOIN gpuprof_agent a ON a.process_id = k.process_id AND a.agent_index = k.agent_index;
CREATE VIEW memory_copies AS
  SELECT c.id, 'MEMORY_COPY' AS category, s.string AS name, p.pid, c.tid,
         CASE c.operation WHEN 1 THEN 'COPY' WHEN 2 THEN 'FILL' WHEN 3 THEN 'MAP'
                          WHEN 4 THEN 'UNMAP' ELSE 'UNKNOWN' END AS operation,
         CASE c.direction WHEN 1 THEN 'MEMORY_COPY_HOST_TO_DEVICE'
                          WHEN 2 THEN 'MEMORY_COPY_DEVICE_TO_HOST'
                          WHEN 3 THEN 'MEMORY_COPY_DEVICE_TO_DEVICE'
                          WHEN 4 THEN 'MEMORY_COPY_HOST_TO_HOST'
                          ELSE 'MEMORY_COPY_NONE' END AS direction,
         c.src_agent_index AS src_agent_id, c.dst_agent_index AS dst_agent_id,
         c.queue_index AS queue_id, c.queue_index AS stream_id, c.bytes AS size,
         c.start, c.end, c.end - c.start AS duration, c.correlation_id AS corr_id, c.status
  FROM gpuprof_memory_copy c JOIN gpuprof_process p ON p.id = c.process_id
  LEFT JOIN gpuprof_string s ON s.id = c.function_id;
CREATE VIEW threads AS
  SELECT DISTINCT p.pid, t.tid FROM (
    SELECT process_id, tid FROM gpuprof_api_call UNION
    SELECT process_id, tid FROM gpuprof_kernel UNION
    SELECT process_id, tid FROM gpuprof_memory_copy) t
  JOIN gpuprof_process p ON p.id = t.process_id;
