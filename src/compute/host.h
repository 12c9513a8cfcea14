/* CUPTI's profiler host API as gpuprof uses it: a chip's metrics, the check of metric
 * names and the passes a set of metrics needs, all without a GPU. The functions live in
 * libgpuprof-cupti-host.so (built where the CUDA toolkit is, linked to CUPTI), which
 * gpuprof loads at run time, so that gpuprof itself needs no CUDA. */
#ifndef GPUPROF_COMPUTE_HOST_H
#define GPUPROF_COMPUTE_HOST_H

#include <stddef.h>
#include <stdint.h>

#include "../../inject/cupti-host.h"

struct host_api {
	void *library;
	host_chips_fn chips;
	host_device_chip_fn device_chip;
	host_open_fn open;
	host_close_fn close;
	host_base_metrics_fn base_metrics;
	host_passes_fn passes;
};

#include "util/error.h"

/* Loads the library beside gpuprof: 0, or -1 with err set (why it is not there). */
int host_load(struct host_api *api, struct error *err);
void host_unload(struct host_api *api);

/* Plans the collection of count CUPTI metrics on this machine's GPU (CUDA device 0): 0
 * with *chip (CUPTI's name of its chip) and *passes set, or -1 with err set in one line
 * (no GPU, or a metric the chip does not have). */
int host_plan_device(struct host_api *api, const char *const *names, size_t count,
		     const char **chip, size_t *passes, struct error *err);

#include "util/strbuf.h"

/* The names of a newline-separated list, as an array into *out (pointing into text,
 * whose newlines become NULs; the array malloc()ed); returns how many. */
size_t host_split_names(char *text, const char ***out);

/* The passes the metrics of list (newline-separated) take together on chip; -1 when one
 * is refused (its name into refused, when given). */
long host_list_passes(const struct host_api *api, const char *chip, const char *list,
		      struct strbuf *refused);

/* The metrics of list (newline-separated) put in groups that each take one pass on chip,
 * each metric into the first group it fits (application replay: one run of the program
 * per group; iteration multiplexing: one dispatch per group). Returns how many groups,
 * each a newline-separated list in *groups (freed with host_release_groups), or -1 with
 * the reason in why: a metric the chip refuses, or one that takes several passes by
 * itself. */
long host_plan_groups(const struct host_api *api, const char *chip, const char *list,
		      struct strbuf **groups, struct strbuf *why);
void host_release_groups(struct strbuf *groups, long count);

#endif
