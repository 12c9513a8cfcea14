/* Python functions in the call-stack samples (see python.h): the frames read by
 * core/python-read.c in this process, emitted as records. */
#include "runtime/python.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/python-read.h"
#include "runtime/recorder.h"

static uint32_t intern(void *arg, const char *text)
{
	return recorder_intern(text);
}

static void code(void *arg, uint64_t start, uint64_t end, uint32_t function_id,
		 uint32_t file_id)
{
	(void)arg;
	struct record_python_code c = {
		.header = { sizeof(c), RECORD_PYTHON_CODE, 0 },
		.function_id = function_id, .file_id = file_id,
		.start = start, .end = end, .time_ns = clock_now_ns(),
	};
	recorder_emit(&c);
}

static struct python_reader reader = { .intern = intern, .code = code };

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
	if (reader.layout) {
		reader.pid = getpid(); /* a child made by fork() reads its own memory */
		return 1;
	}
	const unsigned *version = dlsym(RTLD_DEFAULT, "Py_Version");
	void *state = dlsym(RTLD_DEFAULT, "_PyRuntime");
	if (!version || !state)
		return 0;
	unsigned release = *version >> 16; /* PY_VERSION_HEX: 0xMMmmPPLS */
	const struct python_layout *layout = python_layout_of(release);
	if (layout) {
		reader.pid = getpid();
		reader.runtime = (uintptr_t)state;
		reader.code_type = (uintptr_t)dlsym(RTLD_DEFAULT, "PyCode_Type");
		reader.unicode_type = (uintptr_t)dlsym(RTLD_DEFAULT, "PyUnicode_Type");
		if (!reader.code_type || !reader.unicode_type)
			return -1;
		if (!python_objects_readable(&reader,
					     (uintptr_t)dlsym(RTLD_DEFAULT, "PyType_Type"))) {
			recorder_report("Python %u.%u: frames not read: a free-threaded build, whose "
					"objects are not laid out as gpuprof reads them; its samples "
					"name the interpreter's functions only", release >> 8,
					release & 0xff);
			return -1;
		}
		reader.layout = layout;
		if (!python_layout_confirmed(&reader)) {
			reader.layout = NULL;
			recorder_report("Python %u.%u: frames not read: its own description of its "
					"layout (_Py_DebugOffsets) is not the one gpuprof reads; its "
					"samples name the interpreter's functions only", release >> 8,
					release & 0xff);
			return -1;
		}
		return 1;
	}
	recorder_report("Python %u.%u: frames not read: gpuprof reads CPython 3.11 to 3.13's; "
			"its samples name the interpreter's functions only", release >> 8,
			release & 0xff);
	return -1;
}

static union {
	struct record_python_stack stack;
	unsigned char bytes[sizeof(struct record_python_stack) +
			    PYTHON_STACK_MAX * sizeof(struct python_frame)];
} pending;

/* One thread's frames, as the pending record; -1 when it has none. */
static int read_thread(uint64_t thread, uint32_t *tid)
{
	*tid = python_thread_id(&reader, thread);
	struct python_frame *frames = (void *)(pending.bytes + sizeof(pending.stack));
	int count = python_thread_frames(&reader, thread, frames);
	if (count <= 0)
		return -1;
	pending.stack.count = (uint32_t)count;
	return 0;
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

static void sample_thread(struct python_reader *r, uint64_t thread, void *arg)
{
	uint32_t tid;
	uint64_t read_at = clock_now_ns(); /* the frames are of now, not of the tick */
	if (read_thread(thread, &tid) == 0 && tid)
		emit_pending(tid, read_at, *(const uint64_t *)arg);
}

uint32_t python_sample(uint64_t period_ns)
{
	uint32_t holder = 0;
	pthread_mutex_lock(&lock);
	if (reader.layout) {
		uint64_t thread = python_gil_holder(&reader);
		holder = thread ? python_thread_id(&reader, thread) : 0;
		python_each_thread(&reader, sample_thread, &period_ns);
	}
	pthread_mutex_unlock(&lock);
	return holder;
}

struct one_thread {
	uint32_t tid;
	uint64_t time_ns;
	int done;
};

static void record_if_it(struct python_reader *r, uint64_t thread, void *arg)
{
	struct one_thread *o = arg;
	uint32_t read_tid;
	if (o->done || python_thread_id(r, thread) != o->tid)
		return;
	o->done = 1;
	if (read_thread(thread, &read_tid) == 0)
		emit_pending(o->tid, o->time_ns, PYTHON_LAUNCH_PERIOD);
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
	struct one_thread o = { tid, time_ns, 0 };
	if (atomic_load(&attached) == 1)
		python_each_thread(&reader, record_if_it, &o);
	pthread_mutex_unlock(&lock);
}
