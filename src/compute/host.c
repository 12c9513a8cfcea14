/* Loading CUPTI's profiler host API (see host.h). */
#include "compute/host.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include "util/install.h"

/* A gpuprof built with a sanitizer (the tests' builds): CUPTI loads libnvperf_host.so
 * with RTLD_DEEPBIND, which the sanitizers' runtimes refuse by ending the process. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SANITIZED 1
#else
#define SANITIZED 0
#endif

int host_load(struct host_api *api, struct error *err)
{
	memset(api, 0, sizeof(*api));
	if (SANITIZED)
		return error_set(err, "CUPTI's profiler host API is not available in a gpuprof built "
				      "with a sanitizer (CUPTI loads libnvperf_host.so with "
				      "RTLD_DEEPBIND, which the sanitizers refuse)");
	struct strbuf path = STRBUF_INIT;
	if (install_path("lib/gpuprof/libgpuprof-cupti-host.so", &path, err))
		return -1;
	api->library = dlopen(path.buf, RTLD_NOW | RTLD_LOCAL);
	if (!api->library) {
		error_set(err, "CUPTI's profiler host API is not available: %s (gpuprof was built "
			       "without the CUDA toolkit, or its CUPTI is gone)", dlerror());
		strbuf_release(&path);
		return -1;
	}
	strbuf_release(&path);
	*(void **)&api->chips = dlsym(api->library, "gpuprof_host_chips");
	*(void **)&api->device_chip = dlsym(api->library, "gpuprof_host_device_chip");
	*(void **)&api->open = dlsym(api->library, "gpuprof_host_open");
	*(void **)&api->close = dlsym(api->library, "gpuprof_host_close");
	*(void **)&api->base_metrics = dlsym(api->library, "gpuprof_host_base_metrics");
	*(void **)&api->passes = dlsym(api->library, "gpuprof_host_passes");
	if (!api->chips || !api->device_chip || !api->open || !api->close || !api->base_metrics ||
	    !api->passes) {
		host_unload(api);
		return error_set(err, "libgpuprof-cupti-host.so is not this gpuprof's");
	}
	return 0;
}

void host_unload(struct host_api *api)
{
	if (api->library)
		dlclose(api->library);
	memset(api, 0, sizeof(*api));
}

int host_plan_device(struct host_api *api, const char *const *names, size_t count,
		     const char **chip, size_t *passes, struct error *err)
{
	*chip = api->device_chip(0);
	if (!*chip)
		return error_set(err, "counters are read from NVIDIA GPUs through CUPTI, and no "
				      "CUDA device is usable here (no driver, no GPU, or one "
				      "hidden by CUDA_VISIBLE_DEVICES)");
	size_t refused = count;
	if (api->passes(*chip, names, count, passes, &refused) == 0)
		return 0;
	if (refused < count)
		return error_set(err, "'%s' is not a metric of %s (gpuprof compute profile "
				      "--list-available-metrics shows the catalog's; CUPTI's metric "
				      "names end in .sum, .avg, .max, .pct_of_peak_sustained_...)",
				 names[refused], *chip);
	return error_set(err, "CUPTI cannot plan these metrics on %s", *chip);
}

size_t host_split_names(char *text, const char ***out)
{
	size_t n = 0;
	for (char *c = text; *c; c++)
		n += *c == '\n';
	const char **names = xcalloc(n ? n : 1, sizeof(*names));
	size_t i = 0;
	for (char *save = NULL, *line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save))
		names[i++] = line;
	*out = names;
	return i;
}

long host_list_passes(const struct host_api *api, const char *chip, const char *list,
		      struct strbuf *refused)
{
	char *copy = xstrdup(list);
	const char **names;
	size_t n = host_split_names(copy, &names), passes = 0, bad = 0;
	long rc = 0;
	if (n && api->passes(chip, names, n, &passes, &bad)) {
		rc = -1;
		if (refused && bad < n)
			strbuf_addstr(refused, names[bad]);
	}
	free(names);
	free(copy);
	return rc ? -1 : (long)passes;
}

long host_plan_groups(const struct host_api *api, const char *chip, const char *list,
		      struct strbuf **groups, struct strbuf *why)
{
	char *copy = xstrdup(list);
	const char **names;
	size_t n = host_split_names(copy, &names);
	struct strbuf *g = xcalloc(n ? n : 1, sizeof(*g));
	for (size_t i = 0; i < (n ? n : 1); i++)
		strbuf_init(&g[i]);
	long count = 0;
	struct strbuf candidate = STRBUF_INIT;
	for (size_t i = 0; i < n && count >= 0; i++) {
		long fit = 0;
		for (; fit < count; fit++) {
			strbuf_reset(&candidate);
			strbuf_addf(&candidate, "%s%s\n", g[fit].buf, names[i]);
			if (host_list_passes(api, chip, candidate.buf, NULL) == 1)
				break;
		}
		long alone = fit < count ? 1 : host_list_passes(api, chip, names[i], NULL);
		if (alone < 0)
			strbuf_addf(why, "%s has no %s", chip, names[i]);
		else if (alone > 1)
			strbuf_addf(why, "%s takes %ld passes by itself on %s", names[i], alone, chip);
		if (alone != 1)
			count = -1;
		else
			strbuf_addf(&g[fit == count ? count++ : fit], "%s\n", names[i]);
	}
	strbuf_release(&candidate);
	free(names);
	free(copy);
	if (count < 0)
		host_release_groups(g, (long)(n ? n : 1));
	else
		*groups = g;
	return count;
}

void host_release_groups(struct strbuf *groups, long count)
{
	for (long i = 0; i < count; i++)
		strbuf_release(&groups[i]);
	free(groups);
}
