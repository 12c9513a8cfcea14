/* Reading a running CPython's threads and frames from its memory (process_vm_readv: a
 * frame freed meanwhile is a failed read, never a fault), in this process (the sampler:
 * runtime/python.c) or in another (gpuprof dump). The reader is told where the
 * interpreter's _PyRuntime, PyCode_Type and PyUnicode_Type are and which layout its
 * version has (core/python-layouts.h); names are interned through its callback. */
#ifndef GPUPROF_CORE_PYTHON_READ_H
#define GPUPROF_CORE_PYTHON_READ_H

#include <stdint.h>
#include <sys/types.h>

#include "core/python-layouts.h"
#include "core/record.h"

#define PYTHON_CODE_SLOTS 4096
#define PYTHON_FRAME_HEAD 72 /* the bytes of a frame read: its fields lie in them */

struct python_reader {
	pid_t pid;
	const struct python_layout *layout;
	uint64_t runtime, code_type, unicode_type;
	uint32_t (*intern)(void *arg, const char *text); /* a name's string id */
	/* a code object named: [start, end) of the process (NULL: not said) */
	void (*code)(void *arg, uint64_t start, uint64_t end, uint32_t function_id,
		     uint32_t file_id);
	void *arg;
	struct {                  /* code objects already named (see python-read.c) */
		uint64_t code, qualname, filename;
		uint32_t line, function_id, file_id;
	} named[PYTHON_CODE_SLOTS];
	unsigned char linetable[32 + 8192]; /* a location table being read */
	struct python_raw_frame {  /* a frame as read, before its code is named */
		uint64_t code, instruction;
		unsigned char entry;
	} raw[2][PYTHON_STACK_MAX]; /* a stack read, and read a second time */
	unsigned char page[4096 + PYTHON_FRAME_HEAD]; /* frames read at once: a page's */
};

/* The layout of CPython release (major << 8 | minor), NULL for one without. */
const struct python_layout *python_layout_of(unsigned release);

/* Whether the interpreter's objects have the header its layout assumes (reference
 * count, then type: PyCode_Type's own type at offset 8 is type_type, PyType_Type's
 * address); a free-threaded build (3.13t: thread id, mutex and two counts first) does
 * not, and its frames are not read rather than misread. */
int python_objects_readable(const struct python_reader *r, uint64_t type_type);

/* Whether the running interpreter's own description of its layout (3.13 and later:
 * _Py_DebugOffsets) agrees with the reader's layout, and it is no free-threaded build:
 * 1, or 0 (its frames are not read). 1 for 3.11 and 3.12, which have none. */
int python_layout_confirmed(const struct python_reader *r);

/* Reads n bytes at address of the reader's process: 0, or -1 where they are not mapped. */
int python_peek(const struct python_reader *r, uint64_t address, void *out, size_t n);
uint64_t python_peek_pointer(const struct python_reader *r, uint64_t address);

/* Calls each(thread, arg) for each thread state of each interpreter (at most 64
 * interpreters of 4,096 threads). */
void python_each_thread(struct python_reader *r, void (*each)(struct python_reader *r,
							    uint64_t thread, void *arg),
			void *arg);

/* The thread state that holds the GIL now, 0 when it is free (or cannot be read). */
uint64_t python_gil_holder(struct python_reader *r);

/* The native thread id of a thread state; 0 when it cannot be read. */
uint32_t python_thread_id(struct python_reader *r, uint64_t thread);

/* A thread's frames from its current one out into frames (PYTHON_STACK_MAX at most),
 * innermost first: how many, or -1 when it has none or they could not be read whole
 * (a generator unlinked from its caller between the reads, four times). */
int python_thread_frames(struct python_reader *r, uint64_t thread, struct python_frame *frames);

#endif
