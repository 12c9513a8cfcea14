/* gpuprof summary's tables of an MPI run (--mpi-trace): per rank, per collective, the
 * late senders; from the cross-rank analysis of each input (analysis/mpi-ranks.h). */
#ifndef GPUPROF_WRITER_MPI_SUMMARY_H
#define GPUPROF_WRITER_MPI_SUMMARY_H

#include <stddef.h>
#include <stdio.h>
#include <stdint.h>

#include "analysis/mpi-ranks.h"
#include "util/error.h"
#include "util/table.h"

/* How times are printed: ns per unit, its name, decimals. */
struct mpi_summary_units {
	double divisor;
	const char *name;
	int decimals;
};

/* The units of gpuprof summary's -u (sec, msec, usec, nsec): ns per unit, 3 decimals
 * but for nsec. */
struct mpi_summary_units mpi_summary_units_of(const char *name);

/* The tables of the runs (runs[i] analysed from input inputs[i]) written to out (the
 * report's page takes them as HTML); nothing when no run recorded MPI calls. */
int mpi_summary_tables(FILE *out, enum table_format format,
		       const struct mpi_summary_units *u, const struct mpi_ranks *runs,
		       const int64_t *inputs, size_t count, struct error *err);

#endif
