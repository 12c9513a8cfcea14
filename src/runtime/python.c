/* Python functions in the call-stack samples (see python.h). */
#include "runtime/python.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "core/clock.h"
#include "runtime/python-layouts.h"
#include "runtime/recorder.h"

static const struct python_layout *layout;
static uint64_t runtime, code_type, unicode_type;
static pid_t self;

/* Reads n bytes of this process at address: 0, or -1 where they are not mapped (the
 * interpreter frees what the sampler is reading: never a fault). */
static int peek(uint64_t address, void *out, size_t n)
{
	struct iovec local = { out, n }, remote = { (void *)(uintptr_t)address, n };
	return address && process_vm_readv(self, &local, 1, &remote, 1, 0) == (ssize_t)n ? 0 : -1;
}

static uint64_t peek_pointer(uint64_t address)
{
	uint64_t value = 0;
	return peek(address, &value, sizeof(value)) ? 0 : value;
}

/* The bytes read at once of a code object, a thread state and a frame: each layout's
 * fields must lie in them (python_attach checks). */
#define CODE_HEAD 144
#define THREAD_HEAD 168
#define FRAME_HEAD 72

static int layout_fits(const struct python_layout *l)
{
	return l->code_filename + 8 <= CODE_HEAD && l->code_qualname + 8 <= CODE_HEAD &&
	       l->code_firstlineno + 4 <= CODE_HEAD && l->code_flags + 4 <= CODE_HEAD &&
	       l->thread_next + 8 <= THREAD_HEAD &&
	       l->thread_cframe + 8 <= THREAD_HEAD && l->thread_native_id + 8 <= THREAD_HEAD &&
	       l->frame_code + 8 <= FRAME_HEAD && l->frame_previous + 8 <= FRAME_HEAD &&
	       l->frame_entry + 1 <= FRAME_HEAD && l->frame_instruction + 8 <= FRAME_HEAD &&
	       l->code_linetable + 8 <= CODE_HEAD;
}

/* Held while the interpreter's structures are read or the layout found: by the ticker,
 * and by the threads that record their own frames at a launch. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static int attach_locked(void);

int python_attach(void)
{
	pthread_mutex_lock(&lock);
	int rc = attach_locked();
	pthread_mutex_unlock(&lock);
	return rc;
}

static int attach_locked(void)
{
	if (layout) {
		self = getpid(); /* a child made by fork() reads its own memory */
		return 1;
	}
	const unsigned *version = dlsym(RTLD_DEFAULT, "Py_Version");
	void *state = dlsym(RTLD_DEFAULT, "_PyRuntime");
	if (!version || !state)
		return 0;
	unsigned release = *version >> 16; /* PY_VERSION_HEX: 0xMMmmPPLS */
	for (size_t i = 0; i < sizeof(python_layouts) / sizeof(python_layouts[0]); i++)
		if (python_layouts[i].version == release && layout_fits(&python_layouts[i])) {
			self = getpid();
			runtime = (uintptr_t)state;
			code_type = (uintptr_t)dlsym(RTLD_DEFAULT, "PyCode_Type");
			unicode_type = (uintptr_t)dlsym(RTLD_DEFAULT, "PyUnicode_Type");
			if (!code_type || !unicode_type)
				return -1;
			layout = &python_layouts[i];
			return 1;
		}
	if (release < 0x030b) /* 3.12 and later name their functions in the perf map */
		recorder_report("Python %u.%u: its functions are not named in the samples, only the "
				"interpreter's (3.11 and later are)", release >> 8, release & 0xff);
	return -1;
}

/* A str object as UTF-8 into out (cut to fit); 0, or -1 when it is no str. */
static int read_text(uint64_t object, char *out, size_t size)
{
	unsigned char head[48];
	if (peek(object, head, sizeof(head)))
		return -1;
	uint64_t type, length;
	uint32_t state;
	memcpy(&type, head + 8, 8);
	memcpy(&length, head + 16, 8);
	memcpy(&state, head + 32, 4);
	unsigned kind = state >> 2 & 7, compact = state >> 5 & 1, ascii = state >> 6 & 1;
	if (type != unicode_type || !compact || (kind != 1 && kind != 2 && kind != 4))
		return -1;
	unsigned char data[512];
	size_t n = length * kind < sizeof(data) ? length * kind : sizeof(data) / kind * kind;
	if (peek(object + (ascii ? layout->ascii_data : layout->compact_data), data, n))
		return -1;
	size_t used = 0;
	for (size_t i = 0; i < n; i += kind) {
		uint32_t c = kind == 1 ? data[i] : kind == 2 ? (uint32_t)(data[i] | data[i + 1] << 8)
				  : (uint32_t)(data[i] | data[i + 1] << 8 | data[i + 2] << 16 |
					       (uint32_t)data[i + 3] << 24);
		unsigned char bytes[4];
		size_t w;
		if (c < 0x80) {
			bytes[0] = (unsigned char)c, w = 1;
		} else if (c < 0x800) {
			bytes[0] = (unsigned char)(0xc0 | c >> 6), w = 2;
		} else if (c < 0x10000) {
			bytes[0] = (unsigned char)(0xe0 | c >> 12), w = 3;
		} else {
			bytes[0] = (unsigned char)(0xf0 | (c >> 18 & 7)), w = 4;
		}
		for (size_t k = 1; k < w; k++)
			bytes[k] = (unsigned char)(0x80 | (c >> (6 * (w - 1 - k)) & 0x3f));
		if (used + w >= size)
			break;
		memcpy(out + used, bytes, w);
		used += w;
	}
	out[used] = '\0';
	return 0;
}

/* Code objects already named: most ticks see the same functions. A code object freed
 * and another made at its address is told apart by its name, file and line. */
struct named_code {
	uint64_t code, qualname, filename;
	uint32_t line, function_id, file_id;
};

#define CODE_SLOTS 4096
static struct named_code named[CODE_SLOTS];

/* co_flags of a generator, a coroutine, an async generator: code whose frame is never a
 * thread's outermost while it runs (it has the caller that resumed it) */
#define RESUMABLE_CODE (0x20 | 0x80 | 0x200)

static int name_code(uint64_t code, struct python_frame *out, int *resumable,
		     uint64_t *linetable)
{
	unsigned char head[CODE_HEAD];
	uint64_t type, filename, qualname;
	size_t need = layout->code_qualname + 8;
	if (layout->code_flags + 4 > need)
		need = layout->code_flags + 4;
	if (layout->code_firstlineno + 4 > need)
		need = layout->code_firstlineno + 4;
	if (layout->code_linetable + 8 > need)
		need = layout->code_linetable + 8;
	if (peek(code, head, need))
		return -1;
	memcpy(linetable, head + layout->code_linetable, 8);
	uint32_t flags;
	memcpy(&flags, head + layout->code_flags, 4);
	*resumable = (flags & RESUMABLE_CODE) != 0;
	memcpy(&type, head + 8, 8);
	if (type != code_type)
		return -1;
	uint32_t line;
	memcpy(&filename, head + layout->code_filename, 8);
	memcpy(&qualname, head + layout->code_qualname, 8);
	memcpy(&line, head + layout->code_firstlineno, 4);
	struct named_code *slot = &named[(code >> 4) % CODE_SLOTS];
	if (slot->code != code || slot->qualname != qualname || slot->filename != filename ||
	    slot->line != line) {
		char function[512], file[1024];
		if (read_text(qualname, function, sizeof(function)) ||
		    read_text(filename, file, sizeof(file)))
			return -1;
		*slot = (struct named_code){ code, qualname, filename, line,
					     recorder_intern(function), recorder_intern(file) };
	}
	out->function_id = slot->function_id;
	out->file_id = slot->file_id;
	out->line = line;
	out->flags = 0;
	return 0;
}

/* The bytes of a code object's location table read at most: a function of some
 * thousand lines (beyond, its first line stands for the line running) */
#define LINETABLE_MAX 8192

static unsigned scan_varint(const unsigned char *p, size_t *at, size_t n)
{
	unsigned value = 0, shift = 0, byte;
	do {
		byte = *at < n ? p[(*at)++] : 0;
		value |= (byte & 63) << shift;
		shift += 6;
	} while ((byte & 64) && shift < 32);
	return value;
}

/* The line running in a frame of code whose last instruction begun is at instruction
 * (an address), from the code's location table (CPython 3.11's format,
 * Objects/locations.md): entries of one to eight code units, each moving the line by a
 * delta. first_line when it cannot tell (an instruction with no line, a table too long
 * to read, the frame not yet begun). */
static uint32_t running_line(uint64_t code, uint64_t table, uint64_t instruction,
			     uint32_t first_line)
{
	uint64_t start = code + layout->code_instructions;
	if (instruction < start || !table)
		return first_line;
	uint64_t target = (instruction - start) / 2; /* in code units */
	/* the bytes object: its size at 16, its bytes from 32; most tables are short
	 * enough to come in one read with their header */
	static unsigned char object[32 + LINETABLE_MAX]; /* under lock, as every read */
	const size_t first_read = 32 + 224;
	uint64_t size = 0;
	int whole = peek(table, object, first_read) == 0;
	if (!whole && peek(table, object, 32))
		return first_line;
	memcpy(&size, object + 16, 8);
	if (size > LINETABLE_MAX ||
	    ((!whole || 32 + size > first_read) && peek(table + 32, object + 32, (size_t)size)))
		return first_line;
	const unsigned char *bytes = object + 32;
	int64_t line = first_line;
	uint64_t unit = 0;
	for (size_t at = 0; at < size;) {
		unsigned char head = bytes[at++];
		if (!(head & 0x80))
			return first_line; /* not an entry's first byte: a table being replaced */
		unsigned kind = head >> 3 & 15, length = (head & 7) + 1;
		int64_t delta = 0;
		if (kind == 13 || kind == 14) { /* no columns, long: a signed varint first */
			size_t from = at;
			unsigned v = scan_varint(bytes, &from, (size_t)size);
			delta = v & 1 ? -(int64_t)(v >> 1) : (int64_t)(v >> 1);
		} else if (kind >= 10 && kind <= 12) { /* one line: the delta in the kind */
			delta = kind - 10;
		}
		line += delta;
		if (target < unit + length)
			return kind == 15 || line <= 0 ? first_line : (uint32_t)line;
		unit += length;
		while (at < size && !(bytes[at] & 0x80)) /* the rest of the entry */
			at++;
	}
	return first_line;
}

static union {
	struct record_python_stack stack;
	unsigned char bytes[sizeof(struct record_python_stack) +
			    PYTHON_STACK_MAX * sizeof(struct python_frame)];
} pending;

static int read_frames(uint64_t frame, struct python_frame *frames);

/* Where thread's frames begin now: its C frame and that one's current frame. */
static int current_frame(uint64_t thread, uint64_t *cframe, uint64_t *frame)
{
	*cframe = peek_pointer(thread + layout->thread_cframe);
	*frame = *cframe ? peek_pointer(*cframe + layout->cframe_current) : 0;
	return *frame ? 0 : -1;
}

/* One thread's frames from its current one out, as a record; -1 when it has none. The
 * thread runs while they are read: its callers' frames stay while it runs, but a
 * generator that yielded is unlinked from its caller (its frame, then, has none): a read
 * that ends at a generator's frame is torn, and read again, a few times at most. */
static int read_thread(uint64_t thread, uint32_t *tid)
{
	unsigned char head[THREAD_HEAD];
	if (peek(thread, head, layout->thread_native_id + 8))
		return -1;
	uint64_t native;
	memcpy(&native, head + layout->thread_native_id, 8);
	*tid = (uint32_t)native;
	struct python_frame *frames = (void *)(pending.bytes + sizeof(pending.stack));
	for (int attempt = 0; attempt < 4; attempt++) {
		uint64_t cframe, first;
		if (current_frame(thread, &cframe, &first))
			return -1;
		int count = read_frames(first, frames);
		if (count > 0) {
			pending.stack.count = (uint32_t)count;
			return 0;
		}
		if (count == 0)
			return -1;
	}
	return -1;
}

/* The frames from frame out into frames; returns how many, -1 when the outermost read is
 * a generator's (torn). */
static int read_frames(uint64_t frame, struct python_frame *frames)
{
	uint32_t count = 0;
	int resumable = 0; /* the outermost frame read is a generator's */
	while (frame && count < PYTHON_STACK_MAX) {
		unsigned char f[FRAME_HEAD];
		if (peek(frame, f, FRAME_HEAD))
			break;
		uint64_t code, previous;
		resumable = 0;
		memcpy(&code, f + layout->frame_code, 8);
		memcpy(&previous, f + layout->frame_previous, 8);
		uint64_t linetable = 0;
		if (name_code(code, &frames[count], &resumable, &linetable) == 0) {
			uint64_t instruction;
			memcpy(&instruction, f + layout->frame_instruction, 8);
			frames[count].line = running_line(code, linetable, instruction,
							  frames[count].line);
			frames[count].flags = f[layout->frame_entry] ? PYTHON_FRAME_ENTRY : 0;
			count++;
		}
		frame = previous;
	}
	/* a generator's frame with no caller: read between its yield and its caller's
	 * return, a torn read */
	return resumable ? -1 : (int)count;
}

/* The frames read_thread() left in pending, as a record of thread tid at time_ns. */
static void emit_pending(uint32_t tid, uint64_t time_ns, uint64_t period_ns)
{
	struct record_python_stack *s = &pending.stack;
	s->tid = tid;
	s->time_ns = time_ns;
	s->period_ns = period_ns;
	s->header.type = RECORD_PYTHON_STACK;
	s->header.flags = 0;
	s->header.size = (uint32_t)RECORD_PADDED(sizeof(*s) + s->count * sizeof(struct python_frame));
	recorder_emit(&pending);
}

void python_sample(uint64_t period_ns)
{
	pthread_mutex_lock(&lock);
	if (!layout) {
		pthread_mutex_unlock(&lock);
		return;
	}
	uint64_t interpreter = peek_pointer(runtime + layout->runtime_interpreters);
	for (int i = 0; interpreter && i < 64; i++) {
		uint64_t thread = peek_pointer(interpreter + layout->interpreter_threads);
		for (int t = 0; thread && t < 4096; t++) {
			uint32_t tid;
			uint64_t read_at = clock_now_ns(); /* the frames are of now, not of the tick */
			if (read_thread(thread, &tid) == 0 && tid)
				emit_pending(tid, read_at, period_ns);
			thread = peek_pointer(thread + layout->thread_next);
		}
		interpreter = peek_pointer(interpreter + layout->interpreter_next);
	}
	pthread_mutex_unlock(&lock);
}

void python_record_thread(uint32_t tid, uint64_t time_ns)
{
	/* 0: no interpreter yet (looked for again a second later: a program without Python
	 * pays two symbol lookups a second, not two a launch), 1: one, -1: one we cannot read */
	static atomic_int attached;
	static _Atomic uint64_t look_again;
	int was = atomic_load_explicit(&attached, memory_order_acquire);
	if (was < 0 || (was == 0 && time_ns < atomic_load_explicit(&look_again,
								  memory_order_relaxed)))
		return;
	pthread_mutex_lock(&lock);
	if (!atomic_load(&attached)) {
		atomic_store(&attached, attach_locked());
		atomic_store(&look_again, time_ns + 1000000000u);
	}
	uint64_t interpreter = atomic_load(&attached) == 1
				       ? peek_pointer(runtime + layout->runtime_interpreters) : 0;
	for (int i = 0; interpreter && i < 64; i++) {
		uint64_t thread = peek_pointer(interpreter + layout->interpreter_threads);
		for (int t = 0; thread && t < 4096; t++) {
			uint64_t native = 0;
			if (peek(thread + layout->thread_native_id, &native, 8) == 0 &&
			    (uint32_t)native == tid) {
				uint32_t read_tid;
				if (read_thread(thread, &read_tid) == 0)
					emit_pending(tid, time_ns, PYTHON_LAUNCH_PERIOD);
				interpreter = 0;
				break;
			}
			thread = peek_pointer(thread + layout->thread_next);
		}
		interpreter = interpreter ? peek_pointer(interpreter + layout->interpreter_next) : 0;
	}
	pthread_mutex_unlock(&lock);
}
