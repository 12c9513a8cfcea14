/* Threads off the CPU sampled by wall-clock time from /proc (see off-cpu.h). */
#include "core/off-cpu.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

/* Reads /proc/PID/task/TID/NAME (task_dir: /proc/PID/task) into text, NUL-terminated;
 * returns the bytes read, or 0 or less when the thread is gone. */
static ssize_t read_task_file(int task_dir, uint32_t tid, const char *name, char *text,
			      size_t size)
{
	char path[48];
	snprintf(path, sizeof(path), "%u/%s", tid, name);
	int fd = openat(task_dir, path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, text, size - 1);
	close(fd);
	if (n > 0)
		text[n] = '\0';
	return n;
}

/* The state of thread tid from its syscall file: 1 when it waits (sets *call, *sp,
 * *ip), 0 when it runs or is gone. */
static int read_wait(int task_dir, uint32_t tid, int *call, uint64_t *sp, uint64_t *ip)
{
	char text[256];
	if (read_task_file(task_dir, tid, "syscall", text, sizeof(text)) <= 0)
		return 0;
	/* "running", or "NR ARG1..ARG6 SP PC", or "-1 SP PC" (waiting, not in a call) */
	char *end, *words[9];
	int count = 0;
	for (char *p = strtok_r(text, " \n", &end); p && count < 9; p = strtok_r(NULL, " \n", &end))
		words[count++] = p;
	if (count != 3 && count != 9)
		return 0;
	char *bad;
	long number = strtol(words[0], &bad, 10);
	if (*bad)
		return 0;
	*call = (int)number;
	*sp = strtoull(words[count - 2], NULL, 16);
	*ip = strtoull(words[count - 1], NULL, 16);
	return *sp && *ip;
}

static struct off_cpu_thread *thread_of(struct off_cpu *o, uint32_t tid)
{
	struct off_cpu_thread *w = &o->threads[tid % OFF_CPU_THREADS];
	if (w->tid != tid)
		*w = (struct off_cpu_thread){ .tid = tid };
	return w;
}

/* The time thread tid has waited for a CPU while ready to run, in ns (the second field
 * of its schedstat; the kernel adds a wait when it ends); 0 when unknown. */
static uint64_t read_run_delay(int task_dir, uint32_t tid)
{
	char text[96];
	unsigned long long run, delay;
	if (read_task_file(task_dir, tid, "schedstat", text, sizeof(text)) <= 0)
		return 0;
	return sscanf(text, "%llu %llu", &run, &delay) == 2 ? delay : 0;
}

/* A thread not waiting in a system call may still not run: ready, it waits for a CPU
 * (more runnable threads than CPUs), which no CPU-time sample sees and its syscall file
 * does not tell ("running"). The kernel adds each such wait to the thread's schedstat
 * when it ends: what was added since the last tick becomes one sample per period, at the
 * ticks up to this one (read at every tick, whatever the thread does now, so that a wait
 * is placed where it ended); the stack is the one of its last sample on the CPU before,
 * found after the run. */
static void sample_runnable(struct off_cpu *o, int task_dir, uint32_t tid, uint64_t tick,
			    uint64_t period)
{
	uint64_t delay = read_run_delay(task_dir, tid);
	struct off_cpu_thread *last = thread_of(o, tid);
	if (!last->delay_read || delay < last->run_delay) { /* its first reading */
		last->delay_read = 1;
		last->run_delay = delay;
		return;
	}
	last->credit += delay - last->run_delay;
	last->run_delay = delay;
	uint64_t n = last->credit / period;
	last->credit -= n * period;
	struct record_sample s = { .header = { sizeof(s), RECORD_SAMPLE, 0 }, .tid = tid,
				   .flags = SAMPLE_RUNNABLE, .syscall = -1 };
	for (uint64_t i = n; i > 0; i--) {
		s.time_ns = tick - (i - 1) * period;
		o->emit(o->arg, &s);
	}
}

/* Samples thread tid if it waits, at tick; and at each tick from `missed` (a tick the
 * ticking thread did not make) up to tick when it waited there all along. */
static void sample_waiting(struct off_cpu *o, int task_dir, uint32_t tid, uint64_t tick,
			   uint64_t missed, uint64_t period)
{
	int call, again_call;
	uint64_t sp, ip, again_sp, again_ip;
	sample_runnable(o, task_dir, tid, tick, period); /* whatever it does now */
	if (!read_wait(task_dir, tid, &call, &sp, &ip))
		return;
	uint32_t stack_bytes = o->stack_bytes < SAMPLE_STACK_MAX ? o->stack_bytes : SAMPLE_STACK_MAX;
	struct iovec local = { o->waiting.bytes + sizeof(o->waiting.sample), stack_bytes };
	struct iovec remote = { (void *)(uintptr_t)sp, stack_bytes };
	ssize_t copied = process_vm_readv(o->pid, &local, 1, &remote, 1, 0);
	if (copied <= 0 || !read_wait(task_dir, tid, &again_call, &again_sp, &again_ip) ||
	    again_call != call || again_sp != sp || again_ip != ip)
		return; /* it woke up meanwhile: the task-clock events take it from here */
	struct record_sample *s = &o->waiting.sample;
	memset(s, 0, sizeof(*s));
	s->tid = tid;
	s->time_ns = tick;
	s->registers[7] = sp;
	s->registers[16] = ip;
	s->flags = SAMPLE_OFF_CPU | ((size_t)copied >= stack_bytes ? SAMPLE_STACK_FULL : 0);
	s->syscall = call;
	s->stack_size = (uint32_t)copied;
	s->header.type = RECORD_SAMPLE;
	s->header.size = (uint32_t)RECORD_PADDED(sizeof(*s) + (size_t)copied);
	struct off_cpu_thread *last = thread_of(o, tid);
	if (missed < tick && last->time + period == missed && last->call == call &&
	    last->sp == sp && last->ip == ip)
		for (uint64_t t = missed; t < tick; t += period) {
			s->time_ns = t;
			o->emit(o->arg, &o->waiting);
		}
	last->call = call;
	last->sp = sp;
	last->ip = ip;
	last->time = tick;
	s->time_ns = tick;
	o->emit(o->arg, &o->waiting);
}

void off_cpu_sample_threads(struct off_cpu *o, uint64_t tick, uint64_t missed, uint64_t period)
{
	unsigned char entries[8192];
	char path[48];
	snprintf(path, sizeof(path), "/proc/%d/task", (int)o->pid);
	int task_dir = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (task_dir < 0)
		return;
	long n;
	while ((n = syscall(SYS_getdents64, task_dir, entries, sizeof(entries))) > 0)
		for (long at = 0; at < n;) {
			struct dirent64 *e = (void *)(entries + at);
			at += e->d_reclen;
			char *end;
			unsigned long tid = strtoul(e->d_name, &end, 10);
			if (!*end && tid && !(o->skip && o->skip((uint32_t)tid)))
				sample_waiting(o, task_dir, (uint32_t)tid, tick, missed, period);
		}
	close(task_dir);
}
