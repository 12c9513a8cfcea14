/* What the fuzz targets share. Each target defines LLVMFuzzerTestOneInput: built with
 * clang's -fsanitize=fuzzer it is a libFuzzer fuzzer (`make fuzz`); linked with
 * replay.c it runs its committed corpus as a test (build/tests/test-fuzz-NAME). */
#ifndef GPUPROF_TESTS_FUZZ_H
#define GPUPROF_TESTS_FUZZ_H

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A directory of this process's own for the files an input becomes and the outputs
 * made from it: in /dev/shm when there is one. */
const char *fuzz_directory(void);

/* Writes data to fuzz_directory()/name; returns the path, or NULL (a message printed)
 * when it cannot be written. */
const char *fuzz_file(const char *name, const uint8_t *data, size_t size);

/* Reads a database as `convert`, `summary` and `merge` do, writing into
 * fuzz_directory(): CSV, JSON, pftrace and the end-of-trace summary, `gpuprof summary`'s
 * tables, then a merge into a new database. */
void fuzz_read_database(char *path);

#endif
