/* A stand-in for the CUDA driver (built as libcuda.so.1) for tests/e2e/cupti-replay: the
 * calls the CUDA backend makes of the driver itself, with each thread's stack of current
 * contexts kept as the driver keeps it. Not part of gpuprof. */
#include <cuda.h>

#define DEPTH 16

static int capturing; /* fake_cuda_capture() */

/* Every stream is being captured (1) or none (0), as between cudaStreamBeginCapture and
 * cudaStreamEndCapture. */
void fake_cuda_capture(int on)
{
	capturing = on;
}

CUresult cuStreamIsCapturing(CUstream stream, CUstreamCaptureStatus *status)
{
	*status = capturing ? CU_STREAM_CAPTURE_STATUS_ACTIVE : CU_STREAM_CAPTURE_STATUS_NONE;
	return CUDA_SUCCESS;
}

static __thread CUcontext stack[DEPTH];
static __thread int depth;

CUresult cuCtxGetCurrent(CUcontext *context)
{
	*context = depth ? stack[depth - 1] : NULL;
	return CUDA_SUCCESS;
}

CUresult cuCtxSetCurrent(CUcontext context)
{
	if (!depth)
		depth = 1;
	stack[depth - 1] = context;
	return CUDA_SUCCESS;
}

CUresult cuCtxPushCurrent_v2(CUcontext context)
{
	if (depth == DEPTH)
		return CUDA_ERROR_INVALID_VALUE;
	stack[depth++] = context;
	return CUDA_SUCCESS;
}

CUresult cuCtxPopCurrent_v2(CUcontext *context)
{
	if (!depth)
		return CUDA_ERROR_INVALID_CONTEXT;
	*context = stack[--depth];
	return CUDA_SUCCESS;
}

CUresult cuDriverGetVersion(int *version)
{
	*version = 13000;
	return CUDA_SUCCESS;
}

CUresult cuDeviceGetAttribute(int *value, CUdevice_attribute attribute, CUdevice device)
{
	*value = attribute == CU_DEVICE_ATTRIBUTE_CLOCK_RATE ? 1980000 : 0;
	return CUDA_SUCCESS;
}
