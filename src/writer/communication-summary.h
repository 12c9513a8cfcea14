/* gpuprof summary's COMMUNICATION tables, from analysis/communication.h: per process and
 * device, its communication kernels' time, overlapped with compute and exposed; per
 * process, NCCL's operations with their kernels' time and bandwidths. */
#ifndef GPUPROF_WRITER_COMMUNICATION_SUMMARY_H
#define GPUPROF_WRITER_COMMUNICATION_SUMMARY_H

#include <stdio.h>

#include "analysis/communication.h"
#include "util/error.h"
#include "util/table.h"
#include "writer/mpi-summary.h"

/* The tables written to out (the report's page takes them as HTML), times in u; each
 * only when it has a row. */
int communication_summary_table(FILE *out, enum table_format format,
				const struct mpi_summary_units *u,
				const struct communication_report *r, struct error *err);

#endif
