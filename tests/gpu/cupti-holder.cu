/* cupti-holder: a program that takes CUPTI for itself before it uses CUDA, as Nsight
 * or torch.profiler would, then runs one kernel and exits with status 5. Under gpuprof
 * the CUDA backend finds CUPTI taken: tests/gpu check that it says so in one line and
 * the program still runs to completion with its own exit status. */
#include <cstdio>
#include <cupti.h>

__global__ void touch(int *x)
{
	*x = 1;
}

static void CUPTIAPI ignore(void *, CUpti_CallbackDomain, CUpti_CallbackId, const void *)
{
}

int main()
{
	CUpti_SubscriberHandle subscriber;
	CUptiResult rc = cuptiSubscribe(&subscriber, ignore, nullptr);
	printf("cupti-holder: subscribe %s\n", rc == CUPTI_SUCCESS ? "ok" : "failed");
	int *x;
	if (cudaMalloc(&x, sizeof(int)) != cudaSuccess)
		return 1;
	touch<<<1, 1>>>(x);
	if (cudaDeviceSynchronize() != cudaSuccess)
		return 1;
	cudaFree(x);
	return 5;
}
