UPDATE gpuprof_string SET string = 'ncclDevKernel_AllReduce_Sum_f32_RING_LL' WHERE id = (SELECT MIN(name_id) FROM gpuprof_kernel);
UPDATE gpuprof_kernel SET name_id = (SELECT MIN(name_id) FROM gpuprof_kernel) WHERE id % 2 = 0;
UPDATE gpuprof_kernel SET start = -9223372036854775808 WHERE id % 3 = 0;
UPDATE gpuprof_kernel SET end = 9223372036854775807 WHERE id % 3 != 1;
UPDATE gpuprof_memory_allocation SET start = -9223372036854775808, end = 9223372036854775807 WHERE id % 2 = 0;
