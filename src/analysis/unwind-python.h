/* The Python frames of a sample (analysis/unwind.c): the frames of the thread read at
 * the sampler's ticks, which are not the sample's moment, are matched to the sample. A
 * tick near the sample is taken whose entries into the evaluation loop ran, innermost,
 * the functions that the sample's own registers point into (CPython keeps a pointer
 * into the code it runs in a callee-saved register: a code object found there, among
 * those the ticks named, is the function that loop ran at the sample); failing that,
 * the nearest with the sample's number of entries (its shape), or the nearest. */
#ifndef GPUPROF_ANALYSIS_UNWIND_PYTHON_H
#define GPUPROF_ANALYSIS_UNWIND_PYTHON_H

#include <stddef.h>
#include <stdint.h>

#include "core/record.h"
#include "core/recording.h"

/* The code objects the ticks named, by start address. */
struct python_codes {
	const struct record_python_code **by_start;
	size_t count;
};

void python_codes_build(struct python_codes *c, const struct recording *rec);
void python_codes_release(struct python_codes *c);
/* The code object holding address at time_ns (the last named there before it, else the
 * first), NULL when none. */
const struct record_python_code *python_codes_find(const struct python_codes *c,
						   uint64_t address, uint64_t time_ns);

/* The registers gpuprof looks into at an evaluation loop's frame: those a call keeps
 * (rbx, rbp, r12 to r15, DWARF's numbers), which it held while it ran its code. */
#define PYTHON_CODE_REGISTERS 6
extern const unsigned python_code_registers[PYTHON_CODE_REGISTERS];

/* What the sample's evaluation loops ran, from the root: for loop k, the code objects
 * its registers point into (codes[k * PYTHON_CODE_REGISTERS + r], NULL where none):
 * the one it ran, and maybe one it was handling (a generator's code it makes). The tick
 * chosen gives each loop's group of frames, cut after the frame that ran the code found
 * (cut[k], an index into the tick's frames; -1: whole), which may be a caller of its
 * innermost frame in the tick (the sample came between two calls). */
struct python_hits {
	const struct record_python_code **codes;
	int *cut;
	int loops, known;
};

/* The code loop ran by its registers alone (where no tick has a group for it): the one
 * the most of them point into, then the first in their order; NULL when none. */
const struct record_python_code *python_hits_ran(const struct python_hits *hits, int loop);

/* The ticks sorted by thread, then time (ticks: those of the recording to use). */
void python_ticks_sort(const struct record_python_stack **ticks, size_t n);
/* The tick standing for the sample (see above), NULL when none; hits->cut set. */
const struct record_python_stack *python_tick_for(const struct record_python_stack *const *ticks,
						 size_t n, const struct record_sample *sample,
						 struct python_hits *hits);

#endif
