/* The call stacks of a recording's samples and launches once unwound
 * (analysis/unwind.c builds them): frames and stacks interned, a stack a node of a
 * prefix tree (its caller's node and its own frame), so that a sample is one node, its
 * leaf. Here, below the store that writes them and the analyses that build and read
 * them. */
#ifndef GPUPROF_CORE_STACKS_H
#define GPUPROF_CORE_STACKS_H

#include <stddef.h>
#include <stdint.h>

struct module_note; /* analysis/unwind-modules.h */

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
	size_t cut;               /* samples whose stack was deeper than the unwinder's most
				   * frames (UNWIND_MAX_FRAMES) */
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

#endif
