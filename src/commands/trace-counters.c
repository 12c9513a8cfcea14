/* gpuprof trace's hardware counters (see trace.h): --pmc, and the metric sets of
 * gpuprof compute named by --pmc-set, planned through CUPTI's profiler host API. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands/trace.h"
#include "compute/catalog.h"
#include "compute/host.h"
#include "util/install.h"

/* Puts the options the counters came from before err's message (those of a preset
 * named as the preset's, which the user did not type); returns -1. */
static int pmc_error(const struct trace_options *o, struct error *err)
{
	struct error inner = *err;
	const char *what = o->pmc.count && o->pmc_set.count ? "--pmc and --pmc-set"
			   : o->pmc.count ? "--pmc" : "--pmc-set";
	if (!o->preset)
		return error_set(err, "%s: %s", what, inner.message);
	struct strbuf names = STRBUF_INIT;
	for (int i = 0; i < o->pmc_set.count; i++)
		strbuf_addf(&names, "%s%s", names.len ? ", " : "pmc_set: ", o->pmc_set.items[i]);
	for (int i = 0; i < o->pmc.count; i++)
		strbuf_addf(&names, "%s%s", i ? ", " : names.len ? "; pmc: " : "pmc: ",
			    o->pmc.items[i]);
	error_set(err, "the counters of --preset %s (%s): %s", o->preset, names.buf,
		  inner.message);
	strbuf_release(&names);
	return -1;
}

/* Adds the CUPTI metrics a catalog metric reads to the list (newline-separated). */
static void add_set_metric(const struct catalog_metric *m, void *arg)
{
	catalog_cupti_names(m, arg);
}

/* The CUPTI metrics of the --pmc-set sets, appended to names (one per line, each once). */
static int set_metrics(const struct option_list *sets, struct strbuf *names,
		       struct error *err)
{
	struct strbuf dir = STRBUF_INIT;
	struct catalog c;
	int rc = install_path("share/gpuprof/catalog", &dir, err) ? -1
		 : catalog_load(dir.buf, &c, err);
	strbuf_release(&dir);
	if (rc) {
		struct error inner = *err;
		return error_set(err, "--pmc-set: %s", inner.message);
	}
	for (int i = 0; rc == 0 && i < sets->count; i++) {
		const struct catalog_set *s = catalog_set(&c, sets->items[i]);
		struct strbuf note = STRBUF_INIT;
		if (!s)
			rc = error_set(err, "--pmc-set: no metric set is called '%s' (gpuprof compute "
					    "profile --list-sets lists them)", sets->items[i]);
		else if (catalog_set_note(s, sets->items[i], &note))
			fprintf(stderr, "gpuprof: --pmc-set %s\n", note.buf);
		strbuf_release(&note);
		for (size_t k = 0; s && k < s->select_count; k++)
			catalog_select(&c, s->select[k], add_set_metric, names);
	}
	catalog_release(&c);
	return rc;
}

/* --pmc and --pmc-set: the metrics checked against the GPU's chip, and the passes they
 * take said. */
int trace_plan_counters(struct job *j, struct error *err)
{
	struct strbuf list = STRBUF_INIT;
	for (int i = 0; i < j->o.pmc.count; i++) {
		const char *name = j->o.pmc.items[i];
		if (!*name || strchr(name, ' ') || strchr(name, '\n')) {
			strbuf_release(&list);
			return error_set(err, "--pmc: '%s' is not a metric name", name);
		}
		strbuf_addf(&list, "%s\n", name);
	}
	if (j->o.pmc_set.count && set_metrics(&j->o.pmc_set, &list, err)) {
		strbuf_release(&list);
		return -1;
	}
	/* each name once, in the order given */
	const char **names = xcalloc(list.len + 1, sizeof(*names));
	struct strbuf unique = STRBUF_INIT;
	size_t count = 0;
	for (char *save = NULL, *line = strtok_r(list.buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		size_t k = 0;
		while (k < count && strcmp(names[k], line))
			k++;
		if (k == count) {
			names[count++] = line;
			strbuf_addf(&unique, "%s\n", line);
		}
	}
	struct host_api api;
	const char *chip;
	size_t passes;
	int rc = -1;
	if (count == 0) {
		error_set(err, "the metric sets name no CUPTI metric (all derived from the kernel "
			       "records)");
	} else if (host_load(&api, err) == 0) {
		rc = host_plan_device(&api, names, count, &chip, &passes, err);
		struct strbuf *groups = NULL, why = STRBUF_INIT;
		long group_count = 1;
		if (rc == 0 && j->o.pmc_multiplex) {
			group_count = host_plan_groups(&api, chip, unique.buf, &groups, &why);
			if (group_count < 0)
				rc = error_set(err, "--pmc-multiplex: %s (a dispatch collects one pass)",
					       why.buf);
		}
		for (long g = 0; rc == 0 && g < group_count; g++) {
			const char *group = groups ? groups[g].buf : unique.buf;
			strbuf_addstr(&j->pmc, g ? ";" : "");
			for (const char *c = group; *c; c++)
				if (*c != '\n')
					strbuf_addch(&j->pmc, *c);
				else if (c[1])
					strbuf_addch(&j->pmc, ',');
		}
		if (rc == 0 && groups)
			fprintf(stderr, "gpuprof: --pmc: %zu metric%s in %ld group%s of one pass on %s, "
					"one group per dispatch of each kernel (--pmc-multiplex %s): "
					"a kernel is measured whole after %ld dispatches; kernels run "
					"one at a time while counters are collected\n", count,
				count == 1 ? "" : "s", group_count, group_count == 1 ? "" : "s",
				chip, j->o.pmc_multiplex, group_count);
		else if (rc == 0)
			fprintf(stderr, "gpuprof: --pmc: %zu metric%s, %zu pass%s on %s: each kernel "
					"kept runs %zu time%s (CUPTI's kernel replay), and kernels "
					"run one at a time while counters are collected\n", count,
				count == 1 ? "" : "s", passes, passes == 1 ? "" : "es", chip, passes,
				passes == 1 ? "" : "s");
		if (groups)
			host_release_groups(groups, group_count);
		strbuf_release(&why);
		host_unload(&api);
	}
	free(names);
	strbuf_release(&unique);
	strbuf_release(&list);
	return rc ? pmc_error(&j->o, err) : 0;
}
