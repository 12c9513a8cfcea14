/* empty: the launch-bound benchmark. Launches an empty kernel LAUNCHES times on one
 * stream and waits once at the end; prints the loop's wall time, which is almost all
 * launch cost, so a tracer's per-launch overhead shows in full.
 *
 *   empty [-n LAUNCHES] */
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

__global__ void emptyKernel() {}

int main(int argc, char **argv)
{
	long launches = argc > 2 && !strcmp(argv[1], "-n") ? strtol(argv[2], nullptr, 0) : 100000;
	emptyKernel<<<1, 1>>>(); /* the first launch loads the module: not timed */
	if (cudaDeviceSynchronize() != cudaSuccess) {
		fprintf(stderr, "empty: %s\n", cudaGetErrorString(cudaGetLastError()));
		return 1;
	}
	auto start = std::chrono::steady_clock::now();
	for (long i = 0; i < launches; i++)
		emptyKernel<<<1, 1>>>();
	cudaError_t rc = cudaDeviceSynchronize();
	double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
	if (rc != cudaSuccess) {
		fprintf(stderr, "empty: %s\n", cudaGetErrorString(rc));
		return 1;
	}
	printf("empty: %ld launches in %.6f s\n", launches, seconds);
	return 0;
}
