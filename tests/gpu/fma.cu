/* fma: a kernel whose floating-point work is known exactly, for the counter tests.
 *
 *   fma [-t THREADS] [-k FMAS]
 *
 * One launch of fmaLoop over THREADS threads (blocks of 256), each running a dependent
 * chain of FMAS single-precision fused multiply-adds on registers and storing the
 * result: THREADS * FMAS FFMA instructions executed, 2 * THREADS * FMAS FP32 operations.
 * Exits 1 when CUDA fails. */
#include "../../samples/cuda/common.h"

__global__ void fmaLoop(float *out, int fmas, float a, float b)
{
	unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
	float x = (float)i;
#pragma unroll 1
	for (int k = 0; k < fmas; k++)
		x = fmaf(x, a, b);
	out[i] = x;
}

int main(int argc, char **argv)
{
	unsigned threads = (unsigned)option_value(argc, argv, "-t", 1 << 20);
	int fmas = (int)option_value(argc, argv, "-k", 1000);
	if (!threads || threads % 256 || fmas < 1) {
		std::fprintf(stderr, "usage: fma [-t THREADS (a multiple of 256)] [-k FMAS]\n");
		return 2;
	}
	float *out;
	CUDA_CHECK(cudaMalloc(&out, threads * sizeof(float)));
	fmaLoop<<<threads / 256, 256>>>(out, fmas, 0.999f, 0.001f);
	CUDA_CHECK(cudaGetLastError());
	CUDA_CHECK(cudaDeviceSynchronize());
	CUDA_CHECK(cudaFree(out));
	return 0;
}
