/* copies: a copy-heavy loop, the CUDA twin of samples/opencl/copies.c: CHUNKS chunks of
 * BYTES bytes, each copied from pageable host memory to the device, doubled by a kernel
 * and copied back, all on one stream: many small copies from pageable memory, serialised
 * with the kernels. --fixed moves the same data in 4 chunks from pinned memory on two
 * streams, so that a chunk's copies run during another chunk's kernel.
 *
 *   copies [--fixed] [-s BYTES] [-i CHUNKS]
 *
 * Prints the wall time. Exits 1 when CUDA fails or a result is wrong. */
#include <chrono>
#include <vector>

#include "common.h"

__global__ void twice(float *x, size_t n)
{
	size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
	if (i < n)
		x[i] = 2.0f * x[i];
}

int main(int argc, char **argv)
{
	bool fixed = option_flag(argc, argv, "--fixed");
	size_t chunk = (size_t)option_value(argc, argv, "-s", 16384) / sizeof(float);
	size_t chunks = (size_t)option_value(argc, argv, "-i", 300);
	size_t total = chunk * chunks;
	if (fixed && chunks % 4 == 0) {
		chunk = total / 4;
		chunks = 4;
	}
	std::vector<float> pageable;
	float *host, *x;
	if (fixed) {
		CUDA_CHECK(cudaMallocHost(&host, total * sizeof(float)));
	} else {
		pageable.resize(total);
		host = pageable.data();
	}
	for (size_t i = 0; i < total; i++)
		host[i] = (float)(i % 1000);
	CUDA_CHECK(cudaMalloc(&x, total * sizeof(float)));
	cudaStream_t streams[2];
	for (cudaStream_t &s : streams)
		CUDA_CHECK(cudaStreamCreate(&s));
	auto start = std::chrono::steady_clock::now();
	for (size_t c = 0; c < chunks; c++) {
		cudaStream_t s = streams[fixed ? c % 2 : 0];
		float *d = x + c * chunk, *h = host + c * chunk;
		CUDA_CHECK(cudaMemcpyAsync(d, h, chunk * sizeof(float), cudaMemcpyHostToDevice, s));
		twice<<<(unsigned)((chunk + 255) / 256), 256, 0, s>>>(d, chunk);
		CUDA_CHECK(cudaMemcpyAsync(h, d, chunk * sizeof(float), cudaMemcpyDeviceToHost, s));
	}
	CUDA_CHECK(cudaDeviceSynchronize());
	double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() -
							      start).count();
	CUDA_CHECK(cudaGetLastError());
	int bad = 0;
	for (size_t i = 0; i < total; i++)
		bad |= host[i] != 2.0f * (float)(i % 1000);
	for (cudaStream_t s : streams)
		CUDA_CHECK(cudaStreamDestroy(s));
	CUDA_CHECK(cudaFree(x));
	if (fixed)
		CUDA_CHECK(cudaFreeHost(host));
	if (bad) {
		std::fprintf(stderr, "copies: a result is wrong\n");
		return 1;
	}
	std::printf("copies%s: %zu chunks in %.3f ms\n", fixed ? " --fixed" : "", chunks, ms);
	return 0;
}
