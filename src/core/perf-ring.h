/* The kernel's ring of call-stack samples (a perf event's mapped buffer, see
 * core/sample-event.h), read the same way by the sampler inside a recorded process
 * (runtime/sampler.c) and by gpuprof sys --pid from outside (commands/attach.c). */
#ifndef GPUPROF_CORE_PERF_RING_H
#define GPUPROF_CORE_PERF_RING_H

#include <stddef.h>
#include <stdint.h>

#include "core/record.h"

struct perf_ring {
	int fd;
	unsigned char *map;  /* the control page, then the data */
	unsigned char *data;
	size_t data_size;
	uint64_t last_time;  /* of the last sample read from it */
};

/* The user registers a sample copies (perf's x86-64 numbers of record.h's DWARF order),
 * as sample_event_attr() takes them; slot[i] is where register i is in a sample. */
uint64_t perf_ring_registers(int slot[SAMPLE_REGISTERS]);

/* Copies n bytes at offset `at` of the ring's data, which wraps. */
void perf_ring_copy(const struct perf_ring *r, uint64_t at, void *out, size_t n);

/* The PERF_RECORD_SAMPLE of `size` bytes at `at` as a record: its thread (and process,
 * *pid), time, registers and stack (after the record, room for SAMPLE_STACK_MAX bytes):
 * 0, or -1 for one without user registers (the thread was in the kernel only). */
int perf_ring_sample(const struct perf_ring *r, uint64_t at, size_t size,
		     const int slot[SAMPLE_REGISTERS], struct record_sample *s, uint32_t *pid);

/* A PERF_RECORD_LOST of `size` bytes at `at` as a RECORD_SAMPLES_LOST, from the ring's
 * last sample (or the loss's time) to the loss's time (the caller moves the ring's last
 * time there once it kept the record); *lost the samples lost (the record holds at most
 * UINT32_MAX); 0, or -1 when it is too short. */
int perf_ring_lost(const struct perf_ring *r, uint64_t at, size_t size,
		   struct record_samples_lost *l, uint64_t *lost);

#endif
