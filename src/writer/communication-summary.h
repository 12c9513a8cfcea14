/* gpuprof summary's COMMUNICATION table, from analysis/communication.h: per process and
 * device, its communication kernels' time, overlapped with compute and exposed. */
#ifndef GPUPROF_WRITER_COMMUNICATION_SUMMARY_H
#define GPUPROF_WRITER_COMMUNICATION_SUMMARY_H

#include <stdio.h>

#include "analysis/communication.h"
#include "util/error.h"
#include "util/table.h"
#include "writer/mpi-summary.h"

/* The table written to out (the report's page takes it as HTML), times in u; nothing
 * when no communication kernel ran. */
int communication_summary_table(FILE *out, enum table_format format,
				const struct mpi_summary_units *u,
				const struct communication_report *r, struct error *err);

#endif
