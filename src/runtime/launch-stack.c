/* Launch call stacks (--launch-stacks, see recorder.h), and launch points (where and when
 * a launch began, without its stack: recorder_launch()): a backend calls
 * recorder_launch_stack() on the thread that launches a kernel or a copy, before the real
 * API function runs. It copies that thread's registers and the top of its stack as the
 * kernel copies them for a sample (runtime/sampler.c), so that one unwinder
 * (analysis/unwind.c) names both after the run; the frames of gpuprof's own libraries
 * at the leaf are left out there, down to the API function the program called.
 *
 * The registers are read where this function stands, in one asm statement, with the
 * address at its end as the instruction pointer: the unwind tables describe that
 * address as they do the statement's start, where the values were read (the scratch
 * register it writes after them is one the compiler saved, as any it is told is
 * clobbered). The copy runs from the stack pointer up
 * to the top of the thread's stack (pthread_getattr_np, once per thread), at most
 * GPUPROF_LAUNCH_STACKS bytes (--launch-stack-size). x86-64 only, as the samples'
 * registers are. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "core/clock.h"
#include "core/record.h"
#include "runtime/python.h"
#include "runtime/recorder.h"

/* A record with the largest stack copy (launch_stack_bytes); the bytes are written into
 * a buffer of the thread's own (the copy's source is the thread's stack, which must not
 * hold it). */
struct launch_buffer {
	struct record_launch_stack record;
	unsigned char stack[];
};

/* A launching thread's state, in one allocation reached through one thread-local pointer:
 * a launch reads it through that pointer alone (in a shared library each thread-local
 * variable read is a call to the dynamic loader). */
struct launch_thread {
	struct launch_buffer *buffer;
	uintptr_t stack_top; /* 0: not known yet; 1: cannot be known */
	uintptr_t stack_low;
	/* The thread's last launch stack and registers as its record gave them, for the
	 * next to be given as its difference (RECORD_LAUNCH_DELTA): in a loop that
	 * launches, most of the stack is the same from one launch to the next (the frames
	 * above the loop, the calls' saved registers and return addresses), and so are
	 * most registers; what is not written costs the writer nothing. */
	uint64_t *last_stack;
	uint64_t last_registers[SAMPLE_REGISTERS];
	uintptr_t last_sp;
	size_t last_bytes;
	uint16_t last_number; /* its header.flags; 0: none (the next is whole) */
};

/* The longest a launch waits for room in its thread's buffer. */
#define WAIT_LIMIT_NS 100000000u

static __thread struct launch_thread *here;
/* Set once a launch waited WAIT_LIMIT_NS in vain (a writer that does not drain, as in a
 * child of fork() whose writer could not start): later ones do not wait. */
static atomic_int writer_stalled;
static pthread_key_t here_key;
static pthread_once_t key_once = PTHREAD_ONCE_INIT;

static void release_thread(void *t)
{
	free(t);
	here = NULL;
}

static void forked_child(void)
{
	atomic_store(&writer_stalled, 0); /* the child's writer is its own */
	if (here)
		here->last_number = 0; /* and its spool: the next stack is whole */
}

static void make_key(void)
{
	pthread_key_create(&here_key, release_thread);
	pthread_atfork(NULL, NULL, forked_child);
}

/* Bytes of stack copied per launch (GPUPROF_LAUNCH_STACKS) and per allocation
 * (GPUPROF_ALLOCATION_STACKS): a number of bytes, 1 for SAMPLE_STACK_BYTES; 0 when not
 * taken; -1: not read yet. */
static atomic_int launch_stack_bytes = -1, allocation_stack_bytes = -1;

static int stack_bytes_of(atomic_int *cached, const char *variable)
{
	int a = atomic_load_explicit(cached, memory_order_relaxed);
	if (a < 0) {
		a = 0;
#if defined(__x86_64__)
		const char *text = getenv(variable);
		char *end;
		unsigned long bytes = text ? strtoul(text, &end, 10) : 0;
		if (text && !*end && bytes == 1)
			a = SAMPLE_STACK_BYTES;
		else if (text && !*end && bytes >= 8)
			a = (int)(bytes > SAMPLE_STACK_MAX ? SAMPLE_STACK_MAX : bytes & ~7ul);
#endif
		atomic_store(cached, a);
	}
	return a;
}

int recorder_launch_stacks(void)
{
	return stack_bytes_of(&launch_stack_bytes, "GPUPROF_LAUNCH_STACKS");
}

int recorder_allocation_stacks(void)
{
	return stack_bytes_of(&allocation_stack_bytes, "GPUPROF_ALLOCATION_STACKS");
}

void recorder_launch(uint32_t domain, uint32_t function_id, uint64_t correlation_id)
{
	if (!recorder_ready())
		return;
	struct record_launch l = {
		.header = { sizeof(l), RECORD_LAUNCH, 0 },
		.tid = recorder_thread_id(),
		.domain = domain,
		.function_id = function_id,
		.correlation_id = correlation_id,
		.time_ns = clock_now_ns(),
	};
	recorder_emit(&l); /* a full buffer counts it as lost */
}

#if defined(__x86_64__)
/* The stack's bytes as they are: not through memcpy(), which a sanitizer's runtime checks
 * (the frames above hold its red zones and variables out of scope, which the program
 * never reads but the copy must). */
static void copy_stack(void *to, const void *from, size_t bytes)
{
	__asm__ volatile("rep movsb" : "+D"(to), "+S"(from), "+c"(bytes) : : "memory");
}

/* Whether a and b's 64 bytes are the same; the words that differ, a bit each; a's made
 * b's (SSE2: every x86-64 has it). Most of a stack's blocks are as they were. */
__attribute__((no_sanitize("address", "thread"))) static inline int
block_same(const uint64_t *a, const uint64_t *b)
{
	const __m128i *x = (const __m128i *)a, *y = (const __m128i *)b;
	__m128i d = _mm_setzero_si128();
	for (int k = 0; k < 4; k++)
		d = _mm_or_si128(d, _mm_xor_si128(_mm_loadu_si128(x + k), _mm_loadu_si128(y + k)));
	return _mm_movemask_epi8(_mm_cmpeq_epi8(d, _mm_setzero_si128())) == 0xffff;
}

__attribute__((no_sanitize("address", "thread"))) static inline unsigned
block_changes(const uint64_t *a, const uint64_t *b)
{
	const __m128i *x = (const __m128i *)a, *y = (const __m128i *)b;
	unsigned m = 0;
	for (int k = 0; k < 4; k++) {
		unsigned same = (unsigned)_mm_movemask_epi8(
			_mm_cmpeq_epi8(_mm_loadu_si128(x + k), _mm_loadu_si128(y + k)));
		m |= (unsigned)((same & 0xff) != 0xff) << (2 * k);
		m |= (unsigned)((same >> 8) != 0xff) << (2 * k + 1);
	}
	return m;
}

__attribute__((no_sanitize("address", "thread"))) static inline void
block_copy(uint64_t *a, const uint64_t *b)
{
	__m128i *x = (__m128i *)a;
	const __m128i *y = (const __m128i *)b;
	for (int k = 0; k < 4; k++)
		_mm_storeu_si128(x + k, _mm_loadu_si128(y + k));
}

/* The whole blocks of eight words from w on, SSE2's way (every x86-64 has it): a block
 * as it was costs an OR-ed compare; one that is not, a compare per word. Their map bytes
 * and changed words are written, the blocks made now's in last; the word after the last
 * block, or 0 when the words changed outgrow the room (limit: the last place a block's
 * eight words fit). */
__attribute__((no_sanitize("address", "thread"))) static size_t
delta_blocks_sse2(unsigned char *map, uint64_t **to, const uint64_t *limit, const uint64_t *now,
		  uint64_t *last, size_t words)
{
	size_t w = 0;
	for (; w + 8 <= words; w += 8) {
		if (block_same(now + w, last + w)) {
			map[w / 8] = 0;
			continue;
		}
		if (*to > limit)
			return 0;
		unsigned m = block_changes(now + w, last + w);
		for (unsigned b = m; b; b &= b - 1)
			*(*to)++ = now[w + (unsigned)__builtin_ctz(b)];
		block_copy(last + w, now + w);
		map[w / 8] = (unsigned char)m;
	}
	return w;
}

/* The same with AVX-512: a block's compare is its map byte, its changed words are put
 * side by side in a register and stored whole (the room holds a block's eight words;
 * the next store starts where this one's changed words end). */
__attribute__((target("avx512f"), no_sanitize("address", "thread"))) static size_t
delta_blocks_avx512(unsigned char *map, uint64_t **to, const uint64_t *limit,
		    const uint64_t *now, uint64_t *last, size_t words)
{
	size_t w = 0;
	for (; w + 8 <= words; w += 8) {
		__m512i a = _mm512_loadu_si512(now + w);
		__mmask8 m = _mm512_cmpneq_epi64_mask(a, _mm512_loadu_si512(last + w));
		map[w / 8] = (unsigned char)m;
		if (!m)
			continue;
		if (*to > limit)
			return 0;
		_mm512_storeu_si512(*to, _mm512_maskz_compress_epi64(m, a));
		*to += __builtin_popcount(m);
		_mm512_storeu_si512(last + w, a);
	}
	return w;
}

typedef size_t delta_blocks_fn(unsigned char *, uint64_t **, const uint64_t *, const uint64_t *,
			       uint64_t *, size_t);
static delta_blocks_fn *delta_blocks;
static pthread_once_t delta_chosen = PTHREAD_ONCE_INIT;

static delta_blocks_fn *fastest_delta_blocks(int sse2)
{
	__builtin_cpu_init();
	return !sse2 && __builtin_cpu_supports("avx512f") ? delta_blocks_avx512 : delta_blocks_sse2;
}

static void choose_delta_blocks(void)
{
	delta_blocks = fastest_delta_blocks(0);
}

void recorder_launch_delta_use_sse2(int sse2)
{
	pthread_once(&delta_chosen, choose_delta_blocks);
	delta_blocks = fastest_delta_blocks(sse2);
}

/* recorder.h: a bit per word, then the words whose bit is set. The stack is read in
 * place, as the kernel's copy would: not through the sanitizers' checks (the frames
 * above hold their red zones and variables out of scope), and not with memcpy() (a
 * sanitizer's runtime checks that too). */
__attribute__((no_sanitize("address", "thread"))) size_t
recorder_launch_stack_delta(unsigned char *out, size_t room, const uint64_t *now, uint64_t *last,
			    size_t words)
{
	pthread_once(&delta_chosen, choose_delta_blocks);
	struct launch_stack_delta *d = (struct launch_stack_delta *)out;
	size_t map_bytes = ((words + 7) / 8 + 7) & ~(size_t)7;
	if (sizeof(*d) + map_bytes + 8 * 8 > room)
		return 0;
	unsigned char *map = out + sizeof(*d);
	uint64_t *first = (uint64_t *)(map + map_bytes), *to = first;
	const uint64_t *limit = (const uint64_t *)(out + room) - 8; /* a block's words fit */
	size_t w = delta_blocks(map, &to, limit, now, last, words);
	if (!w && words >= 8)
		return 0;
	if (w < words) { /* the last words, fewer than eight */
		unsigned m = 0;
		for (size_t j = 0; w + j < words; j++) {
			uint64_t v = now[w + j];
			if (v != last[w + j]) {
				if (to > limit)
					return 0;
				m |= 1u << j;
				*to++ = last[w + j] = v;
			}
		}
		map[w / 8] = (unsigned char)m;
	}
	for (size_t k = (words + 7) / 8; k < map_bytes; k++)
		map[k] = 0;
	d->words = (uint32_t)words;
	d->changed = (uint32_t)(to - first);
	size_t size = sizeof(*d) + map_bytes + (size_t)(to - first) * 8;
	return size < words * 8 ? size : 0;
}

/* recorder.h: the registers that changed, then the stack's difference. */
size_t recorder_launch_delta(unsigned char *out, size_t room, const uint64_t *registers,
			     uint64_t *last_registers_of, uint32_t *changed, const uint64_t *now,
			     uint64_t *last, size_t words)
{
	uint64_t *to = (uint64_t *)out;
	uint32_t bits = 0;
	if (room < sizeof(uint64_t) * SAMPLE_REGISTERS)
		return 0;
	for (int i = 0; i < SAMPLE_REGISTERS; i++)
		if (registers[i] != last_registers_of[i]) {
			bits |= 1u << i;
			*to++ = last_registers_of[i] = registers[i];
		}
	size_t head = (size_t)((unsigned char *)to - out);
	size_t stack = recorder_launch_stack_delta(out + head, room - head, now, last, words);
	*changed = bits;
	return stack ? head + stack : 0;
}
#endif

/* Where the process's first thread entered _start: the outermost frame of the main
 * thread (glibc's, exported by its dynamic loader). */
extern void *__libc_stack_end;

/* The bytes of the calling thread's stack from sp up that its frames use: to the top of
 * its stack, or, on the main thread, to _start's frame (not the environment and the
 * arguments above it); 0 when sp is not in the thread's stack (a coroutine's, a signal
 * handler's alternate stack: nothing is copied from memory that may end sooner). */
static size_t stack_bytes(struct launch_thread *t, uintptr_t sp)
{
	if (!t->stack_top) {
		pthread_attr_t attr;
		void *low;
		size_t size;
		t->stack_top = 1;
		if (pthread_getattr_np(pthread_self(), &attr) == 0) {
			if (pthread_attr_getstack(&attr, &low, &size) == 0) {
				t->stack_low = (uintptr_t)low;
				t->stack_top = (uintptr_t)low + size;
			}
			pthread_attr_destroy(&attr);
		}
		uintptr_t start = (uintptr_t)__libc_stack_end + 64; /* _start's own words */
		if (__libc_stack_end && t->stack_top > 1 && start > t->stack_low &&
		    start < t->stack_top)
			t->stack_top = start; /* the main thread's stack */
	}
	return t->stack_top > 1 && sp >= t->stack_low && sp < t->stack_top ? t->stack_top - sp
									      : 0;
}

__attribute__((noinline)) void recorder_launch_stack(uint32_t domain, uint32_t function_id,
						     uint64_t correlation_id, uint64_t time_ns)
{
#if defined(__x86_64__)
	/* one size for a thread's copies, launches' and allocations' alike (each is a
	 * difference from the thread's last) */
	int launches = recorder_launch_stacks(), allocations = recorder_allocation_stacks();
	size_t most = (size_t)(launches > allocations ? launches : allocations);
	if (!most || !recorder_ready())
		return;
	pthread_once(&key_once, make_key);
	struct launch_thread *t = here;
	if (!t) { /* the state, the record's buffer and the last stack, in one */
		t = calloc(1, sizeof(*t) + sizeof(struct launch_buffer) + 2 * most);
		if (!t)
			return;
		t->buffer = (struct launch_buffer *)(t + 1);
		t->last_stack = (uint64_t *)(t->buffer->stack + most);
		here = t;
		pthread_setspecific(here_key, t);
		sampler_track_modules();
	}
	struct launch_buffer *buffer = t->buffer;
	struct record_sample *s = &buffer->record.sample;
	uint64_t *r = s->registers, scratch;
	/* DWARF's x86-64 order: rax 0, rdx 1, rcx 2, rbx 3, rsi 4, rdi 5, rbp 6, rsp 7,
	 * r8-r15 8-15, rip 16 */
	__asm__ volatile("movq %%rax, 0(%0)\n\t"
			 "movq %%rdx, 8(%0)\n\t"
			 "movq %%rcx, 16(%0)\n\t"
			 "movq %%rbx, 24(%0)\n\t"
			 "movq %%rsi, 32(%0)\n\t"
			 "movq %%rdi, 40(%0)\n\t"
			 "movq %%rbp, 48(%0)\n\t"
			 "movq %%rsp, 56(%0)\n\t"
			 "movq %%r8, 64(%0)\n\t"
			 "movq %%r9, 72(%0)\n\t"
			 "movq %%r10, 80(%0)\n\t"
			 "movq %%r11, 88(%0)\n\t"
			 "movq %%r12, 96(%0)\n\t"
			 "movq %%r13, 104(%0)\n\t"
			 "movq %%r14, 112(%0)\n\t"
			 "movq %%r15, 120(%0)\n\t"
			 "leaq 1f(%%rip), %1\n\t"
			 "movq %1, 128(%0)\n"
			 "1:"
			 : "+r"(r), "=&r"(scratch)
			 :
			 : "memory");
	uintptr_t sp = (uintptr_t)r[7];
	size_t bytes = stack_bytes(t, sp);
	int full = bytes >= most; /* cut here: the stack goes on above */
	if (full)
		bytes = most;
	uint16_t number = (uint16_t)(t->last_number + 1); /* 0 after 65535 stays free: none */
	if (!number)
		number = 1;
	/* a difference is written where the stack's bytes go otherwise */
	struct record_launch_delta *compact = (struct record_launch_delta *)buffer->stack;
	size_t written = 0;
	if (bytes % 8 == 0) {
		if (t->last_number && sp == t->last_sp && bytes == t->last_bytes &&
		    most > sizeof(*compact))
			written = recorder_launch_delta((unsigned char *)(compact + 1),
							most - sizeof(*compact), r, t->last_registers,
							&compact->registers, (const uint64_t *)sp,
							t->last_stack, bytes / 8);
		if (!written) { /* whole, and the last from now on */
			copy_stack(buffer->stack, (const void *)sp, bytes);
			memcpy(t->last_stack, buffer->stack, bytes);
			memcpy(t->last_registers, r, sizeof(t->last_registers));
		}
		t->last_sp = sp;
		t->last_bytes = bytes;
	} else {
		copy_stack(buffer->stack, (const void *)sp, bytes);
		number = 0; /* no difference from it can be given */
	}
	uint32_t tid = recorder_thread_id(), flags = SAMPLE_LAUNCH | (full ? SAMPLE_STACK_FULL : 0);
	if (!time_ns)
		time_ns = clock_now_ns();
	const struct record_header *record;
	if (written) {
		size_t size = sizeof(*compact) + written; /* a multiple of 8 */
		compact->launch = (struct record_launch){
			.header = { (uint32_t)size, RECORD_LAUNCH_DELTA, number },
			.tid = tid, .domain = domain, .function_id = function_id,
			.correlation_id = correlation_id, .time_ns = time_ns,
		};
		compact->sample_flags = flags;
		record = &compact->launch.header;
	} else {
		size_t padded = (bytes + 7) & ~(size_t)7;
		memset(buffer->stack + bytes, 0, padded - bytes);
		s->header = (struct record_header){ (uint32_t)(sizeof(*s) + padded), RECORD_SAMPLE, 0 };
		s->tid = tid;
		s->stack_size = (uint32_t)bytes;
		s->time_ns = time_ns;
		s->flags = flags;
		s->syscall = -1;
		struct record_launch_stack *l = &buffer->record;
		l->header = (struct record_header){ (uint32_t)(sizeof(*l) + padded),
						    RECORD_LAUNCH_STACK, number };
		l->domain = domain;
		l->function_id = function_id;
		l->correlation_id = correlation_id;
		record = &l->header;
	}
	/* a thread that launches faster than the writer drains writes its buffer out itself,
	 * or waits for room, rather than lose its stacks (a profile of device time by call
	 * path that lacks some launches is wrong, not just thinner); after WAIT_LIMIT_NS it
	 * is counted as dropped */
	uint64_t waited_since = 0;
	int rc, wrote = 0;
	while ((rc = recorder_try_emit(record)) == -1) {
		if (!wrote && recorder_write_own_buffer() == 0) {
			wrote = 1; /* once: a record the empty buffer cannot hold waits as before */
			continue;
		}
		uint64_t now = clock_now_ns();
		if (!waited_since)
			waited_since = now;
		if (atomic_load_explicit(&writer_stalled, memory_order_relaxed) ||
		    now - waited_since > WAIT_LIMIT_NS) {
			atomic_store(&writer_stalled, 1);
			recorder_emit(record); /* counted as a loss */
			break;
		}
		recorder_wake();
		struct timespec pause = { 0, 20000 };
		nanosleep(&pause, NULL);
	}
	/* a stack lost leaves the next one nothing to differ from */
	t->last_number = rc == 0 ? number : 0;
	python_record_thread(tid, time_ns); /* where it runs Python, its functions */
#else
	(void)domain, (void)function_id, (void)correlation_id, (void)time_ns;
#endif
}
