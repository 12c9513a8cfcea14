/* The floor of CUPTI kernel tracing, for bench/gpu/run.sh: the least a CUPTI tracer can
 * do. Injected like gpuprof's CUDA backend (CUDA_INJECTION64_PATH), it enables
 * CONCURRENT_KERNEL only, hands CUPTI buffers from a preallocated pool and throws their
 * records away, and forces the last buffers out at exit. No subscriber, no clock
 * conversion, no translation, no recorder: what gpuprof adds over it is its overhead. */
#include <cupti.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define BUFFER_SIZE (4u << 20)
#define BUFFERS 64

static uint8_t *pool[BUFFERS];
static int pool_count;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned long long records;

static void CUPTIAPI request(uint8_t **buffer, size_t *size, size_t *max_records)
{
	pthread_mutex_lock(&lock);
	*buffer = pool_count ? pool[--pool_count] : aligned_alloc(8, BUFFER_SIZE);
	pthread_mutex_unlock(&lock);
	*size = *buffer ? BUFFER_SIZE : 0;
	*max_records = 0;
}

static void CUPTIAPI completed(CUcontext context, uint32_t stream, uint8_t *buffer,
			       size_t size, size_t valid)
{
	CUpti_Activity *record = NULL;
	while (cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS)
		records++;
	pthread_mutex_lock(&lock);
	if (pool_count < BUFFERS)
		pool[pool_count++] = buffer;
	else
		free(buffer);
	pthread_mutex_unlock(&lock);
}

static void at_exit(void)
{
	cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	if (getenv("GPUPROF_FLOOR_VERBOSE"))
		fprintf(stderr, "cupti-floor: %llu records\n", records);
}

__attribute__((visibility("default"))) int InitializeInjection(void)
{
	for (pool_count = 0; pool_count < 4; pool_count++)
		pool[pool_count] = aligned_alloc(8, BUFFER_SIZE);
	if (cuptiActivityRegisterCallbacks(request, completed) != CUPTI_SUCCESS ||
	    cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) != CUPTI_SUCCESS)
		fprintf(stderr, "cupti-floor: cannot enable CUPTI kernel tracing\n");
	atexit(at_exit);
	return 1;
}
