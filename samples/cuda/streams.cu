/* streams: copies overlapping kernels. One stream runs a kernel that spins for a fixed
 * time while a second stream copies a pinned buffer to the device and back; repeated
 * ROUNDS times, so a profiler shows copies and kernels side by side on two streams.
 *
 *   streams [-r ROUNDS] [-m MEGABYTES] [-t SPIN_MICROSECONDS]
 *
 * Per round: one spinKernel on the compute stream, one host-to-device and one
 * device-to-host copy of MEGABYTES on the copy stream. Exits 1 when CUDA fails. */
#include "common.h"

__global__ void spinKernel(long long cycles, int *sink)
{
	long long start = clock64();
	while (clock64() - start < cycles)
		;
	if (threadIdx.x == 0 && blockIdx.x == 0)
		*sink += 1;
}

int main(int argc, char **argv)
{
	int rounds = (int)option_value(argc, argv, "-r", 4);
	size_t bytes = (size_t)option_value(argc, argv, "-m", 64) << 20;
	long spin_us = option_value(argc, argv, "-t", 5000);
	int clock_khz = 0;
	CUDA_CHECK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, 0));
	long long cycles = (long long)spin_us * clock_khz / 1000;

	cudaStream_t compute, copy;
	CUDA_CHECK(cudaStreamCreateWithFlags(&compute, cudaStreamNonBlocking));
	CUDA_CHECK(cudaStreamCreateWithFlags(&copy, cudaStreamNonBlocking));
	char *host, *device;
	int *sink;
	CUDA_CHECK(cudaMallocHost(&host, bytes));
	CUDA_CHECK(cudaMalloc(&device, bytes));
	CUDA_CHECK(cudaMalloc(&sink, sizeof(int)));
	std::memset(host, 1, bytes);
	for (int r = 0; r < rounds; r++) {
		spinKernel<<<1, 32, 0, compute>>>(cycles, sink);
		CUDA_CHECK(cudaMemcpyAsync(device, host, bytes, cudaMemcpyHostToDevice, copy));
		CUDA_CHECK(cudaMemcpyAsync(host, device, bytes, cudaMemcpyDeviceToHost, copy));
		CUDA_CHECK(cudaDeviceSynchronize());
	}
	CUDA_CHECK(cudaGetLastError());
	CUDA_CHECK(cudaFree(sink));
	CUDA_CHECK(cudaFree(device));
	CUDA_CHECK(cudaFreeHost(host));
	CUDA_CHECK(cudaStreamDestroy(compute));
	CUDA_CHECK(cudaStreamDestroy(copy));
	std::printf("streams: %d rounds of one %ld us kernel beside two %zu MiB copies\n", rounds,
		    spin_us, bytes >> 20);
	return 0;
}
