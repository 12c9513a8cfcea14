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
 * times with CUDA events. The tensor-core tests issue Hopper's warpgroup instructions
 * (wgmma, which its peak needs: the program carries sm_90a code) on a GPU of compute
 * capability 9.0, and warp-level mma.sync elsewhere from sm_80 (FP8 from sm_89); FP64
 * has no warpgroup form and is mma.sync everywhere. */
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <stdint.h>
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

/* Hopper's tensor cores at their peak: warpgroup MMA (wgmma), each instruction a 64 x 256
 * tile of D += A x B over K = 32 bytes of inputs (16 FP16/BF16, 8 TF32, 32 FP8/INT8), A
 * and B read from shared memory. A block is one warpgroup of four warps; its 128
 * accumulator registers per thread are the whole tile. Only sm_90a code has wgmma:
 * WGMMA_COMPILED says whether this is that code (wgmma_probe tells the host). */
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define WGMMA_COMPILED 1
#else
#define WGMMA_COMPILED 0
#endif

enum {
	WG_THREADS = 128,
	WG_A_BYTES = 8192,   /* A takes 64 rows of 32 bytes; room to spare for the layout */
	WG_B_BYTES = 16384,  /* B takes 256 rows of 32 bytes */
	WG_SHARED = WG_A_BYTES + WG_B_BYTES,
	WG_PER_REP = 4,      /* instructions per rep, one commit group */
};

__global__ void wgmma_probe(int *compiled)
{
	*compiled = WGMMA_COMPILED;
}

/* The shared-memory descriptor of a K-major operand without swizzling: core matrices of
 * 8 rows x 16 bytes, 128 bytes each, the two of a row's 32 bytes 128 bytes apart (the
 * leading-dimension offset), successive groups of 8 rows 256 bytes apart (the stride).
 * Fields: address >> 4 in bits 0-13, leading offset >> 4 in 16-29, stride >> 4 in 32-45. */
__device__ uint64_t wg_descriptor(const void *p)
{
	uint64_t at = (uint64_t)__cvta_generic_to_shared(p);
	return ((at & 0x3ffff) >> 4) | ((uint64_t)(128 >> 4) << 16) | ((uint64_t)(256 >> 4) << 32);
}

/* The accumulator operands %0..%127 of an instruction, and the 128 registers behind them. */
#define WG_OPS8(a, b, c, d, e, f, g, h) \
	"%" #a ", %" #b ", %" #c ", %" #d ", %" #e ", %" #f ", %" #g ", %" #h
#define WG_ACC_OPERANDS                                                                    \
	"{" WG_OPS8(0, 1, 2, 3, 4, 5, 6, 7) ", " WG_OPS8(8, 9, 10, 11, 12, 13, 14, 15) ", "    \
	WG_OPS8(16, 17, 18, 19, 20, 21, 22, 23) ", " WG_OPS8(24, 25, 26, 27, 28, 29, 30, 31)     \
	", " WG_OPS8(32, 33, 34, 35, 36, 37, 38, 39) ", "                                       \
	WG_OPS8(40, 41, 42, 43, 44, 45, 46, 47) ", " WG_OPS8(48, 49, 50, 51, 52, 53, 54, 55)     \
	", " WG_OPS8(56, 57, 58, 59, 60, 61, 62, 63) ", "                                       \
	WG_OPS8(64, 65, 66, 67, 68, 69, 70, 71) ", " WG_OPS8(72, 73, 74, 75, 76, 77, 78, 79)     \
	", " WG_OPS8(80, 81, 82, 83, 84, 85, 86, 87) ", "                                       \
	WG_OPS8(88, 89, 90, 91, 92, 93, 94, 95) ", " WG_OPS8(96, 97, 98, 99, 100, 101, 102, 103) \
	", " WG_OPS8(104, 105, 106, 107, 108, 109, 110, 111) ", "                               \
	WG_OPS8(112, 113, 114, 115, 116, 117, 118, 119) ", "                                    \
	WG_OPS8(120, 121, 122, 123, 124, 125, 126, 127) "}"
#define WG_REG8(c, d, i)                                                                   \
	c(d[i]), c(d[i + 1]), c(d[i + 2]), c(d[i + 3]), c(d[i + 4]), c(d[i + 5]), c(d[i + 6]), \
		c(d[i + 7])
#define WG_REGS(c, d)                                                                      \
	WG_REG8(c, d, 0), WG_REG8(c, d, 8), WG_REG8(c, d, 16), WG_REG8(c, d, 24),              \
		WG_REG8(c, d, 32), WG_REG8(c, d, 40), WG_REG8(c, d, 48), WG_REG8(c, d, 56),        \
		WG_REG8(c, d, 64), WG_REG8(c, d, 72), WG_REG8(c, d, 80), WG_REG8(c, d, 88),        \
		WG_REG8(c, d, 96), WG_REG8(c, d, 104), WG_REG8(c, d, 112), WG_REG8(c, d, 120)

/* One instruction: the accumulators always kept (scale-d true), inputs unscaled (1) and,
 * for FP16 and BF16, not transposed (0: K-major, the only layout of the other types). */
#define WGMMA(type, instruction, immediates, constraint)                                   \
	template <> __device__ void wgmma<type>(wg_acc<type>::t * d, uint64_t a, uint64_t b)    \
	{                                                                                     \
		asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"                        \
			     "wgmma.mma_async.sync.aligned." instruction " " WG_ACC_OPERANDS        \
			     ", %128, %129, p" immediates ";\n}\n"                                  \
			     : WG_REGS(constraint, d)                                              \
			     : "l"(a), "l"(b), "r"(1));                                            \
	}
/* the accumulators: FP32, or 32-bit integers for INT8 */
template <int type> struct wg_acc {
	typedef float t;
};
template <> struct wg_acc<MMA_I8> {
	typedef int t;
};

template <int type> __device__ void wgmma(typename wg_acc<type>::t *d, uint64_t a, uint64_t b);
WGMMA(MMA_F16, "m64n256k16.f32.f16.f16", ", 1, 1, 0, 0", "+f")
WGMMA(MMA_BF16, "m64n256k16.f32.bf16.bf16", ", 1, 1, 0, 0", "+f")
WGMMA(MMA_TF32, "m64n256k8.f32.tf32.tf32", ", 1, 1", "+f")
WGMMA(MMA_F8, "m64n256k32.f32.e4m3.e4m3", ", 1, 1", "+f")
WGMMA(MMA_I8, "m64n256k32.s32.s8.s8", "", "+r")

/* A word of inputs of the type, from random bits: finite values of magnitude below 2 */
template <int type> __device__ unsigned wg_input(unsigned bits)
{
	float x = (int)bits * 0x1p-31f, y = (int)(bits * 0x9e3779b9u) * 0x1p-31f; /* [-1, 1) */
	if (type == MMA_F16) {
		__half2 h = __floats2half2_rn(x, y);
		return *(unsigned *)&h;
	}
	if (type == MMA_BF16) {
		__nv_bfloat162 h = __floats2bfloat162_rn(x, y);
		return *(unsigned *)&h;
	}
	if (type == MMA_TF32)
		return __float_as_uint(x);
	if (type == MMA_F8)
		return bits & 0xbfbfbfbfu; /* e4m3 with the top exponent bit clear: never NaN */
	return bits;                       /* INT8: any byte */
}

/* Keeps the compiler from moving an access of the accumulators across a wgmma fence or
 * wait: it cannot see that the asynchronous instructions use them. */
__device__ void wg_hold(float *d)
{
	for (int i = 0; i < 128; i++)
		asm volatile("" : "+f"(d[i])::"memory");
}

__device__ void wg_hold(int *d)
{
	for (int i = 0; i < 128; i++)
		asm volatile("" : "+r"(d[i])::"memory");
}

template <int type>
__global__ void __launch_bounds__(WG_THREADS) wgmma_kernel(unsigned reps, unsigned seed, float *out)
{
#if WGMMA_COMPILED
	extern __shared__ __align__(128) unsigned char wg_shared[];
	unsigned *words = (unsigned *)wg_shared;
	for (unsigned i = threadIdx.x; i < WG_SHARED / 4; i += blockDim.x)
		words[i] = wg_input<type>((seed ^ i) * 0x85ebca6bu + blockIdx.x);
	/* the threads' stores visible to the tensor cores' reads (another proxy) */
	asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
	__syncthreads();
	uint64_t a = wg_descriptor(wg_shared), b = wg_descriptor(wg_shared + WG_A_BYTES);
	typename wg_acc<type>::t d[128];
	for (int i = 0; i < 128; i++)
		d[i] = 0;
	wg_hold(d);
	for (unsigned r = 0; r < reps; r++) {
		asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
#pragma unroll
		for (int k = 0; k < WG_PER_REP; k++)
			wgmma<type>(d, a, b);
		asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
		asm volatile("wgmma.wait_group.sync.aligned 1;" ::: "memory"); /* one group ahead */
	}
	asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
	wg_hold(d);
	float s = 0;
	for (int i = 0; i < 128; i++)
		s += (float)d[i];
	if (s == IMPOSSIBLE)
		*out = s;
#endif
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
	/* the copy in more, shorter blocks: on an H200, 32 blocks of 256 threads per SM
	 * copied 4007 GB/s where 8 copied 3829 and four loads in flight per thread no more
	 * (a device-to-device cudaMemcpy: 4196) */
	measure(b, "HBMBw", [&](unsigned reps) {
		for (unsigned r = 0; r < reps; r++)
			copy_kernel<<<b->sms * 32, threads>>>(a, c, n);
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

/* operations per instruction: 2 * 64 * 256 * K */
template <int type> static void wgmma_test(struct bench *b, const char *column, double per_wgmma)
{
	int per_sm = 0;
	CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, wgmma_kernel<type>, WG_THREADS,
							    WG_SHARED));
	int blocks = b->sms * (per_sm > 0 ? per_sm : 1);
	measure(b, column, [&](unsigned reps) {
		wgmma_kernel<type><<<blocks, WG_THREADS, WG_SHARED>>>(reps, 12345u, b->out);
	}, (double)blocks * WG_PER_REP * per_wgmma);
}

/* Whether the code loaded for this device is the sm_90a code, which has wgmma. */
static int has_wgmma(void)
{
	int *flag, compiled = 0;
	CHECK(cudaMalloc(&flag, sizeof(int)));
	wgmma_probe<<<1, 1>>>(flag);
	CHECK(cudaGetLastError());
	CHECK(cudaMemcpy(&compiled, flag, sizeof(int), cudaMemcpyDeviceToHost));
	CHECK(cudaFree(flag));
	return compiled;
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
		if (sm == 90 && has_wgmma()) {
			wgmma_test<MMA_TF32>(&b, "MFMAF32Flops", 2.0 * 64 * 256 * 8);
			wgmma_test<MMA_F16>(&b, "MFMAF16Flops", 2.0 * 64 * 256 * 16);
			wgmma_test<MMA_BF16>(&b, "MFMABF16Flops", 2.0 * 64 * 256 * 16);
			wgmma_test<MMA_F8>(&b, "MFMAF8Flops", 2.0 * 64 * 256 * 32);
			wgmma_test<MMA_I8>(&b, "MFMAI8Ops", 2.0 * 64 * 256 * 32);
		} else {
			mma_test<MMA_TF32>(&b, "MFMAF32Flops", 2.0 * 16 * 8 * 8);
			mma_test<MMA_F16>(&b, "MFMAF16Flops", 2.0 * 16 * 8 * 16);
			mma_test<MMA_BF16>(&b, "MFMABF16Flops", 2.0 * 16 * 8 * 16);
			if (sm >= 89)
				mma_test<MMA_F8>(&b, "MFMAF8Flops", 2.0 * 16 * 8 * 32);
			else
				printf("skip\tMFMAF8Flops\tsm_%d has no FP8 tensor cores\n", sm);
			mma_test<MMA_I8>(&b, "MFMAI8Ops", 2.0 * 16 * 8 * 32);
		}
	}
	fflush(stdout);
	return 0;
}
