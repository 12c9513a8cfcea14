/* Output path templates: placeholder expansion (%pid%, %hostname%, %rank%,
 * %env{NAME}%...) and the rank and size a parallel launcher gives a process. */
#ifndef GPUPROF_CORE_PATHS_H
#define GPUPROF_CORE_PATHS_H

#include <sys/types.h>
#include <time.h>

#include "util/error.h"
#include "util/strbuf.h"

struct path_context {
	pid_t pid;
	pid_t ppid;
	const char *hostname;
	int rank;           /* -1 when not launched by an MPI or Slurm launcher */
	int size;           /* -1 when unknown */
	time_t launch_time; /* seconds since the epoch, shared by every process of a run */
};

/* Fills ctx for the calling process. launch_time comes from GPUPROF_LAUNCH_TIME when
 * set (so all processes of one run agree), else from now. */
void path_context_current(struct path_context *ctx);

/* Expands every placeholder of template into out. Unknown placeholders are an error;
 * so is a NUL-free result longer than PATH_MAX. %rank% and %size% expand to the
 * launcher's values, or to the pid and 1 outside a parallel launch. */
int path_expand(const char *template, const struct path_context *ctx, struct strbuf *out,
		struct error *err);

/* Rank and size from the launcher's environment (Slurm, Open MPI, MPICH/PMI, MVAPICH);
 * -1 for each that is not set. */
void path_launcher_rank(int *rank, int *size);

/* Creates every missing directory of path (not its last component when
 * `leaf_is_file`). */
/* The template of a process's output files: FILE under DIR, or FILE alone when it is an
 * absolute path (-o /abs/name ignores -d). */
void path_output_template(struct strbuf *out, const char *dir, const char *file);

int path_make_parents(const char *path, int leaf_is_file, struct error *err);

/* The deepest existing ancestor directory of path is writable: 0, else -1 with err. */
int path_check_writable(const char *path, struct error *err);

#endif
