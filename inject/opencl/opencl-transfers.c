/* The OpenCL backend's wrappers of transfers and other commands (see opencl-internal.h):
 * reads, writes, copies, fills, maps and unmaps of buffers, images and SVM, migrations,
 * markers and barriers, each recorded as a memory command with its bytes and
 * direction, and as an API call. */
#include "opencl-internal.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/recorder.h"

/* ---- wrappers: transfers and other commands --------------------------------------------- */

/* Wraps an enqueue that moves `bytes` in `direction`; `args` are the real call's
 * arguments with the event pointer last. `bytes` is evaluated after api_begin(), so it
 * may use `call`. */
#define ENQUEUE_TRANSFER(fn, queue, operation, direction, bytes, event, call_args) \
	struct api_call call; \
	api_begin(&call, FN_##fn); \
	struct pending *p = copy_begin(&call, queue, operation, direction, bytes); \
	cl_event local_event = NULL; \
	cl_event *event_arg = EVENT_ARG(p, event, local_event); \
	cl_int rc = REAL(fn) ? opencl_real.fn call_args : MISSING; \
	enqueue_end(p, rc, event, local_event); \
	api_end(&call, rc)

static uint64_t rect_bytes(const size_t *region)
{
	return region ? (uint64_t)region[0] * region[1] * region[2] : 0;
}

/* Bytes of a region of an image: pixels times the size of one. */
static uint64_t image_bytes(const struct api_call *call, cl_mem image, const size_t *region)
{
	size_t element = 0;
	if (!call->collected || !REAL(clGetImageInfo) ||
	    opencl_real.clGetImageInfo(image, CL_IMAGE_ELEMENT_SIZE, sizeof(element), &element,
				       NULL))
		return 0;
	return rect_bytes(region) * element;
}

EXPORT cl_int CL_API_CALL clEnqueueReadBuffer(cl_command_queue queue, cl_mem buffer,
					      cl_bool blocking, size_t offset, size_t size,
					      void *ptr, cl_uint wait_count,
					      const cl_event *wait_list, cl_event *event)
{
	ENQUEUE_TRANSFER(clEnqueueReadBuffer, queue, COPY_OPERATION_COPY, COPY_DEVICE_TO_HOST,
			 size, event, (queue, buffer, blocking, offset, size, ptr, wait_count,
				       wait_list, event_arg));
	return rc;
}

EXPORT cl_int CL_API_CALL clEnqueueWriteBuffer(cl_command_queue queue, cl_mem buffer,
					       cl_bool blocking, size_t offset, size_t size,
					       const void *ptr, cl_uint wait_count,
					       const cl_event *wait_list, cl_event *event)
{
	ENQUEUE_TRANSFER(clEnqueueWriteBuffer, queue, COPY_OPERATION_COPY, COPY_HOST_TO_DEVICE,
			 size, event, (queue, buffer, blocking, offset, size, ptr, wait_count,
				       wait_list, event_arg));
	return rc;
}

EXPORT cl_int CL_API_CALL clEnqueueCopyBuffer(cl_command_queue queue, cl_mem src, cl_mem dst,
					      size_t src_offset, size_t dst_offset, size_t size,
					      cl_uint wait_count, const cl_event *wait_list,
					      cl_event *event)
{
	ENQUEUE_TRANSFER(clEnqueueCopyBuffer, queue, COPY_OPERATION_COPY, COPY_DEVICE_TO_DEVICE,
			 size, event, (queue, src, dst, src_offset, dst_offset, size, wait_count,
				       wait_list, event_arg));
	return rc;
}

EXPORT cl_int CL_API_CALL clEnqueueReadBufferRect(
	cl_command_queue queue, cl_mem buffer, cl_bool blocking, const size_t *buffer_origin,
	const size_t *host_origin, const size_t *region, size_t buffer_row_pitch,
	size_t buffer_slice_pitch, size_t host_row_pitch, size_t host_slice_pitch, void *ptr,
	cl_uint wait_count, const cl_event *wait_list, cl_event *event)
{
	ENQUEUE_TRANSFER(clEnqueueReadBufferRect, queue, COPY_OPERATION_COPY,
			 COPY_DEVICE_TO_HOST, rect_bytes(region), event,
			 (queue, buffer, blocking, buffer_origin, host_origin, region,
			  buffer_row_pitch, buffer_slice_pitch, host_row_pitch, host_slice_pitch,
			  ptr, wait_count, wait_list, event_arg));
	return rc;
}

EXPORT cl_int CL_API_CALL clEnqueueWriteBufferRect(
	cl_command_queue queue, cl_mem buffer, cl_bool blocking, const size_t *buffer_origin,
	const size_t *host_origin, const size_t *region, size_t buffer_row_pitch,
	size_t buffer_slice_pitch, size_t host_row_pitch, size_t host_slice_pitch,
	const void *ptr, cl_uint wait_count, const cl_event *wait_list, cl_event *event)
{
	ENQUEUE_TRANSFER(clEnqueueWriteBufferRect, queue, COPY_OPERATION_COPY,
			 COPY_HOST_TO_DEVICE, rect_bytes(region), event,
			 (queue, buffer, blocking, buffer_origin, host_origin, region,
			  buffer_row_pitch, buffer_slice_pitch, host_row_pitch, host_slice_pitch,
			  ptr, wait_count, wait_list, event_arg));
	return rc;
}

EXPORT cl_int CL_API_CALL clEnqueueCopyBufferRect(
	cl_command_queue queue, cl_mem src, cl_mem dst, const size_t *src_origin,
	const size_t *dst_origin, const size_t *region, size_t src_row_pitch,
	size_t src_slice_pitch, size_t dst_row_pitch, size_t dst_slice_pitch,
	cl_uint wait_count, const cl_event *wait_list, cl_event *event)
{
	ENQUEUE_TRANSFER(clEnqueueCopyBufferRect, queue, COPY_OPERATION_COPY,
			 COPY_DEVICE_TO_DEVICE, rect_bytes(region), event,
			 (queue, src, dst, src_origin, dst_origin, region, src_row_pitch,
			  src_slice_pitch, dst_row_pitch, dst_slice_pitch, wait_count, wait_list,
			  event_arg));
	return rc;
}

EXPORT cl_int CL_API_CALL clEnqueueFillBuffer(cl_command_queue queue, cl_mem buffer,
					      const void *pattern, size_t pattern_size,
					      size_t offset, size_t size, cl_uint wait_count,
					      const cl_event *wait_list, cl_event *event)
{
	ENQUEUE_TRANSFER(clEnqueueFillBuffer, queue, COPY_OPERATION_FILL, COPY_NONE, size, event,
			 (queue, buffer, pattern, pattern_size, offset, size, wait_count,
			  wait_list, event_arg));
	return rc;
}

EXPORT cl_int CL_API_CALL clEnqueueReadImage(cl_command_queue queue, cl_mem image,
					     cl_bool blocking, const size_t *origin,
					     const size_t *region, size_t row_pitch,
					     size_t slice_pitch, void *ptr, cl_uint wait_count,
					     const cl_event *wait_list, cl_event *event)
{
	ENQUEUE_TRANSFER(clEnqueueReadImage, queue, COPY_OPERATION_COPY, COPY_DEVICE_TO_HOST,
			 image_bytes(&call, image, region), event,
			 (queue, image, blocking, origin, region, row_pitch, slice_pitch, ptr,
			  wait_count, wait_list, event_arg));
	return rc;
}

EXPORT cl_int CL_API_CALL clEnqueueWriteImage(cl_command_queue queue, cl_mem image,
					      cl_bool blocking, const size_t *origin,
					      const size_t *region, size_t row_pitch,
					      size_t slice_pitch, const void *ptr,
					      cl_uint wait_count, const cl_event *wait_list,
					      cl_event *event)
{
	ENQUEUE_TRANSFER(clEnqueueWriteImage, queue, COPY_OPERATION_COPY, COPY_HOST_TO_DEVICE,
			 image_bytes(&call, image, region), event,
			 (queue, image, blocking, origin, region, row_pitch, slice_pitch, ptr,
			  wait_count, wait_list, event_arg));
	return rc;
}

EXPORT cl_int CL_API_CALL clEnqueueCopyImage(cl_command_queue queue, cl_mem src, cl_mem dst,
					     const size_t *src_origin, const size_t *dst_origin,
					     const size_t *region, cl_uint wait_count,
					     const cl_event *wait_list, cl_event *event)
{
	ENQUEUE_TRANSFER(clEnqueueCopyImage, queue, COPY_OPERATION_COPY, COPY_DEVICE_TO_DEVICE,
			 image_bytes(&call, src, region), event,
			 (queue, src, dst, src_origin, dst_origin, region, wait_count, wait_list,
			  event_arg));
	return rc;
}

EXPORT cl_int CL_API_CALL clEnqueueCopyImageToBuffer(cl_command_queue queue, cl_mem src,
						     cl_mem dst, const size_t *src_origin,
						     const size_t *region, size_t dst_offset,
						     cl_uint wait_count, const cl_event *wait_list,
						     cl_event *event)
{
	ENQUEUE_TRANSFER(clEnqueueCopyImageToBuffer, queue, COPY_OPERATION_COPY,
			 COPY_DEVICE_TO_DEVICE, image_bytes(&call, src, region), event,
			 (queue, src, dst, src_origin, region, dst_offset, wait_count, wait_list,
			  event_arg));
	return rc;
}

EXPORT cl_int CL_API_CALL clEnqueueCopyBufferToImage(cl_command_queue queue, cl_mem src,
						     cl_mem dst, size_t src_offset,
						     const size_t *dst_origin, const size_t *region,
						     cl_uint wait_count, const cl_event *wait_list,
						     cl_event *event)
{
	ENQUEUE_TRANSFER(clEnqueueCopyBufferToImage, queue, COPY_OPERATION_COPY,
			 COPY_DEVICE_TO_DEVICE, image_bytes(&call, dst, region), event,
			 (queue, src, dst, src_offset, dst_origin, region, wait_count, wait_list,
			  event_arg));
	return rc;
}

EXPORT cl_int CL_API_CALL clEnqueueFillImage(cl_command_queue queue, cl_mem image,
					     const void *fill_color, const size_t *origin,
					     const size_t *region, cl_uint wait_count,
					     const cl_event *wait_list, cl_event *event)
{
	ENQUEUE_TRANSFER(clEnqueueFillImage, queue, COPY_OPERATION_FILL, COPY_NONE,
			 image_bytes(&call, image, region), event,
			 (queue, image, fill_color, origin, region, wait_count, wait_list,
			  event_arg));
	return rc;
}

/* Memory objects migrated: their sizes added up. */
static uint64_t objects_bytes(cl_uint count, const cl_mem *objects)
{
	uint64_t total = 0;
	for (cl_uint i = 0; objects && i < count && REAL(clGetMemObjectInfo); i++) {
		size_t size = 0;
		if (opencl_real.clGetMemObjectInfo(objects[i], CL_MEM_SIZE, sizeof(size), &size,
						   NULL) == CL_SUCCESS)
			total += size;
	}
	return total;
}

EXPORT cl_int CL_API_CALL clEnqueueMigrateMemObjects(cl_command_queue queue, cl_uint count,
						     const cl_mem *objects,
						     cl_mem_migration_flags flags,
						     cl_uint wait_count, const cl_event *wait_list,
						     cl_event *event)
{
	uint32_t direction = flags & CL_MIGRATE_MEM_OBJECT_HOST ? COPY_DEVICE_TO_HOST
								 : COPY_HOST_TO_DEVICE;
	uint64_t bytes = flags & CL_MIGRATE_MEM_OBJECT_CONTENT_UNDEFINED
		? 0 : objects_bytes(count, objects);
	ENQUEUE_TRANSFER(clEnqueueMigrateMemObjects, queue, COPY_OPERATION_MIGRATE, direction,
			 bytes, event,
			 (queue, count, objects, flags, wait_count, wait_list, event_arg));
	return rc;
}

EXPORT cl_int CL_API_CALL clEnqueueMarkerWithWaitList(cl_command_queue queue, cl_uint n,
						      const cl_event *wait_list, cl_event *event)
{
	ENQUEUE_TRANSFER(clEnqueueMarkerWithWaitList, queue, COPY_OPERATION_MARKER, COPY_NONE, 0,
			 event, (queue, n, wait_list, event_arg));
	return rc;
}

EXPORT cl_int CL_API_CALL clEnqueueBarrierWithWaitList(cl_command_queue queue, cl_uint n,
						       const cl_event *wait_list,
						       cl_event *event)
{
	ENQUEUE_TRANSFER(clEnqueueBarrierWithWaitList, queue, COPY_OPERATION_BARRIER, COPY_NONE,
			 0, event, (queue, n, wait_list, event_arg));
	return rc;
}

/* OpenCL 1.1's marker always returns its event. */
EXPORT cl_int CL_API_CALL clEnqueueMarker(cl_command_queue queue, cl_event *event)
{
	ENQUEUE_TRANSFER(clEnqueueMarker, queue, COPY_OPERATION_MARKER, COPY_NONE, 0, event,
			 (queue, event_arg));
	return rc;
}

/* OpenCL 1.1's barrier has no event: when followed, it is enqueued as the 1.2 barrier
 * with no wait list, which the standard defines as the same command. */
EXPORT cl_int CL_API_CALL clEnqueueBarrier(cl_command_queue queue)
{
	struct api_call call;
	api_begin(&call, FN_clEnqueueBarrier);
	struct pending *p = REAL(clEnqueueBarrierWithWaitList)
		? copy_begin(&call, queue, COPY_OPERATION_BARRIER, COPY_NONE, 0) : NULL;
	cl_event local_event = NULL;
	cl_int rc = p ? opencl_real.clEnqueueBarrierWithWaitList(queue, 0, NULL, &local_event)
		: REAL(clEnqueueBarrier) ? opencl_real.clEnqueueBarrier(queue) : MISSING;
	enqueue_end(p, rc, NULL, local_event);
	api_end(&call, rc);
	return rc;
}

EXPORT cl_int CL_API_CALL clEnqueueSVMMemcpy(cl_command_queue queue, cl_bool blocking,
					     void *dst, const void *src, size_t size,
					     cl_uint wait_count, const cl_event *wait_list,
					     cl_event *event)
{
	ENQUEUE_TRANSFER(clEnqueueSVMMemcpy, queue, COPY_OPERATION_COPY, COPY_UNKNOWN, size,
			 event, (queue, blocking, dst, src, size, wait_count, wait_list,
				 event_arg));
	return rc;
}

EXPORT cl_int CL_API_CALL clEnqueueSVMMemFill(cl_command_queue queue, void *svm_ptr,
					      const void *pattern, size_t pattern_size,
					      size_t size, cl_uint wait_count,
					      const cl_event *wait_list, cl_event *event)
{
	ENQUEUE_TRANSFER(clEnqueueSVMMemFill, queue, COPY_OPERATION_FILL, COPY_NONE, size, event,
			 (queue, svm_ptr, pattern, pattern_size, size, wait_count, wait_list,
			  event_arg));
	return rc;
}

EXPORT cl_int CL_API_CALL clEnqueueSVMMigrateMem(cl_command_queue queue, cl_uint count,
						 const void **pointers, const size_t *sizes,
						 cl_mem_migration_flags flags, cl_uint wait_count,
						 const cl_event *wait_list, cl_event *event)
{
	uint64_t bytes = 0;
	for (cl_uint i = 0; sizes && i < count; i++)
		bytes += sizes[i];
	uint32_t direction = flags & CL_MIGRATE_MEM_OBJECT_HOST ? COPY_DEVICE_TO_HOST
								 : COPY_HOST_TO_DEVICE;
	ENQUEUE_TRANSFER(clEnqueueSVMMigrateMem, queue, COPY_OPERATION_MIGRATE, direction, bytes,
			 event, (queue, count, pointers, sizes, flags, wait_count, wait_list,
				 event_arg));
	return rc;
}

EXPORT cl_int CL_API_CALL clEnqueueSVMFree(
	cl_command_queue queue, cl_uint count, void *pointers[],
	void(CL_CALLBACK *free_func)(cl_command_queue, cl_uint, void *[], void *), void *user_data,
	cl_uint wait_count, const cl_event *wait_list, cl_event *event)
{
	/* Without a free_func the runtime frees the pointers when the command runs: their
	 * allocations are taken before the call (the queue may free them, and another
	 * thread allocate the same addresses, before it returns), recorded as freed when it
	 * succeeds, put back when it fails. With one, the program's function frees them or
	 * not: its clSVMFree says. */
	struct svm_taken few[64], *taken = few;
	size_t followed = 0;
	if (!free_func && pointers && count) {
		int saved = errno;
		if (count > 64 && !(taken = malloc(count * sizeof(*taken))))
			taken = few; /* no memory: the first 64 followed, the others stay */
		size_t room = taken == few ? 64 : count;
		for (cl_uint i = 0; i < count && followed < room; i++)
			followed += memory_svm_take(pointers[i], &taken[followed]);
		errno = saved;
	}
	ENQUEUE_TRANSFER(clEnqueueSVMFree, queue, COPY_OPERATION_FREE, COPY_NONE, 0, event,
			 (queue, count, pointers, free_func, user_data, wait_count, wait_list,
			  event_arg));
	int saved = errno;
	for (size_t i = 0; i < followed; i++) {
		if (rc == CL_SUCCESS)
			memory_svm_freed(&call, &taken[i]);
		else
			memory_svm_keep(&taken[i]);
	}
	if (taken != few)
		free(taken);
	errno = saved;
	return rc;
}

/* Mapped regions, so that an unmap knows how many bytes it writes back: a table that
 * grows, under a lock (maps are rare and expensive). */
struct mapping {
	void *ptr;
	uint64_t bytes;
	int writes; /* mapped for writing: the unmap moves data to the device */
};
static struct mapping *mappings;
static size_t mapping_count, mapping_capacity;
static pthread_mutex_t mapping_lock = PTHREAD_MUTEX_INITIALIZER;

/* A map moves the region to the host unless it is mapped to be overwritten. */
static uint32_t map_direction(cl_map_flags flags)
{
	return flags & CL_MAP_WRITE_INVALIDATE_REGION ? COPY_NONE : COPY_DEVICE_TO_HOST;
}

static void mapping_add(void *ptr, uint64_t bytes, cl_map_flags flags)
{
	pthread_mutex_lock(&mapping_lock);
	if (mapping_count == mapping_capacity) {
		size_t capacity = mapping_capacity ? mapping_capacity * 2 : 256;
		struct mapping *grown = realloc(mappings, capacity * sizeof(*grown));
		if (grown) {
			mappings = grown;
			mapping_capacity = capacity;
		}
	}
	if (mapping_count < mapping_capacity)
		mappings[mapping_count++] = (struct mapping){
			ptr, bytes, (flags & (CL_MAP_WRITE | CL_MAP_WRITE_INVALIDATE_REGION)) != 0
		};
	pthread_mutex_unlock(&mapping_lock);
}

/* The mapping of `ptr`, forgotten; the latest one when the same region is mapped twice. */
static struct mapping mapping_take(void *ptr)
{
	struct mapping found = { NULL, 0, 0 };
	pthread_mutex_lock(&mapping_lock);
	for (size_t i = mapping_count; ptr && i-- > 0;) {
		if (mappings[i].ptr == ptr) {
			found = mappings[i];
			mappings[i] = mappings[--mapping_count];
			break;
		}
	}
	pthread_mutex_unlock(&mapping_lock);
	return found;
}

EXPORT void *CL_API_CALL clEnqueueMapBuffer(cl_command_queue queue, cl_mem buffer,
					    cl_bool blocking, cl_map_flags flags, size_t offset,
					    size_t size, cl_uint wait_count,
					    const cl_event *wait_list, cl_event *event,
					    cl_int *errcode_ret)
{
	struct api_call call;
	api_begin(&call, FN_clEnqueueMapBuffer);
	struct pending *p = copy_begin(&call, queue, COPY_OPERATION_MAP, map_direction(flags),
				       size);
	cl_event local_event = NULL;
	cl_int rc = MISSING;
	void *ptr = REAL(clEnqueueMapBuffer)
		? opencl_real.clEnqueueMapBuffer(queue, buffer, blocking, flags, offset, size,
						 wait_count, wait_list,
						 EVENT_ARG(p, event, local_event), &rc)
		: NULL;
	enqueue_end(p, rc, event, local_event);
	if (ptr && call.recorded)
		mapping_add(ptr, size, flags);
	api_end(&call, rc);
	if (errcode_ret)
		*errcode_ret = rc;
	return ptr;
}

EXPORT void *CL_API_CALL clEnqueueMapImage(cl_command_queue queue, cl_mem image,
					   cl_bool blocking, cl_map_flags flags,
					   const size_t *origin, const size_t *region,
					   size_t *row_pitch, size_t *slice_pitch,
					   cl_uint wait_count, const cl_event *wait_list,
					   cl_event *event, cl_int *errcode_ret)
{
	struct api_call call;
	api_begin(&call, FN_clEnqueueMapImage);
	uint64_t bytes = call.recorded ? image_bytes(&call, image, region) : 0;
	struct pending *p = copy_begin(&call, queue, COPY_OPERATION_MAP, map_direction(flags),
				       bytes);
	cl_event local_event = NULL;
	cl_int rc = MISSING;
	void *ptr = REAL(clEnqueueMapImage)
		? opencl_real.clEnqueueMapImage(queue, image, blocking, flags, origin, region,
						row_pitch, slice_pitch, wait_count, wait_list,
						EVENT_ARG(p, event, local_event), &rc)
		: NULL;
	enqueue_end(p, rc, event, local_event);
	if (ptr && call.recorded)
		mapping_add(ptr, bytes, flags);
	api_end(&call, rc);
	if (errcode_ret)
		*errcode_ret = rc;
	return ptr;
}

EXPORT cl_int CL_API_CALL clEnqueueSVMMap(cl_command_queue queue, cl_bool blocking,
					  cl_map_flags flags, void *svm_ptr, size_t size,
					  cl_uint wait_count, const cl_event *wait_list,
					  cl_event *event)
{
	ENQUEUE_TRANSFER(clEnqueueSVMMap, queue, COPY_OPERATION_MAP, map_direction(flags), size,
			 event, (queue, blocking, flags, svm_ptr, size, wait_count, wait_list,
				 event_arg));
	if (rc == CL_SUCCESS && call.recorded)
		mapping_add(svm_ptr, size, flags);
	return rc;
}

EXPORT cl_int CL_API_CALL clEnqueueUnmapMemObject(cl_command_queue queue, cl_mem memobj,
						  void *mapped, cl_uint wait_count,
						  const cl_event *wait_list, cl_event *event)
{
	struct mapping found = mapping_take(mapped);
	ENQUEUE_TRANSFER(clEnqueueUnmapMemObject, queue, COPY_OPERATION_UNMAP,
			 found.writes ? COPY_HOST_TO_DEVICE : COPY_NONE, found.bytes, event,
			 (queue, memobj, mapped, wait_count, wait_list, event_arg));
	return rc;
}

EXPORT cl_int CL_API_CALL clEnqueueSVMUnmap(cl_command_queue queue, void *svm_ptr,
					    cl_uint wait_count, const cl_event *wait_list,
					    cl_event *event)
{
	struct mapping found = mapping_take(svm_ptr);
	ENQUEUE_TRANSFER(clEnqueueSVMUnmap, queue, COPY_OPERATION_UNMAP,
			 found.writes ? COPY_HOST_TO_DEVICE : COPY_NONE, found.bytes, event,
			 (queue, svm_ptr, wait_count, wait_list, event_arg));
	return rc;
}
