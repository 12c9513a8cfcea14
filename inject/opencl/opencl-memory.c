/* Device memory of an OpenCL program (--memory-allocation-trace): each buffer, image and
 * pipe it makes, and each shared virtual memory allocation (clSVMAlloc), is recorded as
 * allocated on its context's device, with its size (CL_MEM_SIZE), its call's correlation
 * id and the call's stack (GPUPROF_ALLOCATION_STACKS); and as freed when it goes: a
 * memory object when the runtime destroys it (its destructor callback, set at its
 * making: the last clReleaseMemObject, whichever thread, or the end of its context's
 * last user), SVM at clSVMFree or when clEnqueueSVMFree enqueues its free (without a
 * free_func of the program's: with one, the program frees it, or not). A sub-buffer or an
 * image made from a buffer shares another object's memory, and an object made from a
 * GL, EGL or other API's is not OpenCL's to allocate: none is recorded. A buffer of the
 * program's own memory (CL_MEM_USE_HOST_PTR) is recorded as host memory (pageable), which
 * the device memory analyses leave out. A context of several devices has its memory
 * counted on the first. errno is the program's again when each function returns. */
#include "opencl-internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/clock.h"
#include "runtime/recorder.h"
#include "util/hash.h"

/* What a memory object's destructor callback needs to record its free. */
struct made {
	uint64_t address, bytes;
	uint32_t agent_id, memory_kind;
};

static void emit(uint32_t operation, uint32_t memory_kind, uint64_t address, uint64_t bytes,
		 uint32_t agent_id, uint64_t correlation_id, uint64_t start_ns)
{
	struct record_memory_allocation r = {
		.header = { sizeof(r), RECORD_MEMORY_ALLOCATION, 0 },
		.tid = current_thread_id(),
		.agent_id = agent_id,
		.operation = operation,
		.memory_kind = memory_kind,
		.address = address,
		.bytes = bytes,
		.correlation_id = correlation_id,
		.start_ns = start_ns,
		.end_ns = clock_now_ns(),
	};
	recorder_emit(&r);
}

/* The agent of a context's first device, 0 when it cannot be told. */
static uint32_t context_agent(cl_context context)
{
	size_t size = 0;
	if (!context || !REAL(clGetContextInfo) ||
	    opencl_real.clGetContextInfo(context, CL_CONTEXT_DEVICES, 0, NULL, &size) !=
		    CL_SUCCESS || size < sizeof(cl_device_id))
		return 0;
	cl_device_id *devices = malloc(size); /* the whole list: a shorter buffer is refused */
	struct device_info *info = devices && opencl_real.clGetContextInfo(
		context, CL_CONTEXT_DEVICES, size, devices, NULL) == CL_SUCCESS
		? device_lookup(devices[0]) : NULL;
	free(devices);
	return info ? info->agent_id : 0;
}

/* Whether a call makes memory of its own (not a view of another's, nor another API's). */
static int allocates(enum function function)
{
	switch (function) {
	case FN_clCreateBuffer:
	case FN_clCreateBufferWithProperties:
	case FN_clCreateImage:
	case FN_clCreateImage2D:
	case FN_clCreateImage3D:
	case FN_clCreateImageWithProperties:
	case FN_clCreatePipe:
		return 1;
	default:
		return 0;
	}
}

/* The stack of the allocating call, before it returns to the program. */
static void take_stack(const struct api_call *call)
{
	if (recorder_allocation_stacks())
		recorder_launch_stack(DOMAIN_OPENCL_API, function_string[call->function],
				      call->correlation_id, call->start_ns);
}

/* The program's clReleaseMemObject this thread is in, NULL when none. */
static __thread const struct api_call *releasing;

/* On whichever thread the runtime destroys the object: recorded only while the recorder
 * runs (never started from here). Inside the program's clReleaseMemObject, the free is
 * that call's (its correlation id and start, so that its time is the free's); else a
 * moment of its own (another call's time, clFinish's, is not the free's). */
static void CL_CALLBACK destroyed(cl_mem object, void *user)
{
	struct made *m = user;
	(void)object;
	int saved = errno;
	const struct api_call *in = releasing;
	emit(ALLOCATION_FREE, m->memory_kind, m->address, m->bytes, m->agent_id,
	     in ? in->correlation_id : 0, in ? in->start_ns : clock_now_ns());
	free(m);
	errno = saved;
}

void memory_object_not(const struct api_call *call, enum function function, void *object)
{
	(void)call, (void)function, (void)object;
}

/* The object's own memory, recorded with its destructor callback set: 0, or -1 when it
 * is not recorded (a view of another object's memory, or what it needs is missing). */
static int record_object(const struct api_call *call, cl_mem mem)
{
	size_t bytes = 0;
	cl_mem parent = NULL;
	cl_mem_flags flags = 0;
	cl_context context = NULL;
	if (!REAL(clGetMemObjectInfo) || !REAL(clSetMemObjectDestructorCallback) ||
	    opencl_real.clGetMemObjectInfo(mem, CL_MEM_SIZE, sizeof(bytes), &bytes, NULL) !=
		    CL_SUCCESS ||
	    opencl_real.clGetMemObjectInfo(mem, CL_MEM_ASSOCIATED_MEMOBJECT, sizeof(parent),
					   &parent, NULL) != CL_SUCCESS || parent)
		return -1;
	opencl_real.clGetMemObjectInfo(mem, CL_MEM_FLAGS, sizeof(flags), &flags, NULL);
	opencl_real.clGetMemObjectInfo(mem, CL_MEM_CONTEXT, sizeof(context), &context, NULL);
	struct made *m = malloc(sizeof(*m));
	if (!m)
		return -1;
	*m = (struct made){ (uint64_t)(uintptr_t)mem, bytes, context_agent(context),
			    flags & CL_MEM_USE_HOST_PTR ? MEMORY_KIND_PAGEABLE : MEMORY_KIND_DEVICE };
	if (opencl_real.clSetMemObjectDestructorCallback(mem, destroyed, m) != CL_SUCCESS) {
		free(m); /* its free would not be seen: not recorded at all */
		return -1;
	}
	take_stack(call);
	emit(ALLOCATION_ALLOCATE, m->memory_kind, m->address, bytes, m->agent_id,
	     call->correlation_id, call->start_ns);
	return 0;
}

void memory_object_made(const struct api_call *call, enum function function, void *object)
{
	if (!object || !call->collected || !trace_allocations || !allocates(function))
		return;
	int saved = errno;
	record_object(call, object);
	errno = saved;
}

/* The release during which the runtime usually destroys the object (its last), known to
 * the destructor callback on this thread. */
EXPORT cl_int CL_API_CALL clReleaseMemObject(cl_mem object)
{
	struct api_call call;
	api_begin(&call, FN_clReleaseMemObject);
	const struct api_call *outer = releasing; /* a release inside a program's callback
						   * run by an outer one: the outer's */
	if (call.recorded)
		releasing = &call;
	cl_int rc = REAL(clReleaseMemObject) ? opencl_real.clReleaseMemObject(object) : MISSING;
	releasing = outer;
	api_end(&call, rc);
	return rc;
}

/* ---- shared virtual memory: sizes kept until clSVMFree ------------------------------- */

#define SVM_SLOTS 4096 /* SVM allocations followed at once; beyond, not recorded */

/* The allocations followed: open addressing with linear probing, an entry taken out by
 * moving the entries of its run back (no tombstones: a probe never outlasts the run). At
 * most SVM_SLOTS - 1 are kept, so that a probe always meets an empty slot. */
static pthread_mutex_t svm_lock = PTHREAD_MUTEX_INITIALIZER;
static struct svm {
	void *pointer; /* NULL: empty */
	uint64_t bytes;
	uint32_t agent_id;
} svm[SVM_SLOTS];
static size_t svm_count;

static size_t svm_home(const void *pointer)
{
	return hash_int((uintptr_t)pointer) & (SVM_SLOTS - 1);
}

/* The slot of pointer, or the empty one that ends its probe; under svm_lock. */
static size_t svm_slot(const void *pointer)
{
	size_t i = svm_home(pointer);
	while (svm[i].pointer && svm[i].pointer != pointer)
		i = (i + 1) & (SVM_SLOTS - 1);
	return i;
}

/* Follows an allocation (replacing one at the same address whose free was missed): 0, or
 * -1 when the table is full. */
static int svm_put(void *pointer, uint64_t bytes, uint32_t agent_id)
{
	int rc = -1;
	pthread_mutex_lock(&svm_lock);
	size_t i = svm_slot(pointer);
	if (svm[i].pointer || svm_count < SVM_SLOTS - 1) {
		svm_count += !svm[i].pointer;
		svm[i] = (struct svm){ pointer, bytes, agent_id };
		rc = 0;
	}
	pthread_mutex_unlock(&svm_lock);
	return rc;
}

EXPORT void *CL_API_CALL clSVMAlloc(cl_context context, cl_svm_mem_flags flags, size_t size,
				    cl_uint alignment)
{
	struct api_call call;
	api_begin(&call, FN_clSVMAlloc);
	void *pointer = REAL(clSVMAlloc) ? opencl_real.clSVMAlloc(context, flags, size, alignment)
					 : NULL;
	if (pointer && call.collected && trace_allocations) {
		int saved = errno;
		uint32_t agent = context_agent(context);
		if (svm_put(pointer, size, agent) == 0) { /* else its free could not be told */
			take_stack(&call);
			emit(ALLOCATION_ALLOCATE, MEMORY_KIND_DEVICE, (uint64_t)(uintptr_t)pointer,
			     size, agent, call.correlation_id, call.start_ns);
		}
		errno = saved;
	}
	api_end(&call, pointer ? CL_SUCCESS : CL_INVALID_VALUE);
	return pointer;
}

int memory_svm_take(void *pointer, struct svm_taken *out)
{
	if (!pointer || !trace_allocations)
		return 0;
	pthread_mutex_lock(&svm_lock);
	size_t i = svm_slot(pointer);
	int found = svm[i].pointer != NULL;
	if (found) {
		*out = (struct svm_taken){ (uint64_t)(uintptr_t)pointer, svm[i].bytes,
					   svm[i].agent_id };
		/* the run's later entries whose home is not in (i, j] move back into i */
		for (size_t j = (i + 1) & (SVM_SLOTS - 1); svm[j].pointer;
		     j = (j + 1) & (SVM_SLOTS - 1)) {
			size_t home = svm_home(svm[j].pointer);
			if (((j - home) & (SVM_SLOTS - 1)) >= ((j - i) & (SVM_SLOTS - 1))) {
				svm[i] = svm[j];
				i = j;
			}
		}
		svm[i].pointer = NULL;
		svm_count--;
	}
	pthread_mutex_unlock(&svm_lock);
	return found;
}

void memory_svm_keep(const struct svm_taken *taken)
{
	svm_put((void *)(uintptr_t)taken->address, taken->bytes, taken->agent_id);
}

void memory_svm_freed(const struct api_call *call, const struct svm_taken *taken)
{
	int saved = errno;
	/* a call inside another wrapper (a free_func run within it) is not recorded: a
	 * moment of its own */
	emit(ALLOCATION_FREE, MEMORY_KIND_DEVICE, taken->address, taken->bytes, taken->agent_id,
	     call->recorded ? call->correlation_id : 0,
	     call->recorded ? call->start_ns : clock_now_ns());
	errno = saved;
}

/* The pointer's entry taken before the runtime frees it: another thread's clSVMAlloc may
 * get the same address back at once. */
EXPORT void CL_API_CALL clSVMFree(cl_context context, void *pointer)
{
	struct api_call call;
	api_begin(&call, FN_clSVMFree);
	struct svm_taken taken;
	int followed = memory_svm_take(pointer, &taken);
	if (REAL(clSVMFree))
		opencl_real.clSVMFree(context, pointer);
	if (followed)
		memory_svm_freed(&call, &taken);
	api_end(&call, REAL(clSVMFree) ? CL_SUCCESS : MISSING);
}
