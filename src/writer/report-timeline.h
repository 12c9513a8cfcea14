/* The run over time, for the HTML report: per process, a lane per device (busy, its
 * longest idle gaps marked), per queue or stream (kernels and copies), per thread (its API
 * calls, and its marker and PyTorch operator ranges beneath, nested), on a time axis
 * from the process's start. Drawn at the picture's resolution (each lane's time covered
 * per pixel), so its size does not grow with the events. */
#ifndef GPUPROF_WRITER_REPORT_TIMELINE_H
#define GPUPROF_WRITER_REPORT_TIMELINE_H

#include <sqlite3.h>

#include "util/error.h"
#include "util/strbuf.h"

struct finding;

/* Appends to out the SVG of each process of db (at most 8, in the database's order),
 * each titled, the findings of its pid pinned above its lanes where they happen;
 * `label` prefixes the titles (the input, where there are several). 0, or -1 with err. */
int report_timeline(sqlite3 *db, const char *path, const char *label,
		    const struct finding *findings, size_t finding_count, struct strbuf *out,
		    struct error *err);

/* A time axis under a picture of `width` px from x0 covering `span_ns`, at y: ticks at
 * round intervals, labelled in human units. */
void report_time_axis(struct strbuf *out, double x0, double width, double y, double span_ns);

#endif
