/* Threads off the CPU sampled by wall-clock time (--sampling-realtime), from /proc: by
 * the recorder's ticking thread inside a process gpuprof started (runtime/sampler.c), and
 * by gpuprof sys --pid from outside a running one (commands/attach.c), alike.
 *
 * A thread that waits (in a system call such as futex or poll, or for a CPU) runs no CPU
 * time, so the task-clock events never sample it. At each tick, every thread of the
 * process that is not running is sampled: /proc/PID/task/TID/syscall gives the system
 * call it waits in with its stack and instruction pointers, and its stack is copied from
 * the stack pointer up (process_vm_readv: a page that is gone reads short, never faults).
 * The stack of a waiting thread does not change until it wakes; a read of the file after
 * the copy that gives another state drops the sample. Nothing runs on the program's
 * threads and no signal is sent: no system call of the program is interrupted (a
 * signal-based timer would make nanosleep, poll and others fail with EINTR). The price:
 * the other registers are not known, so a frame whose unwind rule needs one (a function
 * with a frame pointer, which Debian's builds rarely have) ends the stack there. A thread
 * ready to run that waits for a CPU is counted from its schedstat. */
#ifndef GPUPROF_CORE_OFF_CPU_H
#define GPUPROF_CORE_OFF_CPU_H

#include <stdint.h>
#include <sys/types.h>

#include "core/record.h"

#define OFF_CPU_THREADS 1024 /* threads remembered, by tid modulo */

/* What each thread was found in at its last sample, to make up the ticks the ticking
 * thread missed (a busy machine delays it): a thread found at the tick before the gap and
 * now in the same call at the same place waited all along. */
struct off_cpu_thread {
	uint32_t tid;
	int call;
	uint64_t sp, ip, time;
	int delay_read;     /* run_delay holds a reading */
	uint64_t run_delay; /* schedstat's time waiting for a CPU, ns, at the last reading */
	uint64_t credit;    /* of it, what no sample stands for yet, ns */
};

/* The sampling of one process's waiting threads: embedded, zeroed, then pid, stack_bytes
 * and emit set (no allocation: the recorder's runs inside the program). */
struct off_cpu {
	pid_t pid;               /* the process sampled: its /proc directory and memory */
	uint32_t stack_bytes;    /* copied per sample, at most SAMPLE_STACK_MAX */
	/* takes each sample: a struct record_sample whole (with its stack after it) */
	void (*emit)(void *arg, const void *record);
	void *arg;
	/* a thread not to sample (gpuprof's own, inside the process); NULL: none */
	int (*skip)(uint32_t tid);
	struct off_cpu_thread threads[OFF_CPU_THREADS];
	union {
		struct record_sample sample;
		unsigned char bytes[sizeof(struct record_sample) + SAMPLE_STACK_MAX];
	} waiting;
};

/* The tick to sample at when the ticker wakes at `now`, its next tick due at `next`:
 * `next`, or when late by a period or more the last tick that passed (those from `next`
 * on are then made up for the threads that waited through: the `missed` below). */
static inline uint64_t off_cpu_tick(uint64_t next, uint64_t now, uint64_t period)
{
	return now >= next + period ? next + (now - next) / period * period : next;
}

/* Samples every thread of o->pid that waits, at tick (trace clock, ns), and at each tick
 * from `missed` (the first tick the caller did not make) up to tick for a thread that
 * waited there all along; a thread that waited for a CPU gets one sample per period of
 * that wait (SAMPLE_RUNNABLE, its stack found after the run). */
void off_cpu_sample_threads(struct off_cpu *o, uint64_t tick, uint64_t missed, uint64_t period);

#endif
