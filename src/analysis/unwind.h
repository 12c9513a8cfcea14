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

#define UNWIND_MAX_FRAMES 4096 /* deeper stacks are cut there (their root frames dropped):
				* the most frames of 16 bytes in the largest copy (SAMPLE_STACK_MAX) */

struct stack_frame {
	char *function; /* "seventy", "std::vector<int>::push_back(int const&)", or
			 * "libfoo.so+0x1f30" when the file has no symbol there */
	char *module;   /* the file's path, "" when the address is in no known file */
	uint64_t offset; /* the ELF virtual address (the load bias taken off) */
	char *source;   /* where the function is declared, from the debug information: its
			 * file ("" without debug information) and line (0) */
	int line;
	int inlined;    /* a function inlined into its caller (the frame above) */
};

struct stack_node {
	uint32_t parent; /* 0: the root (no caller) */
	uint32_t frame;  /* index into frames */
};

struct sample_stacks {
	struct stack_frame *frames;
	size_t frame_count;
	struct stack_node *nodes; /* nodes[0] is the root, nodes[i] for i >= 1 a stack */
	size_t node_count;
	uint32_t *leaf;           /* per sample of the recording (in its order): its node */
	size_t sample_count;
	uint32_t *launch_leaf;    /* per launch stack of the recording (in its order): its
				   * node, the API function called its leaf (gpuprof's own
				   * frames below it left out); 0 for one that is corrupt */
	size_t launch_count;
	size_t cut;               /* samples whose stack was deeper than UNWIND_MAX_FRAMES */
	size_t incomplete;        /* samples whose unwinding needed more of the stack than
				   * was copied: their outermost frames are missing */
	uint32_t copied_bytes;    /* the most stack copied in one of them */
	size_t unwound_to_one;    /* samples that gave a single frame (no unwind info there) */
	char *unreadable;         /* the files mapped in the process that could not be used to
				   * unwind and name, one line each: "PATH: WHY\n"; NULL if none */
	/* internal: the open-addressing indexes of frames and nodes; the files that could
	 * not be used, to say so of those a sample needed */
	uint32_t *frame_slots, *node_slots;
	struct module_note *notes;
	size_t note_count;
	size_t frame_slot_count, node_slot_count;
};

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

#endif
