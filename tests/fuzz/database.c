/* Fuzz target: the database reader that `convert`, `summary` and `merge` use. The input
 * is a database file; it becomes CSV, JSON, pftrace and the summary written at the end
 * of a trace, then `gpuprof summary`'s tables, then is merged into a new database. */
#include <stdio.h>

#include "commands.h"
#include "fuzz.h"
#include "output.h"
#include "store/store.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *input = (char *)fuzz_file("input.db", data, size);
	char prefix[4096], merged[4096];
	snprintf(prefix, sizeof(prefix), "%s/out", fuzz_directory());
	snprintf(merged, sizeof(merged), "%s/merged.db", fuzz_directory());
	struct output_request request = {
		.formats = FORMAT_CSV | FORMAT_JSON | FORMAT_PFTRACE,
		.summary = 1,
		.options = { .truncate_kernels = 1, .stats = 1, .summary_units = "msec" },
	};
	struct error err;
	output_from_database(input, prefix, &request, &err);
	summary_print(&input, 1, "text", "usec", &err);
	remove(merged);
	store_merge(&input, 1, merged, &err);
	return 0;
}
