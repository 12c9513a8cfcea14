/* A flame graph of a call tree (analysis/profile.h) as inline SVG for the HTML report:
 * the CPU samples of a process, or the device time of its launches by call path. Each
 * frame is as wide as its share of the whole (its total), its callees above it, the
 * heaviest first; frames narrower than a pixel are left out. Readable as a still image
 * (every frame's name and count in its tooltip); the report's script adds zoom (click a
 * frame) and search. Each frame carries its function, module and total as data-
 * attributes, for tests and other programs. */
#ifndef GPUPROF_WRITER_FLAMEGRAPH_H
#define GPUPROF_WRITER_FLAMEGRAPH_H

#include <stdio.h>

#include "analysis/profile.h"

/* The flame graph of t (profile_link() is called on it), titled by the caller; `what`
 * names the weights in tooltips ("samples", or device time when t->device_time). */
void flamegraph_svg(FILE *out, struct profile_tree *t, const char *id);

/* The script every flame graph of a page shares: zoom and search; once per page. */
extern const char flamegraph_script[];

#endif
