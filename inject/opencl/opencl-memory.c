/* Device memory of an OpenCL program (--memory-allocation-trace): each buffer, image and
 * pipe it makes, and each shared virtual memory allocation (clSVMAlloc), is recorded as
 * allocated on its context's device, with its size (CL_MEM_SIZE), its call's correlation
 * id and the call's stack (GPUPROF_ALLOCATION_STACKS); and as freed when it goes: a
 * memory object when the runtime destroys it (its destructor callback, set at its
 * making: the last clReleaseMemObject, whichever thread, or the end of its context's
 * last user), SVM at clSVMFree. A sub-buffer shares its parent's memory and an object
 * made from a GL, EGL or other API's is not OpenCL's to allocate: neither is recorded.
 * A context of several devices has its memory counted on the first. */
#include "opencl-internal.h"

#include <stdlib.h>
#include <string.h>

#include "core/clock.h"
#include "runtime/recorder.h"
#include "util/hash.h"

/* What a memory object's destructor callback needs to record its free. */
struct made {
	uint64_t address, bytes;
	uint32_t agent_id;
};

static void emit(uint32_t operation, uint64_t address, uint64_t bytes, uint32_t agent_id,
		 uint64_t correlation_id, uint64_t start_ns)
{
	struct record_memory_allocation r = {
		.header = { sizeof(r), RECORD_MEMORY_ALLOCATION, 0 },
		.tid = current_thread_id(),
		.agent_id = agent_id,
		.operation = operation,
		.memory_kind = MEMORY_KIND_DEVICE,
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

static void CL_CALLBACK destroyed(cl_mem object, void *user)
{
	struct made *m = user;
	(void)object;
	if (recorder_ready())
		emit(ALLOCATION_FREE, m->address, m->bytes, m->agent_id, 0, clock_now_ns());
	free(m);
}

void memory_object_not(const struct api_call *call, enum function function, void *object)
{
	(void)call, (void)function, (void)object;
}

void memory_object_made(const struct api_call *call, enum function function, void *object)
{
	cl_mem mem = object;
	size_t bytes = 0;
	if (!mem || !call->collected || !trace_allocations || !allocates(function) ||
	    !REAL(clGetMemObjectInfo) || !REAL(clSetMemObjectDestructorCallback) ||
	    opencl_real.clGetMemObjectInfo(mem, CL_MEM_SIZE, sizeof(bytes), &bytes, NULL) !=
		    CL_SUCCESS)
		return;
	cl_context context = NULL;
	opencl_real.clGetMemObjectInfo(mem, CL_MEM_CONTEXT, sizeof(context), &context, NULL);
	struct made *m = malloc(sizeof(*m));
	if (!m)
		return;
	*m = (struct made){ (uint64_t)(uintptr_t)mem, bytes, context_agent(context) };
	if (opencl_real.clSetMemObjectDestructorCallback(mem, destroyed, m) != CL_SUCCESS) {
		free(m); /* its free would not be seen: not recorded at all */
		return;
	}
	take_stack(call);
	emit(ALLOCATION_ALLOCATE, m->address, bytes, m->agent_id, call->correlation_id,
	     call->start_ns);
}

/* ---- shared virtual memory: sizes kept until clSVMFree ------------------------------- */

#define SVM_SLOTS 4096 /* SVM allocations followed at once; beyond, not recorded */
#define SVM_GONE ((void *)(uintptr_t)1)

static pthread_mutex_t svm_lock = PTHREAD_MUTEX_INITIALIZER;
static struct svm {
	void *pointer; /* NULL: never used; SVM_GONE: freed */
	uint64_t bytes;
	uint32_t agent_id;
} svm[SVM_SLOTS];

EXPORT void *CL_API_CALL clSVMAlloc(cl_context context, cl_svm_mem_flags flags, size_t size,
				    cl_uint alignment)
{
	struct api_call call;
	api_begin(&call, FN_clSVMAlloc);
	void *pointer = REAL(clSVMAlloc) ? opencl_real.clSVMAlloc(context, flags, size, alignment)
					 : NULL;
	if (pointer && call.collected && trace_allocations) {
		uint32_t agent = context_agent(context);
		int kept = 0;
		pthread_mutex_lock(&svm_lock);
		for (size_t i = hash_int((uintptr_t)pointer) & (SVM_SLOTS - 1), n = 0;
		     n < SVM_SLOTS && !kept; i = (i + 1) & (SVM_SLOTS - 1), n++)
			if (!svm[i].pointer || svm[i].pointer == SVM_GONE) {
				svm[i] = (struct svm){ pointer, size, agent };
				kept = 1;
			}
		pthread_mutex_unlock(&svm_lock);
		if (kept) { /* else its free could not be told: not recorded */
			take_stack(&call);
			emit(ALLOCATION_ALLOCATE, (uint64_t)(uintptr_t)pointer, size, agent,
			     call.correlation_id, call.start_ns);
		}
	}
	api_end(&call, pointer ? CL_SUCCESS : CL_INVALID_VALUE);
	return pointer;
}

void memory_svm_freed(const struct api_call *call, void *pointer)
{
	struct svm found = { NULL, 0, 0 };
	if (!pointer)
		return;
	pthread_mutex_lock(&svm_lock);
	for (size_t i = hash_int((uintptr_t)pointer) & (SVM_SLOTS - 1), n = 0;
	     n < SVM_SLOTS && svm[i].pointer; i = (i + 1) & (SVM_SLOTS - 1), n++)
		if (svm[i].pointer == pointer) {
			found = svm[i];
			svm[i].pointer = SVM_GONE;
			break;
		}
	pthread_mutex_unlock(&svm_lock);
	if (found.pointer && recorder_ready())
		emit(ALLOCATION_FREE, (uint64_t)(uintptr_t)pointer, found.bytes, found.agent_id,
		     call->correlation_id, call->start_ns);
}

EXPORT void CL_API_CALL clSVMFree(cl_context context, void *pointer)
{
	struct api_call call;
	api_begin(&call, FN_clSVMFree);
	if (REAL(clSVMFree))
		opencl_real.clSVMFree(context, pointer);
	memory_svm_freed(&call, pointer);
	api_end(&call, REAL(clSVMFree) ? CL_SUCCESS : MISSING);
}
