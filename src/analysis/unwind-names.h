/* The frames of the samples' stacks, named and interned (analysis/unwind.c unwinds, this
 * names): an address's function from its symbol and debug information, the functions
 * inlined there and the line that ran; code made at run time from the perf maps; Python
 * frames; the system call a thread off the CPU waited in. Frames and stack nodes are
 * interned into a struct sample_stacks (unwind.h). */
#ifndef GPUPROF_ANALYSIS_UNWIND_NAMES_H
#define GPUPROF_ANALYSIS_UNWIND_NAMES_H

#include <elfutils/libdwfl.h>
#include <stddef.h>
#include <stdint.h>

#include "analysis/unwind.h"

/* The index of the frame of this function, module, source line and inlining in s, made
 * when new (offset: the ELF address of the first address seen there). */
uint32_t unwind_intern_frame(struct sample_stacks *s, const char *function, const char *module,
			     uint64_t offset, const char *source, int line, int inlined);
/* The stack node of frame beneath parent (0: the root), made when new. */
uint32_t unwind_intern_node(struct sample_stacks *s, uint32_t parent, uint32_t frame);

/* The symbols of code made at run time (perf maps), by start address. */
struct jit_symbols {
	const struct recording *rec;
	const struct record_symbol **by_start;
	size_t count;
};

void unwind_jit_build(struct jit_symbols *j, const struct recording *rec);
/* The symbol holding pc, NULL when none. */
const struct record_symbol *unwind_jit_symbol(const struct jit_symbols *j, uint64_t pc);

/* Names pc (an address inside the call or instruction, a return address already moved
 * back into its call): the function containing it, demangled, at the line that ran
 * there, or module+offset; code made at run time by its perf map. */
uint32_t unwind_name_frame(struct sample_stacks *s, Dwfl *dwfl, uint64_t pc,
			   const struct jit_symbols *jit);
/* The functions inlined at pc, innermost first, as frames (each at the line that ran in
 * it: pc's for the innermost, the call's for the others); returns how many (at most
 * max). */
size_t unwind_inlined_frames(struct sample_stacks *s, Dwfl *dwfl, uint64_t pc, uint32_t *frames,
			     size_t max);
/* The frame a sample off the CPU ends with: the system call the thread waited in (-1:
 * not known). */
uint32_t unwind_wait_frame(struct sample_stacks *s, int call);
/* A Python frame: "file.py:function" (unwind_python_file()), the file as its module and
 * source, at its line running. */
uint32_t unwind_python_frame(struct sample_stacks *s, const struct recording *rec,
			     const struct python_frame *f);

#endif
