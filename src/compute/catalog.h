/* The metric catalog of gpuprof compute, as data: one YAML file per analysis block
 * (catalog/NN-name.yaml, installed in share/gpuprof/catalog), numbered like
 * rocprof-compute's blocks. A block has tables, a table has metrics; a metric has an id
 * (block.table.metric: 2.1.0), a name, an expression (compute/expr.h) over CUPTI metric
 * names, launch.* values (from the kernel's record and the device's limits) and device.*
 * constants, a unit, a peak where one exists, and a description. A count the roofline
 * plots (FLOP of a data type, bytes of a memory level) names its ceiling: the column of
 * roofline.csv it is set against (roofline/roofline.h). */
#ifndef GPUPROF_COMPUTE_CATALOG_H
#define GPUPROF_COMPUTE_CATALOG_H

#include <stddef.h>

#include "compute/expr.h"
#include "util/error.h"
#include "util/strbuf.h"

struct catalog_metric {
	char *id, *name, *unit, *description;
	char *expr_text, *peak_text; /* peak_text NULL: no peak */
	struct expr *expr, *peak;
	char *ceiling_text;          /* NULL: not a roofline count */
	int ceiling;                 /* its enum roofline_ceiling, or -1 */
};

struct catalog_table {
	char *id, *title;
	struct catalog_metric *metrics;
	size_t count;
};

struct catalog_block {
	int id;
	char *title, *path;
	char **aliases;
	size_t alias_count;
	struct catalog_table *tables;
	size_t count;
};

/* A metric set (catalog/sets.yaml): a name for selections of the catalog. */
struct catalog_set {
	char *name, *description;
	char **select;
	size_t select_count;
	int single_pass; /* claimed to take one pass (the tests check it) */
	char **aliases;  /* rocprof-compute's names of its nearest sets (AMD's) */
	size_t alias_count;
};

struct catalog {
	struct catalog_block *blocks; /* by id */
	size_t count;
	struct catalog_set *sets;
	size_t set_count;
};

/* Reads every NN-*.yaml of dir, then its sets.yaml (whose selections must each name a
 * metric): 0, or -1 with err naming the file, line and fault. */
int catalog_load(const char *dir, struct catalog *c, struct error *err);
/* Reads one block file into c. */
int catalog_load_file(const char *path, struct catalog *c, struct error *err);
void catalog_release(struct catalog *c);

/* Whether name is a value gpuprof derives (launch.*, device.*, roofline.*), not a CUPTI
 * metric; for such names that gpuprof does not know, -1. */
int catalog_derived(const char *name);

/* The set called name, by its own name or a rocprof-compute name it stands for; NULL
 * when none. */
const struct catalog_set *catalog_set(const struct catalog *c, const char *name);
/* Whether set s is called name: 1 by its own name, 2 by a rocprof-compute name, else 0. */
int catalog_set_named(const struct catalog_set *s, const char *name);
/* When name is a rocprof-compute name of set s: what a user of rocprof-compute is told
 * (which set stands for it), appended to note, and 1; else 0. */
int catalog_set_note(const struct catalog_set *s, const char *name, struct strbuf *note);

/* Whether a selection (see catalog_select) names metric m of table t of block b. */
int catalog_matches(const struct catalog_block *b, const struct catalog_table *t,
		    const struct catalog_metric *m, const char *selection);
/* Whether any of count selections names metric m; every metric when count is 0. */
int catalog_selected(const struct catalog_block *b, const struct catalog_table *t,
		     const struct catalog_metric *m, const char *const *selections, int count);

/* The metrics a selection names: a block (2), a table (7.1), a metric (11.2.3) or a
 * block's alias (dram). Calls fn for each; returns how many, or -1 when it names none. */
int catalog_select(const struct catalog *c, const char *selection,
		   void (*fn)(const struct catalog_metric *m, void *arg), void *arg);

/* The counter that measures launch.duration, the time base of every rate: collected
 * with any metric whose expression divides by the duration. */
#define CATALOG_DURATION "gpu__time_duration.sum"

/* The CUPTI metric names a metric's expressions use, each once, appended to names
 * (one per line) unless already there; CATALOG_DURATION for launch.duration. */
void catalog_cupti_names(const struct catalog_metric *m, struct strbuf *names);

#endif
