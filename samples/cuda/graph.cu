/* graph: a CUDA graph captured from a stream (a memset and three kernels: scale, add,
 * scale) and launched LAUNCHES times, so a profiler shows kernels that carry a graph id.
 *
 *   graph [-l LAUNCHES] [-n ELEMENTS]
 *
 * Each launch runs one memset and three kernels, captured in capture() and launched in
 * replay(). Exits 1 when CUDA fails or the result is wrong. */
#include <vector>

#include "common.h"

__global__ void scale(float *x, float factor, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		x[i] *= factor;
}

__global__ void add(float *x, float value, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		x[i] += value;
}

/* The graph captured from stream (a function of its own: where a profiler says the
 * graph's kernels were captured). */
__attribute__((noinline)) static cudaGraph_t capture(cudaStream_t stream, float *x, int n)
{
	cudaGraph_t graph;
	int threads = 256, blocks = (n + threads - 1) / threads;
	CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
	CUDA_CHECK(cudaMemsetAsync(x, 0, n * sizeof(float), stream));
	add<<<blocks, threads, 0, stream>>>(x, 1.0f, n);
	scale<<<blocks, threads, 0, stream>>>(x, 3.0f, n);
	add<<<blocks, threads, 0, stream>>>(x, 2.0f, n);
	CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
	return graph;
}

/* The instantiated graph launched `launches` times (where the launches are). */
__attribute__((noinline)) static void replay(cudaGraphExec_t exec, cudaStream_t stream,
					     int launches)
{
	for (int i = 0; i < launches; i++)
		CUDA_CHECK(cudaGraphLaunch(exec, stream));
}

int main(int argc, char **argv)
{
	int launches = (int)option_value(argc, argv, "-l", 5);
	int n = (int)option_value(argc, argv, "-n", 1 << 20);
	float *x;
	CUDA_CHECK(cudaMalloc(&x, n * sizeof(float)));
	cudaStream_t stream;
	CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
	cudaGraph_t graph = capture(stream, x, n);
	cudaGraphExec_t exec;
	CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
	replay(exec, stream, launches);
	CUDA_CHECK(cudaStreamSynchronize(stream));
	std::vector<float> result(n);
	CUDA_CHECK(cudaMemcpy(result.data(), x, n * sizeof(float), cudaMemcpyDeviceToHost));
	CUDA_CHECK(cudaGraphExecDestroy(exec));
	CUDA_CHECK(cudaGraphDestroy(graph));
	CUDA_CHECK(cudaStreamDestroy(stream));
	CUDA_CHECK(cudaFree(x));
	if (launches && result[n - 1] != 5.0f) {
		std::fprintf(stderr, "graph: got %g, expected 5\n", result[n - 1]);
		return 1;
	}
	std::printf("graph: %d launches of a graph of one memset and 3 kernels\n", launches);
	return 0;
}
