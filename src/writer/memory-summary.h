/* gpuprof summary's tables of device memory (--memory-allocation-trace), from
 * analysis/memory.h: per process and device its allocations, peak and what was held at
 * the end; what held the peak and what was never freed, by allocation site. */
#ifndef GPUPROF_WRITER_MEMORY_SUMMARY_H
#define GPUPROF_WRITER_MEMORY_SUMMARY_H

#include <stdio.h>

#include "analysis/memory.h"
#include "util/error.h"
#include "util/table.h"

/* The tables written to out (the report's page takes them as HTML), times in seconds
 * from each process's start; nothing when no allocation was recorded. */
int memory_summary_tables(FILE *out, enum table_format format, const struct memory_report *r,
			  struct error *err);

#endif
