/* The layouts of CPython that the sampler reads (src/core/python-layouts.h) against the
 * headers of a Python installed here, when its internal headers are: Debian's
 * (python3-dev: test-python), pyenv's 3.12 and 3.13 (test-python-3.12, -3.13); each
 * offset as the compiler computes it. */
#include "../../src/core/python-layouts.h"
#include "check.h"

#ifdef PYTHON_HEADERS
#define Py_BUILD_CORE 1
#include <Python.h>
#include <internal/pycore_frame.h>
#include <internal/pycore_gil.h>
#include <internal/pycore_interp.h>
#include <internal/pycore_runtime.h>
#include <stddef.h>
#endif

/* The member names below differ by version (3.12 moved the GIL into the interpreter and
 * made an evaluation loop's entry a shim frame; 3.13 dropped _PyCFrame and renamed
 * f_code and prev_instr), so each version's checks compile against its own headers. */
#if defined(PYTHON_HEADERS) && (PY_VERSION_HEX >> 16) >= 0x030b && (PY_VERSION_HEX >> 16) <= 0x030d
int main(void)
{
	const struct python_layout *l = NULL;
	unsigned version = PY_VERSION_HEX >> 16;
	for (size_t i = 0; i < sizeof(python_layouts) / sizeof(python_layouts[0]); i++)
		if (python_layouts[i].version == version)
			l = &python_layouts[i];
	if (!l) {
		printf("skipped: Python %s installed here has no layout in the sampler\n", PY_VERSION);
		return check_summary("python");
	}
	printf("python: the layout of CPython %s\n", PY_VERSION);
	CHECK(l->runtime_interpreters == offsetof(_PyRuntimeState, interpreters.head));
	CHECK(l->interpreter_next == offsetof(PyInterpreterState, next));
	CHECK(l->interpreter_threads == offsetof(PyInterpreterState, threads.head));
	CHECK(l->thread_next == offsetof(PyThreadState, next));
	CHECK(l->thread_native_id == offsetof(PyThreadState, native_thread_id));
	CHECK(l->frame_previous == offsetof(_PyInterpreterFrame, previous));
	CHECK(l->code_filename == offsetof(PyCodeObject, co_filename));
	CHECK(l->code_qualname == offsetof(PyCodeObject, co_qualname));
	CHECK(l->code_firstlineno == offsetof(PyCodeObject, co_firstlineno));
	CHECK(l->code_flags == offsetof(PyCodeObject, co_flags));
	CHECK(l->code_linetable == offsetof(PyCodeObject, co_linetable));
	CHECK(l->code_instructions == offsetof(PyCodeObject, co_code_adaptive));
#if (PY_VERSION_HEX >> 16) == 0x030b
	CHECK(l->thread_cframe == offsetof(PyThreadState, cframe) && !l->thread_frame_direct);
	CHECK(l->cframe_current == offsetof(_PyCFrame, current_frame));
	CHECK(l->frame_code == offsetof(_PyInterpreterFrame, f_code));
	CHECK(l->frame_entry == offsetof(_PyInterpreterFrame, is_entry) && !l->owner_cstack);
	CHECK(l->frame_instruction == offsetof(_PyInterpreterFrame, prev_instr));
	CHECK(!l->interpreter_gil);
	CHECK(l->runtime_gil_holder == offsetof(_PyRuntimeState, ceval.gil.last_holder));
	CHECK(l->runtime_gil_locked == offsetof(_PyRuntimeState, ceval.gil.locked));
#else
#if (PY_VERSION_HEX >> 16) == 0x030c
	CHECK(l->thread_cframe == offsetof(PyThreadState, cframe) && !l->thread_frame_direct);
	CHECK(l->cframe_current == offsetof(_PyCFrame, current_frame));
	CHECK(l->frame_code == offsetof(_PyInterpreterFrame, f_code));
	CHECK(l->frame_instruction == offsetof(_PyInterpreterFrame, prev_instr));
#else
	CHECK(l->thread_cframe == offsetof(PyThreadState, current_frame) && l->thread_frame_direct);
	CHECK(l->frame_code == offsetof(_PyInterpreterFrame, f_executable));
	CHECK(l->frame_instruction == offsetof(_PyInterpreterFrame, instr_ptr));
#endif
	CHECK(l->frame_owner == offsetof(_PyInterpreterFrame, owner));
#if (PY_VERSION_HEX >> 16) == 0x030d
	/* where _Py_DebugOffsets holds each offset the layout checks against it */
	static const size_t debug_at[] = {
		offsetof(_Py_DebugOffsets, runtime_state.interpreters_head),
		offsetof(_Py_DebugOffsets, interpreter_state.next),
		offsetof(_Py_DebugOffsets, interpreter_state.threads_head),
		offsetof(_Py_DebugOffsets, thread_state.next),
		offsetof(_Py_DebugOffsets, thread_state.current_frame),
		offsetof(_Py_DebugOffsets, thread_state.native_thread_id),
		offsetof(_Py_DebugOffsets, interpreter_frame.previous),
		offsetof(_Py_DebugOffsets, interpreter_frame.executable),
		offsetof(_Py_DebugOffsets, interpreter_frame.instr_ptr),
		offsetof(_Py_DebugOffsets, interpreter_frame.owner),
		offsetof(_Py_DebugOffsets, code_object.filename),
		offsetof(_Py_DebugOffsets, code_object.qualname),
		offsetof(_Py_DebugOffsets, code_object.linetable),
		offsetof(_Py_DebugOffsets, code_object.firstlineno),
		offsetof(_Py_DebugOffsets, code_object.co_code_adaptive),
	};
	CHECK(sizeof(debug_at) / sizeof(debug_at[0]) ==
	      sizeof(python_debug_offsets_313) / sizeof(python_debug_offsets_313[0]));
	for (size_t i = 0; i < sizeof(debug_at) / sizeof(debug_at[0]); i++)
		CHECK(python_debug_offsets_313[i].at == debug_at[i]);
	CHECK(offsetof(_Py_DebugOffsets, free_threaded) == PYTHON_DEBUG_FREE_THREADED);
	CHECK(sizeof(_Py_DebugOffsets) >= 352);
#endif
	CHECK(l->owner_cstack == FRAME_OWNED_BY_CSTACK);
	CHECK(l->interpreter_gil == offsetof(PyInterpreterState, ceval.gil));
	CHECK(l->runtime_gil_holder == offsetof(struct _gil_runtime_state, last_holder));
	CHECK(l->runtime_gil_locked == offsetof(struct _gil_runtime_state, locked));
#endif
	CHECK(offsetof(PyBytesObject, ob_sval) == 32 && offsetof(PyVarObject, ob_size) == 16);
	CHECK(l->ascii_data == sizeof(PyASCIIObject));
	CHECK(l->compact_data == sizeof(PyCompactUnicodeObject));
	/* what python.c reads at fixed places: the object's type, a str's length and state */
	CHECK(offsetof(PyObject, ob_type) == 8);
	CHECK(offsetof(PyASCIIObject, length) == 16 && offsetof(PyASCIIObject, state) == 32);
	return check_summary("python");
}
#elif defined(PYTHON_HEADERS)
int main(void)
{
	printf("skipped: Python %s installed here has no layout in the sampler\n", PY_VERSION);
	return check_summary("python");
}
#else
int main(void)
{
	printf("skipped: no CPython internal headers here (python3-dev)\n");
	return check_summary("python");
}
#endif
