/* Where CPython keeps what gpuprof reads of a running interpreter (core/python-read.c),
 * per version: offsets into its structures, from its headers (with Py_BUILD_CORE). tests/unit/test-python.c
 * checks the entry of the installed version against its headers. */
#ifndef GPUPROF_CORE_PYTHON_LAYOUTS_H
#define GPUPROF_CORE_PYTHON_LAYOUTS_H

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
							  * ceval.gil.last_holder, .locked */
};

static const struct python_layout python_layouts[] = {
	{ 0x030b, 40, 0, 16, 8, 160, 56, 8, 32, 48, 68, 112, 128, 72, 48, 48, 72, 56, 136, 184,
	  368, 376 },
};

#endif
