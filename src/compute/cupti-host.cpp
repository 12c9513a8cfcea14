// The one C++ file of gpuprof: CUPTI's profiler host API (cupti_profiler_host.h, which
// includes <string>) behind a few C functions, in libgpuprof-cupti-host.so, which
// gpuprof loads at run time (compute/host.h): it lists a chip's metrics, checks metric
// names and counts the passes a set of metrics needs, with no GPU. The CUDA backend
// loads it too, to build the configuration of a collection and to turn the counters it
// read into metric values.
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_target.h>

#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <vector>

#include "../../inject/cupti-host.h"

namespace {

CUpti_Profiler_Host_Object *open_host(const char *chip, const uint8_t *availability = nullptr)
{
	CUpti_Profiler_Host_Initialize_Params p;
	std::memset(&p, 0, sizeof(p));
	p.structSize = CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE;
	p.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
	p.pChipName = chip;
	p.pCounterAvailabilityImage = availability;
	return cuptiProfilerHostInitialize(&p) == CUPTI_SUCCESS ? p.pHostObject : nullptr;
}

void close_host(CUpti_Profiler_Host_Object *host)
{
	CUpti_Profiler_Host_Deinitialize_Params p;
	std::memset(&p, 0, sizeof(p));
	p.structSize = CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE;
	p.pHostObject = host;
	cuptiProfilerHostDeinitialize(&p);
}

// Adds names to the host's configuration: 0, or -1 when one is refused.
int add_metrics(CUpti_Profiler_Host_Object *host, const char *const *names, size_t count)
{
	CUpti_Profiler_Host_ConfigAddMetrics_Params p;
	std::memset(&p, 0, sizeof(p));
	p.structSize = CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE;
	p.pHostObject = host;
	p.ppMetricNames = const_cast<const char **>(names);
	p.numMetrics = count;
	return cuptiProfilerHostConfigAddMetrics(&p) == CUPTI_SUCCESS ? 0 : -1;
}

// The configuration image of the metrics added to host: 0, or -1.
int config_image(CUpti_Profiler_Host_Object *host, std::vector<uint8_t> &image)
{
	CUpti_Profiler_Host_GetConfigImageSize_Params size;
	std::memset(&size, 0, sizeof(size));
	size.structSize = CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE;
	size.pHostObject = host;
	if (cuptiProfilerHostGetConfigImageSize(&size) != CUPTI_SUCCESS)
		return -1;
	image.resize(size.configImageSize);
	CUpti_Profiler_Host_GetConfigImage_Params get;
	std::memset(&get, 0, sizeof(get));
	get.structSize = CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE;
	get.pHostObject = host;
	get.configImageSize = image.size();
	get.pConfigImage = image.data();
	return cuptiProfilerHostGetConfigImage(&get) == CUPTI_SUCCESS ? 0 : -1;
}

} // namespace

extern "C" {

GPUPROF_HOST_API int gpuprof_host_chips(const char *const **names, size_t *count)
{
	CUpti_Profiler_Host_GetSupportedChips_Params p;
	std::memset(&p, 0, sizeof(p));
	p.structSize = CUpti_Profiler_Host_GetSupportedChips_Params_STRUCT_SIZE;
	if (cuptiProfilerHostGetSupportedChips(&p) != CUPTI_SUCCESS)
		return -1;
	*names = p.ppChipNames;
	*count = p.numChips;
	return 0;
}

GPUPROF_HOST_API const char *gpuprof_host_device_chip(int device)
{
	// CUPTI asks the driver: only where one is, with that device (never linked: a
	// machine without a GPU has no libcuda)
	void *driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	int (*init)(unsigned) = driver ? (int (*)(unsigned))dlsym(driver, "cuInit") : nullptr;
	int (*count)(int *) = driver ? (int (*)(int *))dlsym(driver, "cuDeviceGetCount") : nullptr;
	int devices = 0;
	if (!init || !count || init(0) != 0 || count(&devices) != 0 || device >= devices)
		return nullptr; // the driver stays loaded: CUPTI uses it from here on
	// cuptiDeviceGetChipName reads what cuptiProfilerInitialize sets up: called before
	// it, it ends the process with a segmentation fault. Left initialized: the name
	// returned is CUPTI's.
	CUpti_Profiler_Initialize_Params init_params;
	std::memset(&init_params, 0, sizeof(init_params));
	init_params.structSize = CUpti_Profiler_Initialize_Params_STRUCT_SIZE;
	if (cuptiProfilerInitialize(&init_params) != CUPTI_SUCCESS)
		return nullptr;
	CUpti_Device_GetChipName_Params p;
	std::memset(&p, 0, sizeof(p));
	p.structSize = CUpti_Device_GetChipName_Params_STRUCT_SIZE;
	p.deviceIndex = (size_t)device;
	return cuptiDeviceGetChipName(&p) == CUPTI_SUCCESS ? p.pChipName : nullptr;
}

GPUPROF_HOST_API void *gpuprof_host_open(const char *chip)
{
	return open_host(chip);
}

GPUPROF_HOST_API void gpuprof_host_close(void *host)
{
	if (host)
		close_host(static_cast<CUpti_Profiler_Host_Object *>(host));
}

GPUPROF_HOST_API int gpuprof_host_base_metrics(void *host, int type, const char *const **names,
					       size_t *count)
{
	CUpti_Profiler_Host_GetBaseMetrics_Params p;
	std::memset(&p, 0, sizeof(p));
	p.structSize = CUpti_Profiler_Host_GetBaseMetrics_Params_STRUCT_SIZE;
	p.pHostObject = static_cast<CUpti_Profiler_Host_Object *>(host);
	p.metricType = type == HOST_METRIC_RATIO ? CUPTI_METRIC_TYPE_RATIO
		       : type == HOST_METRIC_THROUGHPUT ? CUPTI_METRIC_TYPE_THROUGHPUT
							 : CUPTI_METRIC_TYPE_COUNTER;
	if (cuptiProfilerHostGetBaseMetrics(&p) != CUPTI_SUCCESS)
		return -1;
	*names = p.ppMetricNames;
	*count = p.numMetrics;
	return 0;
}

GPUPROF_HOST_API int gpuprof_host_passes(const char *chip, const char *const *names,
					 size_t count, size_t *passes, size_t *refused)
{
	*refused = count;
	CUpti_Profiler_Host_Object *host = open_host(chip);
	if (!host)
		return -1;
	int rc = add_metrics(host, names, count);
	if (rc) { // which one: each alone, in a configuration of its own
		close_host(host);
		for (size_t i = 0; i < count && *refused == count; i++) {
			CUpti_Profiler_Host_Object *one = open_host(chip);
			if (one && add_metrics(one, &names[i], 1))
				*refused = i;
			if (one)
				close_host(one);
		}
		return -1;
	}
	std::vector<uint8_t> image;
	rc = config_image(host, image);
	if (rc == 0) {
		CUpti_Profiler_Host_GetNumOfPasses_Params n;
		std::memset(&n, 0, sizeof(n));
		n.structSize = CUpti_Profiler_Host_GetNumOfPasses_Params_STRUCT_SIZE;
		n.configImageSize = image.size();
		n.pConfigImage = image.data();
		rc = cuptiProfilerHostGetNumOfPasses(&n) == CUPTI_SUCCESS ? 0 : -1;
		*passes = n.numOfPasses;
	}
	close_host(host);
	return rc;
}

GPUPROF_HOST_API void *gpuprof_host_open_device(const char *chip, const uint8_t *availability)
{
	return open_host(chip, availability);
}

GPUPROF_HOST_API int gpuprof_host_config(void *host, const char *const *names, size_t count,
					 uint8_t **image, size_t *size)
{
	auto *h = static_cast<CUpti_Profiler_Host_Object *>(host);
	std::vector<uint8_t> bytes;
	if (add_metrics(h, names, count) || config_image(h, bytes))
		return -1;
	*image = static_cast<uint8_t *>(std::malloc(bytes.size()));
	if (!*image)
		return -1;
	std::memcpy(*image, bytes.data(), bytes.size());
	*size = bytes.size();
	return 0;
}

GPUPROF_HOST_API int gpuprof_host_evaluate(void *host, const uint8_t *counter_data, size_t size,
					   size_t range, const char *const *names, size_t count,
					   double *values)
{
	CUpti_Profiler_Host_EvaluateToGpuValues_Params p;
	std::memset(&p, 0, sizeof(p));
	p.structSize = CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE;
	p.pHostObject = static_cast<CUpti_Profiler_Host_Object *>(host);
	p.pCounterDataImage = counter_data;
	p.counterDataImageSize = size;
	p.rangeIndex = range;
	p.ppMetricNames = const_cast<const char **>(names);
	p.numMetrics = count;
	p.pMetricValues = values;
	return cuptiProfilerHostEvaluateToGpuValues(&p) == CUPTI_SUCCESS ? 0 : -1;
}

} // extern "C"
