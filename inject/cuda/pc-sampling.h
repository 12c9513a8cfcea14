/* PC sampling on CUDA devices through CUPTI's PC Sampling API (cupti_pcsampling.h):
 * each context is sampled from its creation to its destruction or the process's exit, in
 * continuous mode (kernels stay concurrent); the data goes through translate.c into
 * RECORD_PC_SAMPLE records, with source lines from the modules that carry line
 * information. Asked for with GPUPROF_PC_SAMPLING (gpuprof trace --pc-sampling-*). */
#ifndef GPUPROF_INJECT_CUDA_PC_SAMPLING_H
#define GPUPROF_INJECT_CUDA_PC_SAMPLING_H

#include <cupti.h>

#include "translate.h"

/* The configuration from GPUPROF_PC_SAMPLING, read once: "period=N" (samples every 2^N
 * cycles, 5..31), "period=0" (CUPTI's default for the device), or "time=US" (the period
 * nearest to US microseconds at the device's clock). Returns 1 when PC sampling is asked
 * for and understood, 0 when not asked for; says why on stderr and returns 0 when the
 * value cannot be read. */
int pc_sampling_configure(void);

/* CUPTI's resource callbacks, from cuda.c's subscriber: contexts created and destroyed,
 * modules loaded and unloaded. */
void pc_sampling_resource(CUpti_CallbackId cbid, const void *data);

/* On the recorder's writer thread: takes what CUPTI has gathered (all of it, and ends
 * sampling, when final) and emits it. Returns 1 when the recorder's buffer filled first
 * (call again), 0 otherwise. */
int pc_sampling_collect(struct translator *t, int final);

/* In the child of a fork(): forgets the parent's contexts and samples. */
void pc_sampling_after_fork(void);

/* The source line of an instruction (a translate_ops.source_line). */
void pc_sampling_source_line(void *ctx, uint64_t cubin_crc, const char *function,
			     uint64_t pc_offset, uint32_t *file_id, uint32_t *line);

#endif
