/* What the commands share (commands.h). */
#include <stdio.h>
#include <stdlib.h>

#include "commands/commands.h"
#include "util/error.h"
#include "util/options.h"

int command_parse_inputs(const char *name, const char *usage, const char *description,
			 const struct option *table, const int *help, const char *what,
			 int argc, char **argv, char ***inputs, int *count)
{
	struct error err;
	if (options_parse_mixed(table, argc, argv, inputs, count, &err))
		die_with(EXIT_USAGE, "%s: %s", name, err.message);
	if (*help == 1) {
		options_print_help(stdout, usage, description, table);
		free(*inputs);
		*inputs = NULL;
		return 1;
	}
	if (!*count)
		die_with(EXIT_USAGE, "%s: no %s given (usage: %s)", name, what, usage);
	return 0;
}
