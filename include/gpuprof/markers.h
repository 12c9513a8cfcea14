/* gpuprof markers: name what your program is doing so that the profile shows it.
 *
 * Ranges pushed on a thread nest and are popped in reverse order; ranges started return
 * an id that any thread may stop; marks are instants. Under `gpuprof trace
 * --marker-trace` they appear in marker_api_trace.csv, the database and the timelines,
 * and kernels launched inside a range are attributed to it (--kernel-rename names them
 * after it). Without a profiler every call returns at once and records nothing.
 *
 * Link with -lgpuprof-markers (pkg-config gpuprof-markers). Every function is
 * thread-safe and takes a NUL-terminated UTF-8 text, which it copies. */
#ifndef GPUPROF_MARKERS_H
#define GPUPROF_MARKERS_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Opens a range on this thread; returns how many of its domain were open before it
 * (0: outermost). */
int gpuprof_range_push(const char *message);
/* As gpuprof_range_push(), in a named domain (the profile keeps the domain with the
 * range: "torch" for gpuprof trace --torch-trace's operators). Each domain's ranges nest
 * on their own, as NVTX's domains do. */
int gpuprof_domain_range_push(const char *domain, const char *message);
/* As gpuprof_domain_range_push(), with where in the program the range runs, kept beside
 * its message as its module path ("Net.fc1": a PyTorch model's layer); NULL: none. */
int gpuprof_domain_range_push_module(const char *domain, const char *message,
				     const char *module);
/* Closes this thread's innermost range, of any domain; returns how many stay open on
 * the thread, -1 when none was. */
int gpuprof_range_pop(void);
/* Closes the innermost range of the domain on this thread (NULL or "": the default
 * domain), even when ranges of other domains opened after it are still open; returns
 * how many of the domain stay open, -1 when none was. */
int gpuprof_domain_range_pop(const char *domain);
/* Opens a range that gpuprof_range_stop() closes, from any thread; returns its id. */
uint64_t gpuprof_range_start(const char *message);
void gpuprof_range_stop(uint64_t id);
/* An instant. */
void gpuprof_mark(const char *message);
/* Names the calling thread in the profile. */
void gpuprof_name_thread(const char *name);
/* Stops and resumes collection of kernels, copies and API calls (markers are always
 * recorded). With `gpuprof trace --selected-regions` collection starts paused. */
void gpuprof_pause(void);
void gpuprof_resume(void);

#ifdef __cplusplus
} /* extern "C" */

namespace gpuprof {
/* A range for the lifetime of a scope: { gpuprof::scoped_range r("load"); ... } */
class scoped_range {
public:
	explicit scoped_range(const char *message) { gpuprof_range_push(message); }
	~scoped_range() { gpuprof_range_pop(); }
	scoped_range(const scoped_range &) = delete;
	scoped_range &operator=(const scoped_range &) = delete;
};
} /* namespace gpuprof */
#endif

#endif
