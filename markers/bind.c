/* Finding the recorder (see bind.h). */
#include "bind.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

static struct marker_recorder recorder;
static const struct marker_recorder *_Atomic bound;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static _Atomic int resolved;

static void resolve(void)
{
	const char *path = getenv("GPUPROF_RECORDER");
	void *lib = path && *path ? dlopen(path, RTLD_NOW | RTLD_LOCAL) : NULL;
	if (lib) {
		recorder.push = (int (*)(const char *, uint32_t))dlsym(lib, "recorder_range_push");
		recorder.push_module = (int (*)(const char *, const char *, uint32_t))dlsym(
			lib, "recorder_range_push_module");
		recorder.pop = (int (*)(void))dlsym(lib, "recorder_range_pop");
		recorder.domain_pop = (int (*)(uint32_t))dlsym(lib, "recorder_domain_range_pop");
		recorder.start = (uint64_t (*)(const char *, uint32_t))dlsym(lib, "recorder_range_start");
		recorder.stop = (void (*)(uint64_t))dlsym(lib, "recorder_range_stop");
		recorder.mark = (void (*)(const char *, uint32_t))dlsym(lib, "recorder_mark");
		recorder.name_thread = (void (*)(const char *))dlsym(lib, "recorder_name_thread");
		recorder.pause = (void (*)(void))dlsym(lib, "recorder_pause");
		recorder.resume = (void (*)(void))dlsym(lib, "recorder_resume");
		recorder.intern = (uint32_t (*)(const char *))dlsym(lib, "recorder_intern");
		if (recorder.push && recorder.push_module && recorder.pop && recorder.domain_pop &&
		    recorder.start && recorder.stop &&
		    recorder.mark && recorder.name_thread && recorder.pause && recorder.resume &&
		    recorder.intern)
			atomic_store(&bound, &recorder);
	}
	atomic_store_explicit(&resolved, 1, memory_order_release);
}

const struct marker_recorder *marker_recorder(void)
{
	if (!atomic_load_explicit(&resolved, memory_order_acquire))
		pthread_once(&once, resolve);
	return atomic_load_explicit(&bound, memory_order_relaxed);
}

static __thread int depth __attribute__((tls_model("initial-exec")));
static _Atomic uint64_t next_id;

int marker_depth_push(void)
{
	return depth++;
}

int marker_depth_pop(void)
{
	return depth > 0 ? --depth : -1;
}

uint64_t marker_next_id(void)
{
	return atomic_fetch_add(&next_id, 1) + 1;
}
