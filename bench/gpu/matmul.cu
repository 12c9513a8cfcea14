/* matmul: the GPU-bound benchmark. Multiplies two N x N single-precision matrices
 * ITERATIONS times with a shared-memory tiled kernel; each launch runs for
 * milliseconds, so a tracer's per-launch cost is negligible and any slowdown it causes
 * on the GPU itself shows.
 *
 *   matmul [-n N] [-i ITERATIONS]   (N a multiple of 32) */
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#define TILE 32

__global__ void sgemm(const float *a, const float *b, float *c, int n)
{
	__shared__ float ta[TILE][TILE], tb[TILE][TILE];
	int row = blockIdx.y * TILE + threadIdx.y, col = blockIdx.x * TILE + threadIdx.x;
	float sum = 0.0f;
	for (int k = 0; k < n; k += TILE) {
		ta[threadIdx.y][threadIdx.x] = a[row * n + k + threadIdx.x];
		tb[threadIdx.y][threadIdx.x] = b[(k + threadIdx.y) * n + col];
		__syncthreads();
		for (int j = 0; j < TILE; j++)
			sum += ta[threadIdx.y][j] * tb[j][threadIdx.x];
		__syncthreads();
	}
	c[row * n + col] = sum;
}

static long option(int argc, char **argv, const char *name, long fallback)
{
	for (int i = 1; i + 1 < argc; i++)
		if (!strcmp(argv[i], name))
			return strtol(argv[i + 1], nullptr, 0);
	return fallback;
}

int main(int argc, char **argv)
{
	int n = (int)option(argc, argv, "-n", 4096);
	int iterations = (int)option(argc, argv, "-i", 50);
	if (n <= 0 || n % TILE) {
		fprintf(stderr, "matmul: N must be a positive multiple of %d\n", TILE);
		return 2;
	}
	size_t bytes = (size_t)n * n * sizeof(float);
	float *a, *b, *c;
	if (cudaMalloc(&a, bytes) || cudaMalloc(&b, bytes) || cudaMalloc(&c, bytes)) {
		fprintf(stderr, "matmul: %s\n", cudaGetErrorString(cudaGetLastError()));
		return 1;
	}
	cudaMemset(a, 0, bytes);
	cudaMemset(b, 0, bytes);
	dim3 block(TILE, TILE), grid(n / TILE, n / TILE);
	sgemm<<<grid, block>>>(a, b, c, n); /* warm-up: not timed */
	cudaDeviceSynchronize();
	auto start = std::chrono::steady_clock::now();
	for (int i = 0; i < iterations; i++)
		sgemm<<<grid, block>>>(a, b, c, n);
	cudaError_t rc = cudaDeviceSynchronize();
	double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
	if (rc != cudaSuccess) {
		fprintf(stderr, "matmul: %s\n", cudaGetErrorString(rc));
		return 1;
	}
	printf("matmul: %d multiplications of %dx%d in %.6f s (%.1f GFLOP/s)\n", iterations, n, n,
	       seconds, 2.0 * n * n * (double)n * iterations / seconds / 1e9);
	cudaFree(a);
	cudaFree(b);
	cudaFree(c);
	return 0;
}
