/* The in-process recorder (see recorder.h): per-thread rings (ring.c), the metadata
 * path, the background writer and fork handling; its markers are in recorder-markers.c, its
 * collection control (pause, resume, periods) in recorder-control.c, the C library's
 * _exit() and exec() it stands in for in recorder-exit.c. */
#include "runtime/recorder.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/paths.h"
#include "core/spool.h"
#include "runtime/recorder-internal.h"
#include "runtime/ring.h"
#include "runtime/string-table.h"
#include "util/strbuf.h"

#define METADATA_BUFFER (1u << 20)         /* bytes for strings, agents, queues */
#define DEFAULT_FLUSH_MS 100

/* STOPPING: the writer's last pass is running; emits (the collector's) still land. */
enum state { STATE_IDLE, STATE_STARTING, STATE_RUNNING, STATE_STOPPING, STATE_STOPPED,
	     STATE_DISABLED };

static _Atomic int state = STATE_IDLE;
static _Atomic pid_t owner_pid; /* the process that started the recorder */
static _Atomic(struct ring *) rings;
static _Atomic uint64_t allocated_bytes;
static _Atomic uint64_t dropped[DROPPED_REASON_COUNT][2]; /* [reason] = { records, bytes } counted outside rings */
static _Atomic int stop_requested;

static struct ring metadata_ring;
static pthread_mutex_t metadata_lock = PTHREAD_MUTEX_INITIALIZER;
static struct strbuf metadata_log = STRBUF_INIT; /* every metadata record, for fork() */

static struct string_table strings; /* the names interned; guarded by metadata_lock */

static uint64_t thread_buffer_bytes = RECORDER_DEFAULT_THREAD_BUFFER;
static uint64_t buffer_limit_bytes = RECORDER_DEFAULT_BUFFER_LIMIT;
static int flush_interval_ms = DEFAULT_FLUSH_MS;
static int spool_fd = -1;
static int wake_fd = -1;
static char spool_path[PATH_MAX];
static pthread_t writer_thread;
static int write_failure_reported;
static _Atomic uint64_t unwritten[2]; /* records and bytes the spool never received */

static pthread_key_t ring_key;
static pthread_once_t once_control = PTHREAD_ONCE_INIT;
static __thread struct ring *thread_ring;

#define MAX_COLLECTORS 4
static int (*_Atomic collectors[MAX_COLLECTORS])(int final);
static _Atomic uint32_t next_agent_id = 1, next_queue_id = 1;
static int host_agent_emitted; /* survives fork(): the child replays it */

void recorder_add_collector(int (*collect)(int final))
{
	for (int i = 0; i < MAX_COLLECTORS; i++) {
		int (*expected)(int) = NULL;
		if (atomic_load(&collectors[i]) == collect ||
		    atomic_compare_exchange_strong(&collectors[i], &expected, collect))
			return;
	}
	recorder_report("too many backends in one process; one of them is not collected");
}

uint32_t recorder_new_agent_id(void)
{
	return atomic_fetch_add(&next_agent_id, 1);
}

uint32_t recorder_new_queue_id(void)
{
	return atomic_fetch_add(&next_queue_id, 1);
}

void recorder_wake(void)
{
	int saved = errno;
	uint64_t one = 1;
	if (wake_fd >= 0) {
		ssize_t ignored = write(wake_fd, &one, sizeof(one));
		(void)ignored;
	}
	errno = saved;
}

void recorder_report(const char *fmt, ...)
{
	char text[600];
	va_list ap;
	va_start(ap, fmt);
	int n = snprintf(text, sizeof(text), "gpuprof[%d]: ", (int)getpid());
	vsnprintf(text + n, sizeof(text) - (size_t)n, fmt, ap);
	va_end(ap);
	size_t len = strlen(text);
	if (len < sizeof(text) - 1)
		text[len++] = '\n';
	ssize_t ignored = write(STDERR_FILENO, text, len);
	(void)ignored;
}

/* ---- the threads' rings (runtime/ring.h) ------------------------------------------ */

static void ring_release_owner(void *ring)
{
	atomic_store_explicit(&((struct ring *)ring)->owned, 0, memory_order_release);
}

static void ring_key_create(void)
{
	pthread_key_create(&ring_key, ring_release_owner);
}

/* The calling thread's ring: adopts one left by a thread that exited, or allocates a
 * new one within the memory cap. NULL when the cap is reached. */
static struct ring *ring_for_thread(void)
{
	if (thread_ring)
		return thread_ring;
	struct ring *r;
	for (r = atomic_load(&rings); r; r = r->next) {
		int expected = 0;
		if (r->capacity == thread_buffer_bytes &&
		    atomic_compare_exchange_strong(&r->owned, &expected, 1))
			break;
	}
	if (!r) {
		uint64_t total = atomic_fetch_add(&allocated_bytes, thread_buffer_bytes);
		if (total + thread_buffer_bytes > buffer_limit_bytes) {
			atomic_fetch_sub(&allocated_bytes, thread_buffer_bytes);
			return NULL;
		}
		r = calloc(1, sizeof(*r));
		if (!r || ring_init(r, thread_buffer_bytes) < 0) {
			free(r);
			atomic_fetch_sub(&allocated_bytes, thread_buffer_bytes);
			return NULL;
		}
		atomic_store(&r->owned, 1);
		struct ring *head = atomic_load(&rings);
		do
			r->next = head;
		while (!atomic_compare_exchange_weak(&rings, &head, r));
	}
	pthread_setspecific(ring_key, r);
	thread_ring = r;
	return r;
}

/* ---- writer --------------------------------------------------------------------- */

/* Writes `size` bytes of records as a chunk: `first_size` of them at first, the rest at
 * second (a ring's, where they wrap around its end). */
static void write_chunk(const unsigned char *first, uint64_t first_size,
			const unsigned char *second, uint64_t size)
{
	uint32_t count = 0;
	for (uint64_t at = 0; at + sizeof(struct record_header) <= size; count++) {
		struct record_header h; /* may itself wrap */
		unsigned char *to = (unsigned char *)&h;
		for (size_t i = 0; i < sizeof(h); i++)
			to[i] = at + i < first_size ? first[at + i] : second[at + i - first_size];
		at += h.size ? h.size : size;
	}
	struct error err;
	if (spool_write_chunk2(spool_fd, first, (uint32_t)first_size, second,
			       (uint32_t)(size - first_size), count, &err) < 0) {
		atomic_fetch_add(&dropped[DROPPED_WRITE_FAILED][0], count);
		atomic_fetch_add(&dropped[DROPPED_WRITE_FAILED][1], size);
		atomic_fetch_add(&unwritten[0], count);
		atomic_fetch_add(&unwritten[1], size);
		if (!write_failure_reported++)
			recorder_report("cannot write '%s': %s; records are being dropped", spool_path,
			       err.message);
	}
}

/* Held while the spool is written and a ring read (the rings' reading side): by the
 * writer thread, or by a thread that writes its own full buffer out
 * (recorder_write_own_buffer). Taken inside writer_lock, never around another lock. */
static pthread_mutex_t spool_lock = PTHREAD_MUTEX_INITIALIZER;

/* Caller holds spool_lock. */
static void drain_ring_locked(struct ring *r)
{
	uint64_t lost, lost_bytes, first_size;
	const unsigned char *first, *second;
	uint64_t size = ring_peek(r, &first, &first_size, &second);
	if (size) /* from the ring itself: a copy would cost as much as the write */
		write_chunk(first, first_size, second, size);
	ring_release(r, size, &lost, &lost_bytes);
	if (lost) {
		atomic_fetch_add(&dropped[DROPPED_BUFFER_FULL][0], lost);
		atomic_fetch_add(&dropped[DROPPED_BUFFER_FULL][1], lost_bytes);
	}
}

static void drain_ring(struct ring *r)
{
	pthread_mutex_lock(&spool_lock);
	drain_ring_locked(r);
	pthread_mutex_unlock(&spool_lock);
}

/* Writes RECORD_DROPPED for every reason with losses since the last call. The write
 * failures of this very chunk are reported by the next one. */
static void write_dropped(void)
{
	struct record_dropped records[DROPPED_REASON_COUNT];
	uint32_t n = 0;
	for (uint32_t reason = 1; reason < DROPPED_REASON_COUNT; reason++) {
		uint64_t count = atomic_exchange(&dropped[reason][0], 0);
		uint64_t bytes = atomic_exchange(&dropped[reason][1], 0);
		if (!count)
			continue;
		records[n] = (struct record_dropped){
			.header = { sizeof(records[0]), RECORD_DROPPED, 0 },
			.reason = reason, .records = count, .bytes = bytes,
		};
		n++;
	}
	if (n) {
		pthread_mutex_lock(&spool_lock);
		write_chunk((const unsigned char *)records, n * sizeof(records[0]), NULL,
			    n * sizeof(records[0]));
		pthread_mutex_unlock(&spool_lock);
	}
}

static void drain_all(int final)
{
	int more;
	do {
		more = 0;
		for (int i = 0; i < MAX_COLLECTORS; i++) {
			int (*collect)(int) = atomic_load(&collectors[i]);
			if (collect && collect(final))
				more = 1;
		}
		drain_ring(&metadata_ring);
		for (struct ring *r = atomic_load(&rings); r; r = r->next)
			drain_ring(r);
	} while (more);
	write_dropped();
}

/* Held by the writer while it drains, and by fork(): a child never inherits a drain cut
 * in the middle, with the memory allocator's locks held by a thread it does not have. */
static pthread_mutex_t writer_lock = PTHREAD_MUTEX_INITIALIZER;

/* The recorder's own threads, which the sampler of waiting threads leaves out. */
static _Atomic uint32_t writer_tid;

int recorder_own_thread(uint32_t tid)
{
	return tid == atomic_load(&writer_tid) || tid == atomic_load(&recorder_period_tid);
}

/* The descriptors that wake the writer besides wake_fd (recorder_set_wake_fds). */
#define MAX_WAKE_FDS 1024
static pthread_mutex_t wake_fds_lock = PTHREAD_MUTEX_INITIALIZER;
static int wake_fds[MAX_WAKE_FDS];
static int wake_fd_count;

void recorder_set_wake_fds(const int *fds, int count)
{
	pthread_mutex_lock(&wake_fds_lock);
	wake_fd_count = count < MAX_WAKE_FDS ? count : MAX_WAKE_FDS;
	if (wake_fd_count > 0)
		memcpy(wake_fds, fds, (size_t)wake_fd_count * sizeof(*fds));
	pthread_mutex_unlock(&wake_fds_lock);
}

static void forget_wake_fd(int fd)
{
	pthread_mutex_lock(&wake_fds_lock);
	for (int i = 0; i < wake_fd_count; i++)
		if (wake_fds[i] == fd)
			wake_fds[i--] = wake_fds[--wake_fd_count];
	pthread_mutex_unlock(&wake_fds_lock);
}

static void *writer_main(void *started)
{
	atomic_store(&writer_tid, (uint32_t)syscall(SYS_gettid));
	pthread_setname_np(pthread_self(), RECORDER_THREAD_PREFIX "writer");
	sem_post(started);
	static struct pollfd pfd[1 + MAX_WAKE_FDS];
	int stopping;
	do {
		stopping = atomic_load(&stop_requested);
		pthread_mutex_lock(&wake_fds_lock);
		int n = 1 + wake_fd_count;
		pfd[0] = (struct pollfd){ .fd = wake_fd, .events = POLLIN };
		for (int i = 1; i < n; i++)
			pfd[i] = (struct pollfd){ .fd = wake_fds[i - 1], .events = POLLIN };
		pthread_mutex_unlock(&wake_fds_lock);
		if (!stopping && poll(pfd, (nfds_t)n, flush_interval_ms) > 0) {
			if (pfd[0].revents & POLLIN) {
				uint64_t value;
				ssize_t ignored = read(wake_fd, &value, sizeof(value));
				(void)ignored;
			}
			for (int i = 1; i < n; i++) /* one that can no longer wake: not polled */
				if (pfd[i].revents & (POLLHUP | POLLERR | POLLNVAL))
					forget_wake_fd(pfd[i].fd);
		}
		pthread_mutex_lock(&writer_lock);
		drain_all(stopping);
		pthread_mutex_unlock(&writer_lock);
	} while (!stopping);
	return NULL;
}

int recorder_write_own_buffer(void)
{
	struct ring *r = thread_ring;
	if (!r)
		return -1;
	int saved = errno, rc = -1;
	sigset_t all, old; /* held off: a handler that records cannot find the lock held by
			    * its own thread */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	if (pthread_mutex_trylock(&spool_lock) == 0) {
		if (atomic_load(&state) == STATE_RUNNING) {
			drain_ring_locked(&metadata_ring); /* the names its records use first */
			drain_ring_locked(r);
			rc = 0;
		}
		pthread_mutex_unlock(&spool_lock);
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	errno = saved;
	return rc;
}

/* ---- metadata ------------------------------------------------------------------- */

/* Caller holds metadata_lock. A child of fork() starts its spool with the log: a
 * record the log has no memory for is said once, as the child will lack it. */
static void metadata_put(const void *record, int keep_for_fork)
{
	const struct record_header *h = record;
	ring_put(&metadata_ring, record, h->size, 1, wake_fd);
	if (!keep_for_fork)
		return;
	size_t before = metadata_log.len;
	strbuf_add(&metadata_log, record, h->size);
	static int said;
	if (metadata_log.len == before && !said++)
		recorder_report("out of memory: names recorded from now on may be missing in the "
				"records of a child made by fork()");
}

/* Caller holds metadata_lock. A name met for the first time is recorded. */
static uint32_t intern_locked(const char *text)
{
	int added;
	uint32_t id = string_table_id(&strings, text, &added);
	if (!id || !added)
		return id;
	static unsigned char buffer[RECORD_MAX_SIZE]; /* under metadata_lock: not on the stack */
	struct record_string *s = (void *)buffer;
	memset(buffer, 0, sizeof(buffer));
	size_t len = record_text_copy(s->text, text, RECORD_MAX_SIZE - sizeof(*s));
	s->header = (struct record_header){ RECORD_PADDED((uint32_t)(sizeof(*s) + len)),
					    RECORD_STRING, 0 };
	s->id = id;
	s->length = (uint32_t)len;
	metadata_put(s, 1);
	return id;
}

static __thread uint32_t thread_id;
static pthread_once_t thread_id_once = PTHREAD_ONCE_INIT;

static void thread_id_forked(void)
{
	thread_id = 0; /* the thread that forked is the child's only one, under a new id */
}

static void thread_id_watch_forks(void)
{
	pthread_atfork(NULL, NULL, thread_id_forked);
}

uint32_t recorder_thread_id(void)
{
	if (!thread_id) {
		pthread_once(&thread_id_once, thread_id_watch_forks);
		thread_id = (uint32_t)syscall(SYS_gettid);
	}
	return thread_id;
}

/* Strings and metadata are taken while the recorder runs and while it stops: the final
 * collection (CUPTI's last buffers, delivered at exit) names its kernels then. */
static int taking_metadata(void)
{
	return recorder_ready() || atomic_load(&state) == STATE_STOPPING;
}

uint32_t recorder_intern(const char *text)
{
	if (!taking_metadata())
		return 0;
	int saved = errno;
	pthread_mutex_lock(&metadata_lock);
	uint32_t id = intern_locked(text);
	pthread_mutex_unlock(&metadata_lock);
	errno = saved;
	return id;
}

void recorder_emit_metadata(const void *record)
{
	if (!taking_metadata())
		return;
	int saved = errno;
	pthread_mutex_lock(&metadata_lock);
	metadata_put(record, 1);
	pthread_mutex_unlock(&metadata_lock);
	errno = saved;
}

/* ---- life cycle ----------------------------------------------------------------- */

static uint64_t env_size(const char *name, uint64_t fallback)
{
	const char *v = getenv(name);
	char *end;
	unsigned long long n = v ? strtoull(v, &end, 10) : 0;
	return v && !*end && n > 0 ? n : fallback;
}

static uint64_t round_up_pow2(uint64_t n)
{
	uint64_t p = 4096;
	while (p < n)
		p <<= 1;
	return p;
}

static void fork_prepare(void)
{
	pthread_mutex_lock(&writer_lock);
	pthread_mutex_lock(&spool_lock);
	pthread_mutex_lock(&metadata_lock);
	pthread_mutex_lock(&wake_fds_lock);
}

static void fork_parent(void)
{
	pthread_mutex_unlock(&wake_fds_lock);
	pthread_mutex_unlock(&metadata_lock);
	pthread_mutex_unlock(&spool_lock);
	pthread_mutex_unlock(&writer_lock);
}

/* The child has only the forking thread: the parent's unflushed records stay the
 * parent's; the child starts a spool of its own on first use. */
static void fork_child(void)
{
	pthread_mutex_unlock(&wake_fds_lock);
	pthread_mutex_unlock(&metadata_lock);
	pthread_mutex_unlock(&spool_lock);
	pthread_mutex_unlock(&writer_lock);
	if (spool_fd >= 0)
		close(spool_fd);
	if (wake_fd >= 0)
		close(wake_fd);
	spool_fd = wake_fd = -1;
	wake_fd_count = 0; /* the parent's: a child's sampler gives its own */
	for (struct ring *r = atomic_load(&rings); r; r = r->next) {
		atomic_store(&r->tail, atomic_load(&r->head));
		atomic_store(&r->owned, r == thread_ring);
		atomic_store(&r->dropped_records, 0);
		atomic_store(&r->dropped_bytes, 0);
		atomic_store(&r->wake_sent, 0);
	}
	atomic_store(&metadata_ring.tail, atomic_load(&metadata_ring.head));
	memset((void *)dropped, 0, sizeof(dropped));
	atomic_store(&stop_requested, 0);
	write_failure_reported = 0;
	atomic_store(&unwritten[0], 0);
	atomic_store(&unwritten[1], 0);
	int previous = atomic_load(&state);
	atomic_store(&state, previous == STATE_DISABLED ? STATE_DISABLED : STATE_IDLE);
}

/* Agent 0: the host CPU, which every process has. Called while starting, with
 * metadata_lock held. */
static void emit_host_agent_locked(void)
{
	char model[256] = "host CPU";
	int cpuinfo = recorder_open_private("/proc/cpuinfo", O_RDONLY, 0);
	FILE *f = cpuinfo >= 0 ? fdopen(cpuinfo, "r") : NULL;
	if (cpuinfo >= 0 && !f)
		close(cpuinfo);
	char line[512];
	while (f && fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "model name", 10) && strchr(line, ':')) {
			snprintf(model, sizeof(model), "%s", strchr(line, ':') + 2);
			model[strcspn(model, "\n")] = '\0';
			break;
		}
	}
	if (f)
		fclose(f);
	long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
	struct record_agent agent = {
		.header = { sizeof(agent), RECORD_AGENT, 0 },
		.id = 0,
		.type = AGENT_CPU,
		.name_id = intern_locked(model),
		.vendor_name_id = intern_locked(""),
		.driver_version_id = intern_locked(""),
		.compute_units = (uint32_t)sysconf(_SC_NPROCESSORS_ONLN),
		.global_memory_bytes = pages > 0 && page > 0 ? (uint64_t)pages * (uint64_t)page : 0,
	};
	metadata_put(&agent, 1);
}

static int start(void)
{
	pthread_once(&once_control, ring_key_create);
	thread_buffer_bytes = round_up_pow2(env_size("GPUPROF_BUFFER_SIZE",
						     RECORDER_DEFAULT_THREAD_BUFFER));
	buffer_limit_bytes = env_size("GPUPROF_BUFFER_LIMIT", RECORDER_DEFAULT_BUFFER_LIMIT);
	if (buffer_limit_bytes < thread_buffer_bytes)
		buffer_limit_bytes = thread_buffer_bytes;
	flush_interval_ms = (int)env_size("GPUPROF_FLUSH_INTERVAL_MS", DEFAULT_FLUSH_MS);
	if (flush_interval_ms > DEFAULT_FLUSH_MS)
		flush_interval_ms = DEFAULT_FLUSH_MS;
	const char *traced = getenv("GPUPROF_TRACE");
	recorder_markers_configure(!traced || strstr(traced, "marker") != NULL);
	recorder_control_start();

	if (!metadata_ring.data && ring_init(&metadata_ring, METADATA_BUFFER) < 0)
		return -1;
	struct path_context ctx;
	path_context_current(&ctx);
	atomic_store(&owner_pid, getpid());
	spool_fd = recorder_spool_create(&ctx, spool_path, sizeof(spool_path));
	if (spool_fd < 0)
		return -1;
	wake_fd = recorder_fd_above_stdio(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));

	/* The metadata a fork()ed child inherited comes first, then this process. */
	struct error err;
	if (metadata_log.len && spool_write_chunk(spool_fd, metadata_log.buf,
						  (uint32_t)metadata_log.len, 0, &err) < 0)
		recorder_report("cannot write '%s': %s", spool_path, err.message);
	struct strbuf command = STRBUF_INIT;
	recorder_command_line(&command);
	pthread_mutex_lock(&metadata_lock);
	struct record_process process = {
		.header = { sizeof(process), RECORD_PROCESS, 0 },
		.pid = (uint32_t)ctx.pid,
		.ppid = (uint32_t)ctx.ppid,
		.start_ns = clock_now_ns(),
		.realtime_ns = clock_realtime_ns(),
		.hostname_id = intern_locked(ctx.hostname),
		.command_id = intern_locked(command.buf),
		.rank = ctx.rank,
		.size = ctx.size,
		.began_ns = recorder_process_start_ns(),
	};
	metadata_put(&process, 0);
	if (!host_agent_emitted++)
		emit_host_agent_locked();
	pthread_mutex_unlock(&metadata_lock);
	strbuf_release(&command);

	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	/* Running once the writer runs: the C library (or a sanitizer's runtime) may hold
	 * locks while a thread starts, and a fork() then would hand them to the child. */
	sem_t started;
	sem_init(&started, 0, 0);
	int rc = pthread_create(&writer_thread, NULL, writer_main, &started);
	if (!rc) /* named at once too: gpuprof's metrics tell its threads by their names */
		pthread_setname_np(writer_thread, RECORDER_THREAD_PREFIX "writer");
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	while (!rc && sem_wait(&started) && errno == EINTR)
		;
	sem_destroy(&started);
	if (rc) {
		recorder_report("cannot start the writer thread: %s; collection disabled", strerror(rc));
		close(spool_fd);
		unlink(spool_path);
		spool_fd = -1;
		return -1;
	}
	recorder_spool_register(spool_path);
	return 0;
}

int recorder_ready(void)
{
	int s = atomic_load_explicit(&state, memory_order_acquire);
	if (s == STATE_RUNNING)
		return 1;
	if (s != STATE_IDLE && s != STATE_STARTING)
		return 0;
	int saved = errno;
	int expected = STATE_IDLE;
	if (atomic_compare_exchange_strong(&state, &expected, STATE_STARTING)) {
		static int atfork_registered;
		if (!atfork_registered++)
			pthread_atfork(fork_prepare, fork_parent, fork_child);
		atomic_store(&state, start() == 0 ? STATE_RUNNING : STATE_DISABLED);
	} else {
		while (atomic_load(&state) == STATE_STARTING)
			sched_yield();
	}
	errno = saved;
	return atomic_load(&state) == STATE_RUNNING;
}

static int emit(const void *record, int count_full)
{
	int s = atomic_load_explicit(&state, memory_order_acquire);
	if (s != STATE_RUNNING && s != STATE_STOPPING)
		return -2;
	int saved = errno;
	const struct record_header *h = record;
	struct ring *r = ring_for_thread();
	int rc;
	if (r) {
		rc = ring_put(r, record, h->size, count_full, wake_fd);
	} else {
		atomic_fetch_add(&dropped[DROPPED_NO_BUFFER][0], 1);
		atomic_fetch_add(&dropped[DROPPED_NO_BUFFER][1], h->size);
		rc = -2;
	}
	errno = saved;
	return rc;
}

int recorder_emit(const void *record)
{
	return emit(record, 1) == 0 ? 0 : -1;
}

int recorder_try_emit(const void *record)
{
	return emit(record, 0);
}

void recorder_count_dropped(uint32_t reason, uint64_t records)
{
	if (reason < DROPPED_REASON_COUNT)
		atomic_fetch_add(&dropped[reason][0], records);
}

/* The spool's file was removed while the program ran (its directory deleted, a cleanup
 * job): the records live on in the open file, so they are copied back to its path, which
 * `gpuprof trace` will read. */
static void restore_spool(void)
{
	struct stat st;
	if (fstat(spool_fd, &st) < 0 || st.st_nlink > 0)
		return;
	struct error err;
	int fd = -1;
	if (path_make_parents(spool_path, 1, &err) == 0)
		fd = recorder_open_private(spool_path, O_WRONLY | O_CREAT | O_EXCL, 0666);
	if (fd < 0) {
		recorder_report("'%s' was removed while the program ran and cannot be made again: "
				"%s; its records are lost", spool_path, strerror(errno));
		return;
	}
	char buffer[1 << 16];
	off_t at = 0;
	ssize_t n;
	while ((n = pread(spool_fd, buffer, sizeof(buffer), at)) > 0 &&
	       write(fd, buffer, (size_t)n) == n)
		at += n;
	if (n != 0)
		recorder_report("'%s' was removed while the program ran and cannot be made again: "
				"%s; its records are lost", spool_path, strerror(errno));
	else
		recorder_report("'%s' was removed while the program ran: made it again with the "
				"%lld bytes recorded", spool_path, (long long)at);
	close(fd);
}

void recorder_stop(void)
{
	int expected = STATE_RUNNING;
	if (!atomic_compare_exchange_strong(&state, &expected, STATE_STOPPING))
		return;
	int saved = errno;
	atomic_store(&stop_requested, 1);
	uint64_t one = 1;
	ssize_t ignored = write(wake_fd, &one, sizeof(one));
	(void)ignored;
	pthread_join(writer_thread, NULL);
	atomic_store(&state, STATE_STOPPED);
	struct record_process_end end = {
		.header = { sizeof(end), RECORD_PROCESS_END, 0 },
		.end_ns = clock_now_ns(),
	};
	write_dropped();
	pthread_mutex_lock(&spool_lock); /* a thread writing its own buffer finishes first */
	write_chunk((const unsigned char *)&end, sizeof(end), NULL, sizeof(end));
	pthread_mutex_unlock(&spool_lock);
	if (atomic_load(&unwritten[0])) /* the spool could not say so itself */
		recorder_report("%llu records (%llu bytes) could not be written to '%s'; the "
				"outputs lack them", (unsigned long long)atomic_load(&unwritten[0]),
				(unsigned long long)atomic_load(&unwritten[1]), spool_path);
	restore_spool();
	close(spool_fd);
	spool_fd = -1;
	errno = saved;
}

/* A recorder started by markers alone (no GPU backend in the process to stop it) still
 * ends with a final flush when the process exits. */
__attribute__((destructor)) static void recorder_unload(void)
{
	recorder_stop();
}

const char *recorder_spool_path(void)
{
	return spool_fd >= 0 ? spool_path : NULL;
}

void recorder_flush(void)
{
	if (atomic_load(&state) != STATE_RUNNING || atomic_load(&owner_pid) != getpid())
		return;
	int saved = errno;
	pthread_mutex_lock(&writer_lock);
	drain_all(0);
	pthread_mutex_unlock(&writer_lock);
	errno = saved;
}

/* ---- the process's end without exit(), and exec(): recorder-exit.c's helpers ---- */

/* Stops recording in the process that owns the recorder; returns 1 when it did. */
int recorder_stop_before_leaving(void)
{
	if (atomic_load(&owner_pid) != getpid())
		return 0;
	int s = atomic_load(&state);
	if (s != STATE_RUNNING)
		return 0;
	recorder_stop();
	return 1;
}

/* An exec() that failed: the program goes on, and so does recording, in a new spool. */
void recorder_resume_after_failed_exec(int stopped)
{
	int saved = errno;
	int expected = STATE_STOPPED;
	if (stopped)
		atomic_compare_exchange_strong(&state, &expected, STATE_IDLE);
	errno = saved;
}
