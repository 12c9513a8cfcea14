/* What the two halves of the HTML report share (report.c reads the databases into a
 * struct report; report-page.c writes the page from it): the aggregates, whose size
 * does not grow with the number of kernels. */
#ifndef GPUPROF_WRITER_REPORT_DATA_H
#define GPUPROF_WRITER_REPORT_DATA_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "analysis/insight.h"
#include "analysis/communication.h"
#include "analysis/memory.h"
#include "analysis/mpi-ranks.h"
#include "analysis/profile.h"
#include "analysis/stats.h"
#include "util/strbuf.h"

#define BINS 240          /* slices of a process's run in the overview and the series */
#define TOP_ROWS 30       /* rows of a table; the rest are counted */
#define WIDTH 960         /* of the pictures, px */
#define LABEL 260         /* room for a lane's name */

/* A device of a process: how busy it was in each slice of the process's run. */
struct lane {
	char *label;
	int64_t start, end;           /* ns: the process's recorded run */
	double busy[BINS];            /* busy ns in each slice */
	int64_t busy_ns;
};

/* A metric series, its values averaged per slice. */
struct series {
	char *label, *unit;
	double min, max, sum, bins[BINS];
	int64_t count, bin_count[BINS];
};

/* Copies by operation and direction. */
struct copy_kind {
	char *name;
	int64_t calls, bytes, ns;
};

/* The CPU samples of one process, as a call tree. */
struct flame {
	char *title;
	struct profile_tree tree;
};

struct report {
	struct stats_table kernels, api, ranges, functions;
	struct flame *flames;         /* one per process with samples */
	size_t flame_count, flames_left_out;
	struct copy_kind *copies;
	size_t copy_count;
	struct lane *lanes;
	size_t lane_count;
	struct series *series;
	size_t series_count;
	struct findings findings;
	struct mpi_ranks *mpi;        /* the analysis across MPI ranks of each input with them */
	int64_t *mpi_inputs;          /* their inputs, from 0 as in summary's tables */
	size_t mpi_count;
	struct memory_report memory;  /* device memory held, every input */
	struct communication_report communication; /* every input */
	int64_t samples;
	struct profile_tree launches; /* launches with a call stack (trace --launch-stacks) */
	struct strbuf inputs;         /* what was read, a line per process */
	struct strbuf timelines;      /* the run over time, SVG per process */
};

/* Writes the page of r, with roofline (may be NULL) as its roofline section's body
 * (report-page.c). The statistics tables are finished (sorted) here. */
void report_page_write(FILE *out, struct report *r, const char *roofline);

#endif
