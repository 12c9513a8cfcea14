/* Where gpuprof's own files are: beside the command, in the build tree as once
 * installed (<prefix>/bin/gpuprof, <prefix>/lib/gpuprof/, <prefix>/share/gpuprof/).
 *
 * Presets: ready-made sets of `gpuprof trace` options, one YAML file each, shipped in
 * <prefix>/share/gpuprof/presets/ (presets/ in the source tree). A preset is listed, and
 * shipped, only once what it collects works. */
#ifndef GPUPROF_UTIL_INSTALL_H
#define GPUPROF_UTIL_INSTALL_H

#include "util/error.h"
#include "util/strbuf.h"

/* <directory of the gpuprof executable>/../<relative>. */
int install_path(const char *relative, struct strbuf *out, struct error *err);

/* The directory of the installed presets. */
int presets_directory(struct strbuf *out, struct error *err);
/* The names of the presets in dir, sorted, comma-separated. */
void presets_list(const char *dir, struct strbuf *names);

#endif
