/* gpuprof version: the version, the spool format and the database schema it writes. */
#include <stdio.h>
#include <string.h>

#include "commands/commands.h"
#include "core/spool.h"
#include "store/store.h"
#include "util/error.h"

int cmd_version(int argc, char **argv)
{
	if (argc > 1 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		printf("usage: gpuprof version\n\nPrints the gpuprof version, the spool format "
		       "version and the database schema version.\n");
		return 0;
	}
	if (argc > 1)
		die_with(EXIT_USAGE, "version takes no arguments");
	printf("gpuprof %s (spool format %d, database schema %s)\n", GPUPROF_VERSION,
	       SPOOL_VERSION, STORE_SCHEMA_VERSION);
	return 0;
}
