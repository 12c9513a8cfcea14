/* Fuzz target: input files (`gpuprof trace -i FILE`, presets), JSON or YAML. The input
 * is the file; each job it holds is applied to an option table with every kind of
 * option, as `gpuprof trace` applies them. */
#include "fuzz.h"
#include "commands/input-file.h"
#include "util/options.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path = fuzz_file("input.yaml", data, size);
	struct input_file in;
	struct error err;
	if (input_read(path, &in, &err))
		return 0;
	for (size_t i = 0; i < in.count; i++) {
		int flag = -1;
		const char *text = NULL, *choice = NULL;
		struct option_list list = { 0 };
		unsigned long long bytes = 0;
		const struct option table[] = {
			{ OPTION_SECTION, 0, NULL, NULL, NULL, "section" },
			{ OPTION_BOOL, 'k', "kernel-trace", &flag, NULL, "a flag" },
			{ OPTION_STRING, 'd', "output-directory", &text, "DIR", "a string" },
			{ OPTION_LIST, 'f', "output-format", &list, "F", "a list", "csv|json" },
			{ OPTION_SIZE, 0, "buffer-size", &bytes, "SIZE", "a size" },
			{ OPTION_ENUM, 0, "units", &choice, "sec|msec", "a choice" },
			{ OPTION_STRING, 'o', "output-file", &text, "FILE", "refused" },
			OPTION_END,
		};
		static const char *const refused[] = { "output-file", NULL };
		input_apply(&in, &in.jobs[i], table, refused, &err);
	}
	options_release();
	input_release(&in);
	return 0;
}
