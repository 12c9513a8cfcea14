/* Writing a workload directory's pmc_perf.csv from a database (see workload.h). */
#include "compute/workload.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metrics/nvml.h"
#include "store/store.h"
#include "util/strbuf.h"
#include "util/csv-format.h"

/* The distinct counter names of the database, in the order first recorded (malloc()ed,
 * as the array). */
static int counter_names(sqlite3 *db, char ***names, size_t *count, struct error *err)
{
	sqlite3_stmt *s;
	*names = NULL;
	*count = 0;
	if (!store_has_table(db, "gpuprof_counter"))
		return 0;
	if (store_prepare(db, "SELECT n.string FROM gpuprof_counter c JOIN gpuprof_string n "
			  "ON n.id = c.name_id GROUP BY n.string ORDER BY MIN(c.id)", &s, err))
		return -1;
	while (sqlite3_step(s) == SQLITE_ROW) {
		const unsigned char *name = sqlite3_column_text(s, 0);
		*names = xrealloc(*names, (*count + 1) * sizeof(**names));
		(*names)[(*count)++] = xstrdup(name ? (const char *)name : "");
	}
	sqlite3_finalize(s);
	return 0;
}

static void add_number(struct strbuf *line, double value)
{
	if (isnan(value))
		strbuf_addch(line, ',');
	else
		strbuf_addf(line, ",%.17g", value);
}

int workload_write_dispatches(sqlite3 *db, FILE *out, size_t *rows, struct error *err)
{
	struct strbuf line = STRBUF_INIT;
	char **columns;
	size_t count;
	*rows = 0;
	if (counter_names(db, &columns, &count, err))
		return -1;
	double *values = xcalloc(count ? count : 1, sizeof(*values));
	sqlite3_stmt *kernels = NULL, *counters = NULL;
	int has_counters = store_has_table(db, "gpuprof_counter");
	int rc = store_prepare(db, "SELECT k.dispatch_id, IFNULL(a.device_index, 0), "
			       "k.grid_x * k.grid_y * k.grid_z, "
			       "NULLIF(k.workgroup_x * k.workgroup_y * k.workgroup_z, 0), "
			       "k.local_memory_bytes, "
			       "k.private_memory_bytes, k.registers, IFNULL(s.string, ''), k.start, "
			       "k.end, k.process_id, k.correlation_id FROM gpuprof_kernel k "
			       "LEFT JOIN gpuprof_string s ON s.id = k.name_id "
			       "LEFT JOIN gpuprof_agent a ON a.process_id = k.process_id "
			       "AND a.agent_index = k.agent_index ORDER BY k.id", &kernels, err);
	long long processes = 0;
	sqlite3_stmt *count_processes = NULL;
	if (rc == 0 && (rc = store_prepare(db, "SELECT COUNT(DISTINCT process_id) FROM "
					   "gpuprof_kernel", &count_processes, err)) == 0) {
		if (sqlite3_step(count_processes) == SQLITE_ROW)
			processes = sqlite3_column_int64(count_processes, 0);
		sqlite3_finalize(count_processes);
	}
	if (rc == 0 && has_counters)
		rc = store_prepare(db, "SELECT n.string, c.value FROM gpuprof_counter c "
				   "JOIN gpuprof_string n ON n.id = c.name_id "
				   "WHERE c.process_id = ? AND c.correlation_id = ? ORDER BY c.id",
				   &counters, err);
	if (rc == 0) {
		strbuf_addstr(&line, "Dispatch_ID,GPU_ID,Grid_Size,Workgroup_Size,LDS_Per_Workgroup,"
				     "Scratch_Per_Workitem,Registers_Per_Thread,Kernel_Name,"
				     "Start_Timestamp,End_Timestamp");
		for (size_t i = 0; i < count; i++)
			csv_text(&line, columns[i]);
		fprintf(out, "%s\n", line.buf);
	}
	int step;
	while (rc == 0 && (step = sqlite3_step(kernels)) == SQLITE_ROW) {
		for (size_t i = 0; i < count; i++)
			values[i] = NAN;
		if (counters) {
			sqlite3_bind_int64(counters, 1, sqlite3_column_int64(kernels, 10));
			sqlite3_bind_int64(counters, 2, sqlite3_column_int64(kernels, 11));
			while (sqlite3_step(counters) == SQLITE_ROW) {
				const char *name = (const char *)sqlite3_column_text(counters, 0);
				for (size_t i = 0; name && i < count; i++)
					if (!strcmp(columns[i], name) &&
					    sqlite3_column_type(counters, 1) != SQLITE_NULL)
						values[i] = sqlite3_column_double(counters, 1);
			}
			sqlite3_reset(counters);
		}
		strbuf_reset(&line);
		/* a workload's Dispatch_ID names one dispatch: the process's own where there
		 * is one process, the dispatch's place in the recording where there are more */
		csv_int(&line, processes > 1 ? (long long)*rows + 1 : sqlite3_column_int64(kernels, 0));
		for (int c = 1; c < 7; c++) /* a NULL (a size the runtime chose): empty */
			if (sqlite3_column_type(kernels, c) == SQLITE_NULL)
				csv_empty(&line);
			else
				csv_int(&line, sqlite3_column_int64(kernels, c));
		csv_text(&line, (const char *)sqlite3_column_text(kernels, 7));
		csv_int(&line, sqlite3_column_int64(kernels, 8));
		csv_int(&line, sqlite3_column_int64(kernels, 9));
		for (size_t i = 0; i < count; i++)
			add_number(&line, values[i]);
		fprintf(out, "%s\n", line.buf);
		++*rows;
	}
	if (rc == 0 && step != SQLITE_DONE)
		rc = error_set(err, "cannot read '%s': %s", sqlite3_db_filename(db, "main"),
			       sqlite3_errmsg(db));
	sqlite3_finalize(kernels);
	sqlite3_finalize(counters);
	free(values);
	for (size_t i = 0; i < count; i++)
		free(columns[i]);
	free(columns);
	strbuf_release(&line);
	return rc;
}

/* What a compute capability's SMs hold and do that no device attribute in the trace
 * gives: the occupancy limits of the CUDA C++ Programming Guide's table of technical
 * specifications per compute capability (shared memory: the most an SM can be configured
 * with), and the arithmetic of one SM per clock (the Guide's table of arithmetic
 * instruction throughput: FP32, FP64 and FP16 results per clock; dense FP16 tensor FLOP
 * with FP32 accumulation from NVIDIA's architecture whitepapers). 0 where the generation's
 * parts differ (the FP16 tensor rate of 8.6 and 8.9 products) or no figure is published. */
static const struct {
	int major, minor;
	int max_warps_per_sm, max_blocks_per_sm, registers_per_sm, register_allocation_unit;
	int shared_memory_per_sm, shared_memory_reserved_per_block, shared_memory_allocation_unit;
	int fp32_per_clock, fp64_per_clock, fp16_per_clock, tensor_fp16_flop_per_clock;
} limits[] = {
	{ 7, 0, 64, 32, 65536, 256, 98304, 0, 256, 64, 32, 128, 1024 },
	{ 7, 5, 32, 16, 65536, 256, 65536, 0, 256, 64, 2, 128, 1024 },
	{ 8, 0, 64, 32, 65536, 256, 167936, 1024, 128, 64, 32, 256, 2048 },
	{ 8, 6, 48, 16, 65536, 256, 102400, 1024, 128, 128, 2, 128, 0 },
	{ 8, 7, 48, 16, 65536, 256, 167936, 1024, 128, 128, 2, 128, 0 },
	{ 8, 9, 48, 24, 65536, 256, 102400, 1024, 128, 128, 2, 128, 0 },
	{ 9, 0, 64, 32, 65536, 256, 233472, 1024, 128, 128, 64, 256, 4096 },
	{ 10, 0, 64, 32, 65536, 256, 233472, 1024, 128, 128, 64, 0, 0 },
	{ 12, 0, 48, 32, 65536, 256, 102400, 1024, 128, 128, 2, 0, 0 },
};

/* Splits a CUDA device's driver_version, "580.65.06 (CUDA 13.0)" (inject/cuda/cuda.c),
 * into the module's version and the CUDA version; either may be empty. */
static void split_driver_version(const char *text, struct strbuf *driver, struct strbuf *cuda)
{
	const char *open = strstr(text, "(CUDA ");
	const char *close = open ? strchr(open, ')') : NULL;
	if (!close) {
		strbuf_addstr(driver, text);
		return;
	}
	const char *end = open;
	while (end > text && end[-1] == ' ')
		end--;
	strbuf_add(driver, text, (size_t)(end - text));
	strbuf_add(cuda, open + 6, (size_t)(close - open - 6));
}

/* A numeric fact: its column, and its value or an empty field where it is 0 (the device
 * did not say, or the figure is not known). */
static void add_fact(struct strbuf *header, struct strbuf *row, const char *name, double value)
{
	strbuf_addf(header, ",%s", name);
	if (value > 0)
		strbuf_addf(row, ",%.17g", value);
	else
		strbuf_addch(row, ',');
}

/* The memory bus width (bits) and maximum memory clock (MHz) of the GPU of this UUID,
 * which CUPTI's device record does not give: NVML's, where that GPU is in this machine
 * (compute profile writes a workload where it ran); 0 otherwise. */
static void memory_facts(const char *uuid, unsigned *bus_bits, unsigned *clock_mhz)
{
	struct strbuf why = STRBUF_INIT; /* no NVML: the facts stay unknown */
	struct nvml *n = uuid && *uuid ? nvml_open(&why) : NULL;
	*bus_bits = *clock_mhz = 0;
	if (n)
		nvml_memory(n, uuid, bus_bits, clock_mhz);
	nvml_close(n);
	strbuf_release(&why);
}

int workload_write_facts(sqlite3 *db, FILE *out, struct error *err)
{
	sqlite3_stmt *s;
	if (store_prepare(db, "SELECT p.hostname, a.name, a.compute_units, a.warp_size, "
			  "a.l2_cache_bytes, a.memory_bandwidth, a.max_clock_mhz, "
			  "a.global_memory_bytes, a.compute_major, a.compute_minor, "
			  "IFNULL(a.driver_version, ''), a.uuid "
			  "FROM agents a JOIN processes p ON p.id = a.process_id "
			  "WHERE a.type = 'GPU' ORDER BY a.process_id, a.agent_id LIMIT 1", &s, err))
		return -1;
	if (sqlite3_step(s) != SQLITE_ROW) {
		sqlite3_finalize(s);
		return error_set(err, "'%s' has no GPU: nothing to analyze",
				 sqlite3_db_filename(db, "main"));
	}
	struct strbuf header = STRBUF_INIT, row = STRBUF_INIT;
	struct strbuf driver = STRBUF_INIT, cuda = STRBUF_INIT;
	strbuf_addstr(&header, "host_name,gpu_name,driver_version,cuda_version");
	for (int c = 0; c < 2; c++) {
		const unsigned char *v = sqlite3_column_text(s, c);
		csv_text(&row, v ? (const char *)v : "");
	}
	split_driver_version((const char *)sqlite3_column_text(s, 10), &driver, &cuda);
	csv_text(&row, driver.buf);
	csv_text(&row, cuda.buf);
	strbuf_release(&driver);
	strbuf_release(&cuda);
	unsigned bus_bits, memory_mhz;
	memory_facts((const char *)sqlite3_column_text(s, 11), &bus_bits, &memory_mhz);
	const struct {
		const char *name;
		double value;
	} facts[] = {
		{ "sm_count", (double)sqlite3_column_int64(s, 2) },
		{ "warp_size", (double)sqlite3_column_int64(s, 3) },
		{ "l2_bytes", (double)sqlite3_column_int64(s, 4) },
		{ "dram_bandwidth", (double)sqlite3_column_int64(s, 5) },
		{ "sm_clock_hz", sqlite3_column_int64(s, 6) * 1e6 },
		{ "dram_bytes", (double)sqlite3_column_int64(s, 7) },
		{ "memory_bus_bits", (double)bus_bits },
		{ "memory_clock_hz", memory_mhz * 1e6 },
	};
	for (size_t i = 0; i < sizeof(facts) / sizeof(facts[0]); i++)
		add_fact(&header, &row, facts[i].name, facts[i].value);
	int major = sqlite3_column_int(s, 8), minor = sqlite3_column_int(s, 9);
	strbuf_addf(&header, ",compute_capability");
	strbuf_addf(&row, ",%d.%d", major, minor);
	for (size_t i = 0; i < sizeof(limits) / sizeof(limits[0]); i++) {
		if (limits[i].major != major || limits[i].minor != minor)
			continue;
		strbuf_addstr(&header, ",max_warps_per_sm,max_blocks_per_sm,registers_per_sm,"
				       "register_allocation_unit,shared_memory_per_sm,"
				       "shared_memory_reserved_per_block,shared_memory_allocation_unit");
		strbuf_addf(&row, ",%d,%d,%d,%d,%d,%d,%d", limits[i].max_warps_per_sm,
			    limits[i].max_blocks_per_sm, limits[i].registers_per_sm,
			    limits[i].register_allocation_unit, limits[i].shared_memory_per_sm,
			    limits[i].shared_memory_reserved_per_block,
			    limits[i].shared_memory_allocation_unit);
		/* theoretical peaks: every SM at the maximum clock, 2 FLOP per multiply-add */
		double sm_clocks = facts[0].value * facts[4].value;
		add_fact(&header, &row, "peak_fp64_flops", 2.0 * limits[i].fp64_per_clock * sm_clocks);
		add_fact(&header, &row, "peak_fp32_flops", 2.0 * limits[i].fp32_per_clock * sm_clocks);
		add_fact(&header, &row, "peak_fp16_flops", 2.0 * limits[i].fp16_per_clock * sm_clocks);
		add_fact(&header, &row, "peak_tensor_fp16_flops",
			 (double)limits[i].tensor_fp16_flop_per_clock * sm_clocks);
	}
	fprintf(out, "%s\n%s\n", header.buf, row.buf);
	strbuf_release(&header);
	strbuf_release(&row);
	sqlite3_finalize(s);
	return 0;
}
