/* memcpy-bw: the bandwidth of a device-to-device cudaMemcpy, the peer of gpuprof
 * roofline's HBMBw (a copy kernel).
 *
 *   memcpy-bw [-m MIB] [-i ITERATIONS]
 *
 * Copies a buffer of MIB mebibytes (default 1024) into another ITERATIONS times (default
 * 20) after one warm-up, timed with CUDA events, and prints the bytes moved (read plus
 * written) per second in GB/s. Exits 1 when CUDA fails. */
#include "../../samples/cuda/common.h"

int main(int argc, char **argv)
{
	size_t bytes = (size_t)option_value(argc, argv, "-m", 1024) << 20;
	int iterations = (int)option_value(argc, argv, "-i", 20);
	if (!bytes || iterations < 1) {
		std::fprintf(stderr, "usage: memcpy-bw [-m MIB] [-i ITERATIONS]\n");
		return 2;
	}
	void *a, *b;
	CUDA_CHECK(cudaMalloc(&a, bytes));
	CUDA_CHECK(cudaMalloc(&b, bytes));
	CUDA_CHECK(cudaMemset(a, 1, bytes));
	CUDA_CHECK(cudaMemcpy(b, a, bytes, cudaMemcpyDeviceToDevice));
	cudaEvent_t start, stop;
	CUDA_CHECK(cudaEventCreate(&start));
	CUDA_CHECK(cudaEventCreate(&stop));
	CUDA_CHECK(cudaEventRecord(start));
	for (int i = 0; i < iterations; i++)
		CUDA_CHECK(cudaMemcpy(b, a, bytes, cudaMemcpyDeviceToDevice));
	CUDA_CHECK(cudaEventRecord(stop));
	CUDA_CHECK(cudaEventSynchronize(stop));
	float ms = 0;
	CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
	std::printf("%.3f\n", 2.0 * bytes * iterations / (ms * 1e-3) / 1e9);
	return 0;
}
