/* gpuprof-roofline-opencl: the microbenchmarks of `gpuprof roofline` on one OpenCL
 * device (a GPU, or the CPU through PoCL): what the device really reaches, memory level
 * by memory level and data type by data type. Run by gpuprof as a helper program, so
 * that an OpenCL driver that fails takes down only this process; it speaks a line
 * protocol on stdout, one tab-separated record per line:
 *
 *   device  INDEX NAME TYPE PLATFORM DRIVER COMPUTE_UNITS CLOCK_MHZ GLOBAL_BYTES
 *           LLC_BYTES L2_BYTES L1_BYTES LOCAL_BYTES FLOAT_WIDTH   (--list: one per device)
 *   plan    TESTS                                           (how many tests follow)
 *   result  COLUMN MEAN LOW HIGH                            (per second: bytes or operations)
 *   skip    COLUMN REASON                                   (not measurable here)
 *
 * Each test is calibrated to last about --target-ms per experiment, then timed
 * --experiments times with the device's own timestamps (event profiling); the result is
 * the mean and its 95 % confidence interval (Student's t). Errors go to stderr with a
 * non-zero exit status. */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../roofline-result.h"

/* The kernels: every one writes a result that depends on all its work, so that no
 * compiler can leave the work out. VEC is the vector type of the arithmetic tests. */
static const char memory_source[] =
	/* a VEC (floatW) of memory per element; sums kept in four accumulators, so that
	 * the adds do not wait on one another, and every lane stored */
	"__kernel void copy(__global const VEC *a, __global VEC *b)\n"
	"{ size_t i = get_global_id(0); b[i] = a[i]; }\n"
	"VEC sum(__global const VEC *a, size_t first, size_t end, size_t step, uint reps)\n"
	"{\n"
	"  VEC s0 = 0, s1 = 0, s2 = 0, s3 = 0;\n"
	"  for (uint r = 0; r < reps; r++) {\n"
	"    size_t j = first;\n"
	"    for (; j + 3 * step < end; j += 4 * step) {\n"
	"      s0 += a[j]; s1 += a[j + step]; s2 += a[j + 2 * step]; s3 += a[j + 3 * step];\n"
	"    }\n"
	"    for (; j < end; j += step) s0 += a[j];\n"
	"  }\n"
	"  return s0 + s1 + s2 + s3;\n"
	"}\n"
	/* the work-items read the buffer once between them, reps times: each every
	 * global_size-th element (a GPU's warps read whole lines together), or with blocked
	 * a contiguous share (a CPU's core streams through its own) */
	"__kernel void read_all(__global const VEC *a, __global float *out, uint n, uint reps,\n"
	"                       uint blocked)\n"
	"{\n"
	"  size_t g = get_global_size(0), i = get_global_id(0), share = (n + g - 1) / g;\n"
	"  size_t first = blocked ? i * share : i, step = blocked ? 1 : g;\n"
	"  size_t end = blocked ? min(first + share, (size_t)n) : n;\n"
	"  VSTORE(sum(a, first, end, step, reps), i, out);\n"
	"}\n"
	/* each work-group reads the same n elements reps times (a working set of n
	 * elements), its work-items taking every local_size-th or, blocked, a share */
	"__kernel void read_set(__global const VEC *a, __global float *out, uint n, uint reps,\n"
	"                       uint blocked)\n"
	"{\n"
	"  size_t ls = get_local_size(0), l = get_local_id(0), share = (n + ls - 1) / ls;\n"
	"  size_t first = blocked ? l * share : l, step = blocked ? 1 : ls;\n"
	"  size_t end = blocked ? min(first + share, (size_t)n) : n;\n"
	"  VSTORE(sum(a, first, end, step, reps), get_global_id(0), out);\n"
	"}\n"
	/* local memory: each work-item reads float4s of its work-group's array (a power of
	 * two long, one per work-item) round the array, 4 per rep */
	"__kernel void local_read(__global float *out, __local float4 *buf, uint reps)\n"
	"{\n"
	"  uint l = get_local_id(0), mask = get_local_size(0) - 1;\n"
	"  buf[l] = (float4)(l, l + 1, l + 2, l + 3);\n"
	"  barrier(CLK_LOCAL_MEM_FENCE);\n"
	"  float4 s0 = 0, s1 = 0, s2 = 0, s3 = 0;\n"
	"  for (uint r = 0; r < reps; r++) {\n"
	"    uint j = l + 4 * r;\n"
	"    s0 += buf[j & mask]; s1 += buf[(j + 1) & mask]; s2 += buf[(j + 2) & mask];\n"
	"    s3 += buf[(j + 3) & mask];\n"
	"  }\n"
	"  float4 s = s0 + s1 + s2 + s3;\n"
	"  out[get_global_id(0)] = s.x + s.y + s.z + s.w;\n"
	"}\n";

/* Eight independent chains of multiply-adds on VEC, LANES lanes of SCALAR (mad: the
 * device's fused or separate multiply-add; for integers a multiply and an add: 2
 * operations per lane either way); every lane is stored. */
static const char arithmetic_source[] =
	"#ifdef FP64\n#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n#endif\n"
	"#ifdef FP16\n#pragma OPENCL EXTENSION cl_khr_fp16 : enable\n#endif\n"
	"#ifdef INTEGER\n#define MAD(x, a, b) ((x) * (a) + (b))\n#else\n#define MAD mad\n#endif\n"
	"__kernel void mad_loop(__global SCALAR *out, uint iterations, SCALAR a, SCALAR b)\n"
	"{\n"
	"  VEC va = (VEC)(a), vb = (VEC)(b);\n"
	"  VEC x0 = (VEC)(get_global_id(0) & 7), x1 = x0 + (SCALAR)1, x2 = x0 + (SCALAR)2,\n"
	"      x3 = x0 + (SCALAR)3, x4 = x0 + (SCALAR)4, x5 = x0 + (SCALAR)5,\n"
	"      x6 = x0 + (SCALAR)6, x7 = x0 + (SCALAR)7;\n"
	"  for (uint i = 0; i < iterations; i++) {\n"
	"    x0 = MAD(x0, va, vb); x1 = MAD(x1, va, vb); x2 = MAD(x2, va, vb);\n"
	"    x3 = MAD(x3, va, vb); x4 = MAD(x4, va, vb); x5 = MAD(x5, va, vb);\n"
	"    x6 = MAD(x6, va, vb); x7 = MAD(x7, va, vb);\n"
	"  }\n"
	"  VSTORE(x0 + x1 + x2 + x3 + x4 + x5 + x6 + x7, get_global_id(0), out);\n"
	"}\n";

#define CHAINS 8

struct device {
	cl_device_id id;
	cl_platform_id platform;
	char name[256], platform_name[256], driver[128];
	cl_device_type type;
	cl_uint compute_units, clock_mhz, float_width;
	cl_ulong global_bytes, max_alloc, local_bytes;
	cl_ulong llc_bytes;      /* the last-level cache: the device memory test is 4 times it */
	cl_ulong l2_bytes, l1_bytes; /* the caches of the L2 and L1 tests; 0: none known */
	size_t max_workgroup;
	int fp64, fp16;
};

struct bench {
	struct device *d;
	cl_context context;
	cl_command_queue queue;
	int experiments;
	double target_ns; /* how long one experiment should take */
};

static int failed(const char *what, cl_int rc)
{
	fprintf(stderr, "gpuprof-roofline-opencl: %s failed (OpenCL error %d)\n", what, rc);
	return -1;
}

static int has_extension(cl_device_id id, const char *extension)
{
	size_t size = 0;
	if (clGetDeviceInfo(id, CL_DEVICE_EXTENSIONS, 0, NULL, &size) != CL_SUCCESS || !size)
		return 0;
	char *text = calloc(1, size + 1);
	int found = 0;
	if (text && clGetDeviceInfo(id, CL_DEVICE_EXTENSIONS, size, text, NULL) == CL_SUCCESS) {
		size_t n = strlen(extension);
		for (char *at = text; (at = strstr(at, extension)); at += n)
			if ((at == text || at[-1] == ' ') && (at[n] == ' ' || at[n] == 0))
				found = 1;
	}
	free(text);
	return found;
}

static void describe(struct device *d)
{
	clGetDeviceInfo(d->id, CL_DEVICE_NAME, sizeof(d->name), d->name, NULL);
	clGetPlatformInfo(d->platform, CL_PLATFORM_NAME, sizeof(d->platform_name),
			  d->platform_name, NULL);
	clGetDeviceInfo(d->id, CL_DRIVER_VERSION, sizeof(d->driver), d->driver, NULL);
	clGetDeviceInfo(d->id, CL_DEVICE_TYPE, sizeof(d->type), &d->type, NULL);
	clGetDeviceInfo(d->id, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof(cl_uint), &d->compute_units, NULL);
	clGetDeviceInfo(d->id, CL_DEVICE_MAX_CLOCK_FREQUENCY, sizeof(cl_uint), &d->clock_mhz, NULL);
	clGetDeviceInfo(d->id, CL_DEVICE_NATIVE_VECTOR_WIDTH_FLOAT, sizeof(cl_uint),
			&d->float_width, NULL);
	clGetDeviceInfo(d->id, CL_DEVICE_GLOBAL_MEM_SIZE, sizeof(cl_ulong), &d->global_bytes, NULL);
	clGetDeviceInfo(d->id, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof(cl_ulong), &d->max_alloc, NULL);
	clGetDeviceInfo(d->id, CL_DEVICE_GLOBAL_MEM_CACHE_SIZE, sizeof(cl_ulong), &d->llc_bytes,
			NULL);
	clGetDeviceInfo(d->id, CL_DEVICE_LOCAL_MEM_SIZE, sizeof(cl_ulong), &d->local_bytes, NULL);
	clGetDeviceInfo(d->id, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof(size_t), &d->max_workgroup,
			NULL);
	cl_device_fp_config fp64 = 0;
	clGetDeviceInfo(d->id, CL_DEVICE_DOUBLE_FP_CONFIG, sizeof(fp64), &fp64, NULL);
	d->fp64 = fp64 != 0 || has_extension(d->id, "cl_khr_fp64");
	d->fp16 = has_extension(d->id, "cl_khr_fp16");
	/* OpenCL reports one cache: a GPU's L2. Its L1 is taken as the size of its local
	 * memory, the same on-chip memory on the GPUs OpenCL runs on. A CPU's caches are the
	 * CPU's own (the C library reads them from CPUID); its L1 and L2 are per core, and
	 * every work-group of a test reads the same working set, so each core holds it. */
	d->l2_bytes = d->llc_bytes;
	d->l1_bytes = d->local_bytes;
	if (d->type & CL_DEVICE_TYPE_CPU) {
		long l1 = sysconf(_SC_LEVEL1_DCACHE_SIZE), l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
		long l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
		d->l1_bytes = l1 > 0 ? (cl_ulong)l1 : 0;
		d->l2_bytes = l2 > 0 ? (cl_ulong)l2 : 0;
		if (l3 > 0 && (cl_ulong)l3 > d->llc_bytes)
			d->llc_bytes = (cl_ulong)l3;
		if (d->l2_bytes > d->llc_bytes)
			d->llc_bytes = d->l2_bytes;
	}
}

/* Every device of every platform, numbered in that order. */
static int devices(struct device **out, cl_uint *count)
{
	cl_platform_id platforms[16];
	cl_uint platform_count = 0;
	*out = NULL;
	*count = 0;
	cl_int rc = clGetPlatformIDs(16, platforms, &platform_count);
	if (rc == -1001 /* CL_PLATFORM_NOT_FOUND_KHR: no driver installed */ || platform_count == 0)
		return 0;
	if (rc != CL_SUCCESS)
		return failed("clGetPlatformIDs", rc);
	for (cl_uint p = 0; p < platform_count && p < 16; p++) {
		cl_device_id ids[64];
		cl_uint n = 0;
		if (clGetDeviceIDs(platforms[p], CL_DEVICE_TYPE_ALL, 64, ids, &n) != CL_SUCCESS)
			continue;
		struct device *grown = realloc(*out, (*count + n) * sizeof(**out));
		if (!grown)
			return failed("memory", CL_OUT_OF_HOST_MEMORY);
		*out = grown;
		for (cl_uint i = 0; i < n && i < 64; i++) {
			struct device *d = &(*out)[(*count)++];
			memset(d, 0, sizeof(*d));
			d->id = ids[i];
			d->platform = platforms[p];
			describe(d);
		}
	}
	return 0;
}

static const char *type_name(cl_device_type type)
{
	return type & CL_DEVICE_TYPE_GPU ? "GPU" : type & CL_DEVICE_TYPE_CPU ? "CPU"
	       : type & CL_DEVICE_TYPE_ACCELERATOR ? "ACCELERATOR" : "OTHER";
}

/* Tabs and newlines of a device's strings would break the protocol. */
static void clean(char *text)
{
	for (; *text; text++)
		if (*text == '\t' || *text == '\n' || *text == '\r')
			*text = ' ';
}

static void print_device(int index, struct device *d)
{
	clean(d->name);
	clean(d->platform_name);
	clean(d->driver);
	printf("device\t%d\t%s\t%s\t%s\t%s\t%u\t%u\t%llu\t%llu\t%llu\t%llu\t%llu\t%u\n",
	       index, d->name, type_name(d->type), d->platform_name, d->driver, d->compute_units,
	       d->clock_mhz, (unsigned long long)d->global_bytes, (unsigned long long)d->llc_bytes,
	       (unsigned long long)d->l2_bytes, (unsigned long long)d->l1_bytes,
	       (unsigned long long)d->local_bytes, d->float_width);
}

static cl_program build(struct bench *b, const char *source, const char *options)
{
	cl_int rc;
	cl_program program = clCreateProgramWithSource(b->context, 1, &source, NULL, &rc);
	if (rc != CL_SUCCESS) {
		failed("clCreateProgramWithSource", rc);
		return NULL;
	}
	rc = clBuildProgram(program, 1, &b->d->id, options, NULL, NULL);
	if (rc != CL_SUCCESS) {
		char log[4096] = "";
		clGetProgramBuildInfo(program, b->d->id, CL_PROGRAM_BUILD_LOG, sizeof(log) - 1, log,
				      NULL);
		fprintf(stderr, "gpuprof-roofline-opencl: the benchmark kernels do not build on "
				"this device (OpenCL error %d): %s\n", rc, log);
		clReleaseProgram(program);
		return NULL;
	}
	return program;
}

/* One launch, timed by the device: nanoseconds, or a negative value on failure. */
static double launch(struct bench *b, cl_kernel kernel, size_t global, size_t local)
{
	cl_event event;
	cl_int rc = clEnqueueNDRangeKernel(b->queue, kernel, 1, NULL, &global,
					   local ? &local : NULL, 0, NULL, &event);
	if (rc != CL_SUCCESS)
		return failed("clEnqueueNDRangeKernel", rc);
	rc = clWaitForEvents(1, &event);
	cl_ulong start = 0, end = 0;
	if (rc == CL_SUCCESS)
		rc = clGetEventProfilingInfo(event, CL_PROFILING_COMMAND_START, sizeof(start),
					     &start, NULL);
	if (rc == CL_SUCCESS)
		rc = clGetEventProfilingInfo(event, CL_PROFILING_COMMAND_END, sizeof(end), &end,
					     NULL);
	clReleaseEvent(event);
	if (rc != CL_SUCCESS)
		return failed("timing a kernel", rc);
	return end > start ? (double)(end - start) : 1.0;
}

/* A test: per_rep units of work (bytes or operations) per rep of a launch; reps is scaled so
 * that a launch lasts about the target, then experiments launches are timed. */
static int measure(struct bench *b, const char *column, cl_kernel kernel, int reps_arg,
		   size_t global, size_t local, double per_rep)
{
	cl_uint reps = 1;
	double ns = 0;
	/* calibration: double reps until a launch lasts a tenth of the target, then scale */
	for (int tries = 0; reps_arg >= 0 && tries < 40; tries++) {
		clSetKernelArg(kernel, (cl_uint)reps_arg, sizeof(reps), &reps);
		if ((ns = launch(b, kernel, global, local)) < 0)
			return -1;
		if (ns >= b->target_ns / 10 || reps >= (1u << 30))
			break;
		reps *= 2;
	}
	if (reps_arg >= 0) {
		double scaled = reps * (b->target_ns / ns);
		reps = scaled < 1 ? 1 : scaled > 4e9 ? 4000000000u : (cl_uint)scaled;
		clSetKernelArg(kernel, (cl_uint)reps_arg, sizeof(reps), &reps);
	}
	if (launch(b, kernel, global, local) < 0) /* warm-up */
		return -1;
	double sum = 0, sum2 = 0, work = per_rep * reps;
	for (int i = 0; i < b->experiments; i++) {
		if ((ns = launch(b, kernel, global, local)) < 0)
			return -1;
		double rate = work / (ns * 1e-9);
		sum += rate;
		sum2 += rate * rate;
	}
	roofline_result(column, sum, sum2, b->experiments);
	return 0;
}

/* The largest power of two not above n. */
static size_t power_of_two(size_t n)
{
	size_t p = 1;
	while (p * 2 <= n)
		p *= 2;
	return p;
}

static cl_mem buffer(struct bench *b, size_t bytes)
{
	cl_int rc;
	cl_mem m = clCreateBuffer(b->context, CL_MEM_READ_WRITE, bytes, NULL, &rc);
	if (rc != CL_SUCCESS) {
		failed("clCreateBuffer", rc);
		return NULL;
	}
	/* filled, so that no test reads memory never written (and pages are in place) */
	float zero = 0.5f;
	rc = clEnqueueFillBuffer(b->queue, m, &zero, sizeof(zero), 0, bytes, 0, NULL, NULL);
	if (rc == CL_SUCCESS)
		rc = clFinish(b->queue);
	if (rc != CL_SUCCESS) {
		clReleaseMemObject(m);
		failed("filling a buffer", rc);
		return NULL;
	}
	return m;
}

/* The lanes of the tests' vectors: as many as the device's own (a CPU's SIMD width), at
 * least 4 (a GPU's work-items are scalar: 4 independent lanes give each thread
 * instruction-level parallelism, and 16-byte accesses). */
static unsigned vector_lanes(const struct device *d)
{
	unsigned lanes = d->float_width > 4 ? (unsigned)power_of_two(d->float_width) : 4;
	return lanes > 16 ? 16 : lanes;
}

static int memory_tests(struct bench *b, size_t local, size_t groups)
{
	struct device *d = b->d;
	unsigned lanes = vector_lanes(d);
	size_t element = 4 * lanes; /* bytes */
	char options[64];
	snprintf(options, sizeof(options), "-DVEC=float%u -DVSTORE=vstore%u", lanes, lanes);
	cl_program program = build(b, memory_source, options);
	if (!program)
		return -1;
	cl_int rc;
	cl_kernel copy = clCreateKernel(program, "copy", &rc);
	cl_kernel read_all = clCreateKernel(program, "read_all", &rc);
	cl_kernel read_set = clCreateKernel(program, "read_set", &rc);
	cl_kernel local_read = clCreateKernel(program, "local_read", &rc);
	if (rc != CL_SUCCESS)
		return failed("clCreateKernel", rc);
	/* device memory: buffers four times the last-level cache (at least 64 MiB), within
	 * what the device lets one buffer be */
	cl_ulong want = d->llc_bytes * 4 > (64u << 20) ? d->llc_bytes * 4 : (64u << 20);
	if (want > d->max_alloc)
		want = d->max_alloc;
	if (want > d->global_bytes / 4)
		want = d->global_bytes / 4;
	size_t n = (size_t)(want / element) / local * local; /* elements, whole work-groups */
	size_t out_items = groups * local;
	cl_mem a = buffer(b, n * element), c = buffer(b, n * element);
	cl_mem out = buffer(b, out_items * element);
	if (!a || !c || !out)
		return -1;
	int result = 0;
	clSetKernelArg(copy, 0, sizeof(a), &a);
	clSetKernelArg(copy, 1, sizeof(c), &c);
	result |= measure(b, "HBMBw", copy, -1, n, local, 2.0 * n * element);
	cl_uint count = (cl_uint)n;
	cl_uint blocked = (d->type & CL_DEVICE_TYPE_CPU) != 0;
	clSetKernelArg(read_all, 0, sizeof(a), &a);
	clSetKernelArg(read_all, 1, sizeof(out), &out);
	clSetKernelArg(read_all, 2, sizeof(count), &count);
	clSetKernelArg(read_all, 4, sizeof(blocked), &blocked);
	result |= measure(b, "HBMReadBw", read_all, 3, out_items, local,
			  (double)n * element);
	/* cache-resident reads: every work-group reads the same half of a cache */
	const struct {
		const char *column;
		cl_ulong cache;
	} levels[] = { { "L2Bw", d->l2_bytes }, { "L1Bw", d->l1_bytes } };
	for (int i = 0; i < 2; i++) {
		cl_uint set = (cl_uint)(levels[i].cache / 2 / element);
		if (set < local) {
			printf("skip\t%s\tthe device reports no cache of this level\n", levels[i].column);
			continue;
		}
		clSetKernelArg(read_set, 0, sizeof(a), &a);
		clSetKernelArg(read_set, 1, sizeof(out), &out);
		clSetKernelArg(read_set, 2, sizeof(set), &set);
		clSetKernelArg(read_set, 4, sizeof(blocked), &blocked);
		/* a CPU runs a work-group on one core: one work-item reading the whole set
		 * streams through it; a GPU's work-group shares it between its work-items */
		size_t set_local = blocked ? 1 : local;
		result |= measure(b, levels[i].column, read_set, 3, groups * set_local, set_local,
				  (double)groups * set * element);
	}
	if (d->local_bytes >= local * 16) {
		clSetKernelArg(local_read, 0, sizeof(out), &out);
		clSetKernelArg(local_read, 1, local * 16, NULL);
		result |= measure(b, "LDSBw", local_read, 2, out_items, local,
				  (double)out_items * 16 * 4);
	} else {
		printf("skip\tLDSBw\tthe device's local memory is too small\n");
	}
	clReleaseMemObject(a);
	clReleaseMemObject(c);
	clReleaseMemObject(out);
	clReleaseKernel(copy);
	clReleaseKernel(read_all);
	clReleaseKernel(read_set);
	clReleaseKernel(local_read);
	clReleaseProgram(program);
	return result;
}

static int arithmetic_test(struct bench *b, const char *column, const char *scalar,
			   const char *options, size_t scalar_size, const void *a, const void *c,
			   size_t local, size_t groups)
{
	unsigned lanes = vector_lanes(b->d);
	char all[256];
	snprintf(all, sizeof(all), "-DSCALAR=%s -DVEC=%s%u -DVSTORE=vstore%u %s", scalar, scalar,
		 lanes, lanes, options);
	cl_program program = build(b, arithmetic_source, all);
	if (!program)
		return -1;
	cl_int rc;
	cl_kernel kernel = clCreateKernel(program, "mad_loop", &rc);
	if (rc != CL_SUCCESS)
		return failed("clCreateKernel", rc);
	size_t items = groups * local;
	cl_mem out = buffer(b, items * lanes * scalar_size);
	int result = -1;
	if (out) {
		clSetKernelArg(kernel, 0, sizeof(out), &out);
		clSetKernelArg(kernel, 2, scalar_size, a);
		clSetKernelArg(kernel, 3, scalar_size, c);
		result = measure(b, column, kernel, 1, items, local,
				 (double)items * CHAINS * lanes * 2);
		clReleaseMemObject(out);
	}
	clReleaseKernel(kernel);
	clReleaseProgram(program);
	return result;
}

static int arithmetic_tests(struct bench *b, size_t local, size_t groups)
{
	int result = 0;
	float f32[2] = { 0.999f, 0.001f };
	result |= arithmetic_test(b, "FP32Flops", "float", "",
				  sizeof(float), &f32[0], &f32[1], local, groups);
	if (b->d->fp64) {
		double f64[2] = { 0.999, 0.001 };
		result |= arithmetic_test(b, "FP64Flops", "double", "-DFP64",
					  sizeof(double), &f64[0], &f64[1], local, groups);
	} else {
		printf("skip\tFP64Flops\tthe device has no double precision (cl_khr_fp64)\n");
	}
	if (b->d->fp16) {
		cl_half f16[2] = { 0x3bfe /* 0.999 */, 0x1419 /* 0.001 */ };
		result |= arithmetic_test(b, "FP16Flops",
					  "half", "-DFP16",
					  sizeof(cl_half), &f16[0], &f16[1], local, groups);
	} else {
		printf("skip\tFP16Flops\tthe device has no half precision (cl_khr_fp16)\n");
	}
	cl_uint i32[2] = { 3, 1 }; /* unsigned: wrapping is defined */
	result |= arithmetic_test(b, "I32Ops", "uint", "-DINTEGER",
				  sizeof(cl_uint), &i32[0], &i32[1], local, groups);
	return result;
}

int main(int argc, char **argv)
{
	int list, index, experiments;
	double target_ms;
	if (roofline_arguments(argc, argv, "gpuprof-roofline-opencl", &list, &index, &experiments,
			       &target_ms))
		return 2;
	struct device *all;
	cl_uint count;
	if (devices(&all, &count))
		return 1;
	if (list) {
		for (cl_uint i = 0; i < count; i++)
			print_device((int)i, &all[i]);
		free(all);
		return 0;
	}
	if ((cl_uint)index >= count) {
		fprintf(stderr, "gpuprof-roofline-opencl: no OpenCL device %d (%u found)\n", index,
			count);
		free(all);
		return 1;
	}
	struct bench b = { .d = &all[index], .experiments = experiments,
			   .target_ns = target_ms * 1e6 };
	print_device(index, b.d);
	cl_int rc;
	b.context = clCreateContext(NULL, 1, &b.d->id, NULL, NULL, &rc);
	if (rc != CL_SUCCESS)
		return failed("clCreateContext", rc), 1;
	b.queue = clCreateCommandQueue(b.context, b.d->id, CL_QUEUE_PROFILING_ENABLE, &rc);
	if (rc != CL_SUCCESS)
		return failed("clCreateCommandQueue", rc), 1;
	/* work-groups of up to 256 work-items (a power of two, for local_read), enough of
	 * them to fill every compute unit several times over */
	size_t local = power_of_two(b.d->max_workgroup < 256 ? b.d->max_workgroup : 256);
	if (b.d->type & CL_DEVICE_TYPE_CPU && local > 64)
		local = 64;
	size_t groups = (size_t)b.d->compute_units * (b.d->type & CL_DEVICE_TYPE_CPU ? 8 : 32);
	printf("plan\t%d\n", 9);
	fflush(stdout);
	int result = memory_tests(&b, local, groups) | arithmetic_tests(&b, local, groups);
	clReleaseCommandQueue(b.queue);
	clReleaseContext(b.context);
	free(all);
	return result ? 1 : 0;
}
