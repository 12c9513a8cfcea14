/* gpuprof-roofline-cuda: the microbenchmarks of `gpuprof roofline` on one CUDA device:
 * what the GPU really reaches, memory level by memory level and data type by data type.
 * Run by gpuprof as a helper program (a failing driver takes down only this process); it
 * speaks the line protocol of inject/opencl/roofline.c on stdout:
 *
 *   device  INDEX NAME TYPE PLATFORM DRIVER SMS CLOCK_MHZ GLOBAL_BYTES LLC_BYTES
 *           L2_BYTES L1_BYTES SHARED_BYTES 1                (--list: one per device)
 *   plan    TESTS
 *   result  COLUMN MEAN LOW HIGH                            (per second)
 *   skip    COLUMN REASON
 *
 * Each test is calibrated to last about --target-ms per experiment (more repetitions in
 * the kernel, or more launches for the device-memory tests), then timed --experiments
 * times with CUDA events. The tensor-core tests issue mma.sync (warp-level) instructions,
 * which every GPU from sm_80 runs (FP8 from sm_89); Hopper's warpgroup instructions
 * (wgmma), which its peak needs, are not used: on sm_90 the tensor ceilings are those of
 * warp-level MMA code. */
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../roofline-result.h"

static void check(cudaError_t rc, const char *what)
{
	if (rc != cudaSuccess) {
		fprintf(stderr, "gpuprof-roofline-cuda: %s: %s\n", what, cudaGetErrorString(rc));
		exit(1);
	}
}
#define CHECK(call) check((call), #call)

/* ---- the kernels: each keeps a result that depends on all its work, stored only when it
 * is a value it never is, so that no compiler leaves the work out and no store counts --- */

#define IMPOSSIBLE (-1.2345e-30f)

/* device memory: a copy of n float4s */
__global__ void copy_kernel(const float4 *__restrict__ a, float4 *__restrict__ b, size_t n)
{
	size_t stride = (size_t)gridDim.x * blockDim.x;
	for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
		b[i] = a[i];
}

__device__ float4 load_cg(const float4 *p) /* cached in L2 only */
{
	float4 v;
	asm volatile("ld.global.cg.v4.f32 {%0, %1, %2, %3}, [%4];"
		     : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "l"(p));
	return v;
}

__device__ float4 load_ca(const float4 *p) /* cached in L1 and L2 */
{
	float4 v;
	asm volatile("ld.global.ca.v4.f32 {%0, %1, %2, %3}, [%4];"
		     : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "l"(p));
	return v;
}

__device__ void keep(float4 s, float *out)
{
	if (s.x + s.y + s.z + s.w == IMPOSSIBLE)
		*out = s.x;
}

/* every thread reads its share of n float4s, reps times, through L2 only (a working set
 * larger than the L2: device memory; one that fits it: the L2) */
__global__ void read_kernel(const float4 *a, size_t n, unsigned reps, float *out)
{
	size_t stride = (size_t)gridDim.x * blockDim.x;
	float4 s = make_float4(0, 0, 0, 0);
	for (unsigned r = 0; r < reps; r++)
		for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
			float4 v = load_cg(a + i);
			s.x += v.x, s.y += v.y, s.z += v.z, s.w += v.w;
		}
	keep(s, out);
}

/* each block reads its own n float4s reps times through L1 */
__global__ void l1_kernel(const float4 *a, unsigned n, unsigned reps, float *out)
{
	const float4 *mine = a + (size_t)blockIdx.x * n;
	float4 s = make_float4(0, 0, 0, 0);
	for (unsigned r = 0; r < reps; r++)
		for (unsigned i = threadIdx.x; i < n; i += blockDim.x) {
			float4 v = load_ca(mine + i);
			s.x += v.x, s.y += v.y, s.z += v.z, s.w += v.w;
		}
	keep(s, out);
}

/* shared memory: each thread reads float4s round its block's array (one per thread, a
 * power of two), 4 per rep */
__global__ void shared_kernel(unsigned reps, float *out)
{
	extern __shared__ float4 buf[];
	unsigned l = threadIdx.x, mask = blockDim.x - 1;
	buf[l] = make_float4(l, l + 1, l + 2, l + 3);
	__syncthreads();
	unsigned base = (unsigned)__cvta_generic_to_shared(buf);
	float4 s = make_float4(0, 0, 0, 0);
	for (unsigned r = 0; r < reps; r++)
		for (unsigned k = 0; k < 4; k++) {
			float4 v;
			unsigned at = base + ((l + 4 * r + k) & mask) * 16;
			asm volatile("ld.shared.v4.f32 {%0, %1, %2, %3}, [%4];"
				     : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "r"(at));
			s.x += v.x, s.y += v.y, s.z += v.z, s.w += v.w;
		}
	keep(s, out);
}

/* multiply-adds: 8 independent chains per thread, 16 steps each per rep */
template <typename T> __device__ T fma_step(T a, T m, T c) { return a * m + c; }
template <> __device__ __half2 fma_step(__half2 a, __half2 m, __half2 c) { return __hfma2(a, m, c); }

template <typename T> __device__ float as_float(T v) { return (float)v; }
template <> __device__ float as_float(__half2 v) { return __low2float(v) + __high2float(v); }

template <typename T> __global__ void fma_kernel(unsigned reps, T m, T c, T start, float *out)
{
	T a[8], add[8]; /* each chain adds its own value, so that no compiler merges them */
	add[0] = c;
	for (int k = 1; k < 8; k++)
		add[k] = fma_step(add[k - 1], m, c);
	for (int k = 0; k < 8; k++)
		a[k] = start;
	for (unsigned r = 0; r < reps; r++)
#pragma unroll
		for (int step = 0; step < 16; step++)
#pragma unroll
			for (int k = 0; k < 8; k++)
				a[k] = fma_step(a[k], m, add[k]);
	float s = 0;
	for (int k = 0; k < 8; k++)
		s += as_float(a[k]);
	if (s == IMPOSSIBLE)
		*out = s;
}

/* tensor cores: 4 independent accumulators per warp, one mma.sync each per rep */
enum mma_type { MMA_F16, MMA_BF16, MMA_TF32, MMA_F8, MMA_I8, MMA_F64 };

template <int type> __device__ void mma(float *d, const unsigned *a, const unsigned *b);

/* The forms with four FP32 accumulators, four A registers and two B registers: the
 * instruction's shape and types differ, nothing else. */
#define MMA_F32(type, shape_and_types)                                                      \
	template <> __device__ void mma<type>(float *d, const unsigned *a, const unsigned *b) \
	{                                                                                     \
		asm volatile("mma.sync.aligned." shape_and_types " {%0,%1,%2,%3}, "           \
			     "{%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"                          \
			     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])                 \
			     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));   \
	}
MMA_F32(MMA_F16, "m16n8k16.row.col.f32.f16.f16.f32")
MMA_F32(MMA_BF16, "m16n8k16.row.col.f32.bf16.bf16.f32")
MMA_F32(MMA_TF32, "m16n8k8.row.col.f32.tf32.tf32.f32")
MMA_F32(MMA_F8, "m16n8k32.row.col.f32.e4m3.e4m3.f32")

template <> __device__ void mma<MMA_I8>(float *d, const unsigned *a, const unsigned *b)
{
	int *i = (int *)d; /* the accumulators are 32-bit integers here */
	asm volatile("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0,%1,%2,%3}, "
		     "{%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
		     : "+r"(i[0]), "+r"(i[1]), "+r"(i[2]), "+r"(i[3])
		     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

template <> __device__ void mma<MMA_F64>(float *d, const unsigned *a, const unsigned *b)
{
	double *x = (double *)d; /* two FP64 accumulators in the four slots */
	double p = __hiloint2double((int)a[0], (int)a[1]), q = __hiloint2double((int)b[0], (int)b[1]);
	asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0,%1}, {%2}, {%3}, "
		     "{%0,%1};"
		     : "+d"(x[0]), "+d"(x[1]) : "d"(p), "d"(q));
}

template <int type> __global__ void mma_kernel(unsigned reps, unsigned seed, float *out)
{
	unsigned a[4], b[2];
	for (int k = 0; k < 4; k++)
		a[k] = seed ^ (threadIdx.x * 0x9e3779b9u + k); /* inputs the compiler cannot know */
	b[0] = a[1] ^ a[2], b[1] = a[0] ^ a[3];
	__align__(16) float d[4][4] = {}; /* 16 bytes: two FP64 accumulators fit */
	for (unsigned r = 0; r < reps; r++)
#pragma unroll
		for (int k = 0; k < 4; k++)
			mma<type>(d[k], a, b);
	float s = 0;
	for (int k = 0; k < 4; k++)
		s += d[k][0] + d[k][1] + d[k][2] + d[k][3];
	if (s == IMPOSSIBLE)
		*out = s;
}

/* ---- the bench ----------------------------------------------------------------------- */

struct bench {
	int device, experiments, sms, threads;
	double target_ms;
	cudaEvent_t start, stop;
	float *out;
};

/* Milliseconds of what launch(reps) enqueues. */
template <typename F> static double timed(struct bench *b, F launch, unsigned reps)
{
	CHECK(cudaEventRecord(b->start));
	launch(reps);
	CHECK(cudaGetLastError());
	CHECK(cudaEventRecord(b->stop));
	CHECK(cudaEventSynchronize(b->stop));
	float ms = 0;
	CHECK(cudaEventElapsedTime(&ms, b->start, b->stop));
	return ms > 0 ? ms : 1e-6;
}

/* A test: per_rep units of work (bytes or operations) per rep of launch(reps); reps is
 * scaled so that it lasts about the target, then experiments runs are timed. */
template <typename F>
static void measure(struct bench *b, const char *column, F launch, double per_rep)
{
	unsigned reps = 1;
	double ms = 0;
	for (int tries = 0; tries < 40; tries++) { /* to a tenth of the target, then scaled */
		ms = timed(b, launch, reps);
		if (ms >= b->target_ms / 10 || reps >= (1u << 30))
			break;
		reps *= 2;
	}
	double scaled = reps * (b->target_ms / ms);
	reps = scaled < 1 ? 1 : scaled > 4e9 ? 4000000000u : (unsigned)scaled;
	timed(b, launch, reps); /* warm-up */
	double sum = 0, sum2 = 0, work = per_rep * reps;
	for (int i = 0; i < b->experiments; i++) {
		double rate = work / (timed(b, launch, reps) * 1e-3);
		sum += rate;
		sum2 += rate * rate;
	}
	roofline_result(column, sum, sum2, b->experiments);
}

static int attribute(cudaDeviceAttr what, int device)
{
	int value = 0;
	CHECK(cudaDeviceGetAttribute(&value, what, device));
	return value;
}

static void print_device(int index)
{
	cudaDeviceProp p;
	CHECK(cudaGetDeviceProperties(&p, index));
	int driver = 0, runtime = 0;
	cudaDriverGetVersion(&driver);
	cudaRuntimeGetVersion(&runtime);
	for (char *c = p.name; *c; c++) /* a field of the protocol */
		if (*c == '\t' || *c == '\n')
			*c = ' ';
	printf("device\t%d\t%s\tGPU\tCUDA\t%d.%d (runtime %d.%d, sm_%d%d)\t%d\t%d\t%zu\t%d"
	       "\t%d\t%d\t%zu\t1\n",
	       index, p.name, driver / 1000, driver % 1000 / 10, runtime / 1000,
	       runtime % 1000 / 10, p.major, p.minor, p.multiProcessorCount,
	       attribute(cudaDevAttrClockRate, index) / 1000, p.totalGlobalMem, p.l2CacheSize,
	       p.l2CacheSize, attribute(cudaDevAttrMaxSharedMemoryPerMultiprocessor, index),
	       p.sharedMemPerBlock);
	fflush(stdout);
}

static void memory_tests(struct bench *b, size_t l2_bytes)
{
	/* device memory: buffers 4 times the L2 (at least 256 MiB), copied and read whole */
	size_t bytes = l2_bytes * 4 > (256u << 20) ? l2_bytes * 4 : (256u << 20);
	size_t n = bytes / sizeof(float4);
	float4 *a, *c;
	CHECK(cudaMalloc(&a, bytes));
	CHECK(cudaMalloc(&c, bytes));
	CHECK(cudaMemset(a, 0, bytes));
	CHECK(cudaMemset(c, 0, bytes));
	int blocks = b->sms * 8, threads = b->threads;
	measure(b, "HBMBw", [&](unsigned reps) {
		for (unsigned r = 0; r < reps; r++)
			copy_kernel<<<blocks, threads>>>(a, c, n);
	}, 2.0 * bytes);
	measure(b, "HBMReadBw", [&](unsigned reps) {
		for (unsigned r = 0; r < reps; r++)
			read_kernel<<<blocks, threads>>>(a, n, 1, b->out);
	}, (double)bytes);
	/* the L2: every block reads a working set of half the L2, again and again */
	size_t set = l2_bytes / 2 / sizeof(float4);
	measure(b, "L2Bw", [&](unsigned reps) {
		read_kernel<<<blocks, threads>>>(a, set, reps, b->out);
	}, (double)set * sizeof(float4));
	/* L1: each block its own 16 KiB */
	unsigned own = (16u << 10) / sizeof(float4);
	measure(b, "L1Bw", [&](unsigned reps) {
		l1_kernel<<<blocks, threads>>>(a, own, reps, b->out);
	}, (double)blocks * own * sizeof(float4));
	measure(b, "LDSBw", [&](unsigned reps) {
		shared_kernel<<<blocks, threads, threads * sizeof(float4)>>>(reps, b->out);
	}, (double)blocks * threads * 4 * sizeof(float4));
	CHECK(cudaFree(a));
	CHECK(cudaFree(c));
}

template <typename T>
static void fma_test(struct bench *b, const char *column, T m, T c, T start, double per_fma)
{
	int blocks = b->sms * 8, threads = b->threads;
	measure(b, column, [&](unsigned reps) {
		fma_kernel<T><<<blocks, threads>>>(reps, m, c, start, b->out);
	}, (double)blocks * threads * 16 * 8 * per_fma);
}

template <int type> static void mma_test(struct bench *b, const char *column, double per_mma)
{
	int blocks = b->sms * 8, threads = b->threads;
	measure(b, column, [&](unsigned reps) {
		mma_kernel<type><<<blocks, threads>>>(reps, 12345u, b->out);
	}, (double)blocks * (threads / 32) * 4 * per_mma);
}

int main(int argc, char **argv)
{
	int list, index, experiments;
	double target_ms;
	if (roofline_arguments(argc, argv, "gpuprof-roofline-cuda", &list, &index, &experiments,
			       &target_ms))
		return 2;
	int count = 0;
	cudaError_t rc = cudaGetDeviceCount(&count);
	if (rc == cudaErrorNoDevice || rc == cudaErrorInsufficientDriver)
		count = 0; /* no usable GPU here: none listed */
	else
		check(rc, "cudaGetDeviceCount");
	if (list) {
		for (int i = 0; i < count; i++)
			print_device(i);
		return 0;
	}
	if (index >= count) {
		fprintf(stderr, "gpuprof-roofline-cuda: no CUDA device %d (%d found)\n", index, count);
		return 1;
	}
	CHECK(cudaSetDevice(index));
	print_device(index);
	struct bench b = { index, experiments, attribute(cudaDevAttrMultiProcessorCount, index),
			   256, target_ms };
	CHECK(cudaEventCreate(&b.start));
	CHECK(cudaEventCreate(&b.stop));
	CHECK(cudaMalloc(&b.out, sizeof(float)));
	int major = attribute(cudaDevAttrComputeCapabilityMajor, index);
	int minor = attribute(cudaDevAttrComputeCapabilityMinor, index);
	int sm = major * 10 + minor;
	printf("plan\t%d\n", 15);
	fflush(stdout);
	memory_tests(&b, (size_t)attribute(cudaDevAttrL2CacheSize, index));
	fma_test<double>(&b, "FP64Flops", 0.999999, 1e-7, 1.0, 2);
	fma_test<float>(&b, "FP32Flops", 0.999f, 1e-4f, 1.0f, 2);
	fma_test<__half2>(&b, "FP16Flops", __float2half2_rn(0.999f), __float2half2_rn(1e-3f),
			  __float2half2_rn(1.0f), 4); /* two lanes, two operations each */
	/* integer multiply-adds are associative: a compiler may fold a chain's steps into
	 * one, so that no count of them would be honest */
	printf("skip\tI32Ops\tnot measured on CUDA devices\n");
	if (sm < 80) {
		const char *const columns[] = { "MFMAF64Flops", "MFMAF32Flops", "MFMAF16Flops",
						"MFMABF16Flops", "MFMAF8Flops", "MFMAI8Ops" };
		for (int i = 0; i < 6; i++)
			printf("skip\t%s\tsm_%d has no warp-level MMA of this type\n", columns[i], sm);
	} else {
		/* operations per warp instruction: 2 * M * N * K */
		mma_test<MMA_F64>(&b, "MFMAF64Flops", 2.0 * 8 * 8 * 4);
		mma_test<MMA_TF32>(&b, "MFMAF32Flops", 2.0 * 16 * 8 * 8);
		mma_test<MMA_F16>(&b, "MFMAF16Flops", 2.0 * 16 * 8 * 16);
		mma_test<MMA_BF16>(&b, "MFMABF16Flops", 2.0 * 16 * 8 * 16);
		if (sm >= 89)
			mma_test<MMA_F8>(&b, "MFMAF8Flops", 2.0 * 16 * 8 * 32);
		else
			printf("skip\tMFMAF8Flops\tsm_%d has no FP8 tensor cores\n", sm);
		mma_test<MMA_I8>(&b, "MFMAI8Ops", 2.0 * 16 * 8 * 32);
	}
	fflush(stdout);
	return 0;
}
