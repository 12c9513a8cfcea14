/* gpuprof help [COMMAND]: the command list, or one command's options. */
#include <stdio.h>
#include <string.h>

#include "commands/commands.h"
#include "util/error.h"

int cmd_help(int argc, char **argv)
{
	if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		commands_print_usage(stdout);
		return 0;
	}
	const struct command *c = command_find(argv[1]);
	if (!c) {
		const char *suggestion = command_suggest(argv[1]);
		if (suggestion)
			die_with(EXIT_USAGE, "no help for '%s'; did you mean '%s'?", argv[1], suggestion);
		die_with(EXIT_USAGE, "no help for '%s': not a gpuprof command", argv[1]);
	}
	if (c->run == cmd_help) {
		commands_print_usage(stdout);
		return 0;
	}
	char *args[] = { (char *)c->name, "--help", NULL };
	return c->run(2, args);
}
