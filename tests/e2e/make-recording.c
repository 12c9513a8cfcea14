/* make-recording: writes the spool of a process described line by line, with the exact
 * times the description gives, so that tests whose premise is a duration (a kernel twice
 * as slow, an idle gap, a share of the run) put that premise through the real
 * post-processing and analysis without depending on how fast a shared CPU ran anything.
 *
 *   make-recording SPOOL < DESCRIPTION
 *
 * One record per line; words are KEY=VALUE, a value with spaces in double quotes (no
 * escapes); `#` starts a comment line. Names (kernels, functions, hosts) are interned as
 * the recorder interns them. Times are nanoseconds on the trace clock.
 *
 *   process pid=P [ppid=P] [start=NS] [realtime=NS] [host=NAME] [command=TEXT]
 *           [rank=R] [size=S]                                      first, once
 *   agent id=A [type=cpu|gpu|accelerator|other] [name=NAME] [vendor=NAME] [cus=N]
 *           [clock=MHZ] [memory=BYTES]
 *   queue id=Q agent=A
 *   api name=FUNCTION tid=T start=NS end=NS [corr=C] [domain=opencl|cuda|driver]
 *           [result=R]
 *   kernel name=KERNEL start=NS end=NS [agent=A] [queue=Q] [tid=T] [corr=C]
 *           [dispatch=D] [range=MARKER_ID] [grid=N] [block=N]
 *   copy start=NS end=NS bytes=N [direction=none|h2d|d2h|d2d|h2h]
 *           [operation=copy|fill|map|unmap] [function=NAME] [agent=A] [queue=Q] [tid=T]
 *           [corr=C] [src_kind=N] [dst_kind=N]                 kinds: enum memory_kind
 *   allocation address=A bytes=N start=NS end=NS [op=allocate|free] [agent=A] [tid=T]
 *           [corr=C] [kind=N]           device memory (--memory-allocation-trace)
 *   push|startstop|mark id=I tid=T start=NS text=TEXT [parent=I]
 *   pop id=I tid=T end=NS                                   ends a push or startstop
 *   launch time=NS [name=FUNCTION] [tid=T] [corr=C] [domain=cuda|driver]
 *           a launch point (CUDA: where a launch began, without its API call)
 *   mpi name=FUNCTION start=NS end=NS [tid=T] [comm=NAME] [size=N] [peer=R] [root=R]
 *           [sent=BYTES] [received=BYTES] [sequence=N] [domain=mpi|torch|nccl]
 *           a communication call (--mpi-trace, --torch-trace, --nccl-trace)
 *   thread tid=T name=NAME
 *   sample time=NS [tid=T] [ip=ADDRESS]       a call-stack sample: no stack, one frame
 *   module path=FILE start=ADDRESS end=ADDRESS [offset=N] [time=NS]
 *           an ELF file mapped from start (its offset there) to end
 *   lost start=NS end=NS samples=N [tid=T]   call-stack samples the kernel lost
 *   end time=NS                                             the process ended cleanly
 *
 * Defaults: agent 1, queue 1, tid = the process's pid; an API call's or launch point's
 * corr the next from 1, a kernel's, copy's or allocation's that of the last API call or
 * launch point;
 * dispatch ids counted from 1. Exits 2 on a line it cannot read, naming it. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/record.h"
#include "core/spool.h"

#define CHUNK (1 << 20)
#define MAX_WORDS 24
#define MAX_STRINGS 4096

static unsigned char chunk[CHUNK];
static size_t used;
static unsigned count;
static int out_fd;
static const char *out_path;
static unsigned line_number;

static char *strings[MAX_STRINGS];
static uint32_t string_count;

struct word {
	char *key, *value;
};

static void fail(const char *what, const char *detail)
{
	fprintf(stderr, "make-recording: line %u: %s%s%s\n", line_number, what,
		detail ? ": " : "", detail ? detail : "");
	exit(2);
}

static void flush(void)
{
	struct error err;
	if (used && spool_write_chunk(out_fd, chunk, (uint32_t)used, count, &err) < 0) {
		fprintf(stderr, "make-recording: %s: %s\n", out_path, err.message);
		exit(1);
	}
	used = count = 0;
}

static void put(const void *record)
{
	const struct record_header *h = record;
	if (used + h->size > CHUNK)
		flush();
	memcpy(chunk + used, record, h->size);
	used += h->size;
	count++;
}

/* The id of a string, written as a record the first time it is seen. */
static uint32_t intern(const char *text)
{
	for (uint32_t i = 0; i < string_count; i++)
		if (strcmp(strings[i], text) == 0)
			return i + 1;
	if (string_count == MAX_STRINGS)
		fail("too many distinct names", NULL);
	strings[string_count++] = strdup(text);
	unsigned char buffer[RECORD_MAX_SIZE] = { 0 };
	struct record_string *s = (void *)buffer;
	size_t len = strlen(text);
	if (len > RECORD_MAX_SIZE - sizeof(*s) - RECORD_ALIGN)
		fail("a name too long", NULL);
	s->header = (struct record_header){ RECORD_PADDED((uint32_t)(sizeof(*s) + len)),
					    RECORD_STRING, 0 };
	s->id = string_count;
	s->length = (uint32_t)len;
	memcpy(s->text, text, len);
	put(s);
	return string_count;
}

/* Splits a line into KEY=VALUE words in place; returns their count. */
static int split(char *line, struct word *words)
{
	int n = 0;
	char *p = line;
	for (;;) {
		while (*p == ' ' || *p == '\t')
			p++;
		if (!*p || *p == '\n')
			return n;
		if (n == MAX_WORDS)
			fail("too many words", NULL);
		char *key = p;
		while (*p && *p != '=' && *p != ' ' && *p != '\t' && *p != '\n')
			p++;
		if (*p != '=') {
			if (n == 0) { /* the record's type */
				words[n++] = (struct word){ key, NULL };
				if (*p)
					*p++ = 0;
				continue;
			}
			*p = 0;
			fail("a word without '='", key);
		}
		*p++ = 0;
		char *value = p;
		if (*p == '"') {
			value = ++p;
			while (*p && *p != '"')
				p++;
			if (*p != '"')
				fail("an unterminated quote", key);
		} else {
			while (*p && *p != ' ' && *p != '\t' && *p != '\n')
				p++;
		}
		if (*p)
			*p++ = 0;
		words[n++] = (struct word){ key, value };
	}
}

static const char *text(struct word *w, int n, const char *key, const char *fallback)
{
	for (int i = 1; i < n; i++)
		if (strcmp(w[i].key, key) == 0) {
			w[i].key = ""; /* used */
			return w[i].value;
		}
	if (!fallback)
		fail("missing", key);
	return fallback;
}

static uint64_t number(struct word *w, int n, const char *key, int required, uint64_t fallback)
{
	const char *v = text(w, n, key, required ? NULL : "");
	if (!*v)
		return fallback;
	char *end;
	errno = 0;
	long long x = strtoll(v, &end, 10);
	if (errno || *end || end == v)
		fail("not a number", key);
	return (uint64_t)x;
}

static uint32_t choice(struct word *w, int n, const char *key, const char *const *names,
		       uint32_t fallback)
{
	const char *v = text(w, n, key, "");
	if (!*v)
		return fallback;
	for (uint32_t i = 0; names[i]; i++)
		if (names[i][0] && strcmp(names[i], v) == 0)
			return i;
	fail("not a known value", key);
	return 0;
}

static void check_all_used(struct word *w, int n)
{
	for (int i = 1; i < n; i++)
		if (w[i].key[0])
			fail("an unknown word", w[i].key);
}

static void marker(struct word *w, int n, uint32_t kind, uint32_t pid)
{
	const char *t = text(w, n, "text", NULL);
	size_t len = strlen(t);
	unsigned char buffer[RECORD_MAX_SIZE] = { 0 };
	struct record_marker *m = (void *)buffer;
	if (len > RECORD_MAX_SIZE - sizeof(*m) - RECORD_ALIGN)
		fail("a marker text too long", NULL);
	m->header = (struct record_header){ RECORD_PADDED((uint32_t)(sizeof(*m) + len)),
					    RECORD_MARKER, 0 };
	m->id = number(w, n, "id", 1, 0);
	m->parent_id = number(w, n, "parent", 0, 0);
	m->start_ns = number(w, n, "start", 1, 0);
	m->tid = (uint32_t)number(w, n, "tid", 0, pid);
	m->kind = kind;
	m->length = (uint32_t)len;
	memcpy(m->text, t, len);
	check_all_used(w, n);
	put(m);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: make-recording SPOOL < DESCRIPTION\n");
		return 2;
	}
	out_path = argv[1];
	out_fd = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	struct error err;
	if (out_fd < 0 || spool_write_header(out_fd, &err) < 0) {
		perror(out_path);
		return 1;
	}
	static const char *const agent_types[] = { "", "cpu", "gpu", "accelerator", "other", NULL };
	static const char *const domains[] = { "", "opencl", "cuda", "driver", NULL };
	static const char *const directions[] = { "none", "h2d", "d2h", "d2d", "h2h", "unknown",
						  NULL };
	static const char *const operations[] = { "", "copy", "fill", "map", "unmap", NULL };
	static const char *const allocation_operations[] = { "", "allocate", "free", NULL };
	/* enum communication_domain, from 1 */
	static const char *const communication[] = { "", "mpi", "torch", "nccl", NULL };
	uint64_t last_corr = 0, next_dispatch = 1;
	uint32_t pid = 0;
	char line[4096];
	struct word w[MAX_WORDS];
	while (fgets(line, sizeof(line), stdin)) {
		line_number++;
		int n = split(line, w);
		if (n == 0 || w[0].key[0] == '#')
			continue;
		const char *type = w[0].key;
		if (!pid && strcmp(type, "process") != 0)
			fail("the first record is the process", type);
		if (strcmp(type, "process") == 0) {
			if (pid)
				fail("a second process", NULL);
			struct record_process p = { { sizeof(p), RECORD_PROCESS, 0 }, 0, 0, 0, 0, 0, 0,
						    -1, -1 };
			p.pid = pid = (uint32_t)number(w, n, "pid", 1, 0);
			p.ppid = (uint32_t)number(w, n, "ppid", 0, 1);
			p.start_ns = number(w, n, "start", 0, 1000000);
			p.realtime_ns = number(w, n, "realtime", 0, 1700000000000000000ull);
			p.rank = (int32_t)number(w, n, "rank", 0, (uint64_t)-1);
			p.size = (int32_t)number(w, n, "size", 0, (uint64_t)-1);
			p.hostname_id = intern(text(w, n, "host", "recorded-host"));
			p.command_id = intern(text(w, n, "command", "program"));
			check_all_used(w, n);
			put(&p);
		} else if (strcmp(type, "agent") == 0) {
			struct record_agent a = { .header = { sizeof(a), RECORD_AGENT, 0 } };
			a.id = (uint32_t)number(w, n, "id", 1, 0);
			a.type = choice(w, n, "type", agent_types, AGENT_GPU);
			a.name_id = intern(text(w, n, "name", "Generated device"));
			a.vendor_name_id = intern(text(w, n, "vendor", "gpuprof tests"));
			a.driver_version_id = intern(text(w, n, "driver", "1.0"));
			a.compute_units = (uint32_t)number(w, n, "cus", 0, 8);
			a.max_clock_mhz = (uint32_t)number(w, n, "clock", 0, 1000);
			a.global_memory_bytes = number(w, n, "memory", 0, 1ull << 30);
			a.device_index = a.id ? a.id - 1 : 0;
			check_all_used(w, n);
			put(&a);
		} else if (strcmp(type, "queue") == 0) {
			struct record_queue q = { { sizeof(q), RECORD_QUEUE, 0 }, 0, 0, 0 };
			q.id = (uint32_t)number(w, n, "id", 1, 0);
			q.agent_id = (uint32_t)number(w, n, "agent", 0, 1);
			check_all_used(w, n);
			put(&q);
		} else if (strcmp(type, "api") == 0) {
			struct record_api_call a = { { sizeof(a), RECORD_API_CALL, 0 }, 0, 0, 0, 0, 0, 0,
						     0 };
			a.domain = choice(w, n, "domain", domains, DOMAIN_OPENCL_API);
			a.function_id = intern(text(w, n, "name", NULL));
			a.tid = (uint32_t)number(w, n, "tid", 0, pid);
			a.result = (int32_t)number(w, n, "result", 0, 0);
			a.correlation_id = number(w, n, "corr", 0, last_corr + 1);
			a.start_ns = number(w, n, "start", 1, 0);
			a.end_ns = number(w, n, "end", 1, 0);
			check_all_used(w, n);
			last_corr = a.correlation_id;
			put(&a);
		} else if (strcmp(type, "mpi") == 0) {
			static uint64_t call_id;
			struct record_mpi_call m = { .header = { sizeof(m), RECORD_MPI_CALL, 0 } };
			m.function_id = intern(text(w, n, "name", NULL));
			m.start_ns = number(w, n, "start", 1, 0);
			m.end_ns = number(w, n, "end", 1, 0);
			m.tid = (uint32_t)number(w, n, "tid", 0, pid);
			const char *comm = text(w, n, "comm", "");
			m.communicator_id = *comm ? intern(comm) : 0;
			m.communicator_size = (uint32_t)number(w, n, "size", 0, 0);
			m.peer = (int32_t)number(w, n, "peer", 0, (uint64_t)-1);
			m.tag = -1;
			m.root = (int32_t)number(w, n, "root", 0, (uint64_t)-1);
			m.bytes_sent = number(w, n, "sent", 0, 0);
			m.bytes_received = number(w, n, "received", 0, 0);
			m.sequence = number(w, n, "sequence", 0, 0);
			m.call_id = ++call_id;
			m.domain = choice(w, n, "domain", communication, COMMUNICATION_MPI);
			check_all_used(w, n);
			put(&m);
		} else if (strcmp(type, "launch") == 0) {
			struct record_launch l = { .header = { sizeof(l), RECORD_LAUNCH, 0 } };
			l.domain = choice(w, n, "domain", domains, DOMAIN_CUDA_API);
			l.function_id = intern(text(w, n, "name", "cudaLaunchKernel"));
			l.tid = (uint32_t)number(w, n, "tid", 0, pid);
			l.correlation_id = number(w, n, "corr", 0, last_corr + 1);
			l.time_ns = number(w, n, "time", 1, 0);
			check_all_used(w, n);
			last_corr = l.correlation_id;
			put(&l);
		} else if (strcmp(type, "kernel") == 0) {
			struct record_kernel k = { .header = { sizeof(k), RECORD_KERNEL, 0 } };
			k.name_id = intern(text(w, n, "name", NULL));
			k.start_ns = number(w, n, "start", 1, 0);
			k.end_ns = number(w, n, "end", 1, 0);
			k.agent_id = (uint32_t)number(w, n, "agent", 0, 1);
			k.queue_id = (uint32_t)number(w, n, "queue", 0, 1);
			k.stream_id = k.queue_id;
			k.tid = (uint32_t)number(w, n, "tid", 0, pid);
			k.correlation_id = number(w, n, "corr", 0, last_corr);
			k.dispatch_id = number(w, n, "dispatch", 0, next_dispatch);
			k.range_id = number(w, n, "range", 0, 0);
			k.grid[0] = number(w, n, "grid", 0, 1024);
			k.grid[1] = k.grid[2] = 1;
			k.workgroup[0] = (uint32_t)number(w, n, "block", 0, 64);
			k.workgroup[1] = k.workgroup[2] = 1;
			check_all_used(w, n);
			next_dispatch = k.dispatch_id + 1;
			put(&k);
		} else if (strcmp(type, "copy") == 0) {
			struct record_memory_copy c = { .header = { sizeof(c), RECORD_MEMORY_COPY, 0 } };
			c.start_ns = number(w, n, "start", 1, 0);
			c.end_ns = number(w, n, "end", 1, 0);
			c.bytes = number(w, n, "bytes", 1, 0);
			c.direction = choice(w, n, "direction", directions, COPY_HOST_TO_DEVICE);
			c.operation = choice(w, n, "operation", operations, COPY_OPERATION_COPY);
			c.function_id = intern(text(w, n, "function", "clEnqueueWriteBuffer"));
			uint32_t agent = (uint32_t)number(w, n, "agent", 0, 1);
			c.src_agent_id = c.direction == COPY_DEVICE_TO_HOST ||
					 c.direction == COPY_DEVICE_TO_DEVICE ? agent : 0;
			c.dst_agent_id = c.direction == COPY_DEVICE_TO_HOST ? 0 : agent;
			c.queue_id = (uint32_t)number(w, n, "queue", 0, 1);
			c.stream_id = c.queue_id;
			c.tid = (uint32_t)number(w, n, "tid", 0, pid);
			c.correlation_id = number(w, n, "corr", 0, last_corr);
			c.src_memory_kind = (uint32_t)number(w, n, "src_kind", 0, 0);
			c.dst_memory_kind = (uint32_t)number(w, n, "dst_kind", 0, 0);
			check_all_used(w, n);
			put(&c);
		} else if (strcmp(type, "allocation") == 0) {
			struct record_memory_allocation a = {
				.header = { sizeof(a), RECORD_MEMORY_ALLOCATION, 0 } };
			a.operation = choice(w, n, "op", allocation_operations, ALLOCATION_ALLOCATE);
			a.address = number(w, n, "address", 1, 0);
			a.bytes = number(w, n, "bytes", 1, 0);
			a.start_ns = number(w, n, "start", 1, 0);
			a.end_ns = number(w, n, "end", 1, 0);
			a.agent_id = (uint32_t)number(w, n, "agent", 0, 1);
			a.tid = (uint32_t)number(w, n, "tid", 0, pid);
			a.correlation_id = number(w, n, "corr", 0, last_corr);
			a.memory_kind = (uint32_t)number(w, n, "kind", 0, MEMORY_KIND_DEVICE);
			check_all_used(w, n);
			put(&a);
		} else if (strcmp(type, "push") == 0) {
			marker(w, n, MARKER_PUSH_POP, pid);
		} else if (strcmp(type, "startstop") == 0) {
			marker(w, n, MARKER_START_STOP, pid);
		} else if (strcmp(type, "mark") == 0) {
			marker(w, n, MARKER_MARK, pid);
		} else if (strcmp(type, "pop") == 0) {
			struct record_marker_end e = { { sizeof(e), RECORD_MARKER_END, 0 }, 0, 0, 0, 0 };
			e.id = number(w, n, "id", 1, 0);
			e.end_ns = number(w, n, "end", 1, 0);
			e.tid = (uint32_t)number(w, n, "tid", 0, pid);
			check_all_used(w, n);
			put(&e);
		} else if (strcmp(type, "thread") == 0) {
			struct record_thread_name t = { { sizeof(t), RECORD_THREAD_NAME, 0 }, 0, 0 };
			t.tid = (uint32_t)number(w, n, "tid", 1, 0);
			t.name_id = intern(text(w, n, "name", NULL));
			check_all_used(w, n);
			put(&t);
		} else if (strcmp(type, "sample") == 0) {
			struct record_sample m = { .header = { sizeof(m), RECORD_SAMPLE, 0 },
						   .syscall = -1 };
			m.time_ns = number(w, n, "time", 1, 0);
			m.tid = (uint32_t)number(w, n, "tid", 0, pid);
			m.registers[16] = number(w, n, "ip", 0, 0);
			check_all_used(w, n);
			put(&m);
		} else if (strcmp(type, "module") == 0) {
			struct record_module m = { .header = { sizeof(m), RECORD_MODULE, 0 } };
			m.path_id = intern(text(w, n, "path", NULL));
			m.start = number(w, n, "start", 1, 0);
			m.end = number(w, n, "end", 1, 0);
			m.offset = number(w, n, "offset", 0, 0);
			m.time_ns = number(w, n, "time", 0, 0);
			check_all_used(w, n);
			put(&m);
		} else if (strcmp(type, "lost") == 0) {
			struct record_samples_lost l = { .header = { sizeof(l), RECORD_SAMPLES_LOST, 0 } };
			l.start_ns = number(w, n, "start", 1, 0);
			l.end_ns = number(w, n, "end", 1, 0);
			l.samples = (uint32_t)number(w, n, "samples", 1, 0);
			l.tid = (uint32_t)number(w, n, "tid", 0, pid);
			check_all_used(w, n);
			put(&l);
		} else if (strcmp(type, "end") == 0) {
			struct record_process_end e = { { sizeof(e), RECORD_PROCESS_END, 0 }, 0 };
			e.end_ns = number(w, n, "time", 1, 0);
			check_all_used(w, n);
			put(&e);
		} else {
			fail("an unknown record", type);
		}
	}
	flush();
	if (close(out_fd) < 0) {
		perror(out_path);
		return 1;
	}
	return 0;
}
