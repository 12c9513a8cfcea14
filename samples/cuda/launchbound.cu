/* launchbound: kernels so short that launching them takes longer than running them
 * (seed 001: the GPU starves), the CUDA twin of samples/opencl/launchbound.c. LAUNCHES
 * kernels each scale ELEMENTS floats, launched back to back and waited for once; --fixed
 * does the same work in one launch.
 *
 *   launchbound [--fixed] [-n ELEMENTS] [-i LAUNCHES]
 *
 * Prints the wall time. Exits 1 when CUDA fails or a result is wrong. */
#include <chrono>
#include <vector>

#include "common.h"

__global__ void scale(float *x, size_t offset, size_t n)
{
	size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
	if (i < n)
		x[offset + i] *= 2.0f;
}

int main(int argc, char **argv)
{
	bool fixed = option_flag(argc, argv, "--fixed");
	size_t n = (size_t)option_value(argc, argv, "-n", 64);
	size_t launches = (size_t)option_value(argc, argv, "-i", 5000);
	size_t total = n * launches;
	std::vector<float> host(total, 1.0f);
	float *x;
	CUDA_CHECK(cudaMalloc(&x, total * sizeof(float)));
	CUDA_CHECK(cudaMemcpy(x, host.data(), total * sizeof(float), cudaMemcpyHostToDevice));
	auto start = std::chrono::steady_clock::now();
	if (fixed)
		scale<<<(unsigned)((total + 255) / 256), 256>>>(x, 0, total);
	else
		for (size_t i = 0; i < launches; i++)
			scale<<<(unsigned)((n + 255) / 256), 256>>>(x, i * n, n);
	CUDA_CHECK(cudaDeviceSynchronize());
	double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() -
							      start).count();
	CUDA_CHECK(cudaGetLastError());
	CUDA_CHECK(cudaMemcpy(host.data(), x, total * sizeof(float), cudaMemcpyDeviceToHost));
	CUDA_CHECK(cudaFree(x));
	for (float v : host)
		if (v != 2.0f) {
			std::fprintf(stderr, "launchbound: a result is wrong\n");
			return 1;
		}
	std::printf("launchbound%s: %zu launches in %.3f ms\n", fixed ? " --fixed" : "",
		    fixed ? (size_t)1 : launches, ms);
	return 0;
}
