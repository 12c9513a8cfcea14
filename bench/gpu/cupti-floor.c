/* The floor of CUPTI kernel tracing, for bench/gpu/run.sh: the least a CUPTI tracer can
 * do. Injected like gpuprof's CUDA backend (CUDA_INJECTION64_PATH), it enables
 * CONCURRENT_KERNEL only, hands CUPTI buffers from a preallocated pool and throws their
 * records away, and forces the last buffers out at exit. No subscriber, no clock
 * conversion, no translation, no recorder: what gpuprof adds over it is its overhead.
 * To tell which of gpuprof's CUPTI requests costs what, two variants, by environment:
 *   GPUPROF_FLOOR_FLUSH_MS=N   a thread asks for completed buffers every N ms, as
 *                              gpuprof's writer does (cuptiActivityFlushAll(0))
 *   GPUPROF_FLOOR_ALL_KINDS=1  also the kinds gpuprof's --kernel-trace enables beside
 *                              kernels: DEVICE and OVERHEAD */
#include <cupti.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

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

static void *flusher(void *arg)
{
	long ms = (long)(intptr_t)arg;
	struct timespec period = { ms / 1000, ms % 1000 * 1000000L };
	for (;;) {
		nanosleep(&period, NULL);
		cuptiActivityFlushAll(0);
	}
	return NULL;
}

__attribute__((visibility("default"))) int InitializeInjection(void)
{
	for (pool_count = 0; pool_count < 4; pool_count++)
		pool[pool_count] = aligned_alloc(8, BUFFER_SIZE);
	if (cuptiActivityRegisterCallbacks(request, completed) != CUPTI_SUCCESS ||
	    cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) != CUPTI_SUCCESS)
		fprintf(stderr, "cupti-floor: cannot enable CUPTI kernel tracing\n");
	const char *all = getenv("GPUPROF_FLOOR_ALL_KINDS");
	if (all && *all == '1' &&
	    (cuptiActivityEnableAndDump(CUPTI_ACTIVITY_KIND_DEVICE) != CUPTI_SUCCESS ||
	     cuptiActivityEnable(CUPTI_ACTIVITY_KIND_OVERHEAD) != CUPTI_SUCCESS))
		fprintf(stderr, "cupti-floor: cannot enable DEVICE and OVERHEAD records\n");
	const char *flush = getenv("GPUPROF_FLOOR_FLUSH_MS");
	long ms = flush ? strtol(flush, NULL, 10) : 0;
	pthread_t thread;
	if (ms > 0 && pthread_create(&thread, NULL, flusher, (void *)(intptr_t)ms) != 0)
		fprintf(stderr, "cupti-floor: cannot start the flushing thread\n");
	atexit(at_exit);
	return 1;
}
