/* What the files of gpuprof dump share: dump.c (the command, the threads' copies) and
 * dump-python.c (the Python frames of a process), which write one spool of records. */
#ifndef GPUPROF_COMMANDS_DUMP_H
#define GPUPROF_COMMANDS_DUMP_H

#include <stdint.h>

#include "util/error.h"
#include "util/strbuf.h"

struct spool_out {
	int fd;
	struct strbuf chunk;  /* the chunk being filled */
	uint32_t count, strings;
	int failed;           /* a write failed (err says why): nothing more is written */
	struct error err;
};

/* A record into the spool; a string as a record, its id returned; what is held written
 * out (a chunk, as the recorder's flush writes one). */
void dump_put(struct spool_out *s, const void *record);
uint32_t dump_put_string(struct spool_out *s, const char *text);
int dump_flush(struct spool_out *s); /* 0, or -1 once a write failed */

/* The ELF files process pid maps, as RECORD_MODULE records of time now. */
void dump_put_modules(struct spool_out *s, int pid, uint64_t now);

/* Why process pid cannot be read by gpuprof `command` (dump, sys), in words that say
 * what to change (it ended, it is gpuprof, another namespace); "" when it can be tried. */
void dump_check_process(int pid, const char *command, char *why, size_t size);

struct python_reader;
/* The CPython interpreter in process pid (3.11): the reader's addresses and layout, 0;
 * -1 when none is found. */
int dump_find_interpreter(int pid, struct python_reader *r);

/* The Python functions of one thread state of r's process now, as a record of `time`
 * that stands for `period` ns around it: 1 when written, 0 when it has none. */
int dump_python_thread(struct spool_out *s, struct python_reader *r, uint64_t thread,
		       uint64_t time, uint64_t period);

/* The Python functions of each thread of process pid that runs CPython (3.11), as
 * records of time now, and the thread that holds the GIL (*gil; 0: none): how many
 * threads had some; 0 when it runs no CPython whose frames can be read (nothing
 * written). */
int dump_python(struct spool_out *s, int pid, uint64_t now, int *gil);

#endif
