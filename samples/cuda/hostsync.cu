/* hostsync: the host-synchronisation example of the ROCm profiling guides (seed 004),
 * for CUDA. A copy kernel runs 200 times over 2^24 doubles; by default the host waits
 * for the device after every launch, which leaves the GPU idle between kernels.
 * --fixed synchronises once, after the loop, and the kernels run back to back.
 *
 *   hostsync [--fixed] [-n ELEMENTS] [-i ITERATIONS]
 *
 * Prints the loop's wall time. Exits 1 when CUDA fails. */
#include <chrono>

#include "common.h"

__global__ void mycopy(double *dst, const double *src, size_t n)
{
	size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
	if (i < n)
		dst[i] = src[i];
}

int main(int argc, char **argv)
{
	bool fixed = option_flag(argc, argv, "--fixed");
	size_t n = (size_t)option_value(argc, argv, "-n", 1 << 24);
	int iterations = (int)option_value(argc, argv, "-i", 200);
	const unsigned groupsize = 256;
	unsigned gridsize = (unsigned)((n + groupsize - 1) / groupsize);
	double *src, *dst;
	CUDA_CHECK(cudaMalloc(&src, n * sizeof(double)));
	CUDA_CHECK(cudaMalloc(&dst, n * sizeof(double)));
	CUDA_CHECK(cudaMemset(src, 0, n * sizeof(double)));
	CUDA_CHECK(cudaDeviceSynchronize());
	auto start = std::chrono::steady_clock::now();
	for (int i = 0; i < iterations; i++) {
		mycopy<<<gridsize, groupsize>>>(dst, src, n);
		if (!fixed)
			CUDA_CHECK(cudaDeviceSynchronize());
	}
	CUDA_CHECK(cudaDeviceSynchronize());
	double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() -
							      start).count();
	CUDA_CHECK(cudaGetLastError());
	CUDA_CHECK(cudaFree(dst));
	CUDA_CHECK(cudaFree(src));
	std::printf("hostsync%s: %d kernels in %.3f ms\n", fixed ? " --fixed" : "", iterations, ms);
	return 0;
}
