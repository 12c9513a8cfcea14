/* What every file of the OpenCL backend reads, below them all: the configuration
 * (GPUPROF_TRACE), each thread's depth in the backend, and the OpenCL ICD loader, found
 * once (find_loader()), its functions looked up into `real`, which every wrapper calls
 * through REAL() (opencl-internal.h). */
#include "opencl-internal.h"

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/recorder.h"

/* ---- configuration ---------------------------------------------------------------- */

int trace_kernels = 1, trace_copies = 1, trace_api = 1, trace_allocations = 1;

void opencl_read_config(void)
{
	const char *list = getenv("GPUPROF_TRACE");
	if (!list)
		return; /* preloaded by hand: record everything */
	trace_kernels = strstr(list, "kernel") != NULL;
	trace_copies = strstr(list, "memory_copy") != NULL;
	trace_api = strstr(list, "opencl_api") != NULL;
	trace_allocations = strstr(list, "memory_allocation") != NULL;
}

/* ---- the thread's depth in the backend ---------------------------------------------- */

__thread int nesting;

/* ---- the loader ----------------------------------------------------------------------- */

/* The OpenCL ICD loader's definitions. gpuprof's library is named like the loader
 * (libOpenCL.so.1), so the program and everything it loads find it instead of the loader
 * however they look for OpenCL (linked, dlopen()ed privately, dlsym() on a handle of
 * their own); it forwards to the loader, found by find_loader(). */
struct opencl_functions opencl_real;
pthread_once_t opencl_real_once = PTHREAD_ONCE_INIT;
_Atomic int opencl_real_loaded;

/* Marks this library, so that gpuprof (and find_loader()) never take it for the loader. */
EXPORT const int gpuprof_opencl_interposer = 1;

/* A loader at `path`, unless it is this library under another name. */
static void *open_loader(const char *path)
{
	void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (handle && dlsym(handle, "gpuprof_opencl_interposer")) {
		dlclose(handle);
		handle = NULL;
	}
	return handle;
}

/* The directory of the C library: where the distribution keeps the loader too. */
static int find_libc(struct dl_phdr_info *info, size_t size, void *data)
{
	const char *base = strrchr(info->dlpi_name, '/');
	if (!base || strncmp(base, "/libc.so", 8))
		return 0;
	snprintf(data, PATH_MAX, "%.*s", (int)(base - info->dlpi_name), info->dlpi_name);
	return 1;
}

/* GPUPROF_OPENCL_LOADER, which `gpuprof trace` sets to the loader the program would have
 * found; else (preloaded by hand) a loader later in the search order, or the system's. */
static void *find_loader(void)
{
	const char *named = getenv("GPUPROF_OPENCL_LOADER");
	void *handle = named && *named ? open_loader(named) : NULL;
	if (handle)
		return handle;
	void *next = dlsym(RTLD_NEXT, "clGetPlatformIDs");
	if (next && next != (void *)clGetPlatformIDs)
		return RTLD_NEXT;
	char dir[PATH_MAX] = "", path[PATH_MAX + 32];
	dl_iterate_phdr(find_libc, dir);
	const char *dirs[] = { dir, "/usr/lib64", "/usr/lib", "/usr/local/lib" };
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]) && !handle; i++) {
		if (!*dirs[i])
			continue;
		snprintf(path, sizeof(path), "%s/libOpenCL.so.1", dirs[i]);
		handle = open_loader(path);
	}
	return handle;
}

void opencl_load_real(void)
{
	int saved = errno;
	void *handle = find_loader();
	if (!handle)
		recorder_report("no OpenCL ICD loader found (set GPUPROF_OPENCL_LOADER to its "
				"path): the program's OpenCL calls fail");
#define LOOKUP(kind, version, ret, name, params, args) \
	opencl_real.name = handle ? (__typeof__(&name))dlsym(handle, #name) : NULL;
	OPENCL_API(LOOKUP)
#undef LOOKUP
	atomic_store_explicit(&opencl_real_loaded, 1, memory_order_release);
	errno = saved;
}
