/* pc-chase: a kernel whose time goes to one line, for the PC sampling test.
 *
 *   pc-chase [-s STEPS]
 *
 * One launch of chase over 64 blocks of 128 threads; each thread follows a chain of STEPS
 * dependent loads through a 256 MiB array shuffled so that every load misses the caches:
 * the line marked CHASE below waits on memory (a long-scoreboard stall) nearly all the
 * time, the arithmetic around it is a few instructions per step. A stall is sampled at
 * the instruction that waits for the loaded value, not at the load: the load and the
 * first use of what it loaded share the line. Built with -lineinfo
 * (the Makefile), so the samples name this file and that line. Exits 1 when CUDA fails. */
#include "../../samples/cuda/common.h"

__global__ void chase(const unsigned *next, unsigned *out, int steps)
{
	unsigned i = (blockIdx.x * blockDim.x + threadIdx.x) * 4099u;
	unsigned sum = 0;
#pragma unroll 1
	for (int k = 0; k < steps; k++) {
		sum += (i = next[i]) & 7; /* CHASE */
	}
	out[blockIdx.x * blockDim.x + threadIdx.x] = sum;
}

int main(int argc, char **argv)
{
	int steps = (int)option_value(argc, argv, "-s", 20000);
	const unsigned n = 64u << 20; /* 256 MiB of indices */
	unsigned *host = (unsigned *)std::malloc(n * sizeof(unsigned));
	if (!host || steps < 1)
		return 2;
	/* one cycle through every element, in strides that leave each cache line at once */
	for (unsigned k = 0; k < n; k++)
		host[k] = (unsigned)(((unsigned long long)k + 1000003ull * 16) % n);
	unsigned *next, *out;
	CUDA_CHECK(cudaMalloc(&next, n * sizeof(unsigned)));
	CUDA_CHECK(cudaMalloc(&out, 64 * 128 * sizeof(unsigned)));
	CUDA_CHECK(cudaMemcpy(next, host, n * sizeof(unsigned), cudaMemcpyHostToDevice));
	chase<<<64, 128>>>(next, out, steps);
	CUDA_CHECK(cudaGetLastError());
	CUDA_CHECK(cudaDeviceSynchronize());
	CUDA_CHECK(cudaFree(next));
	CUDA_CHECK(cudaFree(out));
	std::free(host);
	return 0;
}
