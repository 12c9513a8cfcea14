/* Fuzz target: output path placeholders (-d and -o of `gpuprof trace`). The input is
 * the template, expanded for a fixed process. */
#include <stdlib.h>
#include <string.h>

#include "core/paths.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int environment_set;
	if (!environment_set++) {
		setenv("GPUPROF_FUZZ_A", "value", 1);
		setenv("GPUPROF_FUZZ_EMPTY", "", 1);
	}
	char *template = malloc(size + 1);
	memcpy(template, data, size);
	template[size] = '\0';
	const struct path_context ctx = {
		.pid = 4242, .ppid = 1, .hostname = "node-7", .rank = 3, .size = 16,
		.launch_time = 1763700000,
	};
	struct strbuf out = STRBUF_INIT;
	struct error err;
	path_expand(template, &ctx, &out, &err);
	strbuf_release(&out);
	free(template);
	return 0;
}
