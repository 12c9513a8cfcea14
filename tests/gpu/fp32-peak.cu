/* fp32-peak: the theoretical FP32 rate of GPU 0 at the clock its SMs run while they do
 * FP32 multiply-adds, the peer of gpuprof roofline's FP32Flops.
 *
 *   fp32-peak [-ms MILLISECONDS]
 *
 * Runs chains of FP32 multiply-adds on every SM for about MILLISECONDS (default 500);
 * the first thread of each block reads the SM's cycle counter (clock64) and the GPU's
 * nanosecond timer (%globaltimer) when its block starts and ends, and the clock is the
 * median over the blocks of cycles per nanosecond. Prints one line:
 *
 *   PEAK_GFLOPS CLOCK_MHZ SMS LANES
 *
 * where PEAK = SMS * LANES * 2 * CLOCK (LANES: FP32 multiply-adds per clock per SM, from
 * the CUDA programming guide's throughput table for the compute capability). Exits 77
 * when the compute capability is not in that table, 1 when CUDA fails. */
#include "../../samples/cuda/common.h"

#include <algorithm>
#include <vector>

static __device__ unsigned long long global_ns(void)
{
	unsigned long long t;
	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
	return t;
}

__global__ void fma_chains(unsigned reps, float m, float c, float *out,
			   unsigned long long *cycles, unsigned long long *ns)
{
	unsigned long long c0 = clock64(), t0 = global_ns();
	float a[8];
	for (int k = 0; k < 8; k++)
		a[k] = (float)(threadIdx.x + k);
	for (unsigned r = 0; r < reps; r++)
#pragma unroll
		for (int step = 0; step < 16; step++)
#pragma unroll
			for (int k = 0; k < 8; k++)
				a[k] = fmaf(a[k], m, c + (float)k);
	float s = 0;
	for (int k = 0; k < 8; k++)
		s += a[k];
	if (s == -1.0f) /* never: the work must not be left out */
		*out = s;
	__syncthreads();
	if (threadIdx.x == 0) {
		cycles[blockIdx.x] = clock64() - c0;
		ns[blockIdx.x] = global_ns() - t0;
	}
}

/* FP32 multiply-adds per clock per SM */
static int lanes_of(int major, int minor)
{
	if (major == 7 || (major == 8 && minor == 0))
		return 64;
	if (major == 8 || major == 9 || major == 10 || major == 12)
		return 128;
	return 0;
}

int main(int argc, char **argv)
{
	long target_ms = option_value(argc, argv, "-ms", 500);
	if (target_ms < 1) {
		std::fprintf(stderr, "usage: fp32-peak [-ms MILLISECONDS]\n");
		return 2;
	}
	int major = 0, minor = 0, sms = 0;
	CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0));
	CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, 0));
	CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
	int lanes = lanes_of(major, minor);
	if (!lanes) {
		std::fprintf(stderr, "fp32-peak: compute capability %d.%d is not in the table\n",
			     major, minor);
		return 77;
	}
	int blocks = sms * 8, threads = 256;
	float *out;
	unsigned long long *cycles, *ns;
	CUDA_CHECK(cudaMalloc(&out, sizeof(float)));
	CUDA_CHECK(cudaMalloc(&cycles, blocks * sizeof(*cycles)));
	CUDA_CHECK(cudaMalloc(&ns, blocks * sizeof(*ns)));
	cudaEvent_t start, stop;
	CUDA_CHECK(cudaEventCreate(&start));
	CUDA_CHECK(cudaEventCreate(&stop));
	/* calibration: reps doubled until a launch lasts a tenth of the target */
	unsigned reps = 16;
	float ms = 0;
	for (;;) {
		CUDA_CHECK(cudaEventRecord(start));
		fma_chains<<<blocks, threads>>>(reps, 0.999f, 1e-4f, out, cycles, ns);
		CUDA_CHECK(cudaEventRecord(stop));
		CUDA_CHECK(cudaEventSynchronize(stop));
		CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
		if (ms >= target_ms / 10.0 || reps >= (1u << 28))
			break;
		reps *= 2;
	}
	reps = (unsigned)std::min(4e9, reps * (target_ms / (double)ms));
	fma_chains<<<blocks, threads>>>(reps, 0.999f, 1e-4f, out, cycles, ns);
	CUDA_CHECK(cudaGetLastError());
	std::vector<unsigned long long> c(blocks), t(blocks);
	CUDA_CHECK(cudaMemcpy(c.data(), cycles, blocks * sizeof(*cycles), cudaMemcpyDeviceToHost));
	CUDA_CHECK(cudaMemcpy(t.data(), ns, blocks * sizeof(*ns), cudaMemcpyDeviceToHost));
	std::vector<double> ghz;
	for (int i = 0; i < blocks; i++)
		if (t[i])
			ghz.push_back((double)c[i] / (double)t[i]);
	if (ghz.empty()) {
		std::fprintf(stderr, "fp32-peak: the GPU's timer did not advance\n");
		return 1;
	}
	std::sort(ghz.begin(), ghz.end());
	double clock_ghz = ghz[ghz.size() / 2];
	std::printf("%.1f %.0f %d %d\n", (double)sms * lanes * 2 * clock_ghz, clock_ghz * 1e3, sms,
		    lanes);
	return 0;
}
