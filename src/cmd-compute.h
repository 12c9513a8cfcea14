/* What the files of gpuprof compute share: cmd-compute.c (profile), cmd-compute-plan.c
 * (planning and listings), cmd-compute-analyze.c (analyze). */
#ifndef GPUPROF_CMD_COMPUTE_H
#define GPUPROF_CMD_COMPUTE_H

#include "compute/catalog.h"
#include "compute/host.h"
#include "util/options.h"
#include "util/strbuf.h"

/* A selection of the catalog planned on a chip. */
struct compute_plan {
	struct host_api *api;
	const char *chip;
	struct strbuf names;   /* the CUPTI metrics of what is selected, one per line */
	int metrics;
};

/* Adds a metric to the plan (a catalog_select callback): its CUPTI metrics, and one to
 * the count. */
void compute_plan_add(const struct catalog_metric *m, void *arg);
/* Adds to p the metrics of block b that the -b selections name (all without any). */
void compute_plan_block(const struct catalog_block *b, const struct option_list *blocks,
			struct compute_plan *p);

/* --list-available-metrics: the catalog, or what -b selects of it, each block with the
 * passes its metrics take on chip, each metric with whether the chip has it, and the
 * passes of the whole selection. */
int compute_list_metrics(const struct catalog *c, const struct option_list *blocks,
			 struct host_api *api, const char *chip);
/* --list-sets: each metric set with its metrics and the passes and runs it takes. */
int compute_list_sets(const struct catalog *c, struct host_api *api, const char *chip);

/* gpuprof compute analyze (cmd-compute-analyze.c): argv[0] is "analyze". */
int compute_analyze(int argc, char **argv);
extern const char compute_analyze_usage[], compute_analyze_description[];

#endif
