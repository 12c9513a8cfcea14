/* libroctx64.so.4: the ROCTX API with ROCTX's signatures and return values, so that code
 * written for ROCm's marker library records its ranges under gpuprof unchanged. `gpuprof
 * trace` puts this library's directory first on LD_LIBRARY_PATH, which also serves
 * programs that dlopen("libroctx64.so") by name at run time. */
#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "bind.h"

#define API __attribute__((visibility("default")))

typedef uint64_t roctx_range_id_t;
typedef uint64_t roctx_thread_id_t;

API void roctxMarkA(const char *message)
{
	const struct marker_recorder *r = marker_recorder();
	if (r)
		r->mark(message, 0);
}

API int roctxRangePushA(const char *message)
{
	const struct marker_recorder *r = marker_recorder();
	return r ? r->push(message, 0) : marker_depth_push();
}

API int roctxRangePop(void)
{
	const struct marker_recorder *r = marker_recorder();
	return r ? r->pop() : marker_depth_pop();
}

API roctx_range_id_t roctxRangeStartA(const char *message)
{
	const struct marker_recorder *r = marker_recorder();
	return r ? r->start(message, 0) : marker_next_id();
}

API void roctxRangeStop(roctx_range_id_t id)
{
	const struct marker_recorder *r = marker_recorder();
	if (r)
		r->stop(id);
}

/* The thread argument is ignored, as ROCm's own tools do: collection is per process. */
API int roctxProfilerPause(roctx_thread_id_t tid)
{
	const struct marker_recorder *r = marker_recorder();
	if (r)
		r->pause();
	return 0;
}

API int roctxProfilerResume(roctx_thread_id_t tid)
{
	const struct marker_recorder *r = marker_recorder();
	if (r)
		r->resume();
	return 0;
}

API int roctxNameOsThread(const char *name)
{
	const struct marker_recorder *r = marker_recorder();
	if (r)
		r->name_thread(name);
	return 0;
}

API int roctxGetThreadId(roctx_thread_id_t *tid)
{
	*tid = (roctx_thread_id_t)syscall(SYS_gettid);
	return 0;
}
