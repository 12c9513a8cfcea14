/* What the files of gpuprof dump share: dump.c (the command, the threads' copies) and
 * dump-python.c (the Python frames of a process), which write one spool of records. */
#ifndef GPUPROF_COMMANDS_DUMP_H
#define GPUPROF_COMMANDS_DUMP_H

#include <stdint.h>

#include "util/strbuf.h"

struct spool_out {
	int fd;
	struct strbuf chunk;  /* the chunk being filled */
	uint32_t count, strings;
};

/* A record into the spool; a string as a record, its id returned. */
void dump_put(struct spool_out *s, const void *record);
uint32_t dump_put_string(struct spool_out *s, const char *text);

/* The Python functions of each thread of process pid that runs CPython (3.11), as
 * records of time now, and the thread that holds the GIL (*gil; 0: none): how many
 * threads had some; 0 when it runs no CPython whose frames can be read (nothing
 * written). */
int dump_python(struct spool_out *s, int pid, uint64_t now, int *gil);

#endif
