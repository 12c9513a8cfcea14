/* gpuprof sys --pid: a process already running, sampled from outside for a while, into
 * the outputs gpuprof sys writes.
 *
 * Nothing of gpuprof enters the process. The kernel samples its threads on their CPU
 * time through the same software perf events the recorder opens inside a process it
 * started (core/sample-event.h), here opened by gpuprof on each of the target's threads
 * and CPUs, inherited by the threads and processes they start later, and writing into one
 * ring per CPU (PERF_EVENT_IOC_SET_OUTPUT); the files each process maps are read from
 * /proc/PID/maps whenever they change, its Python functions from its memory
 * (process_vm_readv, core/python-read.c) at the sampling frequency, and its metrics by
 * gpuprof's metrics thread. gpuprof writes one spool per process as the recorder would,
 * flushed every 100 ms, and turns them into outputs at the end (trace-run.c's
 * post-processing). No thread of the target is stopped and no signal sent; the events
 * belong to gpuprof's descriptors, so gpuprof ending in any way, SIGKILL included, ends
 * them and leaves the process as it was. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "commands/dump.h"
#include "commands/trace.h"
#include "core/clock.h"
#include "core/gil.h"
#include "core/off-cpu.h"
#include "core/paths.h"
#include "core/perf-ring.h"
#include "core/python-read.h"
#include "core/sample-event.h"
#include "core/spool.h"
#include "metrics/metrics.h"
#include "util/error.h"
#include "util/proc.h"
#include "util/hash.h"

#define MAX_CPUS 1024
#define DRAIN_NS 100000000u    /* the rings drained and the spools flushed this often */
#define RING_BYTES (4u << 20)  /* per CPU, halved while the kernel refuses */

/* One process sampled: the one attached to, or one it started meanwhile. */
struct target {
	int pid;
	struct spool_out out;
	struct strbuf spool;
	uint64_t maps_hash;        /* of /proc/PID/maps when its modules were last written */
	uint64_t exec_time;        /* of the last exec seen */
	uint64_t samples;          /* call-stack samples written */
	struct python_reader *python; /* NULL: none found (yet) */
	uint64_t python_next_try;  /* when to look for an interpreter again */
	uint32_t *named;           /* threads whose name was written */
	size_t named_count;
	int ended;
	struct off_cpu *off_cpu;   /* its waiting threads (--sampling-realtime); NULL: none */
	struct gil_history *gil;   /* --gil, once its interpreter was found; NULL: none */
	uint64_t gil_left_out;     /* samples of threads that did not hold the GIL */
};

/* Whether a sample of the target is written: --gil keeps those of the thread that held
 * the GIL (core/gil.h); the others are counted. */
static int gil_keeps(struct target *t, const struct record_sample *sample)
{
	if (!t->gil || gil_keep(t->gil, sample->tid, sample->time_ns))
		return 1;
	t->gil_left_out++;
	return 0;
}

static struct target *targets;
static size_t target_count;
static struct perf_ring rings[MAX_CPUS];
static int ring_count;
static int *event_fds;
static size_t event_count;
static int register_slot[SAMPLE_REGISTERS];
static volatile sig_atomic_t stop_asked;

static void ask_stop(int sig)
{
	stop_asked = sig;
}

/* The hash of a process's /proc/PID/maps: its modules changed when it changed. */
static uint64_t maps_hash(int pid)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return 0;
	uint64_t h = 1469598103934665603ull;
	char line[4352];
	while (fgets(line, sizeof(line), f))
		h = (h ^ hash_string(line)) * 1099511628211ull;
	fclose(f);
	return h;
}

/* ---- the spools -------------------------------------------------------------------------- */

static struct target *target_of(int pid);

/* A new process to sample: its spool named by the output template, its process record
 * and modules written. NULL when its spool cannot be made (said). */
static struct target *add_target(int pid, const struct job *j, const char *directory,
				 uint64_t now)
{
	struct path_context ctx;
	path_context_current(&ctx);
	char stat[1024], path[64], command[4096];
	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	ssize_t have_stat = proc_read(path, stat, sizeof(stat));
	const char *close_paren = have_stat > 0 ? strrchr(stat, ')') : NULL;
	ctx.pid = pid;
	ctx.ppid = close_paren ? (pid_t)strtol(close_paren + 4, NULL, 10) : 0;
	struct strbuf template = STRBUF_INIT, prefix = STRBUF_INIT;
	struct error err;
	path_output_template(&template, directory, j->o.file);
	int rc = path_expand(template.buf, &ctx, &prefix, &err);
	if (rc == 0)
		rc = path_make_parents(prefix.buf, 1, &err);
	strbuf_release(&template);
	if (rc) {
		warn("process %d is not recorded: %s", pid, err.message);
		strbuf_release(&prefix);
		return NULL;
	}
	targets = xrealloc(targets, (target_count + 1) * sizeof(*targets));
	struct target *t = &targets[target_count];
	memset(t, 0, sizeof(*t));
	t->pid = pid;
	strbuf_init(&t->out.chunk);
	strbuf_init(&t->spool);
	strbuf_addf(&t->spool, "%s.spool", prefix.buf);
	strbuf_release(&prefix);
	t->out.fd = open(t->spool.buf, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (t->out.fd < 0 || spool_write_header(t->out.fd, &err)) {
		warn("process %d is not recorded: cannot write '%s': %s", pid, t->spool.buf,
		     t->out.fd < 0 ? strerror(errno) : err.message);
		if (t->out.fd >= 0)
			close(t->out.fd);
		strbuf_release(&t->spool);
		strbuf_release(&t->out.chunk);
		return NULL;
	}
	target_count++;
	snprintf(path, sizeof(path), "/proc/%d/cmdline", pid);
	ssize_t n = proc_read(path, command, sizeof(command));
	for (ssize_t i = 0; i < n - 1; i++)
		if (!command[i])
			command[i] = ' ';
	char host[256] = "";
	gethostname(host, sizeof(host) - 1);
	struct record_process p = {
		.header = { sizeof(p), RECORD_PROCESS, 0 }, .pid = (uint32_t)pid,
		.ppid = (uint32_t)ctx.ppid, .start_ns = now, .realtime_ns = clock_realtime_ns(),
		.rank = -1, .size = -1,
		.began_ns = clock_process_start_ns(have_stat > 0 ? stat : NULL, now),
	};
	p.hostname_id = dump_put_string(&t->out, host);
	p.command_id = dump_put_string(&t->out, n > 0 ? command : "");
	dump_put(&t->out, &p);
	t->maps_hash = maps_hash(pid);
	dump_put_modules(&t->out, pid, now);
	return t;
}

static struct target *target_of(int pid)
{
	for (size_t i = 0; i < target_count; i++)
		if (targets[i].pid == pid)
			return &targets[i];
	return NULL;
}

/* The thread's name from /proc, once per thread. */
static void name_thread(struct target *t, uint32_t tid)
{
	for (size_t i = 0; i < t->named_count; i++)
		if (t->named[i] == tid)
			return;
	t->named = xrealloc(t->named, (t->named_count + 1) * sizeof(*t->named));
	t->named[t->named_count++] = tid;
	char path[64], name[64];
	snprintf(path, sizeof(path), "/proc/%d/task/%u/comm", t->pid, tid);
	if (proc_read(path, name, sizeof(name)) <= 0)
		return;
	name[strcspn(name, "\n")] = '\0';
	struct record_thread_name r = { { sizeof(r), RECORD_THREAD_NAME, 0 }, tid, 0 };
	r.name_id = dump_put_string(&t->out, name);
	dump_put(&t->out, &r);
}

/* ---- threads off the CPU (--sampling-realtime: core/off-cpu.h) ---------------------------- */

/* A waiting thread's sample, into its process's spool (arg: the target's index, as the
 * targets move when one is added and a pid may be reused). */
static void put_waiting(void *arg, const void *record)
{
	struct target *t = &targets[(size_t)(uintptr_t)arg];
	if (!gil_keeps(t, record))
		return;
	name_thread(t, ((const struct record_sample *)record)->tid);
	dump_put(&t->out, record);
	t->samples++;
}

/* Every process's waiting threads at tick, and at the ticks from missed on for those
 * that waited all along (off-cpu.h). */
static void sample_waiting(const struct job *j, uint64_t tick, uint64_t missed, uint64_t period)
{
	for (size_t i = 0; i < target_count; i++) {
		struct target *t = &targets[i];
		if (t->ended)
			continue;
		if (!t->off_cpu) {
			t->off_cpu = xcalloc(1, sizeof(*t->off_cpu));
			t->off_cpu->pid = t->pid;
			t->off_cpu->stack_bytes = j->sample_stack;
			t->off_cpu->emit = put_waiting;
			t->off_cpu->arg = (void *)(uintptr_t)i;
		}
		off_cpu_sample_threads(t->off_cpu, tick, missed, period);
	}
}

/* What to change where a process's memory and threads are closed to gpuprof (errno kept
 * for the caller's message). */
static const char *ptrace_advice(void)
{
	int saved = errno;
	char scope[16] = "";
	proc_read("/proc/sys/kernel/yama/ptrace_scope", scope, sizeof(scope));
	errno = saved;
	return scope[0] && scope[0] != '0' ? "Yama's ptrace_scope is not 0: set "
	       "/proc/sys/kernel/yama/ptrace_scope to 0, or run gpuprof with CAP_SYS_PTRACE"
	       : "run gpuprof as the process's user, or with CAP_SYS_PTRACE";
}

/* Says once why the waiting threads of a process cannot be sampled: its threads' system
 * call files and memory are closed to gpuprof (Yama's ptrace_scope, another user). */
static void check_waiting_readable(int pid)
{
	char path[64], text[256];
	snprintf(path, sizeof(path), "/proc/%d/task/%d/syscall", pid, pid);
	if (proc_read(path, text, sizeof(text)) > 0 || (errno != EPERM && errno != EACCES))
		return;
	warn("sys: --sampling-realtime: the threads of process %d that wait cannot be read: %s "
	     "(%s): its threads are sampled on their CPU time only", pid, strerror(errno),
	     ptrace_advice());
}

/* The processes started since the last look, for those that only wait (a process that
 * runs is found by its first sample on the CPU). */
static void add_started(const struct job *j, const char *directory, int pid, uint64_t now)
{
	pid_t *pids = xcalloc(1, sizeof(*pids));
	size_t count = 1;
	pids[0] = (pid_t)pid;
	proc_descendants((pid_t)pid, &pids, &count);
	for (size_t i = 1; i < count; i++)
		if (!target_of(pids[i]))
			add_target(pids[i], j, directory, now);
	free(pids);
}

/* ---- Python ------------------------------------------------------------------------------ */

static uint32_t intern(void *arg, const char *text)
{
	return dump_put_string(&((struct target *)arg)->out, text);
}

/* Where a code object lies in the process, for the samples' registers (record.h). */
static void code(void *arg, uint64_t start, uint64_t end, uint32_t function_id, uint32_t file_id)
{
	struct record_python_code c = {
		.header = { sizeof(c), RECORD_PYTHON_CODE, 0 },
		.function_id = function_id, .file_id = file_id,
		.start = start, .end = end, .time_ns = clock_now_ns(),
	};
	dump_put(&((struct target *)arg)->out, &c);
}

struct python_tick {
	struct target *t;
	uint64_t period;
	int gil; /* --gil: the GIL's holder noted at each tick */
};

static void python_thread(struct python_reader *r, uint64_t thread, void *arg)
{
	struct python_tick *tick = arg;
	dump_python_thread(&tick->t->out, r, thread, clock_now_ns(), tick->period);
}

/* Each Python thread's functions now, as the sampler inside a process reads its own; an
 * interpreter is looked for once a second until one is found. */
static void sample_python(struct target *t, uint64_t now, uint64_t period,
			  struct python_tick *tick)
{
	if (!t->python) {
		if (now < t->python_next_try)
			return;
		t->python_next_try = now + 1000000000u;
		struct python_reader *r = xcalloc(1, sizeof(*r));
		r->intern = intern;
		r->code = code;
		r->arg = t;
		if (dump_find_interpreter(t->pid, r)) {
			free(r);
			return;
		}
		t->python = r;
		if (tick->gil) {
			t->gil = xcalloc(1, sizeof(*t->gil));
			gil_history_init(t->gil);
		}
	}
	if (t->gil) {
		uint64_t holder = python_gil_holder(t->python);
		gil_note(t->gil, now, holder ? python_thread_id(t->python, holder) : 0);
	}
	tick->t = t;
	tick->period = period;
	python_each_thread(t->python, python_thread, tick);
}

/* Says once why a process that runs Python cannot have its functions read: its memory
 * is closed to gpuprof (Yama's ptrace_scope, another user). */
static void check_python_readable(int pid)
{
	char path[64], line[4352];
	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return;
	unsigned long long start = 0, first = 0;
	int python = 0;
	while (fgets(line, sizeof(line), f)) {
		const char *file = strchr(line, '/'), *base = file ? strrchr(file, '/') + 1 : NULL;
		if (!first && sscanf(line, "%llx-", &start) == 1 && strstr(line, " r"))
			first = start;
		python |= base && (!strncmp(base, "python3", 7) || !strncmp(base, "libpython3", 10));
	}
	fclose(f);
	char byte;
	struct iovec local = { &byte, 1 }, remote = { (void *)(uintptr_t)first, 1 };
	if (!python || !first || process_vm_readv(pid, &local, 1, &remote, 1, 0) == 1 ||
	    (errno != EPERM && errno != EACCES))
		return;
	warn("sys: process %d runs Python, whose functions cannot be read from its memory: %s "
	     "(%s): its native frames are sampled", pid, strerror(errno), ptrace_advice());
}

/* ---- the events ---------------------------------------------------------------------------- */

/* Opens the events of thread tid, one per CPU into that CPU's ring (made by the first
 * thread): 0, the errno of the first failure, or its negative where a ring could not be
 * mapped. */
static int open_thread(int tid, unsigned frequency, unsigned stack_bytes, uint64_t registers,
		       long cpus)
{
	for (long cpu = 0; cpu < cpus; cpu++) {
		struct perf_event_attr a;
		sample_event_attr(&a, frequency, registers, stack_bytes);
		a.disabled = 1;        /* all start together, once every thread has its events */
		a.inherit_thread = 0;  /* the processes it starts are sampled too */
		a.remove_on_exec = 0;  /* and what they exec, */
		a.comm = 1;            /* which a PERF_RECORD_COMM says, with its time */
		a.comm_exec = 1;
		int fd = (int)syscall(SYS_perf_event_open, &a, tid, (int)cpu, -1, PERF_FLAG_FD_CLOEXEC);
		if (fd < 0) {
			if (errno == ENODEV || errno == EINVAL) /* a CPU that is offline */
				continue;
			return errno;
		}
		event_fds = xrealloc(event_fds, (event_count + 1) * sizeof(*event_fds));
		event_fds[event_count++] = fd;
		if (cpu < ring_count && rings[cpu].fd >= 0) {
			if (ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, rings[cpu].fd) < 0)
				return errno;
			continue;
		}
		size_t page = (size_t)sysconf(_SC_PAGESIZE), bytes = RING_BYTES;
		void *map = MAP_FAILED;
		while (bytes >= 16 * page &&
		       (map = mmap(NULL, page + bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)) ==
			       MAP_FAILED)
			bytes /= 2;
		if (map == MAP_FAILED)
			return -errno; /* the buffer, not the event */
		for (long k = ring_count; k < cpu; k++)
			rings[k].fd = -1;
		rings[cpu] = (struct perf_ring){ fd, map, (unsigned char *)map + page, bytes, 0 };
		if (cpu >= ring_count)
			ring_count = (int)cpu + 1;
	}
	return 0;
}

/* Why perf events cannot be opened on the target, in words that say what to change. */
static void perf_advice(int pid, int error)
{
	if (error < 0)
		die("sys: cannot map the sample buffers: %s (the locked memory of "
		    "perf_event_mlock_kb and `ulimit -l` is used up: raise either)", strerror(-error));
	char level[16] = "";
	proc_read("/proc/sys/kernel/perf_event_paranoid", level, sizeof(level));
	int paranoid = atoi(level);
	if (error == EACCES && paranoid > 2)
		die("sys: cannot sample process %d: perf_event_paranoid is %d: set "
		    "/proc/sys/kernel/perf_event_paranoid to 2 or lower, or run gpuprof with "
		    "CAP_PERFMON (e.g. as root)", pid, paranoid);
	if (error == EACCES || error == EPERM)
		die("sys: cannot sample process %d: %s (another user's process: run gpuprof as "
		    "that user, or as root)", pid, strerror(error));
	if (error == EMFILE)
		die("sys: cannot sample process %d: %s (an event per thread and CPU: raise `ulimit "
		    "-n`)", pid, strerror(error));
	die("sys: cannot sample process %d: perf_event_open: %s", pid, strerror(error));
}

/* The target's threads now, each given its events: how many; dies with advice when the
 * kernel refuses. */
static size_t open_threads(int pid, unsigned frequency, unsigned stack_bytes, long cpus)
{
	uint64_t registers = perf_ring_registers(register_slot);
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	DIR *d = opendir(path);
	if (!d)
		die("sys: no process %d (it ended)", pid);
	size_t threads = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (e->d_name[0] < '0' || e->d_name[0] > '9')
			continue;
		int error = open_thread(atoi(e->d_name), frequency, stack_bytes, registers, cpus);
		if (error == ESRCH) /* it ended meanwhile */
			continue;
		if (error) {
			closedir(d);
			perf_advice(pid, error);
		}
		threads++;
	}
	closedir(d);
	return threads;
}

/* Moves what the rings hold into the spools: samples to their process's spool (a process
 * seen for the first time is added), losses counted. */
static void drain(const struct job *j, const char *directory, uint64_t now)
{
	static union {
		struct record_sample sample;
		unsigned char bytes[sizeof(struct record_sample) + SAMPLE_STACK_MAX];
	} pending;
	for (int i = 0; i < ring_count; i++) {
		struct perf_ring *r = &rings[i];
		if (r->fd < 0)
			continue;
		struct perf_event_mmap_page *control = (void *)r->map;
		uint64_t head = __atomic_load_n(&control->data_head, __ATOMIC_ACQUIRE);
		uint64_t tail = control->data_tail;
		while (tail < head) {
			struct perf_event_header h;
			perf_ring_copy(r, tail, &h, sizeof(h));
			if (h.size < sizeof(h))
				break;
			uint32_t pid;
			uint64_t lost, time;
			struct record_samples_lost lost_record;
			if (h.type == PERF_RECORD_SAMPLE &&
			    perf_ring_sample(r, tail, h.size, register_slot, &pending.sample, &pid) == 0) {
				struct target *t = target_of((int)pid);
				if (!t)
					t = add_target((int)pid, j, directory, now);
				if (t && gil_keeps(t, &pending.sample)) {
					name_thread(t, pending.sample.tid);
					dump_put(&t->out, &pending);
					t->samples++;
				}
				r->last_time = pending.sample.time_ns;
			} else if (h.type == PERF_RECORD_COMM && (h.misc & PERF_RECORD_MISC_COMM_EXEC) &&
				   h.size >= sizeof(h) + 8 + 16) {
				/* an exec: the files mapped from its time on are the new image's
				 * (each CPU's event says it: once per process and time) */
				perf_ring_copy(r, tail + sizeof(h), &pid, sizeof(pid));
				perf_ring_copy(r, tail + h.size - 8, &time, sizeof(time));
				struct target *t = target_of((int)pid);
				if (t && t->exec_time != time) {
					t->exec_time = time;
					t->maps_hash = maps_hash(t->pid);
					dump_put_modules(&t->out, t->pid, time);
				}
			} else if (h.type == PERF_RECORD_LOST && target_count &&
				   perf_ring_lost(r, tail, h.size, &lost_record, &lost) == 0) {
				dump_put(&targets[0].out, &lost_record);
				r->last_time = lost_record.end_ns;
			}
			tail += h.size;
		}
		__atomic_store_n(&control->data_tail, tail, __ATOMIC_RELEASE);
	}
}

/* ---- the run ------------------------------------------------------------------------------- */

static void sleep_until(uint64_t ns)
{
	struct timespec at = { (time_t)(ns / 1000000000u), (long)(ns % 1000000000u) };
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &at, NULL) == EINTR && !stop_asked)
		;
}

/* The process's CPU time so far (user and system, all its threads), in seconds; -1 when
 * it cannot be read (it ended). */
static double cpu_seconds(int pid)
{
	char path[64], stat[1024];
	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	if (proc_read(path, stat, sizeof(stat)) <= 0)
		return -1;
	char *p = strrchr(stat, ')');
	unsigned long long user = 0, system = 0;
	/* after the command: fields 3 to 13, then utime and stime */
	for (int field = 3; p && field <= 15; field++) {
		p = strchr(p + 1, ' ');
		if (p && field == 14)
			user = strtoull(p + 1, NULL, 10);
		if (p && field == 15)
			system = strtoull(p + 1, NULL, 10);
	}
	long hz = sysconf(_SC_CLK_TCK);
	return p && hz > 0 ? (double)(user + system) / (double)hz : -1;
}

static int alive(int pid)
{
	char path[64], stat[512];
	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	if (proc_read(path, stat, sizeof(stat)) <= 0)
		return 0;
	const char *close_paren = strrchr(stat, ')');
	return close_paren && close_paren[2] != 'Z' && close_paren[2] != 'X';
}

int attach_run(struct job *j, const char *directory, const char *pid_text,
	       const char *duration_text)
{
	char *end;
	long pid = strtol(pid_text, &end, 10);
	if (!*pid_text || *end || pid <= 0 || pid > 4194304)
		die_with(EXIT_USAGE, "sys: --pid: '%s' is not a process id", pid_text);
	double seconds = 0;
	if (duration_text) {
		seconds = strtod(duration_text, &end);
		if (!*duration_text || *end || !(seconds > 0) || seconds > 31536000)
			die_with(EXIT_USAGE, "sys: --duration: '%s' is not a number of seconds "
				 "above 0", duration_text);
	}
	char why[512];
	dump_check_process((int)pid, "sys", why, sizeof(why));
	if (why[0])
		die("sys: %s", why);
	if (!j->sample_freq && !j->metrics.host && !j->metrics.device)
		die_with(EXIT_USAGE, "sys: --pid with nothing to sample: --no-sample, "
			 "--no-host-metrics and --no-device-metrics leave nothing");
	struct rlimit files;
	if (getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur < files.rlim_max) {
		files.rlim_cur = files.rlim_max; /* an event per thread and CPU */
		setrlimit(RLIMIT_NOFILE, &files);
	}
	long cpus = sysconf(_SC_NPROCESSORS_CONF);
	cpus = cpus < 1 ? 1 : cpus > MAX_CPUS ? MAX_CPUS : cpus;
	/* the process and those it started before: each has its events and its spool */
	pid_t *pids = xcalloc(1, sizeof(*pids));
	size_t process_count = 1, threads = 0;
	pids[0] = (pid_t)pid;
	proc_descendants((pid_t)pid, &pids, &process_count);
	for (size_t i = 0; i < process_count && j->sample_freq; i++)
		threads += open_threads(pids[i], j->sample_freq, j->sample_stack, cpus);
	uint64_t now = clock_now_ns();
	if (!add_target((int)pid, j, directory, now))
		return EXIT_FAILED;
	for (size_t i = 1; i < process_count; i++)
		add_target(pids[i], j, directory, now);
	if (j->sample_freq)
		for (size_t i = 0; i < process_count; i++)
			check_python_readable(pids[i]);
	if (j->sample_realtime)
		check_waiting_readable((int)pid);
	free(pids);
	struct strbuf manifest = STRBUF_INIT, metrics_base = STRBUF_INIT;
	const char *tmp = getenv("TMPDIR");
	strbuf_addf(&manifest, "%s/gpuprof-%d-XXXXXX", tmp && *tmp ? tmp : "/tmp", (int)getpid());
	int manifest_fd = mkstemp(manifest.buf);
	if (manifest_fd < 0)
		die("sys: cannot create a temporary file in '%s': %s", tmp && *tmp ? tmp : "/tmp",
		    strerror(errno));
	strbuf_addf(&metrics_base, "%s.metrics", manifest.buf);
	struct metrics *sampler = NULL;
	if (j->metrics.host || j->metrics.device) {
		struct metrics_options m = j->metrics;
		m.root = (int)pid;
		struct error err;
		if (!(sampler = metrics_start(&m, metrics_base.buf, &err)))
			warn("metrics are not sampled: %s", err.message);
	}
	for (size_t i = 0; i < event_count; i++)
		ioctl(event_fds[i], PERF_EVENT_IOC_ENABLE, 0);
	double cpu_before = cpu_seconds((int)pid);
	struct sigaction stop = { .sa_handler = ask_stop };
	sigaction(SIGINT, &stop, NULL);
	sigaction(SIGTERM, &stop, NULL);
	sigaction(SIGHUP, &stop, NULL);
	fprintf(stderr, "gpuprof: sys: sampling process %ld (%zu thread%s%s%s) %s; GPU API "
			"calls and device work are not recorded (they need the program started "
			"under gpuprof)\n", pid, threads, threads == 1 ? "" : "s",
		process_count > 1 ? " with the processes it started" : "",
		j->sample_freq ? "" : ", metrics only",
		duration_text ? "for the duration asked, or until Ctrl-C"
			      : "until it ends or Ctrl-C");
	uint64_t started = now;
	uint64_t period = j->sample_freq ? 1000000000u / j->sample_freq : 50000000u;
	uint64_t until = seconds > 0 ? now + (uint64_t)(seconds * 1e9) : UINT64_MAX;
	uint64_t next_drain = now + DRAIN_NS, tick = now, next_wait = now + period;
	struct python_tick python = { .gil = j->sample_gil };
	const char *ended = NULL;
	while (!stop_asked) {
		now = clock_now_ns();
		if (now >= until) {
			ended = "the duration asked ended";
			break;
		}
		if (j->sample_freq)
			for (size_t i = 0; i < target_count; i++)
				if (!targets[i].ended)
					sample_python(&targets[i], now, period, &python);
		if (j->sample_realtime && now >= next_wait) {
			uint64_t at = off_cpu_tick(next_wait, now, period);
			sample_waiting(j, at, next_wait, period);
			next_wait = at + period;
		}
		if (now >= next_drain) {
			drain(j, directory, now);
			if (j->sample_realtime)
				add_started(j, directory, (int)pid, now);
			for (size_t i = 0; i < target_count; i++) {
				struct target *t = &targets[i];
				if (t->ended)
					continue;
				if (!alive(t->pid)) {
					t->ended = 1;
					continue;
				}
				uint64_t h = maps_hash(t->pid);
				if (h && h != t->maps_hash) {
					t->maps_hash = h;
					dump_put_modules(&t->out, t->pid, now);
				}
				dump_flush(&t->out);
			}
			if (targets[0].ended) {
				ended = "the process ended";
				break;
			}
			next_drain = now + DRAIN_NS;
		}
		tick += period;
		if (tick < now)
			tick = now + period;
		sleep_until(tick < next_drain ? tick : next_drain);
	}
	if (stop_asked)
		ended = "interrupted";
	for (size_t i = 0; i < event_count; i++)
		ioctl(event_fds[i], PERF_EVENT_IOC_DISABLE, 0);
	now = clock_now_ns();
	double cpu_after = cpu_seconds((int)pid);
	drain(j, directory, now);
	for (size_t i = 0; i < event_count; i++)
		close(event_fds[i]);
	if (sampler) {
		struct error err;
		if (metrics_stop(sampler, &err))
			warn("metrics: %s (those sampled before are kept)", err.message);
	}
	signal(SIGINT, SIG_DFL);
	struct strbuf sampled = STRBUF_INIT;
	if (j->sample_freq)
		strbuf_addf(&sampled, ": %llu call-stack samples", (unsigned long long)targets[0].samples);
	if (j->sample_freq && cpu_before >= 0 && cpu_after >= cpu_before)
		strbuf_addf(&sampled, " (one per 1/%u s of CPU time in user space%s) in its %.2f s "
			    "of CPU time meanwhile (user and system)", j->sample_freq,
			    j->sample_realtime ? ", and of each thread's waiting" : "",
			    cpu_after - cpu_before);
	if (j->sample_gil && targets[0].gil)
		strbuf_addf(&sampled, "; %llu more, of threads that did not hold the GIL, left out "
			    "(--gil)", (unsigned long long)targets[0].gil_left_out);
	else if (j->sample_gil)
		strbuf_addf(&sampled, "; --gil left out none: it runs no Python whose frames "
			    "gpuprof reads");
	fprintf(stderr, "gpuprof: sys: stopped sampling process %ld (%s) after %.3f s%s%s\n", pid,
		ended, (double)(now - started) / 1e9, sampled.buf,
		targets[0].ended ? "" : "; it goes on as it was");
	strbuf_release(&sampled);
	int failed = 0;
	for (size_t i = 0; i < target_count; i++) {
		struct target *t = &targets[i];
		struct record_process_end e = { { sizeof(e), RECORD_PROCESS_END, 0 }, now };
		dump_put(&t->out, &e);
		if (dump_flush(&t->out)) {
			warn("'%s': %s (what was written before is kept)", t->spool.buf,
			     t->out.err.message);
			failed = 1;
		}
		close(t->out.fd);
		if (write(manifest_fd, t->spool.buf, t->spool.len + 1) != (ssize_t)(t->spool.len + 1))
			failed = 1;
		free(t->python);
		if (t->gil)
			gil_history_release(t->gil);
		free(t->gil);
		free(t->off_cpu);
		free(t->named);
		strbuf_release(&t->out.chunk);
		strbuf_release(&t->spool);
	}
	close(manifest_fd);
	free(targets);
	free(event_fds);
	if (trace_post_process(manifest.buf, metrics_base.buf, directory, &j->request,
			       j->o.keep_spool == 1))
		failed = 1;
	unlink(manifest.buf);
	metrics_remove(metrics_base.buf);
	strbuf_release(&manifest);
	strbuf_release(&metrics_base);
	return failed ? EXIT_FAILED : 0;
}
