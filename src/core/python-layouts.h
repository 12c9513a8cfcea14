/* Where CPython keeps what gpuprof reads of a running interpreter (core/python-read.c),
 * per version: offsets into its structures, from its headers (with Py_BUILD_CORE):
 * 3.11 (Debian's), 3.12 and 3.13 (pyenv's 3.12.1 and 3.13.0, built with the GIL).
 * tests/unit/test-python.c checks the entry of each version whose headers it finds. */
#ifndef GPUPROF_CORE_PYTHON_LAYOUTS_H
#define GPUPROF_CORE_PYTHON_LAYOUTS_H

#include <stddef.h>

struct python_layout {
	unsigned version;              /* major << 8 | minor */
	unsigned runtime_interpreters; /* _PyRuntimeState: interpreters.head */
	unsigned interpreter_next, interpreter_threads; /* PyInterpreterState: next, threads.head */
	unsigned thread_next, thread_native_id, thread_cframe; /* PyThreadState: next,
								 * native_thread_id, cframe */
	unsigned cframe_current;       /* _PyCFrame: current_frame */
	unsigned frame_code, frame_previous, frame_entry; /* _PyInterpreterFrame: f_code,
							   * previous, is_entry */
	unsigned code_filename, code_qualname, code_firstlineno, code_flags; /* PyCodeObject */
	unsigned ascii_data, compact_data; /* sizeof PyASCIIObject, PyCompactUnicodeObject:
					    * where a compact str's characters start */
	unsigned frame_instruction;    /* _PyInterpreterFrame: prev_instr */
	unsigned code_linetable, code_instructions; /* PyCodeObject: co_linetable,
						     * co_code_adaptive */
	unsigned runtime_gil_holder, runtime_gil_locked; /* _PyRuntimeState:
							  * ceval.gil.last_holder, .locked; from
							  * 3.12 the same in the interpreter's GIL */
	/* 3.12 and later: an evaluation loop's entry is a shim frame of its own, owned by
	 * the C stack (_PyInterpreterFrame: owner == FRAME_OWNED_BY_CSTACK), not a flag of
	 * the frame it runs (frame_entry); 0: 3.11's flag */
	unsigned frame_owner, owner_cstack;
	unsigned thread_frame_direct; /* 3.13: thread_cframe is PyThreadState's current_frame
				       * itself (no _PyCFrame) */
	unsigned interpreter_gil;     /* 3.12: PyInterpreterState's ceval.gil, a pointer to
				       * the GIL (0: the GIL is in _PyRuntimeState) */
};

static const struct python_layout python_layouts[] = {
	{ 0x030b, 40, 0, 16, 8, 160, 56, 8, 32, 48, 68, 112, 128, 72, 48, 48, 72, 56, 136, 184,
	  368, 376, 0, 0, 0, 0 },
	{ 0x030c, 40, 0, 72, 8, 144, 56, 0, 0, 8, 0, 112, 128, 68, 48, 40, 56, 56, 136, 192,
	  8, 16, 70, 3, 0, 384 },
	{ 0x030d, 632, 7264, 7344, 8, 160, 72, 0, 0, 8, 0, 112, 128, 68, 48, 40, 56, 56, 136,
	  200, 8, 16, 70, 3, 1, 16 },
};

/* 3.13 and later describe their own layout for readers outside the process:
 * _Py_DebugOffsets, at the start of _PyRuntime ("xdebugpy", then 64-bit offsets). Where
 * 3.13's table (from its headers) puts the offsets the layout above holds, so that the
 * running interpreter's own are compared with them before any frame is read: a release
 * whose layout moved (a later 3.13.x), or a free-threaded build (free_threaded set), is
 * refused rather than misread. */
#define PYTHON_DEBUG_COOKIE "xdebugpy"
#define PYTHON_DEBUG_FREE_THREADED 16 /* _Py_DebugOffsets: free_threaded */

static const struct {
	unsigned at;    /* in _Py_DebugOffsets */
	unsigned field; /* offsetof(struct python_layout, ...) */
} python_debug_offsets_313[] = {
	{ 40, offsetof(struct python_layout, runtime_interpreters) },
	{ 64, offsetof(struct python_layout, interpreter_next) },
	{ 72, offsetof(struct python_layout, interpreter_threads) },
	{ 168, offsetof(struct python_layout, thread_next) },
	{ 184, offsetof(struct python_layout, thread_cframe) },     /* current_frame */
	{ 200, offsetof(struct python_layout, thread_native_id) },
	{ 232, offsetof(struct python_layout, frame_previous) },
	{ 240, offsetof(struct python_layout, frame_code) },        /* executable */
	{ 248, offsetof(struct python_layout, frame_instruction) }, /* instr_ptr */
	{ 264, offsetof(struct python_layout, frame_owner) },
	{ 280, offsetof(struct python_layout, code_filename) },
	{ 296, offsetof(struct python_layout, code_qualname) },
	{ 304, offsetof(struct python_layout, code_linetable) },
	{ 312, offsetof(struct python_layout, code_firstlineno) },
	{ 344, offsetof(struct python_layout, code_instructions) }, /* co_code_adaptive */
};

#endif
