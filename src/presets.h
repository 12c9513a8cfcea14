/* Presets: ready-made sets of `gpuprof trace` options, one YAML file each, shipped in
 * <prefix>/share/gpuprof/presets/ (presets/ in the source tree). A preset is listed, and
 * shipped, only once what it collects works. */
#ifndef GPUPROF_PRESETS_H
#define GPUPROF_PRESETS_H

#include "util/error.h"
#include "util/strbuf.h"

/* The directory of the installed presets, beside the gpuprof executable. */
int presets_directory(struct strbuf *out, struct error *err);
/* The names of the presets in dir, sorted, comma-separated. */
void presets_list(const char *dir, struct strbuf *names);

#endif
