/* nvtx-app: a program annotated with NVTX v3 (header-only, as PyTorch and NCCL use it),
 * for the NVTX tests; it needs no GPU.
 * Pushes "epoch" then "forward" (nested, the second with event attributes), marks
 * "loss" (attributes, a registered string), starts "prefetch" and ends it from a thread
 * named "loader" with nvtxNameOsThreadA; in a domain "nccl" pushes "allreduce" and pops;
 * pushes a wide-character "wide ü" and pops; prints each push's and pop's return
 * value.
 *   nvtx-app oom N: pushes "before", then runs out of memory (its address space capped,
 *   malloc() until it fails, in ever smaller pieces) and meanwhile makes N domains
 *   "domain I" with a mark "mark I" in each and registers a string per domain, first
 *   while only large pieces fail, then while nothing is left; frees everything, pops
 *   "before", pushes and pops "after", prints what it did and exits with status 5.
 *   nvtx-app interleave: two domains' ranges on one thread, each closed by its own
 *   domain's pop: "app" pushes "step", "nccl" pushes "comm" inside it, "app" pops (ending
 *   "step", not "comm"), pushes "next", "nccl" pops ("comm"), "app" pops ("next"); a
 *   mark in each domain and one in the default domain; prints each return value. */
#include <nvtx3/nvToolsExt.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cap-memory.h"

static nvtxRangeId_t prefetch;

static void *loader(void *unused)
{
	(void)unused;
	nvtxNameOsThreadA((uint32_t)syscall(SYS_gettid), "loader");
	nvtxRangeEnd(prefetch);
	return NULL;
}

/* Takes pieces of `size` bytes until malloc() fails, chained through their first bytes;
 * returns the count. */
static unsigned long long exhaust(void **chain, size_t size)
{
	unsigned long long got = 0;
	for (void **p; (p = malloc(size)); got++) {
		memset(p, 1, size);
		*p = *chain;
		*chain = p;
	}
	return got;
}

static void domains(int first, int count)
{
	for (int i = first; i < first + count; i++) {
		char name[64];
		snprintf(name, sizeof(name), "domain %d", i);
		nvtxDomainHandle_t d = nvtxDomainCreateA(name);
		snprintf(name, sizeof(name), "string %d", i);
		nvtxDomainRegisterStringA(d, name);
		snprintf(name, sizeof(name), "mark %d", i);
		nvtxEventAttributes_t a = { 0 };
		a.version = NVTX_VERSION;
		a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
		a.messageType = NVTX_MESSAGE_TYPE_ASCII;
		a.message.ascii = name;
		nvtxDomainMarkEx(d, &a);
	}
}

static int out_of_memory(int n)
{
	nvtxRangePushA("before");
	if (cap_address_space(32u << 20))
		return 1;
	void *chain = NULL;
	unsigned long long large = exhaust(&chain, 1 << 20);
	domains(0, n / 2); /* small pieces can still be had */
	unsigned long long small = exhaust(&chain, 4096) + exhaust(&chain, 64) +
				   exhaust(&chain, 16);
	domains(n / 2, n - n / 2);
	while (chain) {
		void *next = *(void **)chain;
		free(chain);
		chain = next;
	}
	nvtxRangePop();
	nvtxRangePushA("after");
	nvtxRangePop();
	printf("nvtx-app: %d domains made out of memory (%llu MiB, then %llu small pieces)\n",
	       n, large, small);
	return 5;
}

static nvtxEventAttributes_t message(const char *text)
{
	nvtxEventAttributes_t a = { 0 };
	a.version = NVTX_VERSION;
	a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
	a.messageType = NVTX_MESSAGE_TYPE_ASCII;
	a.message.ascii = text;
	return a;
}

static int interleave(void)
{
	nvtxDomainHandle_t app = nvtxDomainCreateA("app"), nccl = nvtxDomainCreateA("nccl");
	nvtxEventAttributes_t step = message("step"), comm = message("comm"),
			      next = message("next"), app_mark = message("app mark"),
			      nccl_mark = message("nccl mark");
	printf("push step: %d\n", nvtxDomainRangePushEx(app, &step));
	printf("push comm: %d\n", nvtxDomainRangePushEx(nccl, &comm));
	nvtxDomainMarkEx(app, &app_mark);
	printf("pop app: %d\n", nvtxDomainRangePop(app));
	printf("push next: %d\n", nvtxDomainRangePushEx(app, &next));
	nvtxDomainMarkEx(nccl, &nccl_mark);
	printf("pop nccl: %d\n", nvtxDomainRangePop(nccl));
	nvtxMarkA("default mark");
	printf("pop app: %d\n", nvtxDomainRangePop(app));
	printf("pop app: %d\n", nvtxDomainRangePop(app));
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "oom"))
		return out_of_memory(atoi(argv[2]));
	if (argc == 2 && !strcmp(argv[1], "interleave"))
		return interleave();
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
