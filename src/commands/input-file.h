/* Input files of `gpuprof trace -i FILE` and the preset files of `--preset NAME`: JSON or
 * YAML (one parser reads both, with line numbers), keys named as the long options of
 * `gpuprof trace` (with `_` or `-`). An input file is `{"jobs": [{...}, {...}]}`, each job
 * one run of the program; a file without `jobs` is one job. A `description` key is
 * text for people (presets show it) and sets nothing. */
#ifndef GPUPROF_COMMANDS_INPUT_FILE_H
#define GPUPROF_COMMANDS_INPUT_FILE_H

#include <stddef.h>

#include "util/error.h"
#include "util/options.h"

struct input_setting {
	char *key;      /* as written */
	char *argument; /* "--key-name=value" (a list's items joined by commas) */
	int line;       /* 1-based */
};

struct input_job {
	struct input_setting *settings;
	size_t count;
	char *description;
};

struct input_file {
	char *path;
	struct input_job *jobs;
	size_t count;
};

/* Reads and checks the file's structure; errors name the file and line. */
int input_read(const char *path, struct input_file *in, struct error *err);
void input_release(struct input_file *in);

/* Applies a job's settings to the options of `table`, in file order; an error names the
 * file, the line and the key. Options named in `refused` (NULL-terminated long names)
 * cannot be set from a file. String options point into `in`: keep it while they are
 * used. */
int input_apply(const struct input_file *in, const struct input_job *job,
		const struct option *table, const char *const *refused, struct error *err);

#endif
