/* The run over time, for the HTML report: per process, a lane per device (busy, its
 * longest idle gaps marked), per queue or stream (kernels and copies), per thread (its API
 * calls, and its marker and PyTorch operator ranges beneath, nested), on one time axis
 * for the processes of a database (from the first's start to the last's end: a merged
 * run's ranks side by side, labelled by rank), and an MPI run's messages between its
 * ranks. Drawn at the picture's resolution (each lane's time covered per pixel), so its
 * size does not grow with the events. */
#ifndef GPUPROF_WRITER_REPORT_TIMELINE_H
#define GPUPROF_WRITER_REPORT_TIMELINE_H

#include <sqlite3.h>
#include <stdint.h>

#include "util/error.h"
#include "util/strbuf.h"

struct finding;

/* The run over time of each process of one input, read (the costly part: every kernel,
 * copy and call) apart from its drawing, which needs the findings. */
struct report_timelines {
	struct timeline_process *items;
	size_t count;
	struct timeline_message *messages; /* an MPI run's, those whose receives waited
					    * longest first */
	size_t message_count;
	int64_t message_total;              /* matched in the database */
};

/* Reads each process of db (at most 8: an MPI run's by rank, others in the database's
 * order) into t; `label` prefixes their titles (the input, where there are several). 0,
 * or -1 with err. */
int report_timeline_read(sqlite3 *db, const char *path, const char *label,
			 struct report_timelines *t, struct error *err);
/* Appends to out the SVG of each process read, titled, the findings of its pid pinned
 * above its lanes where they happen; for an MPI run, a picture of its messages between
 * the ranks' rows, each from its send to the end of its receive. */
void report_timeline_draw(const struct report_timelines *t, const struct finding *findings,
			  size_t finding_count, struct strbuf *out);
void report_timeline_release(struct report_timelines *t);

/* The SQL of a marker range's label in the report, for a query of gpuprof_marker m that
 * joins gpuprof_string s on its name: the name, and its module path beside it in
 * brackets where it has one ("nn.Module.Net.forward/nn.Module.Linear.forward [Net.fc1]",
 * as the summary shows it). *join is the join it needs ("" for a database before schema
 * 3.7, which has no module paths). */
const char *report_range_label(sqlite3 *db, const char **join);

/* A time axis under a picture of `width` px from x0 covering `span_ns`, at y: ticks at
 * round intervals, labelled in human units. */
void report_time_axis(struct strbuf *out, double x0, double width, double y, double span_ns);

#endif
