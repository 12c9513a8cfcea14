/* The in-process recorder every backend writes to.
 *
 * Application threads copy fixed-size records into a buffer of their own (a
 * single-producer ring: no lock, no allocation, no I/O per record); a background
 * thread appends every buffer to the process's spool at least every flush interval.
 * Memory is bounded: each thread's buffer has a fixed size and all buffers together
 * stay under a cap; records that do not fit are dropped and counted, and the counts
 * reach the spool as RECORD_DROPPED.
 *
 * Names and other metadata (strings, agents, queues) go through a separate, locked
 * path that is used rarely (once per kernel object, device or queue) and is kept in
 * memory as well, so a child created by fork() starts its own spool with them.
 *
 * The recorder is one shared library (libgpuprof-recorder.so) that every backend
 * library links, so a process using several GPU APIs still writes one spool.
 *
 * Configuration comes from the environment that `gpuprof trace` sets (docs/FORMAT.md
 * lists the variables); the recorder starts on first use. */
#ifndef GPUPROF_RUNTIME_RECORDER_H
#define GPUPROF_RUNTIME_RECORDER_H

#include <stddef.h>
#include <stdint.h>

#include "core/record.h"

/* gpuprof's own threads in a recorded process are named so (the writer, the collection
 * periods' timer, the sampler's ticker): the metrics of the process leave them out. */
#define RECORDER_THREAD_PREFIX "gpuprof-"

/* The functions below are the interface of libgpuprof-recorder.so. */
#define RECORDER_API __attribute__((visibility("default")))

/* Recording memory when GPUPROF_BUFFER_SIZE and GPUPROF_BUFFER_LIMIT do not say. */
#define RECORDER_DEFAULT_THREAD_BUFFER (2u << 20)  /* bytes per thread */
#define RECORDER_DEFAULT_BUFFER_LIMIT (256u << 20) /* bytes for all threads together */

/* Starts the recorder if it is not running (first use, or first use after fork()).
 * Returns 1 when records can be emitted, 0 when collection is disabled (the reason was
 * reported once on stderr). Thread-safe. */
RECORDER_API int recorder_ready(void);

/* Copies a record (its size is in its header) into the calling thread's buffer.
 * Returns 0, or -1 when it was dropped (and counted). */
RECORDER_API int recorder_emit(const void *record);

/* Reports records the caller itself had to drop. */
RECORDER_API void recorder_count_dropped(uint32_t reason, uint64_t records);

/* The calling thread's id (gettid), kept per thread, known anew in a child of fork():
 * what every record of a thread's own calls carries. */
RECORDER_API uint32_t recorder_thread_id(void);

/* Interns a string and returns its id (> 0), emitting a RECORD_STRING the first time.
 * Strings longer than the record bound are cut. Returns 0 when disabled. */
RECORDER_API uint32_t recorder_intern(const char *text);

/* Emits a metadata record (agent, queue) through the locked metadata path; it is
 * replayed into the spool of a child created by fork(). */
RECORDER_API void recorder_emit_metadata(const void *record);

/* Registers a backend's collector (a process may load several backends; adding one
 * twice is harmless): the writer thread calls it before every flush (final = 0) and
 * once more before the last one (final = 1), so records of device work that completed
 * before a flush are in that flush. It emits with recorder_try_emit() and returns 1
 * when it stopped because the buffer was full: the writer then drains and calls it
 * again. */
RECORDER_API void recorder_add_collector(int (*collect)(int final));

/* Descriptors whose readiness (POLLIN) wakes the writer for a flush before its interval
 * ends: the sampler's perf events, which say when their buffers are a quarter full.
 * Replaces the set given before (count 0: none); the writer polls the new set from its
 * next wait. */
RECORDER_API void recorder_set_wake_fds(const int *fds, int count);

/* Ids for new agents and queues, unique in the process whichever backend asks (agent 0,
 * the host CPU, is emitted by the recorder itself when it starts). */
RECORDER_API uint32_t recorder_new_agent_id(void);
RECORDER_API uint32_t recorder_new_queue_id(void);

/* Writes one line "gpuprof[PID]: MESSAGE" to stderr, without stdio. */
RECORDER_API void recorder_report(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* As recorder_emit(), but a full buffer is not counted as a loss: returns -1 and the
 * caller keeps the record to emit it later. Returns -2 when the record was dropped
 * (and counted) for another reason. */
RECORDER_API int recorder_try_emit(const void *record);

/* For a thread whose buffer is full and must not lose its record (a launch stack): writes
 * the buffer to the spool itself, on this thread, where the writer thread would have to
 * be scheduled first (on a busy machine, milliseconds). 0, or -1 when the writer is
 * writing (or the recorder is not running): wait for it then. Signals are held off
 * meanwhile; errno is kept. */
int recorder_write_own_buffer(void);

/* Asks the writer thread to flush (and collect) now rather than at its next period. */
RECORDER_API void recorder_wake(void);

/* Flushes everything, writes RECORD_PROCESS_END and stops. Emits afterwards are
 * ignored. Called at exit by the backend. */
RECORDER_API void recorder_stop(void);
/* Writes what has been recorded so far, collectors included, on the calling thread. */
RECORDER_API void recorder_flush(void);

/* ---- markers and collection control ----
 * ROCTX, NVTX and libgpuprof-markers all land here. Ranges pushed on a thread nest and
 * are popped in reverse order; ranges started return an id that any thread may stop;
 * marks are instants. Records are emitted only when markers are traced (GPUPROF_TRACE
 * names "marker"); nesting is followed either way, so the return values hold. The text
 * is copied into the record: the caller's string may go away at once. */

/* Each domain's push/pop ranges nest on their own (NVTX's rule); a range's parent is the
 * thread's innermost range open when it began, of any domain.
 * Returns the depth in its domain before the push (0 for an outermost range), as
 * roctxRangePushA and nvtxDomainRangePushEx. */
RECORDER_API int recorder_range_push(const char *text, uint32_t domain_id);
/* As recorder_range_push(), with the range's module path (where in the program it ran:
 * "Net.fc1" for a PyTorch model's layer), kept beside its text; NULL or "": none. */
RECORDER_API int recorder_range_push_module(const char *text, const char *module,
					    uint32_t domain_id);
/* Closes the thread's innermost range, of any domain; returns the thread's depth after
 * the pop, or -1 when no range is open on this thread (roctxRangePop). */
RECORDER_API int recorder_range_pop(void);
/* Closes the innermost range of the domain on this thread; returns the domain's depth
 * after the pop, or -1 when none of it is open (nvtxDomainRangePop). */
RECORDER_API int recorder_domain_range_pop(uint32_t domain_id);
/* Returns the range's id (> 0). */
RECORDER_API uint64_t recorder_range_start(const char *text, uint32_t domain_id);
RECORDER_API void recorder_range_stop(uint64_t id);
RECORDER_API void recorder_mark(const char *text, uint32_t domain_id);
RECORDER_API void recorder_name_thread(const char *name);
/* The id of the innermost push/pop range open on this thread, 0 when none: kernels
 * record it at launch (record_kernel.range_id). */
RECORDER_API uint64_t recorder_current_range(void);

/* Collection stops at recorder_pause() and goes on at recorder_resume(); with
 * GPUPROF_SELECTED_REGIONS=1 it starts paused, and GPUPROF_COLLECTION_PERIOD (see
 * docs/FORMAT.md) turns it on and off on a schedule. Backends ask recorder_collecting()
 * when an API call or a launch begins and record nothing of what begins while it is 0;
 * backends that learn of work later ask recorder_collected_at() with the time it began.
 * Markers are recorded throughout, so the paused stretches stay visible. */
RECORDER_API void recorder_pause(void);
RECORDER_API void recorder_resume(void);
RECORDER_API int recorder_collecting(void);
RECORDER_API int recorder_collected_at(uint64_t ns);

/* The path of this process's spool, or NULL when not started. */
RECORDER_API const char *recorder_spool_path(void);

/* Launch call stacks (--launch-stacks, runtime/launch-stack.c): the bytes of stack each
 * copies when they are asked for (GPUPROF_LAUNCH_STACKS=BYTES, on x86-64), else 0; and, called by a backend on the thread that calls
 * an API function launching GPU work, before it calls the real one: copies that thread's
 * registers and top of stack into a RECORD_LAUNCH_STACK for the call, or a
 * RECORD_LAUNCH_DELTA where it differs little from the thread's last (its domain, its
 * function's string id, its correlation id, the trace clock's time the call began, or 0
 * where the backend did not read it: now). Nothing when not asked for. */
RECORDER_API int recorder_launch_stacks(void);
/* The same for the calls that allocate device memory (GPUPROF_ALLOCATION_STACKS:
 * --memory-allocation-trace), recorded with recorder_launch_stack() too, under the
 * allocating call's correlation id. */
RECORDER_API int recorder_allocation_stacks(void);
RECORDER_API void recorder_launch_stack(uint32_t domain, uint32_t function_id,
					uint64_t correlation_id, uint64_t time_ns);
/* A launch stack's `words` words at now (the live stack) written into out (room bytes)
 * as a struct launch_stack_delta from last, which becomes them: the bytes written, or 0
 * when that would not be smaller (last may then be partly updated). x86-64 only. */
size_t recorder_launch_stack_delta(unsigned char *out, size_t room, const uint64_t *now,
				   uint64_t *last, size_t words);
/* A RECORD_LAUNCH_DELTA's payload written into out (room bytes): the SAMPLE_REGISTERS
 * registers that differ from last_registers (their bits in *changed), then the stack's
 * difference as above; last_registers and last become now's. The bytes written, a
 * multiple of 8, or 0 when the stack's difference would not be smaller. x86-64 only. */
size_t recorder_launch_delta(unsigned char *out, size_t room, const uint64_t *registers,
			     uint64_t *last_registers, uint32_t *changed, const uint64_t *now,
			     uint64_t *last, size_t words);
/* 1: the delta compares with SSE2 where the machine has AVX-512 too (the same bytes; the
 * unit tests compare both ways); 0: with the fastest the machine has, as by default. */
void recorder_launch_delta_use_sse2(int sse2);
/* Called likewise where no stack is taken: records where and when the call began (a
 * RECORD_LAUNCH), so that its GPU work finds the marker range open there. */
RECORDER_API void recorder_launch(uint32_t domain, uint32_t function_id,
				  uint64_t correlation_id);

/* ---- communication calls ----
 * A process's communication calls (record_mpi_call) are numbered by one counter,
 * whichever library made them: the next number, from 1. */
RECORDER_API uint64_t recorder_new_call_id(void);
/* A call of a communication library that gpuprof records from outside C (the Python
 * hooks of --torch-trace record torch.distributed's collectives through ctypes): emitted
 * as a RECORD_MPI_CALL of that domain (enum communication_domain), its texts interned,
 * when collection was on at start_ns and the domain is traced (GPUPROF_TRACE names
 * "marker" for torch.distributed, "mpi" for MPI). tid 0: the calling thread. Returns its
 * call id, 0 when not recorded. */
RECORDER_API uint64_t recorder_communication(uint32_t domain, uint32_t tid,
					     const char *function, const char *communicator,
					     uint32_t communicator_size, int32_t peer, int32_t root,
					     uint64_t bytes_sent, uint64_t bytes_received,
					     uint64_t sequence, uint64_t start_ns, uint64_t end_ns);

/* Internal to the recorder library: whether tid is one of the recorder's own threads. */
int recorder_own_thread(uint32_t tid);
/* Internal: records the ELF files mapped in the process whenever they change (the
 * sampler does for its samples; launch stacks need them as well). Once per process. */
void sampler_track_modules(void);

#endif
