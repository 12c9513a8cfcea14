/* Call stacks of a recording's samples (gpuprof sys): each sample's registers and stack
 * copy unwound with elfutils' libdw over the ELF files mapped in the process (their
 * .eh_frame and .debug_frame: no frame pointers needed), and each frame named from the
 * file's symbol table (C++ names demangled). Where the file has debug information, the
 * functions inlined at an address become frames of their own beneath the function they
 * were inlined into, and every function gets its source file and line. A frame of a
 * file without symbols (stripped) is named module+address (the ELF's virtual address, as
 * addr2line and perf take it), never after a neighbouring symbol.
 *
 * Frames and stacks are interned: a stack is a node of a prefix tree (its caller's node
 * and its own frame), so a sample is one node, its leaf. */
#ifndef GPUPROF_ANALYSIS_UNWIND_H
#define GPUPROF_ANALYSIS_UNWIND_H

#include <stddef.h>
#include <stdint.h>

#include "core/recording.h"
#include "core/stacks.h"

#define UNWIND_MAX_FRAMES 4096 /* deeper stacks are cut there (their root frames dropped):
				* the most frames of 16 bytes in the largest copy (SAMPLE_STACK_MAX) */

/* Unwinds every sample and every launch stack of rec. Returns 0 (a sample that cannot be
 * unwound keeps the frames found, at least its own address). */
int sample_stacks_build(const struct recording *rec, struct sample_stacks *out);
void sample_stacks_release(struct sample_stacks *s);

/* The frames of a stack from its leaf up to the root: fills up to max frame indexes,
 * returns how many. */
size_t sample_stack_frames(const struct sample_stacks *s, uint32_t node, uint32_t *frames,
			   size_t max);

/* The samples of each thread as nested slices, the way a flame chart shows them over
 * time: a frame is a slice from the first sample that has it on the stack (below the
 * same callers) to the first that does not; the last sample of a thread lasts until
 * the next would have come (its gap to the one before). */
struct sample_slice {
	int64_t tid, start, end;
	uint32_t depth;        /* 0: the outermost frame */
	uint32_t frame;        /* index into the stacks' frames */
};

struct sample_input {      /* a sample: its thread, time and leaf node */
	int64_t tid, time;
	uint32_t leaf;
};

/* Fills *out (allocated, in start order, outer frames first) from n samples. */
size_t sample_slices_build(const struct sample_stacks *s, struct sample_input *samples,
			   size_t n, struct sample_slice **out);

/* How a Python file is named in its frames' names: a package's from the package down
 * (pyopencl/__init__.py: one package's __init__.py told from another's), the standard
 * library's from its root (json/decoder.py), any other by its base name. Points into
 * path. */
const char *unwind_python_file(const char *path);

/* Whether a module (a path) is one of gpuprof's own libraries (libgpuprof-*.so): a frame
 * there is gpuprof's interposer of the API function the program called, its source line
 * gpuprof's, not the program's. */
int unwind_gpuprof_module(const char *module);

#endif
