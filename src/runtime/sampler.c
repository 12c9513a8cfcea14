/* Call-stack sampling in the recorded process (gpuprof sys, --sample): the kernel samples
 * every thread of the process through software perf events on its CPU time
 * (PERF_COUNT_SW_TASK_CLOCK), copying each sampled thread's user registers and the top of
 * its stack into a ring per CPU; the recorder's writer thread turns what the rings hold
 * into RECORD_SAMPLE records at every flush, and records the ELF files mapped into the
 * process (RECORD_MODULE) whenever that set changed. Nothing runs on the application's
 * threads: no signal, no handler, no copy. Unwinding and symbols come after the run.
 * A thread of the recorder ticks at the same frequency for what the kernel cannot see:
 * the threads off the CPU (--sampling-realtime) and the Python functions
 * (runtime/python.h); the collector also copies the perf map of code made at run time.
 *
 * Why perf events: they need no hardware PMU (task-clock is a software event), they work
 * for an unprivileged user at perf_event_paranoid 2 (user space only), and the kernel
 * copies the stack, so the program runs none of our code when it is sampled. One event
 * per CPU, inherited by the threads the process starts later (inherit_thread: not by the
 * processes it forks, which start their own recorder; remove_on_exec: an exec()ed image
 * starts its own); the kernel refuses to map the ring of an inherited event that is not
 * bound to a CPU. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/maps.h"
#include "core/off-cpu.h"
#include "core/perf-ring.h"
#include "core/gil.h"
#include "core/sample-event.h"
#include "runtime/python.h"
#include "runtime/recorder.h"
#include "util/vdso.h"

#define MAX_CPUS 1024

/* The kernel's buffers are sized for the offered rate: each CPU runs one sampled thread
 * at a time, so its buffer takes at most `frequency` samples a second, each of
 * sample_ring_bytes() whatever the depth of the stack (the kernel reserves the whole copy).
 * A buffer holds a quarter of a second of them (RING_SECONDS_DIVISOR), and wakes the writer
 * (recorder_set_wake_fds) when it is a quarter full: the writer has three quarters of that time to drain it before a
 * sample is lost, however long its flush interval. The pages are locked memory: an
 * unprivileged user has perf_event_mlock_kb per CPU for all their events, then the
 * process's `ulimit -l`; a buffer the kernel refuses is tried at half the size. */
static uint32_t stack_bytes = SAMPLE_STACK_DEFAULT; /* GPUPROF_SAMPLE_STACK_BYTES */

/* The bytes the kernel reserves for a sample, however deep its stack. */
static uint64_t sample_ring_bytes(void)
{
	return sizeof(struct perf_event_header) + 4 * 8 + SAMPLE_REGISTERS * 8 + 8 +
	       stack_bytes + 8;
}
#define RING_SECONDS_DIVISOR 4 /* a quarter of a second */
#define RING_MIN_PAGES 16
#define RING_MAX_PAGES 1024    /* 4 MiB of 4 KiB pages per CPU */
#define RINGS_MAX_BYTES (64u << 20) /* for all the CPUs together */

static struct perf_ring *rings;
static _Atomic uint32_t ticker_tid; /* the sampler's ticking thread, once started */

/* gpuprof's threads in the process are not the program's: their samples are left out */
static int own_thread(uint32_t tid)
{
	return tid == atomic_load(&ticker_tid) || recorder_own_thread(tid);
}

static int ring_count;
static uint64_t register_mask;
static int register_slot[SAMPLE_REGISTERS]; /* where each register is in a sample */
/* dl_iterate_phdr's adds + subs when the writer last recorded the files mapped */
static _Atomic unsigned long long loaded_objects = ~0ull;
static union {                                   /* the record being assembled */
	struct record_sample sample;
	unsigned char bytes[sizeof(struct record_sample) + SAMPLE_STACK_MAX];
} pending;

/* Pages of data per CPU for the offered rate: a power of two. */
static size_t ring_pages_wanted(unsigned frequency, size_t page, long cpus)
{
	uint64_t bytes = (uint64_t)frequency * sample_ring_bytes() / RING_SECONDS_DIVISOR;
	uint64_t most = RINGS_MAX_BYTES / (uint64_t)cpus / page;
	size_t pages = RING_MIN_PAGES;
	while (pages < RING_MAX_PAGES && pages < most && (uint64_t)pages * page < bytes)
		pages *= 2;
	return pages;
}

static int open_rings(unsigned frequency)
{
	long cpus = sysconf(_SC_NPROCESSORS_CONF);
	if (cpus < 1)
		cpus = 1;
	if (cpus > MAX_CPUS)
		cpus = MAX_CPUS;
	rings = calloc((size_t)cpus, sizeof(*rings));
	if (!rings)
		return -1;
	register_mask = perf_ring_registers(register_slot);
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t wanted = ring_pages_wanted(frequency, page, cpus), pages = wanted;
	const char *asked = getenv("GPUPROF_SAMPLE_BUFFER_KB");
	if (asked && *asked) { /* the largest power of two of pages in it, at least 4 */
		unsigned long long kib = strtoull(asked, NULL, 10);
		for (wanted = RING_MIN_PAGES / 4; (wanted * 2) * page / 1024 <= kib &&
		     wanted < (1u << 20); wanted *= 2)
			;
		pages = wanted;
	}
	/* room for two samples at least, whatever was asked: a buffer that holds none loses
	 * them all */
	while ((uint64_t)pages * page < 2 * sample_ring_bytes() && pages < (1u << 20))
		pages *= 2;
	if (wanted < pages)
		wanted = pages;
	for (long cpu = 0; cpu < cpus; cpu++) {
		void *map = MAP_FAILED;
		int fd, open_error = 0, map_error = 0;
		for (;;) { /* over the locked-memory budget: half the size, from this CPU on */
			struct perf_event_attr a;
			sample_event_attr(&a, frequency, register_mask, stack_bytes);
			a.disabled = 1; /* until the ticking thread runs: see enable_rings() */
			a.watermark = 1;
			a.wakeup_watermark = (uint32_t)(pages * page / 4);
			fd = (int)syscall(SYS_perf_event_open, &a, 0, (int)cpu, -1, PERF_FLAG_FD_CLOEXEC);
			if (fd < 0) {
				open_error = errno;
				break;
			}
			map = mmap(NULL, page + pages * page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
			if (map != MAP_FAILED)
				break;
			map_error = errno;
			close(fd);
			fd = -1;
			if (pages <= RING_MIN_PAGES / 4 || (map_error != EPERM && map_error != ENOMEM))
				break;
			pages /= 2;
		}
		if (open_error == ENODEV || open_error == EINVAL) /* a CPU that is offline */
			continue;
		if (open_error) {
			recorder_report("call stacks are not sampled: perf_event_open: %s "
					"(see /proc/sys/kernel/perf_event_paranoid)", strerror(open_error));
			return -1;
		}
		if (fd < 0) {
			recorder_report("call stacks are not sampled: cannot map the sample buffer: %s%s",
					strerror(map_error), map_error == EPERM ? " (the locked memory "
					"of perf_event_mlock_kb and `ulimit -l` is used up)" : "");
			return -1;
		}
		rings[ring_count++] = (struct perf_ring){ fd, map, (unsigned char *)map + page,
							  pages * page, 0 };
	}
	if (!ring_count)
		return -1;
	if (pages < wanted)
		recorder_report("call stacks: the kernel's sample buffers hold %zu KiB per CPU, "
				"not the %zu KiB that %u samples a second of %u bytes of stack need: "
				"samples may be lost (counted where the profile is shown); a larger "
				"`ulimit -l` or /proc/sys/kernel/perf_event_mlock_kb, or a lower "
				"--sampling-freq or --sampling-stack-size, helps",
				pages * page / 1024, wanted * page / 1024, frequency, stack_bytes);
	int fds[MAX_CPUS];
	for (int i = 0; i < ring_count; i++)
		fds[i] = rings[i].fd;
	const char *wake = getenv("GPUPROF_SAMPLE_WAKE"); /* 0: drained at each flush only */
	if (!wake || strcmp(wake, "0"))
		recorder_set_wake_fds(fds, ring_count);
	return 0;
}

/* Starts the events, once the ticking thread is made: the time the program's thread
 * spends making it (long under a sanitizer's runtime) is gpuprof's, not the program's. */
static void enable_rings(void)
{
	for (int i = 0; i < ring_count; i++)
		ioctl(rings[i].fd, PERF_EVENT_IOC_ENABLE, 0);
}

/* ---- code made at run time: the perf map ------------------------------------------ */

/* A program that makes code at run time (JIT compilers; CPython 3.12 and later where
 * the user turned its perf support on: gpuprof reads CPython's frames from its memory and
 * turns nothing on) names it in /tmp/perf-PID.map, one "START SIZE NAME" line (hexadecimal) per piece, appending as it
 * goes. The collector copies the lines added since its last flush into RECORD_SYMBOL
 * records, so the names reach the spool with the samples. */
static off_t perf_map_read;  /* bytes of the map already recorded */
static pid_t perf_map_pid;   /* whose: a child made by fork() has a map of its own */

static void record_perf_map(void)
{
	char path[64];
	if (perf_map_pid != getpid()) {
		perf_map_pid = getpid();
		perf_map_read = 0;
	}
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)perf_map_pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	char buffer[8192];
	ssize_t n;
	size_t kept = 0; /* the start of a line not yet whole */
	while ((n = pread(fd, buffer + kept, sizeof(buffer) - kept, perf_map_read + (off_t)kept)) > 0) {
		size_t have = kept + (size_t)n, line = 0;
		for (size_t i = 0; i < have; i++) {
			if (buffer[i] != '\n')
				continue;
			buffer[i] = '\0';
			unsigned long long start, size;
			int name = 0;
			if (sscanf(buffer + line, "%llx %llx %n", &start, &size, &name) == 2 && name &&
			    buffer[line + (size_t)name] && size <= UINT32_MAX) {
				struct record_symbol s = { .header = { sizeof(s), RECORD_SYMBOL, 0 },
							   .start = start, .size = (uint32_t)size,
							   .name_id = recorder_intern(buffer + line + name) };
				recorder_emit(&s);
			}
			line = i + 1;
		}
		perf_map_read += (off_t)line;
		kept = have - line;
		if (kept == sizeof(buffer)) { /* a line longer than the buffer: skipped */
			perf_map_read += (off_t)kept;
			kept = 0;
		}
		memmove(buffer, buffer + line, kept);
	}
	close(fd); /* the map is the program's: it stays */
}

static int count_objects(struct dl_phdr_info *info, size_t size, void *data)
{
	*(unsigned long long *)data = info->dlpi_adds + info->dlpi_subs;
	return 1;
}

/* One file mapped (core/maps.h) as a record of the set read at now. */
static void record_module(void *arg, uint64_t start, uint64_t end, uint64_t offset,
			  const char *path)
{
	struct record_module m = { .header = { sizeof(m), RECORD_MODULE, 0 }, .start = start,
				   .end = end, .offset = offset, .path_id = recorder_intern(path),
				   .time_ns = *(const uint64_t *)arg };
	char id[128];
	if (!strcmp(path, "[vdso]") && vdso_build_id(id, sizeof(id)) == 0)
		m.build_id = recorder_intern(id);
	recorder_try_emit(&m);
}

/* The ELF files mapped now, from /proc/self/maps: one record per file. */
static void record_modules(void)
{
	uint64_t now = clock_now_ns();
	maps_modules("/proc/self/maps", record_module, &now);
}

/* The recorder's collector: the rings into records. Returns 1 when the writer's buffer
 * filled (it drains and calls again). */
/* The ELF files mapped, recorded again when the loader's count of loads and unloads
 * moved. */
static void record_modules_if_changed(void)
{
	unsigned long long objects = 0;
	dl_iterate_phdr(count_objects, &objects);
	if (objects != atomic_load(&loaded_objects)) {
		record_modules();
		atomic_store(&loaded_objects, objects);
	}
}

/* --gil (GPUPROF_SAMPLE_GIL): only the samples of the thread that held Python's GIL are
 * kept (core/gil.h); python_read: whether an interpreter was read, to say why none was
 * left out where none was. */
static int gil_only;
static atomic_int python_read;
static struct gil_history gil;
static _Atomic uint64_t gil_kept, gil_left_out; /* samples */

static int held_gil(const struct record_sample *sample)
{
	if (!gil_only || gil_keep(&gil, sample->tid, sample->time_ns))
		return 1;
	atomic_fetch_add(&gil_left_out, 1);
	return 0;
}

/* At the last pass of a process that ran Python: what --gil left out (one that ran none
 * keeps every sample, and says nothing: a launcher's shell, a compiler). */
static void report_gil(void)
{
	if (gil_only && atomic_load(&python_read) == 1)
		recorder_report("--gil: %llu samples of threads that did not hold the GIL left "
				"out, %llu kept", (unsigned long long)atomic_load(&gil_left_out),
				(unsigned long long)atomic_load(&gil_kept));
}

static int collect(int final)
{
	record_modules_if_changed();
	record_perf_map();
	if (final) /* what the program does after this last pass is not sampled */
		for (int i = 0; i < ring_count; i++)
			ioctl(rings[i].fd, PERF_EVENT_IOC_DISABLE, 0);
	for (int i = 0; i < ring_count; i++) {
		struct perf_ring *r = &rings[i];
		struct perf_event_mmap_page *control = (void *)r->map;
		uint64_t head = __atomic_load_n(&control->data_head, __ATOMIC_ACQUIRE);
		uint64_t tail = control->data_tail;
		while (tail < head) {
			struct perf_event_header h;
			perf_ring_copy(r, tail, &h, sizeof(h));
			if (h.size < sizeof(h))
				break;
			uint32_t pid;
			if (h.type == PERF_RECORD_SAMPLE &&
			    perf_ring_sample(r, tail, h.size, register_slot, &pending.sample, &pid) == 0) {
				/* not gpuprof's, taken while collection was on (pause and resume,
				 * capture ranges, periods), and --gil's */
				int keep = !own_thread(pending.sample.tid) &&
					   recorder_collected_at(pending.sample.time_ns) &&
					   held_gil(&pending.sample);
				int rc = keep ? recorder_try_emit(&pending) : -2;
				if (rc == -1) {
					__atomic_store_n(&control->data_tail, tail, __ATOMIC_RELEASE);
					return 1; /* this one again once the buffer is drained */
				}
				atomic_fetch_add(&gil_kept, rc == 0);
				r->last_time = pending.sample.time_ns;
			}
			uint64_t lost;
			struct record_samples_lost l;
			if (h.type == PERF_RECORD_LOST &&
			    perf_ring_lost(r, tail, h.size, &l, &lost) == 0) {
				if (recorder_try_emit(&l) == -1) {
					__atomic_store_n(&control->data_tail, tail, __ATOMIC_RELEASE);
					return 1;
				}
				recorder_count_dropped(DROPPED_SAMPLES, lost);
				r->last_time = l.end_ns;
			}
			tail += h.size;
		}
		__atomic_store_n(&control->data_tail, tail, __ATOMIC_RELEASE);
	}
	if (final)
		report_gil();
	return 0;
}

/* ---- threads off the CPU (--sampling-realtime: core/off-cpu.h) -------------------------- */

static unsigned tick_frequency;
static int sample_realtime;
static struct off_cpu off_cpu;

static void emit_waiting(void *arg, const void *record)
{
	(void)arg;
	const struct record_sample *sample = record;
	if (recorder_collected_at(sample->time_ns) && held_gil(sample)) {
		recorder_emit(record);
		atomic_fetch_add(&gil_kept, 1);
	}
}

/* Sleeps until ns on the trace clock. */
static void sleep_until(uint64_t ns)
{
	struct timespec t = { (time_t)(ns / 1000000000u), (long)(ns % 1000000000u) };
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t, NULL) == EINTR)
		;
}

/* The sampler's ticking thread: at each tick of the sampling frequency, the threads off
 * the CPU (--sampling-realtime) and the Python frames of the process (runtime/python.h),
 * and whether a library was loaded or unloaded (then the writer records the files
 * mapped at once). Until the process runs Python it looks for an interpreter once a
 * second; with neither Python nor --sampling-realtime it ticks at most every ms. */
#define MODULE_TICK_NS 1000000u

static void *ticker_main(void *arg)
{
	(void)arg;
	atomic_store(&ticker_tid, (uint32_t)syscall(SYS_gettid));
	pthread_setname_np(pthread_self(), RECORDER_THREAD_PREFIX "ticker");
	uint64_t period = 1000000000u / tick_frequency, next = clock_now_ns() + period;
	uint64_t look_again = 0;
	unsigned long long woken_for = ~0ull;
	int python = 0;
	for (;;) {
		if (python == 0 && clock_now_ns() >= look_again) {
			python = python_attach();
			atomic_store(&python_read, python);
			look_again = clock_now_ns() + 1000000000u;
		}
		/* watching the loaded files alone: a tick of a millisecond at the most */
		if (!sample_realtime && python != 1 && next < clock_now_ns() + MODULE_TICK_NS)
			next = clock_now_ns() + MODULE_TICK_NS;
		sleep_until(next);
		/* a library loaded or unloaded: the writer records the files mapped now rather
		 * than at its next flush, so that a sample is named after the file mapped when
		 * it was taken (one loaded where an unloaded one was, within a tick) */
		unsigned long long objects = 0;
		dl_iterate_phdr(count_objects, &objects);
		if (objects != atomic_load(&loaded_objects) && objects != woken_for) {
			woken_for = objects;
			recorder_wake();
		}
		/* late by a period or more: this tick is the last that passed, and the ones
		 * before it from `missed` are made up for the threads that waited through */
		uint64_t missed = next, now = clock_now_ns();
		uint64_t tick = off_cpu_tick(next, now, period);
		next = tick + period;
		/* Python's first: the holder of its GIL as the waiting threads are read */
		if (python == 1) {
			uint32_t holder = python_sample(period);
			if (gil_only)
				gil_note(&gil, tick, holder);
		}
		if (sample_realtime)
			off_cpu_sample_threads(&off_cpu, tick, missed, period);
	}
	return NULL;
}

static void start_ticker(unsigned frequency, int realtime)
{
	tick_frequency = frequency;
	sample_realtime = realtime;
	off_cpu.pid = getpid(); /* started again in a child of fork(): it samples itself */
	off_cpu.stack_bytes = stack_bytes;
	off_cpu.emit = emit_waiting;
	off_cpu.skip = own_thread;
	pthread_t thread;
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	sigset_t all, old; /* the program's signals are never delivered to it */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	if (pthread_create(&thread, &attr, ticker_main, NULL)) {
		recorder_report("threads off the CPU and Python functions are not sampled: "
				"cannot start a thread");
	} else { /* named at once: gpuprof's metrics tell its threads by their names, and
		  * a loaded machine may not run the new thread for a while */
		pthread_setname_np(thread, RECORDER_THREAD_PREFIX "ticker");
		pthread_detach(thread);
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
}

/* A child made by fork() without exec() (a PyTorch DataLoader worker, a multiprocessing
 * pool) inherits neither the events (inherit_thread) nor the ticking thread: it drops
 * the parent's rings and samples itself into a spool of its own, as the parent does. Its
 * recorder (whose own fork handler ran first) starts here. A child that calls exec()
 * starts again in the new image: the events are removed on exec. */
/* The modules and the perf map alone, for a process that is not sampled: what its
 * launch stacks are named and unwound with. */
static int collect_modules(int final)
{
	record_modules_if_changed();
	record_perf_map();
	return 0;
}

static void modules_forked_child(void)
{
	loaded_objects = ~0ull; /* the child's spool gets the modules too */
}

void sampler_track_modules(void)
{
	static atomic_int tracked;
	if (rings || atomic_exchange(&tracked, 1)) /* sampling records them already */
		return;
	recorder_add_collector(collect_modules);
	pthread_atfork(NULL, NULL, modules_forked_child);
}

static void sample_forked_child(void)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	recorder_set_wake_fds(NULL, 0);
	for (int i = 0; i < ring_count; i++) {
		munmap(rings[i].map, page + rings[i].data_size);
		close(rings[i].fd);
	}
	free(rings);
	rings = NULL;
	ring_count = 0;
	atomic_store(&ticker_tid, 0);
	gil_history_init(&gil); /* the parent's holders were its threads */
	atomic_store(&gil_kept, 0);
	atomic_store(&gil_left_out, 0);
	loaded_objects = ~0ull; /* the child's spool gets the modules too */
	if (recorder_ready() && open_rings(tick_frequency) == 0) {
		start_ticker(tick_frequency, sample_realtime);
		enable_rings();
	}
}

/* Whether a sanitizer's runtime runs in the process (a program built with one, or a
 * gpuprof built so): GCC 12's cannot start a thread in a child of fork() safely, since
 * AddressSanitizer's allocator may stay locked by a thread of the parent (the child hung)
 * and ThreadSanitizer refuses the thread ("dup thread with used id"). */
static int sanitizer_runtime(void)
{
	return dlsym(RTLD_DEFAULT, "__asan_init") || dlsym(RTLD_DEFAULT, "__tsan_init");
}

/* A process that gpuprof samples (GPUPROF_SAMPLE_FREQ) or measures (GPUPROF_RECORD_AT_START:
 * its metrics need a spool to join) starts its recorder before main(), so that a
 * program that never touches a GPU API is recorded too; sampling starts with it. */
__attribute__((constructor)) static void sampler_start(void)
{
	const char *text = getenv("GPUPROF_SAMPLE_FREQ"), *at_start = getenv("GPUPROF_RECORD_AT_START");
	char *end = NULL;
	unsigned long frequency = text ? strtoul(text, &end, 10) : 0;
	if (end && *end)
		frequency = 0;
	if ((!frequency && !(at_start && !strcmp(at_start, "1"))) || rings || !recorder_ready())
		return;
	const char *stack = getenv("GPUPROF_SAMPLE_STACK_BYTES");
	unsigned long bytes = stack ? strtoul(stack, &end, 10) : 0;
	if (stack && !*end && bytes >= 8 && bytes <= SAMPLE_STACK_MAX)
		stack_bytes = (uint32_t)(bytes & ~7ul); /* the kernel copies whole words */
	if (frequency && open_rings((unsigned)frequency) == 0) {
		recorder_add_collector(collect);
		const char *wall = getenv("GPUPROF_SAMPLE_REALTIME");
		const char *gil_asked = getenv("GPUPROF_SAMPLE_GIL");
		gil_only = gil_asked && !strcmp(gil_asked, "1");
		gil_history_init(&gil);
		start_ticker((unsigned)frequency, wall && !strcmp(wall, "1"));
		enable_rings();
		if (!sanitizer_runtime())
			pthread_atfork(NULL, NULL, sample_forked_child);
	}
}
