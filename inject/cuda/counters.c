/* Hardware counters per kernel (gpuprof trace --pmc, gpuprof compute profile), with
 * CUPTI's range profiler: auto ranges (one range per kernel) and kernel replay (CUPTI
 * runs a kernel once per pass the metrics need, saving and restoring the memory it
 * writes), so one run of the program gives every metric. Under iteration multiplexing
 * (GPUPROF_PMC_MULTIPLEX) nothing is replayed: the metrics come in groups of one pass, and
 * the successive dispatches of a kernel each collect the next group.
 *
 * The launch callbacks of the runtime and driver APIs (cuda.c subscribes to both: a
 * runtime launch fires no driver callback) bracket each kernel that the filters keep: on
 * entry a range starts, on exit it stops and the host API (libgpuprof-cupti-host.so,
 * beside this library) turns the counters into the metrics' values (counters-context.c:
 * the range profiler on each context). The values wait in a list until the recorder's
 * writer thread translates them (counters_collect()), after the device records that give
 * the device its agent. No launching call (kernels, graphs, copies, fills) of any thread
 * begins while a kernel is measured, as every kernel-replay profiler serialises them: a
 * kernel runs alone on the device while it is measured. A launch into a stream being
 * captured runs nothing and is not measured; one outside the collection window neither. */
#include "counters.h"
#include "counters-internal.h"

#include <cuda.h>

#include <dlfcn.h>
#include <libgen.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "../cupti-host.h"
#include "core/clock.h"
#include "core/kernel-filter.h"
#include "runtime/recorder.h"
#include "util/hash.h"
#include "util/strbuf.h"

#define MAX_METRICS 512

/* The metrics asked for (GPUPROF_PMC: comma-separated, in groups separated by ';' under
 * iteration multiplexing), group by group. */
static char *metric_text;
const char *counters_metrics[MAX_METRICS];
static size_t metric_count;
struct counters_group counters_groups[MAX_METRICS];
size_t counters_group_count;
/* GPUPROF_PMC_MULTIPLEX: each dispatch of a kernel collects the next group, in turn, with
 * no replay; dispatches are of one kernel by name, or by name and launch size. Without
 * it there is one group, every pass of which kernel replay makes. */
static enum { MULTIPLEX_NONE, MULTIPLEX_KERNEL, MULTIPLEX_LAUNCH } multiplex;
static struct kernel_filter filter;

struct counters_host counters_host;
static CUresult (*is_capturing)(CUstream, CUstreamCaptureStatus *); /* the driver's */

/* Held by a measured kernel's launching call from its entry to its exit; every other
 * launching call passes through it at its entry: a kernel runs alone while it is
 * measured, no other thread's launch, graph, copy or fill entering its range (one range
 * per pass). Also guards the contexts' state and the tables of names. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

/* Dispatches per kernel name (for --kernel-iteration-range) and per multiplexing key
 * (the name, with the launch size under MULTIPLEX_LAUNCH): open addressing. */
struct name_count {
	char *name;
	uint64_t seen;
};
struct name_table {
	struct name_count *slots;
	size_t size, used;
};
static struct name_table names, keys;

/* Values waiting for the writer thread. */
struct pending {
	struct pending *next;
	uint64_t correlation_id;
	uint32_t device;
	size_t group;
	size_t done; /* emitted so far */
	double values[];
};
static pthread_mutex_t pending_lock = PTHREAD_MUTEX_INITIALIZER;
static struct pending *pending_head, **pending_tail = &pending_head;

/* The launch calls measured, oldest first, until their kernels' records come (without
 * times: kernel replay), under pending_lock; at most MAX_WINDOWS, the oldest let go. */
struct window {
	struct window *next;
	uint64_t correlation_id, start_ns, end_ns;
};
#define MAX_WINDOWS 65536
static struct window *windows_head, **windows_tail = &windows_head;
static size_t window_count;

/* The launching calls the thread is inside (a runtime launch may call the driver's: the
 * lock is held from the outermost's entry to its exit), the level of the one being
 * measured plus one (0: none), the context and group of metrics it collects, and the
 * outermost call: its function, its correlation id (the kernel's record carries it: the
 * counters go under it), whether it launches a kernel, whether a driver launch fired
 * inside it, whether collection was on at its entry. */
static _Thread_local int depth, measuring, inner_driver, outer_collected, outer_kernel;
static _Thread_local struct counters_context *measured_context;
static _Thread_local size_t measured_group;
static _Thread_local CUpti_CallbackId outer_cbid;
static _Thread_local uint64_t outer_id;
static _Thread_local uint64_t measured_since; /* trace clock, at the measured call's entry */
/* Per runtime launching function, whether the driver fires a launch callback inside it
 * (CUDA 13's __cudaLaunchKernel on an H200 does, under the same id; CUPTI's samples show
 * none on older drivers): NESTS_UNKNOWN until one of its calls has returned. */
enum { NESTS_UNKNOWN, NESTS_YES, NESTS_NO };
static _Atomic unsigned char nests[CUPTI_RUNTIME_TRACE_CBID_SIZE];

static int nesting(CUpti_CallbackId cbid)
{
	return cbid < CUPTI_RUNTIME_TRACE_CBID_SIZE
		       ? atomic_load_explicit(&nests[cbid], memory_order_relaxed) : NESTS_NO;
}

static void learn_nesting(CUpti_CallbackId cbid, int value)
{
	unsigned char unknown = NESTS_UNKNOWN;
	if (cbid < CUPTI_RUNTIME_TRACE_CBID_SIZE)
		atomic_compare_exchange_strong(&nests[cbid], &unknown, (unsigned char)value);
}

static int load_host(void)
{
	Dl_info self;
	struct strbuf path = STRBUF_INIT;
	if (!dladdr((void *)load_host, &self) || !self.dli_fname) {
		recorder_report("counters: cannot find libgpuprof-cupti-host.so: no counters are "
				"collected");
		return -1;
	}
	char *copy = strdup(self.dli_fname);
	strbuf_addf(&path, "%s/libgpuprof-cupti-host.so", copy ? dirname(copy) : ".");
	free(copy);
	struct counters_host *host = &counters_host;
	host->library = dlopen(path.buf, RTLD_NOW | RTLD_LOCAL);
	if (host->library) {
		*(void **)&host->open_device = dlsym(host->library, "gpuprof_host_open_device");
		*(void **)&host->close = dlsym(host->library, "gpuprof_host_close");
		*(void **)&host->config = dlsym(host->library, "gpuprof_host_config");
		*(void **)&host->evaluate = dlsym(host->library, "gpuprof_host_evaluate");
	}
	if (!host->open_device || !host->close || !host->config || !host->evaluate) {
		recorder_report("counters: cannot load %s (%s): no counters are collected",
				path.buf, host->library ? "not this gpuprof's" : dlerror());
		strbuf_release(&path);
		return -1;
	}
	strbuf_release(&path);
	return 0;
}

int counters_configure(void)
{
	const char *list = getenv("GPUPROF_PMC");
	if (!list || !*list)
		return 0;
	metric_text = strdup(list);
	for (char *save = NULL, *group = strtok_r(metric_text, ";", &save); group;
	     group = strtok_r(NULL, ";", &save)) {
		struct counters_group *g = &counters_groups[counters_group_count];
		g->first = metric_count;
		for (char *inner = NULL, *name = strtok_r(group, ",", &inner);
		     name && metric_count < MAX_METRICS; name = strtok_r(NULL, ",", &inner))
			counters_metrics[metric_count++] = name;
		g->count = metric_count - g->first;
		if (g->count)
			counters_group_count++;
	}
	const char *mode = getenv("GPUPROF_PMC_MULTIPLEX");
	if (mode && !strcmp(mode, "kernel"))
		multiplex = MULTIPLEX_KERNEL;
	else if (mode && !strcmp(mode, "kernel_launch_params"))
		multiplex = MULTIPLEX_LAUNCH;
	if (!multiplex && counters_group_count > 1) { /* one group, replayed */
		counters_groups[0].count = metric_count;
		counters_group_count = 1;
	}
	struct error err;
	if (kernel_filter_init(&filter, getenv("GPUPROF_KERNEL_INCLUDE_REGEX"),
			       getenv("GPUPROF_KERNEL_EXCLUDE_REGEX"),
			       getenv("GPUPROF_KERNEL_ITERATION_RANGE"), &err)) {
		recorder_report("counters: %s: no counters are collected", err.message);
		return -1;
	}
	if (load_host())
		return -1;
	void *driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
	if (driver) { /* the driver stays loaded: it loaded this library */
		*(void **)&is_capturing = dlsym(driver, "cuStreamIsCapturing");
		dlclose(driver);
	}
	return 1;
}

/* The slot of a name in table t (added if new), NULL without memory. */
static struct name_count *name_slot(struct name_table *t, const char *name)
{
	if (2 * (t->used + 1) > t->size) {
		size_t size = t->size ? 2 * t->size : 64;
		struct name_count *grown = calloc(size, sizeof(*grown));
		if (!grown)
			return NULL;
		for (size_t i = 0; i < t->size; i++) {
			if (!t->slots[i].name)
				continue;
			size_t j = hash_string(t->slots[i].name) & (size - 1);
			while (grown[j].name)
				j = (j + 1) & (size - 1);
			grown[j] = t->slots[i];
		}
		free(t->slots);
		t->slots = grown;
		t->size = size;
	}
	size_t j = hash_string(name) & (t->size - 1);
	while (t->slots[j].name && strcmp(t->slots[j].name, name))
		j = (j + 1) & (t->size - 1);
	if (!t->slots[j].name) {
		if (!(t->slots[j].name = strdup(name)))
			return NULL;
		t->used++;
	}
	return &t->slots[j];
}

/* What a launch launches: its kernel's (mangled) name, as CUPTI gives it to launch
 * callbacks of both domains, and its size: threads in the grid and in a block, dynamic
 * shared memory per block. */
struct launch {
	const char *symbol;
	uint64_t grid_threads, block_threads, shared_bytes;
	CUstream stream;  /* the stream it launches into */
	int stream_known; /* its parameters named it */
};

static void set_size(struct launch *l, unsigned grid_x, unsigned grid_y, unsigned grid_z,
		     unsigned block_x, unsigned block_y, unsigned block_z, uint64_t shared)
{
	l->block_threads = (uint64_t)block_x * block_y * block_z;
	l->grid_threads = l->block_threads * grid_x * grid_y * grid_z;
	l->shared_bytes = shared;
}

/* The stream of a launch; the default stream of a per-thread-default-stream variant
 * (_ptsz) is the calling thread's. */
static void set_stream(struct launch *l, CUstream stream, int per_thread_default)
{
	l->stream = !stream && per_thread_default ? CU_STREAM_PER_THREAD : stream;
	l->stream_known = 1;
}

static int per_thread(CUpti_CallbackDomain domain, CUpti_CallbackId cbid)
{
	if (domain == CUPTI_CB_DOMAIN_RUNTIME_API)
		return cbid == CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000 ||
		       cbid == CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_ptsz_v9000 ||
		       cbid == CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_ptsz_v13000 ||
		       cbid == CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_ptsz_v11060;
	return cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz ||
	       cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz ||
	       cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz;
}

/* Whether a launch is into a stream being captured (cudaStreamBeginCapture: CUDA graphs,
 * torch.compile's): it runs nothing then, and is not measured. The driver answers (a
 * launch whose stream it cannot tell is measured). */
static int captured(const struct launch *l)
{
	if (!l->stream_known || !is_capturing)
		return 0;
	CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
	CUresult rc = is_capturing(l->stream, &status);
	/* the legacy stream while another captures (CUDA_ERROR_STREAM_CAPTURE_IMPLICIT): the
	 * launch fails */
	return rc == CUDA_ERROR_STREAM_CAPTURE_IMPLICIT ||
	       (rc == CUDA_SUCCESS && status != CU_STREAM_CAPTURE_STATUS_NONE);
}

/* Whether the function launches a graph. */
static int graph_launch(CUpti_CallbackDomain domain, CUpti_CallbackId cbid)
{
	if (domain == CUPTI_CB_DOMAIN_RUNTIME_API)
		return cbid == CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000 ||
		       cbid == CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_ptsz_v10000;
	return cbid == CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch ||
	       cbid == CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz;
}

/* Said once: a graph launch runs its kernels in one call, which one range per launch
 * call cannot tell apart (ncu replays each node of a graph: --graph-profiling node). */
static void say_graphs_unmeasured(void)
{
	static atomic_int said;
	if (!atomic_exchange(&said, 1))
		recorder_report("counters: the kernels of CUDA graph launches are not measured "
				"(a graph runs its kernels in one launch call, and gpuprof measures "
				"one kernel per call); each is counted without its counters");
}

/* Whether the function launches one kernel (not a graph, not on several devices). */
static int launches_kernel(CUpti_CallbackDomain domain, CUpti_CallbackId cbid)
{
	if (domain == CUPTI_CB_DOMAIN_RUNTIME_API)
		switch (cbid) {
		case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000:
		case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000:
		case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_v9000:
		case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_ptsz_v9000:
		case CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000:
		case CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_ptsz_v13000:
		case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060:
		case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_ptsz_v11060:
			return 1;
		default:
			return 0;
		}
	switch (cbid) {
	case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel:
	case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz:
	case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx:
	case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz:
	case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel:
	case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz:
		return 1;
	default:
		return 0;
	}
}

/* The launch's size from its parameters; 0 when the function launches no single kernel
 * whose size CUPTI's parameters give (a graph, several devices at once): not measured.
 * cuda_runtime_api_meta.h has no parameters for some launching functions (CUDA 13's
 * __cudaLaunchKernel, what <<<>>> calls): without them the kernel is measured, its
 * size unknown (0). */
static int launch_of(CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
		     const CUpti_CallbackData *data, struct launch *l)
{
	memset(l, 0, sizeof(*l));
	l->symbol = data->symbolName;
	const void *params = data->functionParams;
	if (!launches_kernel(domain, cbid))
		return 0;
	if (!params)
		return 1;
	if (domain == CUPTI_CB_DOMAIN_RUNTIME_API) {
		/* __cudaLaunchKernel takes the arguments of cudaLaunchKernel, a kernel handle
		 * for the function */
		const cudaLaunchKernel_v7000_params *k = params;
		const cudaLaunchKernelExC_v11060_params *ex = params;
		if (cbid == CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060 ||
		    cbid == CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_ptsz_v11060) {
			if (ex->config) {
				set_size(l, ex->config->gridDim.x, ex->config->gridDim.y,
					 ex->config->gridDim.z, ex->config->blockDim.x,
					 ex->config->blockDim.y, ex->config->blockDim.z,
					 ex->config->dynamicSmemBytes);
				set_stream(l, ex->config->stream, per_thread(domain, cbid));
			}
		} else {
			set_size(l, k->gridDim.x, k->gridDim.y, k->gridDim.z, k->blockDim.x,
				 k->blockDim.y, k->blockDim.z, k->sharedMem);
			set_stream(l, k->stream, per_thread(domain, cbid));
		}
		return 1;
	}
	const cuLaunchKernel_params *k = params;
	const cuLaunchCooperativeKernel_params *co = params;
	const CUlaunchConfig *config;
	switch (cbid) {
	case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx:
	case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz:
		if ((config = ((const cuLaunchKernelEx_params *)params)->config)) {
			set_size(l, config->gridDimX, config->gridDimY, config->gridDimZ,
				 config->blockDimX, config->blockDimY, config->blockDimZ,
				 config->sharedMemBytes);
			set_stream(l, config->hStream, per_thread(domain, cbid));
		}
		break;
	case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel:
	case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz:
		set_size(l, co->gridDimX, co->gridDimY, co->gridDimZ, co->blockDimX, co->blockDimY,
			 co->blockDimZ, co->sharedMemBytes);
		set_stream(l, co->hStream, per_thread(domain, cbid));
		break;
	default: /* cuLaunchKernel */
		set_size(l, k->gridDimX, k->gridDimY, k->gridDimZ, k->blockDimX, k->blockDimY,
			 k->blockDimZ, k->sharedMemBytes);
		set_stream(l, k->hStream, per_thread(domain, cbid));
	}
	return 1;
}

/* Whether the filters keep this launch (counting its iterations), and the group of
 * metrics it collects into *group: under multiplexing, the next of its kernel's. */
static int wanted(const struct launch *l, size_t *group)
{
	*group = 0;
	if (!kernel_filter_active(&filter) && !multiplex)
		return 1;
	const char *mangled = l->symbol;
	if (!mangled)
		return 0;
	char *demangled = translator_demangle(mangled);
	const char *name = demangled ? demangled : mangled;
	int keep = kernel_filter_name(&filter, name);
	if (keep && filter.range_count) {
		struct name_count *n = name_slot(&names, name);
		keep = n && kernel_filter_iteration(&filter, ++n->seen);
	}
	if (keep && multiplex) {
		struct strbuf key = STRBUF_INIT;
		strbuf_addstr(&key, name);
		if (multiplex == MULTIPLEX_LAUNCH)
			strbuf_addf(&key, "\n%llu %llu %llu", (unsigned long long)l->grid_threads,
				    (unsigned long long)l->block_threads,
				    (unsigned long long)l->shared_bytes);
		struct name_count *n = key.failed ? NULL : name_slot(&keys, key.buf);
		keep = n != NULL;
		if (n)
			*group = n->seen++ % counters_group_count;
		strbuf_release(&key);
	}
	free(demangled);
	return keep;
}

/* The counters of the range just measured (of a group's metrics), queued for the
 * writer thread. */
static void add_window(uint64_t correlation_id, uint64_t start_ns, uint64_t end_ns)
{
	struct window *w = malloc(sizeof(*w));
	if (!w)
		return;
	*w = (struct window){ NULL, correlation_id, start_ns, end_ns };
	pthread_mutex_lock(&pending_lock);
	*windows_tail = w;
	windows_tail = &w->next;
	if (++window_count > MAX_WINDOWS) { /* kernels whose records never came */
		struct window *oldest = windows_head;
		windows_head = oldest->next;
		window_count--;
		free(oldest);
	}
	pthread_mutex_unlock(&pending_lock);
}

int counters_launch_window(uint64_t correlation_id, uint64_t *start_ns, uint64_t *end_ns)
{
	static atomic_int said;
	pthread_mutex_lock(&pending_lock);
	struct window **at = &windows_head;
	while (*at && (*at)->correlation_id != correlation_id)
		at = &(*at)->next;
	struct window *w = *at;
	if (w) {
		*at = w->next;
		if (windows_tail == &w->next)
			windows_tail = at;
		window_count--;
		*start_ns = w->start_ns;
		*end_ns = w->end_ns;
		free(w);
	}
	pthread_mutex_unlock(&pending_lock);
	if (w && !atomic_exchange(&said, 1))
		recorder_report("counters: CUPTI gives the kernels measured under kernel replay "
				"no device times: each is placed at its launch call, from its "
				"entry to its return (its replays included)");
	return w != NULL;
}

/* Stops measuring the kernel launched by the call of correlation_id, and queues its
 * values for the writer thread (or counts it without them). */
static void finish(struct counters_context *c, size_t group, uint64_t correlation_id)
{
	add_window(correlation_id, measured_since, clock_now_ns());
	static double scratch[MAX_METRICS]; /* without memory (under the launch lock) */
	const struct counters_group *g = &counters_groups[group];
	struct pending *p = malloc(sizeof(*p) + g->count * sizeof(double));
	if (counters_context_finish(c, group, p ? p->values : scratch) || !p) {
		recorder_count_dropped(DROPPED_COUNTERS, 1);
		free(p);
		return;
	}
	p->next = NULL;
	p->correlation_id = correlation_id;
	p->device = c->device;
	p->group = group;
	p->done = 0;
	pthread_mutex_lock(&pending_lock);
	*pending_tail = p;
	pending_tail = &p->next;
	pthread_mutex_unlock(&pending_lock);
}

/* Starts measuring the kernel of the launch entered (the launch lock is held): 1, or 0
 * when it is not measured. */
static int start(const CUpti_CallbackData *data, const struct launch *l)
{
	/* outside the capture range its kernel is not kept; into a stream being captured
	 * it runs nothing */
	if (!recorder_collecting() || captured(l))
		return 0;
	if (!data->context) { /* none current yet: no profiler to start */
		recorder_count_dropped(DROPPED_COUNTERS, 1);
		return 0;
	}
	struct counters_context *c = counters_context_of(data->context);
	size_t group;
	if (c && !c->broken && wanted(l, &group) && counters_context_start(c, group) == 0) {
		measured_context = c;
		measured_group = group;
		measured_since = clock_now_ns();
		return 1;
	}
	if (c && c->broken)
		recorder_count_dropped(DROPPED_COUNTERS, 1);
	return 0;
}

void counters_callback(CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
		       const CUpti_CallbackData *data)
{
	struct launch l;
	int kernel = launch_of(domain, cbid, data, &l); /* not a copy, a fill, a graph */
	if (data->callbackSite == CUPTI_API_ENTER) {
		int level = depth++;
		/* the innermost launching call is measured, as NVIDIA's callback profiling
		 * does: the driver's where one fires inside the runtime's */
		int candidate = kernel && !measuring &&
				!(domain == CUPTI_CB_DOMAIN_RUNTIME_API && nesting(cbid) != NESTS_NO);
		if (level == 0) {
			/* every launching call waits while another thread's kernel is measured
			 * (it holds the lock from its entry to its exit), but holds nothing
			 * itself while it runs: a call that blocks (a synchronous copy waiting
			 * for another thread's work) blocks no other launch */
			if (!candidate) {
				pthread_mutex_lock(&lock);
				pthread_mutex_unlock(&lock);
			}
			if (graph_launch(domain, cbid) && recorder_collecting())
				say_graphs_unmeasured();
			outer_cbid = domain == CUPTI_CB_DOMAIN_RUNTIME_API ? cbid : (CUpti_CallbackId)-1;
			outer_id = data->correlationId;
			outer_kernel = kernel;
			inner_driver = 0;
			outer_collected = recorder_collecting();
		} else if (domain == CUPTI_CB_DOMAIN_DRIVER_API && kernel) {
			inner_driver = 1;
			learn_nesting(outer_cbid, NESTS_YES);
		}
		if (!candidate)
			return;
		pthread_mutex_lock(&lock);
		if (start(data, &l))
			measuring = level + 1; /* the lock held until its exit */
		else
			pthread_mutex_unlock(&lock);
		return;
	}
	if (depth == 0)
		return;
	int level = --depth;
	if (measuring == level + 1) {
		measuring = 0; /* the context started, whatever the call made current since */
		finish(measured_context, measured_group, outer_id);
		pthread_mutex_unlock(&lock);
	}
	if (level == 0 && outer_kernel && domain == CUPTI_CB_DOMAIN_RUNTIME_API &&
	    !inner_driver && nesting(cbid) == NESTS_UNKNOWN) {
		/* the driver fires no launch callback inside this function: its calls are
		 * measured from now on, this first one was not (a loss where it was kept) */
		learn_nesting(cbid, NESTS_NO);
		if (outer_collected)
			recorder_count_dropped(DROPPED_COUNTERS, 1);
	}
}

void counters_resource(CUpti_CallbackId cbid, const void *data)
{
	if (cbid != CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING)
		return;
	pthread_mutex_lock(&lock);
	counters_context_destroyed(((const CUpti_ResourceData *)data)->context);
	pthread_mutex_unlock(&lock);
}

int counters_collect(struct translator *t)
{
	for (;;) {
		pthread_mutex_lock(&pending_lock);
		struct pending *p = pending_head;
		pthread_mutex_unlock(&pending_lock);
		if (!p)
			return 0;
		const struct counters_group *g = &counters_groups[p->group];
		if (translator_counters(t, p->correlation_id, p->device, counters_metrics + g->first,
					p->values, g->count, &p->done))
			return 1; /* the recorder's buffer is full: resume at p->done */
		pthread_mutex_lock(&pending_lock);
		pending_head = p->next;
		if (!pending_head)
			pending_tail = &pending_head;
		pthread_mutex_unlock(&pending_lock);
		free(p);
	}
}
