/* Fuzz target: the files of a gpuprof compute workload (pmc_perf.csv, sysinfo.csv,
 * roofline.csv, profiling_config.yaml). The input is the text of pmc_perf.csv, then a NUL
 * and the text of sysinfo.csv, then a NUL and the text of roofline.csv, then a NUL and the
 * text of profiling_config.yaml (its iteration multiplexing applied to the dispatches);
 * what reads is looked up as analyze does: every metric column, the launch.*, device.*
 * and roofline.* values. */
#include <stdlib.h>
#include <string.h>

#include "compute/workload.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text = (const char *)data;
	const char *nul = memchr(text, '\0', size);
	size_t first = nul ? (size_t)(nul - text) : size;
	struct workload w;
	struct error err;
	memset(&w, 0, sizeof(w));
	static const char *const derived[] = {
		"launch.grid_size", "launch.block_size", "launch.registers_per_thread",
		"launch.shared_memory_per_block", "launch.occupancy_warps", "launch.waves_per_sm",
		"launch.duration", "device.sm_count", "launch.unknown", "device.unknown",
		"roofline.HBMBw", "roofline.FP32Flops", "roofline.MFMAI8Ops", "roofline.unknown",
	};
	const char *second = nul ? memchr(nul + 1, '\0', size - first - 1) : NULL;
	size_t facts = second ? (size_t)(second - nul - 1) : nul ? size - first - 1 : 0;
	const char *third = second ? memchr(second + 1, '\0', size - (size_t)(second + 1 - text))
				   : NULL;
	size_t roof_size = third ? (size_t)(third - second - 1)
			   : second ? size - (size_t)(second + 1 - text) : 0;
	struct roofline roof;
	if (second && roofline_parse_csv("roof", second + 1, roof_size, &roof, &err) == 0)
		w.roofline = &roof;
	char *config = NULL;
	if (third) {
		size_t n = size - (size_t)(third + 1 - text);
		config = malloc(n + 1);
		memcpy(config, third + 1, n);
		config[n] = '\0';
	}
	if (workload_parse_dispatches("pmc", text, first, &w, &err) == 0 &&
	    (!nul || workload_parse_facts("sys", nul + 1, facts, &w, &err) == 0) &&
	    (!config || workload_parse_config("config", config, &w, &err) == 0)) {
		workload_multiplex(&w);
		for (size_t d = 0; d < w.count; d++) {
			struct workload_context c = { &w, &w.dispatches[d] };
			double v;
			for (size_t i = 0; i < w.column_count; i++)
				workload_lookup(w.columns[i], &v, &c);
			for (size_t i = 0; i < sizeof(derived) / sizeof(derived[0]); i++)
				workload_lookup(derived[i], &v, &c);
		}
	}
	free(config);
	w.roofline = NULL; /* not the reader's: on the stack */
	workload_release(&w);
	return 0;
}
