/* Python functions in the call-stack samples (gpuprof sys). A thread that runs Python
 * shows in native samples as the interpreter's evaluation loop; which Python functions
 * it runs lives in the interpreter's frames, on the heap, out of the sampled stack.
 * So the sampler's ticking thread reads, at every tick, the frame chain of each Python
 * thread of the process (CPython's own structures, located by its exported _PyRuntime,
 * read with process_vm_readv so that a frame freed meanwhile is a failed read, never a
 * fault) and records it (RECORD_PYTHON_STACK); after the run, each native sample takes
 * the Python frames of its thread's nearest tick in place of its evaluation loops.
 * Supported layouts: CPython 3.11 to 3.13 (core/python-layouts.h). */
#ifndef GPUPROF_RUNTIME_PYTHON_H
#define GPUPROF_RUNTIME_PYTHON_H

#include <stdint.h>

#include "core/record.h"

/* Whether this process runs a CPython whose frames can be read: 1 yes, 0 no Python
 * (yet: an interpreter may be loaded later), -1 a version without a known layout. */
int python_attach(void);

/* Records the Python frames of every thread of every interpreter, each at the time it
 * was read; period_ns: between two calls. Returns the thread that held the main
 * interpreter's GIL as the tick began (0: nobody, or no interpreter read). */
uint32_t python_sample(uint64_t period_ns);

/* Records the Python frames of the calling thread (tid), at time_ns: at a launch
 * (--launch-stacks), whose call stack takes them as a sample takes a tick's. Nothing
 * where the process runs no Python that can be read. */
#define PYTHON_LAUNCH_PERIOD 1000000u /* ns: how far a sample may be from it to take it */
void python_record_thread(uint32_t tid, uint64_t time_ns);

#endif
