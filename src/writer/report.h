/* The offline HTML report of one or more databases (gpuprof report, -f html): one
 * self-contained file, no script and nothing fetched from elsewhere, that stays small on
 * a large run because it shows aggregates, never rows: per device how busy it was along
 * the run, the top kernels, copies, API calls and marker ranges, gpuprof advise's
 * findings with their evidence, and where recorded the hot sampled functions, the
 * metric series and an MPI run's tables, and for compute workloads their roofline. Each
 * section is an element with an id (overview, timeline, findings, mpi, kernels, copies,
 * api, ranges, functions, metrics, roofline) whose tables give the numbers as text. */
#ifndef GPUPROF_WRITER_REPORT_H
#define GPUPROF_WRITER_REPORT_H

#include "util/error.h"

/* Writes the report of count databases to path (as path.partial until complete), with
 * roofline (may be NULL) as the body of its roofline section: the figures of compute
 * workloads (gpuprof report is given their directories). 0, or -1 with err set. */
int report_write(char *const *inputs, int count, const char *roofline, const char *path,
		 struct error *err);

#endif
