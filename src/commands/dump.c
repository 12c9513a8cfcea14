/* gpuprof dump: every thread's stack in running processes, now, read from outside.
 *
 * Each thread is stopped for as long as its registers and the top of its stack take to
 * copy (PTRACE_SEIZE and PTRACE_INTERRUPT, which neither signal nor group-stop the
 * process: were gpuprof killed meanwhile, the kernel lets the thread go on as if nothing
 * happened), then let go; the copies become the records of a spool (the process, its
 * ELF files, one sample per thread, their names), which the unwinder of recorded samples
 * turns into named frames, as for `gpuprof sys`. What the thread was doing comes from
 * /proc: its state and the system call it is blocked in. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include "analysis/unwind.h"
#include "commands/commands.h"
#include "commands/dump.h"
#include "core/clock.h"
#include "core/maps.h"
#include "core/recording.h"
#include "core/spool.h"
#include "core/syscalls.h"
#include "util/error.h"
#include "util/json.h"
#include "util/options.h"
#include "util/proc.h"
#include "util/strbuf.h"
#include "util/vdso.h"

static const char usage[] = "gpuprof dump [options] --pid PID... (or PID...)";
static const char description[] =
	"Prints every thread's call stack in running processes, now: for each thread its\n"
	"name, its state (running, or blocked in which system call: futex, poll, read...)\n"
	"and its frames, innermost first, named from the ELF files the process maps (their\n"
	"symbols, and the source lines where they have debug information), with CPython\n"
	"3.11's to 3.13's functions in place of its evaluation loop and the thread that\n"
	"holds the GIL. Each thread is stopped only\n"
	"while its registers and the top of its stack are copied; the process goes on as\n"
	"it was, even if gpuprof is killed meanwhile. Needs the right to trace\n"
	"the process (the same user, or CAP_SYS_PTRACE; Yama's ptrace_scope 0, or 1 for a\n"
	"process that is not a descendant only with CAP_SYS_PTRACE), in the same PID and\n"
	"mount namespaces.";

/* ---- what a thread is doing, from /proc ------------------------------------------------ */

struct thread {
	int tid;
	char name[64];
	char state;           /* /proc's: R running, S sleeping, D disk, T stopped, ... */
	int syscall;          /* the system call it is blocked in; -1: none or unknown */
	struct user_regs_struct regs;
	unsigned char *stack; /* the top of its stack */
	size_t stack_size;
	int copied;           /* registers and stack copied */
	int error;            /* why not: the errno of ptrace (ESRCH: it ended meanwhile) */
	char why[160];
};

static void thread_facts(int pid, struct thread *t)
{
	char path[128], text[512];
	snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", pid, t->tid);
	if (proc_read(path, t->name, sizeof(t->name)) > 0)
		t->name[strcspn(t->name, "\n")] = '\0';
	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", pid, t->tid);
	t->state = '?';
	if (proc_read(path, text, sizeof(text)) > 0) {
		const char *close_paren = strrchr(text, ')');
		if (close_paren && close_paren[1] == ' ')
			t->state = close_paren[2];
	}
	/* "running", or the call's number and arguments while it is blocked */
	snprintf(path, sizeof(path), "/proc/%d/task/%d/syscall", pid, t->tid);
	t->syscall = -1;
	if (proc_read(path, text, sizeof(text)) > 0 && text[0] >= '0' && text[0] <= '9')
		t->syscall = atoi(text);
}

/* ---- the copy of a thread -------------------------------------------------------------- */

/* The process that traces the thread (a debugger), 0 when none. */
static int tracer_of(int pid, int tid)
{
	char path[96], status[4096];
	snprintf(path, sizeof(path), "/proc/%d/task/%d/status", pid, tid);
	const char *line = proc_read(path, status, sizeof(status)) > 0
				   ? strstr(status, "TracerPid:") : NULL;
	return line ? atoi(line + strlen("TracerPid:")) : 0;
}

/* Stops the thread, copies its registers and up to stack_bytes of its stack, lets it go. */
static void copy_thread(int pid, struct thread *t, size_t stack_bytes)
{
	if (ptrace(PTRACE_SEIZE, t->tid, NULL, NULL) < 0) {
		t->error = errno;
		int tracer = errno == EPERM ? tracer_of(pid, t->tid) : 0;
		if (tracer)
			snprintf(t->why, sizeof(t->why), "process %d (a debugger) traces it", tracer);
		else
			snprintf(t->why, sizeof(t->why), errno == ESRCH ? "it ended"
					 : "cannot trace it: %s", strerror(errno));
		return;
	}
	int status = 0;
	if (ptrace(PTRACE_INTERRUPT, t->tid, NULL, NULL) < 0 ||
	    waitpid(t->tid, &status, __WALL) < 0) {
		snprintf(t->why, sizeof(t->why), "cannot stop it: %s", strerror(errno));
		ptrace(PTRACE_DETACH, t->tid, NULL, NULL);
		return;
	}
	if (ptrace(PTRACE_GETREGS, t->tid, NULL, &t->regs) < 0) {
		snprintf(t->why, sizeof(t->why), "cannot read its registers: %s", strerror(errno));
	} else {
		t->stack = malloc(stack_bytes);
		/* in pieces: the copy stops at the end of the stack's mapping */
		size_t got = 0;
		while (t->stack && got < stack_bytes) {
			size_t piece = stack_bytes - got < 4096 ? stack_bytes - got : 4096;
			struct iovec local = { t->stack + got, piece };
			struct iovec remote = { (void *)(uintptr_t)(t->regs.rsp + got), piece };
			ssize_t n = process_vm_readv(pid, &local, 1, &remote, 1, 0);
			if (n <= 0)
				break;
			got += (size_t)n;
		}
		t->stack_size = got;
		t->copied = 1;
	}
	/* a stop that is not ours (a signal that came meanwhile) is handed back with it */
	int signal = WIFSTOPPED(status) && (status >> 16) != PTRACE_EVENT_STOP ? WSTOPSIG(status)
									       : 0;
	ptrace(PTRACE_DETACH, t->tid, NULL, (void *)(uintptr_t)signal);
}

/* ---- the spool of the copies ----------------------------------------------------------- */


int dump_flush(struct spool_out *s)
{
	if (s->count && !s->failed &&
	    spool_write_chunk(s->fd, s->chunk.buf, (uint32_t)s->chunk.len, s->count, &s->err))
		s->failed = 1;
	strbuf_reset(&s->chunk);
	s->count = 0;
	return s->failed ? -1 : 0;
}

void dump_put(struct spool_out *s, const void *record)
{
	const struct record_header *h = record;
	if (s->chunk.len + h->size > (1u << 20))
		dump_flush(s);
	strbuf_add(&s->chunk, record, h->size);
	s->count++;
}

uint32_t dump_put_string(struct spool_out *s, const char *text)
{
	size_t length = strlen(text);
	length = length > 4000 ? 4000 : length;
	struct strbuf r = STRBUF_INIT;
	struct record_string head = {
		.header = { RECORD_PADDED((uint32_t)(sizeof(head) + length)), RECORD_STRING, 0 },
		.id = ++s->strings, .length = (uint32_t)length,
	};
	strbuf_add(&r, &head, sizeof(head));
	strbuf_add(&r, text, length);
	while (r.len < head.header.size)
		strbuf_addch(&r, '\0');
	dump_put(s, r.buf);
	strbuf_release(&r);
	return head.id;
}

struct modules {
	struct spool_out *s;
	uint64_t now;
};

/* One file mapped (core/maps.h) as a record, as the sampler records its own. */
static void put_module(void *arg, uint64_t start, uint64_t end, uint64_t offset,
		       const char *path)
{
	struct modules *at = arg;
	struct record_module m = { .header = { sizeof(m), RECORD_MODULE, 0 }, .start = start,
				   .end = end, .offset = offset, .time_ns = at->now };
	m.path_id = dump_put_string(at->s, path);
	char id[128]; /* the kernel's vDSO: the same image as gpuprof's */
	if (!strcmp(path, "[vdso]") && vdso_build_id(id, sizeof(id)) == 0)
		m.build_id = dump_put_string(at->s, id);
	dump_put(at->s, &m);
}

void dump_put_modules(struct spool_out *s, int pid, uint64_t now)
{
	char path[64];
	struct modules at = { s, now };
	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	maps_modules(path, put_module, &at);
}

static void put_sample(struct spool_out *s, const struct thread *t, uint64_t now)
{
	const struct user_regs_struct *r = &t->regs;
	struct record_sample head = {
		.header = { RECORD_PADDED((uint32_t)(sizeof(head) + t->stack_size)), RECORD_SAMPLE, 0 },
		.tid = (uint32_t)t->tid, .stack_size = (uint32_t)t->stack_size, .time_ns = now,
		/* DWARF's x86-64 order */
		.registers = { r->rax, r->rdx, r->rcx, r->rbx, r->rsi, r->rdi, r->rbp, r->rsp, r->r8,
			       r->r9, r->r10, r->r11, r->r12, r->r13, r->r14, r->r15, r->rip },
		.syscall = t->syscall,
	};
	struct strbuf b = STRBUF_INIT;
	strbuf_add(&b, &head, sizeof(head));
	strbuf_add(&b, t->stack, t->stack_size);
	while (b.len < head.header.size)
		strbuf_addch(&b, '\0');
	dump_put(s, b.buf);
	strbuf_release(&b);
}

/* ---- a process ------------------------------------------------------------------------- */

struct process {
	int pid;
	char command[512];
	struct thread *threads;
	size_t count;
	struct recording rec;
	struct sample_stacks stacks;
	int unwound;
	int gil;       /* the thread that holds Python's GIL; 0: none */
	char why[512]; /* why it could not be dumped */
};

static int same_namespace(int pid, const char *kind)
{
	char mine[64], theirs[64], path[64];
	snprintf(path, sizeof(path), "/proc/self/ns/%s", kind);
	ssize_t a = readlink(path, mine, sizeof(mine) - 1);
	snprintf(path, sizeof(path), "/proc/%d/ns/%s", pid, kind);
	ssize_t b = readlink(path, theirs, sizeof(theirs) - 1);
	if (a < 0 || b < 0)
		return 1; /* cannot tell: the copy says what fails */
	mine[a] = theirs[b] = '\0';
	return !strcmp(mine, theirs);
}

/* Why pid cannot be read by `command` (dump, sys), in words that say what to change; ""
 * when it can be tried. */
void dump_check_process(int pid, const char *command, char *why, size_t size)
{
	if (kill(pid, 0) < 0 && errno == ESRCH) {
		snprintf(why, size, "no process %d (it ended, or never was)", pid);
		return;
	}
	if (pid == getpid()) {
		snprintf(why, size, "process %d is gpuprof itself", pid);
		return;
	}
	if (!same_namespace(pid, "pid") || !same_namespace(pid, "mnt")) {
		snprintf(why, size, "process %d is in another PID or mount namespace (a "
			 "container): run gpuprof %s inside it (nsenter --target %d --pid --mount, "
			 "or docker exec)", pid, command, pid);
		return;
	}
	why[0] = '\0';
}

/* The reason a thread could not be traced, in the words of what to change. */
static void permission_advice(struct process *p, int error)
{
	char scope[16] = "";
	proc_read("/proc/sys/kernel/yama/ptrace_scope", scope, sizeof(scope));
	int tracer_pid = tracer_of(p->pid, p->pid);
	struct strbuf why = STRBUF_INIT;
	strbuf_addf(&why, "cannot trace process %d: %s", p->pid, strerror(error));
	if (tracer_pid)
		strbuf_addf(&why, " (process %d already traces it: a debugger; detach it first)",
			    tracer_pid);
	else if (error == EPERM && scope[0] && scope[0] != '0')
		strbuf_addf(&why, " (Yama's ptrace_scope is %c: set /proc/sys/kernel/yama/"
			    "ptrace_scope to 0, or run gpuprof with CAP_SYS_PTRACE, e.g. as root)",
			    scope[0]);
	else if (error == EPERM)
		strbuf_addstr(&why, " (another user's process: run gpuprof as that user, or with "
				    "CAP_SYS_PTRACE, e.g. as root)");
	snprintf(p->why, sizeof(p->why), "%s", why.buf);
	strbuf_release(&why);
}

static int by_tid(const void *a, const void *b)
{
	const struct thread *x = a, *y = b;
	return (x->tid > y->tid) - (x->tid < y->tid);
}

/* Copies every thread, then unwinds the copies. 0, or -1 with p->why set. */
static int dump_process(struct process *p, size_t stack_bytes)
{
	dump_check_process(p->pid, "dump", p->why, sizeof(p->why));
	if (p->why[0])
		return -1;
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/cmdline", p->pid);
	int n = proc_read(path, p->command, sizeof(p->command));
	for (int i = 0; i < n - 1; i++)
		if (!p->command[i])
			p->command[i] = ' ';
	snprintf(path, sizeof(path), "/proc/%d/task", p->pid);
	DIR *d = opendir(path);
	if (!d) {
		snprintf(p->why, sizeof(p->why), "cannot read %s: %s", path, strerror(errno));
		return -1;
	}
	struct dirent *e;
	while ((e = readdir(d))) {
		if (e->d_name[0] < '0' || e->d_name[0] > '9')
			continue;
		p->threads = xrealloc(p->threads, (p->count + 1) * sizeof(*p->threads));
		struct thread *t = &p->threads[p->count++];
		memset(t, 0, sizeof(*t));
		t->tid = atoi(e->d_name);
	}
	closedir(d);
	qsort(p->threads, p->count, sizeof(*p->threads), by_tid);
	int copied = 0, denied = 0;
	for (size_t i = 0; i < p->count; i++) {
		thread_facts(p->pid, &p->threads[i]);
		copy_thread(p->pid, &p->threads[i], stack_bytes);
		copied += p->threads[i].copied;
		if (!p->threads[i].copied && !denied && p->threads[i].error &&
		    p->threads[i].error != ESRCH)
			denied = p->threads[i].error;
	}
	if (!copied) {
		if (denied)
			permission_advice(p, denied);
		else if (p->count)
			snprintf(p->why, sizeof(p->why), "process %d: %s", p->pid, p->threads[0].why);
		else
			snprintf(p->why, sizeof(p->why), "process %d has no threads left (it ended)",
				 p->pid);
		return -1;
	}
	/* the copies as a spool, read back and unwound as samples are */
	const char *tmp = getenv("TMPDIR");
	struct strbuf spool = STRBUF_INIT;
	strbuf_addf(&spool, "%s/gpuprof-dump-%d-XXXXXX", tmp && *tmp ? tmp : "/tmp", (int)getpid());
	struct spool_out s = { .fd = mkstemp(spool.buf) };
	strbuf_init(&s.chunk);
	struct error err;
	if (s.fd < 0 || spool_write_header(s.fd, &err)) {
		snprintf(p->why, sizeof(p->why), "cannot write a temporary file in '%s': %s",
			 tmp && *tmp ? tmp : "/tmp", strerror(errno));
		if (s.fd >= 0)
			close(s.fd);
		strbuf_release(&spool);
		return -1;
	}
	uint64_t now = clock_now_ns();
	char host[256] = "";
	gethostname(host, sizeof(host) - 1);
	struct record_process proc = {
		.header = { sizeof(proc), RECORD_PROCESS, 0 }, .pid = (uint32_t)p->pid,
		.start_ns = now, .realtime_ns = clock_realtime_ns(), .rank = -1, .size = -1,
	};
	proc.hostname_id = dump_put_string(&s, host);
	proc.command_id = dump_put_string(&s, p->command);
	dump_put(&s, &proc);
	dump_put_modules(&s, p->pid, now);
	for (size_t i = 0; i < p->count; i++) {
		struct thread *t = &p->threads[i];
		if (t->copied)
			put_sample(&s, t, now);
	}
	/* a thread running Python: its functions in place of the interpreter's loop */
	dump_python(&s, p->pid, now, &p->gil);
	struct record_process_end end = { { sizeof(end), RECORD_PROCESS_END, 0 }, now };
	dump_put(&s, &end);
	dump_flush(&s);
	close(s.fd);
	strbuf_release(&s.chunk);
	int rc = recording_read(&p->rec, spool.buf, &err);
	unlink(spool.buf);
	strbuf_release(&spool);
	if (rc) {
		snprintf(p->why, sizeof(p->why), "%s", err.message);
		return -1;
	}
	sample_stacks_build(&p->rec, &p->stacks);
	p->unwound = 1;
	return 0;
}

/* ---- output ---------------------------------------------------------------------------- */

static const char *state_name(char state)
{
	switch (state) {
	case 'R': return "running";
	case 'S': return "sleeping";
	case 'D': return "in uninterruptible wait";
	case 'T': return "stopped";
	case 't': return "stopped by a tracer";
	case 'Z': return "a zombie";
	}
	return "in an unknown state";
}

/* The sample of tid in the recording: its index, or -1. */
static long sample_of(const struct process *p, int tid)
{
	for (size_t i = 0; i < p->rec.samples.count; i++) {
		const struct record_sample *s = (const void *)p->rec.samples.items[i];
		if ((int)s->tid == tid)
			return (long)i;
	}
	return -1;
}

static void print_text(const struct process *p)
{
	printf("Process %d: %s\n", p->pid, p->command);
	for (size_t i = 0; i < p->count; i++) {
		const struct thread *t = &p->threads[i];
		const char *call = t->syscall >= 0 ? syscall_wait_name(t->syscall) : NULL;
		printf("\nThread %d (%s): %s", t->tid, t->name, state_name(t->state));
		if (t->syscall >= 0)
			printf(", in %s", call ? call : "a system call");
		if (t->syscall >= 0 && !call)
			printf(" (%d)", t->syscall);
		if (t->tid == p->gil)
			printf(", holds the GIL");
		printf("\n");
		long at = sample_of(p, t->tid);
		if (!t->copied || at < 0) {
			printf("    (no stack: %s)\n", t->why[0] ? t->why : "not copied");
			continue;
		}
		uint32_t frames[UNWIND_MAX_FRAMES];
		size_t n = sample_stack_frames(&p->stacks, p->stacks.leaf[at], frames,
					       UNWIND_MAX_FRAMES);
		for (size_t f = 0; f < n; f++) {
			const struct stack_frame *x = &p->stacks.frames[frames[f]];
			const char *module = strrchr(x->module, '/');
			printf("    #%-3zu %s", f, x->function);
			if (x->source[0] && x->line)
				printf(" at %s:%d", x->source, x->line);
			if (x->module[0])
				printf(" (%s)", module ? module + 1 : x->module);
			printf("\n");
		}
	}
}

static void print_json(const struct process *p, struct strbuf *out)
{
	strbuf_addf(out, "{\"pid\":%d,\"command\":", p->pid);
	json_string(out, p->command);
	strbuf_addstr(out, ",\"threads\":[");
	for (size_t i = 0; i < p->count; i++) {
		const struct thread *t = &p->threads[i];
		const char *call = t->syscall >= 0 ? syscall_wait_name(t->syscall) : NULL;
		strbuf_addf(out, "%s{\"tid\":%d,\"name\":", i ? "," : "", t->tid);
		json_string(out, t->name);
		strbuf_addf(out, ",\"state\":\"%c\",\"syscall\":", t->state);
		if (t->syscall < 0)
			strbuf_addstr(out, "null");
		else if (call)
			json_string(out, call);
		else
			strbuf_addf(out, "%d", t->syscall);
		strbuf_addf(out, ",\"gil\":%s,\"frames\":[", t->tid == p->gil ? "true" : "false");
		long at = t->copied ? sample_of(p, t->tid) : -1;
		if (at >= 0) {
			uint32_t frames[UNWIND_MAX_FRAMES];
			size_t n = sample_stack_frames(&p->stacks, p->stacks.leaf[at], frames,
						       UNWIND_MAX_FRAMES);
			for (size_t f = 0; f < n; f++) {
				const struct stack_frame *x = &p->stacks.frames[frames[f]];
				strbuf_addstr(out, f ? ",{\"function\":" : "{\"function\":");
				json_string(out, x->function);
				strbuf_addstr(out, ",\"module\":");
				json_string(out, x->module);
				strbuf_addstr(out, ",\"source\":");
				json_string(out, x->source);
				strbuf_addf(out, ",\"line\":%d}", x->line);
			}
		}
		strbuf_addstr(out, "]");
		if (!t->copied) {
			strbuf_addstr(out, ",\"error\":");
			json_string(out, t->why);
		}
		strbuf_addstr(out, "}");
	}
	strbuf_addstr(out, "]}");
}

/* ---- the command ----------------------------------------------------------------------- */

/* Adds pid's descendants (every process whose parent is in the list) to the list, but
 * for gpuprof itself (`dump --children --pid $$` from a shell is the shell's child). */
static void add_children(int **pids, size_t *count)
{
	for (size_t at = 0; at < *count; at++) {
		DIR *d = opendir("/proc");
		struct dirent *e;
		while (d && (e = readdir(d))) {
			if (e->d_name[0] < '0' || e->d_name[0] > '9')
				continue;
			char path[64], text[512];
			snprintf(path, sizeof(path), "/proc/%.32s/stat", e->d_name);
			if (proc_read(path, text, sizeof(text)) <= 0)
				continue;
			const char *close_paren = strrchr(text, ')');
			int ppid = 0;
			if (!close_paren || sscanf(close_paren + 1, " %*c %d", &ppid) != 1 ||
			    ppid != (*pids)[at] || atoi(e->d_name) == (int)getpid())
				continue;
			*pids = xrealloc(*pids, (*count + 1) * sizeof(**pids));
			(*pids)[(*count)++] = atoi(e->d_name);
		}
		if (d)
			closedir(d);
	}
}

static int parse_pid(const char *text, int *pid)
{
	char *end;
	errno = 0;
	long v = strtol(text, &end, 10);
	if (!*text || *end || errno || v < 1 || v > 4194304)
		return -1;
	*pid = (int)v;
	return 0;
}

int cmd_dump(int argc, char **argv)
{
	int help = -1, children = -1;
	const char *format = "text", *stack_size = "16777216";
	struct option_list pid_list = { 0 };
	const struct option table[] = {
		{ OPTION_LIST, 'p', "pid", &pid_list, "PID...",
		  "the processes to dump (also as arguments)" },
		{ OPTION_BOOL, 0, "children", &children, NULL,
		  "their descendants too (a launcher's ranks, a training job's workers)" },
		{ OPTION_ENUM, 0, "format", &format, "text|json", "how to print (default: text)" },
		{ OPTION_STRING, 0, "stack-size", &stack_size, "BYTES",
		  "at most these bytes of each thread's stack copied from its top (default: "
		  "16777216, the whole stack in use: deeper frames are not shown)" },
		{ OPTION_BOOL, 'h', "help", &help, NULL, "show this help" },
		OPTION_END,
	};
	struct error err;
	char **inputs;
	int count;
	if (options_parse_mixed(table, argc, argv, &inputs, &count, &err))
		die_with(EXIT_USAGE, "dump: %s", err.message);
	if (help == 1) {
		options_print_help(stdout, usage, description, table);
		free(inputs);
		return 0;
	}
	int *pids = NULL;
	size_t n = 0;
	for (int i = 0; i < pid_list.count + count; i++) {
		const char *text = i < pid_list.count ? pid_list.items[i] : inputs[i - pid_list.count];
		pids = xrealloc(pids, (n + 1) * sizeof(*pids));
		if (parse_pid(text, &pids[n]))
			die_with(EXIT_USAGE, "dump: '%s' is not a process id", text);
		n++;
	}
	free(inputs);
	if (!n)
		die_with(EXIT_USAGE, "dump: no process given (usage: %s)", usage);
	char *end;
	unsigned long bytes = strtoul(stack_size, &end, 10);
	if (*end || bytes < 512 || bytes > (16ul << 20))
		die_with(EXIT_USAGE, "dump: --stack-size %s: give bytes from 512 to 16777216",
			 stack_size);
	if (children == 1)
		add_children(&pids, &n);
	int failed = 0;
	struct strbuf json = STRBUF_INIT;
	int as_json = !strcmp(format, "json");
	if (as_json)
		strbuf_addstr(&json, "[");
	for (size_t i = 0; i < n; i++) {
		struct process p = { .pid = pids[i] };
		if (dump_process(&p, bytes)) {
			fprintf(stderr, "gpuprof: dump: %s\n", p.why);
			failed++;
		} else if (as_json) {
			if (json.len > 1)
				strbuf_addch(&json, ',');
			print_json(&p, &json);
		} else {
			if (i)
				printf("\n");
			print_text(&p);
		}
		if (p.unwound) {
			sample_stacks_release(&p.stacks);
			recording_release(&p.rec);
		}
		for (size_t t = 0; t < p.count; t++)
			free(p.threads[t].stack);
		free(p.threads);
	}
	if (as_json) {
		strbuf_addstr(&json, "]\n");
		fputs(json.buf, stdout);
	}
	strbuf_release(&json);
	free(pids);
	options_release();
	if (fflush(stdout))
		die("dump: cannot write the stacks: %s", strerror(errno));
	return failed == (int)n ? EXIT_FAILURE : failed ? 3 : 0;
}
