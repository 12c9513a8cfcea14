/* Fuzz target: the command-line option parser. The input is a command line, its
 * arguments separated by NUL bytes; it is parsed as options then operands, and as
 * options mixed with operands, against a table with every kind of option. */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "util/options.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	char *argv[66] = { "gpuprof" };
	int argc = 1;
	memcpy(text, data, size);
	text[size] = '\0';
	for (char *p = text; p <= text + size && argc < 65; p += strlen(p) + 1)
		argv[argc++] = p;
	argv[argc] = NULL;

	int flag = -1, other = -1, next, count;
	const char *text_value = NULL, *choice = NULL;
	struct option_list list = { 0 };
	unsigned long long bytes = 0;
	const struct option table[] = {
		{ OPTION_SECTION, 0, NULL, NULL, NULL, "tracing" },
		{ OPTION_BOOL, 0, "kernel-trace", &flag, NULL, "a flag" },
		{ OPTION_BOOL, 's', "sys-trace", &other, NULL, "a flag with a short name" },
		{ OPTION_STRING, 'd', "output-directory", &text_value, "DIR", "a string" },
		{ OPTION_LIST, 'f', "output-format", &list, "F", "a list", "csv|sqlite|json" },
		{ OPTION_SIZE, 0, "buffer-size", &bytes, "SIZE", "a size" },
		{ OPTION_ENUM, 'u', "units", &choice, "sec|msec|usec", "a choice" },
		OPTION_END,
	};
	struct error err;
	options_parse(table, argc, argv, &next, &err);
	char **operands = NULL;
	list.count = 0;
	if (options_parse_mixed(table, argc, argv, &operands, &count, &err) == 0)
		free(operands);
	options_release();
	free(text);
	return 0;
}
