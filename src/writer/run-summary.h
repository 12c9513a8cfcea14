/* gpuprof summary's tables (run-summary.c). */
#ifndef GPUPROF_WRITER_RUN_SUMMARY_H
#define GPUPROF_WRITER_RUN_SUMMARY_H

struct error;

/* The tables of `count` databases, all together, printed on stdout in `format` (text,
 * csv, md, json) with times in `units` (sec, msec, usec, nsec): 0, or -1 with err set. */
int run_summary_print(char *const *inputs, int count, const char *format,
		      const char *units, struct error *err);

#endif
