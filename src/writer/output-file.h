/* A single-file output (results.json, results.pftrace): created at the writer's begin,
 * written in large blocks, and on failure removed rather than left half written. Every
 * output is written under a temporary name, <path>.partial, and takes its own name only
 * once complete: a gpuprof stopped midway never leaves a cut file under a final name. */
#ifndef GPUPROF_WRITER_OUTPUT_FILE_H
#define GPUPROF_WRITER_OUTPUT_FILE_H

#include <stddef.h>
#include <stdio.h>

#include "util/error.h"
#include "util/strbuf.h"

struct output_file {
	char *path;
	FILE *out;
};

/* <path>.partial, the name an output has until it is complete. */
void output_partial_name(struct strbuf *out, const char *path);
/* Renames the complete <path>.partial to path; removes it and sets err on failure. */
int output_publish(const char *path, struct error *err);
/* Creates <path>.partial for writing; NULL with err set when it cannot. */
FILE *output_partial_open(const char *path, struct error *err);
/* Removes an incomplete <path>.partial. */
void output_discard(const char *path);

/* Creates <prefix><suffix>, written as <prefix><suffix>.partial until closed. */
int output_file_open(struct output_file *f, const char *prefix, const char *suffix,
		     struct error *err);
int output_file_write(struct output_file *f, const void *data, size_t size, struct error *err);
/* Closes the file: removed when failed (or when closing fails), else listed in written.
 * Returns -1 when failed or when closing failed (err set for the latter). */
int output_file_close(struct output_file *f, int failed, struct strbuf *written,
		      struct error *err);

#endif
