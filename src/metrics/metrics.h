/* Metrics over time (gpuprof sys): the machine (per-CPU utilisation and frequency,
 * memory), every process of the traced program (CPU, memory, page faults, context
 * switches, threads, I/O) and every GPU through NVML (power, energy, temperature, clocks,
 * utilisation, memory, PCIe, throttle reasons), sampled by gpuprof itself, outside the
 * program, into a spool of their own (record types in core/record.h). Once the program
 * has ended, metrics_append() adds to each process's spool what belongs to it, so the
 * database, the timelines and the summary read metrics like every other record. */
#ifndef GPUPROF_METRICS_METRICS_H
#define GPUPROF_METRICS_METRICS_H

#include <stdint.h>

#include "util/error.h"
#include "util/strbuf.h"

struct metrics_options {
	int host;             /* the machine and the traced processes */
	int device;           /* the GPUs, through NVML */
	unsigned interval_ms; /* between two samples */
	int root;             /* the processes measured: this one and its descendants (gpuprof
			       * sys --pid); 0: gpuprof's descendants */
};

struct metrics;

/* The series ids of the GPUs' spool start here (the machine's from 1), so that both
 * spools' series can be appended to one process's spool. */
#define METRICS_GPU_SERIES_FROM (1u << 24)
#define METRICS_MAX_GPUS 64 /* GPUs sampled, the first by NVML's index */

/* Starts sampling into spools named after base (base.host for the machine and the
 * processes, base.gpu for the GPUs), each on a thread of its own (every signal blocked on
 * it, so the program's signals reach gpuprof's main thread). The processes sampled are
 * gpuprof's descendants. What cannot be sampled here is said once on stderr. Returns
 * NULL with err set when a spool cannot be created. */
struct metrics *metrics_start(const struct metrics_options *o, const char *base,
			      struct error *err);
/* Takes a last sample, writes what remains and ends the thread. Returns -1 with err set
 * when the spool could not be written (what was written stays). */
int metrics_stop(struct metrics *m, struct error *err);
/* The name of a spool of metrics_start(): the machine's (gpu 0) or the GPUs'. */
void metrics_file(struct strbuf *out, const char *base, int gpu);
/* Whether metrics were sampled into spools named after base; removes them. */
int metrics_recorded(const char *base);
void metrics_remove(const char *base);

/* Appends to the spool of one process the machine's and the GPUs' series and the
 * process's own, from the metrics spool. An incomplete last chunk of the process's
 * spool (a process killed mid-write) is cut off first, and said. */
int metrics_append(const char *metrics_base, const char *process_spool, struct error *err);

/* Writes, into directory, the files of madengine's power and VRAM profilers
 * (gpu_info_power_profiler_output.csv, gpu_info_vram_profiler_output.csv) when GPUs
 * were sampled; their names are appended to written, one per line. */
int metrics_write_madengine(const char *metrics_base, const char *directory,
			    struct strbuf *written, struct error *err);

/* One line per metric source available on this machine, or why it is not (for gpuprof
 * avail). */
void metrics_describe(struct strbuf *out);

#endif
