/* nvtx-app: a program annotated with NVTX v3 (header-only, as PyTorch and NCCL use it),
 * for the NVTX tests; it needs no GPU.
 * Pushes "epoch" then "forward" (nested, the second with event attributes), marks
 * "loss" (attributes, a registered string), starts "prefetch" and ends it from a thread
 * named "loader" with nvtxNameOsThreadA; in a domain "nccl" pushes "allreduce" and pops;
 * pushes a wide-character "wide ü" and pops; prints each push's and pop's return
 * value. */
#include <nvtx3/nvToolsExt.h>

#include <pthread.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

static nvtxRangeId_t prefetch;

static void *loader(void *unused)
{
	(void)unused;
	nvtxNameOsThreadA((uint32_t)syscall(SYS_gettid), "loader");
	nvtxRangeEnd(prefetch);
	return NULL;
}

int main(void)
{
	printf("push epoch: %d\n", nvtxRangePushA("epoch"));
	nvtxEventAttributes_t a = { 0 };
	a.version = NVTX_VERSION;
	a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
	a.messageType = NVTX_MESSAGE_TYPE_ASCII;
	a.message.ascii = "forward";
	printf("push forward: %d\n", nvtxRangePushEx(&a));
	nvtxDomainHandle_t nccl = nvtxDomainCreateA("nccl");
	a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
	a.message.registered = nvtxDomainRegisterStringA(NULL, "loss");
	nvtxMarkEx(&a);
	printf("pop: %d\n", nvtxRangePop());
	prefetch = nvtxRangeStartA("prefetch");
	pthread_t t;
	pthread_create(&t, NULL, loader, NULL);
	pthread_join(t, NULL);
	a.messageType = NVTX_MESSAGE_TYPE_ASCII;
	a.message.ascii = "allreduce";
	printf("push allreduce: %d\n", nvtxDomainRangePushEx(nccl, &a));
	printf("pop: %d\n", nvtxDomainRangePop(nccl));
	printf("push wide: %d\n", nvtxRangePushW(L"wide \u00fc"));
	printf("pop: %d\n", nvtxRangePop());
	printf("pop: %d\n", nvtxRangePop());
	return 0;
}
