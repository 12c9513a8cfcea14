/* Reading a running CPython's threads and frames (see python-read.h). */
#include "core/python-read.h"

#include <string.h>
#include <sys/uio.h>

int python_peek(const struct python_reader *r, uint64_t address, void *out, size_t n)
{
	struct iovec local = { out, n }, remote = { (void *)(uintptr_t)address, n };
	return address && process_vm_readv(r->pid, &local, 1, &remote, 1, 0) == (ssize_t)n ? 0
											 : -1;
}

uint64_t python_peek_pointer(const struct python_reader *r, uint64_t address)
{
	uint64_t value = 0;
	return python_peek(r, address, &value, sizeof(value)) ? 0 : value;
}

int python_layout_confirmed(const struct python_reader *r)
{
	if (r->layout->version < 0x030d)
		return 1;
	unsigned char debug[352];
	if (python_peek(r, r->runtime, debug, sizeof(debug)) ||
	    memcmp(debug, PYTHON_DEBUG_COOKIE, 8))
		return 0;
	uint64_t value;
	memcpy(&value, debug + PYTHON_DEBUG_FREE_THREADED, 8);
	if (value)
		return 0;
	for (size_t i = 0; i < sizeof(python_debug_offsets_313) /
			       sizeof(python_debug_offsets_313[0]); i++) {
		unsigned expected;
		memcpy(&value, debug + python_debug_offsets_313[i].at, 8);
		memcpy(&expected, (const char *)r->layout + python_debug_offsets_313[i].field,
		       sizeof(expected));
		if (value != expected)
			return 0;
	}
	return 1;
}

int python_objects_readable(const struct python_reader *r, uint64_t type_type)
{
	return type_type && python_peek_pointer(r, r->code_type + 8) == type_type;
}

/* The bytes read at once of a code object, a thread state and a frame: each layout's
 * fields must lie in them (python_attach checks). */
#define CODE_HEAD 144
#define THREAD_HEAD 168
#define FRAME_HEAD PYTHON_FRAME_HEAD

static int layout_fits(const struct python_layout *l)
{
	return l->code_filename + 8 <= CODE_HEAD && l->code_qualname + 8 <= CODE_HEAD &&
	       l->code_firstlineno + 4 <= CODE_HEAD && l->code_flags + 4 <= CODE_HEAD &&
	       l->thread_next + 8 <= THREAD_HEAD &&
	       l->thread_cframe + 8 <= THREAD_HEAD && l->thread_native_id + 8 <= THREAD_HEAD &&
	       l->frame_code + 8 <= FRAME_HEAD && l->frame_previous + 8 <= FRAME_HEAD &&
	       l->frame_entry + 1 <= FRAME_HEAD && l->frame_instruction + 8 <= FRAME_HEAD &&
	       l->frame_owner + 1 <= FRAME_HEAD && l->code_linetable + 8 <= CODE_HEAD;
}

/* A str object as UTF-8 into out (cut to fit); 0, or -1 when it is no str. */
static int read_text(struct python_reader *r, uint64_t object, char *out, size_t size)
{
	unsigned char head[48];
	if (python_peek(r, object, head, sizeof(head)))
		return -1;
	uint64_t type, length;
	uint32_t state;
	memcpy(&type, head + 8, 8);
	memcpy(&length, head + 16, 8);
	memcpy(&state, head + 32, 4);
	unsigned kind = state >> 2 & 7, compact = state >> 5 & 1, ascii = state >> 6 & 1;
	if (type != r->unicode_type || !compact || (kind != 1 && kind != 2 && kind != 4))
		return -1;
	unsigned char data[512];
	size_t n = length * kind < sizeof(data) ? length * kind : sizeof(data) / kind * kind;
	if (python_peek(r, object + (ascii ? r->layout->ascii_data : r->layout->compact_data), data,
			n))
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

/* Code objects already named (r->named): most reads see the same functions. A code
 * object freed and another made at its address is told apart by its name, file and
 * line. */

/* co_flags of a generator, a coroutine, an async generator: code whose frame is never a
 * thread's outermost while it runs (it has the caller that resumed it) */
#define RESUMABLE_CODE (0x20 | 0x80 | 0x200)

static int name_code(struct python_reader *r, uint64_t code, struct python_frame *out,
		     int *resumable, uint64_t *linetable)
{
	unsigned char head[CODE_HEAD];
	uint64_t type, filename, qualname;
	const struct python_layout *layout = r->layout;
	size_t need = layout->code_qualname + 8;
	if (layout->code_flags + 4 > need)
		need = layout->code_flags + 4;
	if (layout->code_firstlineno + 4 > need)
		need = layout->code_firstlineno + 4;
	if (layout->code_linetable + 8 > need)
		need = layout->code_linetable + 8;
	if (python_peek(r, code, head, need))
		return -1;
	memcpy(linetable, head + layout->code_linetable, 8);
	uint32_t flags;
	memcpy(&flags, head + layout->code_flags, 4);
	*resumable = (flags & RESUMABLE_CODE) != 0;
	memcpy(&type, head + 8, 8);
	if (type != r->code_type)
		return -1;
	uint32_t line;
	memcpy(&filename, head + layout->code_filename, 8);
	memcpy(&qualname, head + layout->code_qualname, 8);
	memcpy(&line, head + layout->code_firstlineno, 4);
	__typeof__(&r->named[0]) slot = &r->named[(code >> 4) % PYTHON_CODE_SLOTS];
	if (slot->code != code || slot->qualname != qualname || slot->filename != filename ||
	    slot->line != line) {
		char function[512], file[1024];
		if (read_text(r, qualname, function, sizeof(function)) ||
		    read_text(r, filename, file, sizeof(file)))
			return -1;
		slot->code = code;
		slot->qualname = qualname;
		slot->filename = filename;
		slot->line = line;
		slot->function_id = r->intern(r->arg, function);
		slot->file_id = r->intern(r->arg, file);
		int64_t units; /* PyVarObject's ob_size: the bytecode's code units */
		if (r->code && python_peek(r, code + 16, &units, 8) == 0 && units >= 0 &&
		    units < (1 << 24))
			r->code(r->arg, code, code + layout->code_instructions + 2 * (uint64_t)units,
				slot->function_id, slot->file_id);
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
static uint32_t running_line(struct python_reader *r, uint64_t code, uint64_t table,
			     uint64_t instruction, uint32_t first_line)
{
	uint64_t start = code + r->layout->code_instructions;
	if (instruction < start || !table)
		return first_line;
	uint64_t target = (instruction - start) / 2; /* in code units */
	/* the bytes object: its size at 16, its bytes from 32; most tables are short
	 * enough to come in one read with their header */
	unsigned char *object = r->linetable; /* 32 + LINETABLE_MAX bytes */
	const size_t first_read = 32 + 224;
	uint64_t size = 0;
	int whole = python_peek(r, table, object, first_read) == 0;
	if (!whole && python_peek(r, table, object, 32))
		return first_line;
	memcpy(&size, object + 16, 8);
	if (size > LINETABLE_MAX ||
	    ((!whole || 32 + size > first_read) &&
	     python_peek(r, table + 32, object + 32, (size_t)size)))
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


/* Where thread's frames begin now: its C frame and that one's current frame (3.13: the
 * thread's own current frame). */
static int current_frame(struct python_reader *r, uint64_t thread, uint64_t *frame)
{
	uint64_t cframe = python_peek_pointer(r, thread + r->layout->thread_cframe);
	if (r->layout->thread_frame_direct)
		*frame = cframe;
	else
		*frame = cframe ? python_peek_pointer(r, cframe + r->layout->cframe_current) : 0;
	return *frame ? 0 : -1;
}

/* A frame's head: from the bytes last read when it lies in them (a function's callers'
 * frames lie below its own in a chunk of the interpreter's stack, most in the same
 * page), else read with the part of its page below it, at once. */
static const unsigned char *frame_head(struct python_reader *r, uint64_t frame,
				       uint64_t *from, uint64_t *to)
{
	if (frame < *from || frame + FRAME_HEAD > *to) {
		uint64_t page = frame & ~(uint64_t)4095;
		if (python_peek(r, page, r->page, (size_t)(frame - page) + FRAME_HEAD)) {
			if (python_peek(r, frame, r->page, FRAME_HEAD))
				return NULL;
			page = frame;
		}
		*from = page;
		*to = frame + FRAME_HEAD;
	}
	return r->page + (frame - *from);
}

/* The frames from frame out, as they are (their code objects, last instructions and
 * entries into the evaluation loop), read as fast as can be: the thread runs meanwhile;
 * returns how many. */
static int walk_frames(struct python_reader *r, uint64_t frame, struct python_raw_frame *raw)
{
	const struct python_layout *layout = r->layout;
	uint64_t from = 1, to = 0; /* the bytes in r->page: none */
	int count = 0;
	for (int steps = 0; frame && count < PYTHON_STACK_MAX && steps < 2 * PYTHON_STACK_MAX;
	     steps++) {
		const unsigned char *f = frame_head(r, frame, &from, &to);
		if (!f)
			break;
		memcpy(&frame, f + layout->frame_previous, 8);
		if (layout->owner_cstack && f[layout->frame_owner] == layout->owner_cstack) {
			/* 3.12's shim of an evaluation loop's entry: the frame before it (an
			 * inner one) is the first that loop ran */
			if (count)
				raw[count - 1].entry = 1;
			continue;
		}
		memcpy(&raw[count].code, f + layout->frame_code, 8);
		memcpy(&raw[count].instruction, f + layout->frame_instruction, 8);
		raw[count].entry = !layout->owner_cstack && f[layout->frame_entry] != 0;
		count++;
	}
	return count;
}

/* The frames read, named into frames; -1 when the read is torn: its outermost frame a
 * generator's (read between its yield and its caller's return), or a frame whose code is
 * not a code object (a frame of the interpreter's stack being made or reused while it was
 * read: left out, its callees would join its callers as if they called them). */
static int name_frames(struct python_reader *r, const struct python_raw_frame *raw, int count,
		       struct python_frame *frames)
{
	int resumable = 0; /* the outermost frame's code is a generator's */
	for (int i = 0; i < count; i++) {
		uint64_t linetable = 0;
		if (name_code(r, raw[i].code, &frames[i], &resumable, &linetable))
			return -1;
		frames[i].line = running_line(r, raw[i].code, linetable, raw[i].instruction,
					      frames[i].line);
		frames[i].flags = raw[i].entry ? PYTHON_FRAME_ENTRY : 0;
	}
	return resumable ? -1 : count;
}

/* The thread runs while its frames are read: its callers' frames stay while it runs, but
 * a generator that yielded is unlinked from its caller (its frame, then, has none): a
 * read that ends at a generator's frame is torn, and read again, a few times at most.
 * The frames are read as they are first, twice, and named once the two reads agree: the
 * names' reads (code objects, location tables) take most of the time, and a read that
 * takes long sees the thread call and return meanwhile (a generator resumed and yielding
 * every few hundred nanoseconds). */
int python_thread_frames(struct python_reader *r, uint64_t thread, struct python_frame *frames)
{
	for (int attempt = 0; attempt < 4; attempt++) {
		uint64_t first, after;
		if (current_frame(r, thread, &first))
			return -1;
		int count = walk_frames(r, first, r->raw[0]);
		if (!count)
			return -1;
		if (current_frame(r, thread, &after) || after != first)
			continue; /* it called or returned meanwhile: the read may mix two stacks */
		/* and read again: a frame its callers' place took meanwhile (a function that
		 * returned, another called at the same depth) has other code in the second read
		 * (its last instruction may differ: the thread ran) */
		if (walk_frames(r, first, r->raw[1]) != count)
			continue;
		int same = 1;
		for (int i = 0; i < count && same; i++)
			same = r->raw[0][i].code == r->raw[1][i].code &&
			       r->raw[0][i].entry == r->raw[1][i].entry;
		if (same && name_frames(r, r->raw[0], count, frames) > 0)
			return count;
	}
	return -1;
}

uint64_t python_gil_holder(struct python_reader *r)
{
	/* 3.11: in the runtime; from 3.12, the main interpreter's (the first made, the last
	 * of the list), whose GIL the others share unless made with one of their own */
	uint64_t gil = r->runtime;
	if (r->layout->interpreter_gil) {
		uint64_t interpreter = python_peek_pointer(r, r->runtime +
							      r->layout->runtime_interpreters);
		for (int i = 0; interpreter && i < 64; i++) {
			uint64_t next = python_peek_pointer(r, interpreter +
							    r->layout->interpreter_next);
			if (!next)
				break;
			interpreter = next;
		}
		gil = interpreter ? python_peek_pointer(r, interpreter + r->layout->interpreter_gil)
				  : 0;
		if (!gil)
			return 0;
	}
	int32_t locked = 0;
	if (python_peek(r, gil + r->layout->runtime_gil_locked, &locked, sizeof(locked)) ||
	    !locked)
		return 0;
	return python_peek_pointer(r, gil + r->layout->runtime_gil_holder);
}

uint32_t python_thread_id(struct python_reader *r, uint64_t thread)
{
	uint64_t native = 0;
	if (python_peek(r, thread + r->layout->thread_native_id, &native, 8))
		return 0;
	return (uint32_t)native;
}

void python_each_thread(struct python_reader *r, void (*each)(struct python_reader *r,
							    uint64_t thread, void *arg),
			void *arg)
{
	const struct python_layout *layout = r->layout;
	uint64_t interpreter = python_peek_pointer(r, r->runtime + layout->runtime_interpreters);
	for (int i = 0; interpreter && i < 64; i++) {
		uint64_t thread = python_peek_pointer(r, interpreter + layout->interpreter_threads);
		for (int t = 0; thread && t < 4096; t++) {
			uint64_t next = python_peek_pointer(r, thread + layout->thread_next);
			each(r, thread, arg);
			thread = next;
		}
		interpreter = python_peek_pointer(r, interpreter + layout->interpreter_next);
	}
}

const struct python_layout *python_layout_of(unsigned release)
{
	for (size_t i = 0; i < sizeof(python_layouts) / sizeof(python_layouts[0]); i++)
		if (python_layouts[i].version == release && layout_fits(&python_layouts[i]))
			return &python_layouts[i];
	return NULL;
}
