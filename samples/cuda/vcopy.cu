/* vcopy: copies one vector into another on a CUDA device, the CUDA twin of the ROCm
 * profiler samples' vcopy (and of samples/opencl/vcopy.c).
 *
 *   vcopy [-n ELEMENTS] [-b BLOCK] [-i ITERATIONS] [-d DEVICE] [-r]
 *
 * Copies the input to the device once, runs the vecCopy kernel ITERATIONS times with
 * BLOCK threads per block and reads the output back: ITERATIONS kernels, one
 * host-to-device and one device-to-host copy of ELEMENTS floats each. Exits 1 when the
 * copy is wrong or CUDA fails. With -r it ends with cudaDeviceReset(), destroying its
 * context itself before it exits, while the last records are still in CUPTI's buffers. */
#include <vector>

#include "common.h"

__global__ void vecCopy(const float *in, float *out, unsigned n)
{
	unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		out[i] = in[i];
}

int main(int argc, char **argv)
{
	unsigned n = (unsigned)option_value(argc, argv, "-n", 1048576);
	unsigned block = (unsigned)option_value(argc, argv, "-b", 256);
	long iterations = option_value(argc, argv, "-i", 1);
	int device = (int)option_value(argc, argv, "-d", 0);
	if (!n || !block || iterations < 0) {
		std::fprintf(stderr, "usage: vcopy [-n ELEMENTS] [-b BLOCK] [-i ITERATIONS] [-d DEVICE] [-r]\n");
		return 2;
	}
	CUDA_CHECK(cudaSetDevice(device));
	cudaDeviceProp properties;
	CUDA_CHECK(cudaGetDeviceProperties(&properties, device));
	std::printf("vcopy testing on device %d (%s)\n", device, properties.name);

	std::vector<float> in(n), out(n, -1.0f);
	for (unsigned i = 0; i < n; i++)
		in[i] = (float)i;
	float *d_in, *d_out;
	CUDA_CHECK(cudaMalloc(&d_in, n * sizeof(float)));
	CUDA_CHECK(cudaMalloc(&d_out, n * sizeof(float)));
	CUDA_CHECK(cudaMemcpy(d_in, in.data(), n * sizeof(float), cudaMemcpyHostToDevice));
	unsigned grid = (n + block - 1) / block;
	for (long i = 0; i < iterations; i++)
		vecCopy<<<grid, block>>>(d_in, d_out, n);
	CUDA_CHECK(cudaGetLastError());
	CUDA_CHECK(cudaMemcpy(out.data(), d_out, n * sizeof(float), cudaMemcpyDeviceToHost));
	CUDA_CHECK(cudaFree(d_in));
	CUDA_CHECK(cudaFree(d_out));
	for (unsigned i = 0; iterations && i < n; i++)
		if (out[i] != in[i]) {
			std::fprintf(stderr, "vcopy: element %u is %g, expected %g\n", i, out[i], in[i]);
			return 1;
		}
	std::printf("vcopy: %ld kernels of %u blocks x %u threads, %u elements: ok\n",
		    iterations, grid, block, n);
	if (option_flag(argc, argv, "-r"))
		CUDA_CHECK(cudaDeviceReset());
	return 0;
}
