/* Output writers: each format is one file with one small ops table that sees only
 * vendor-neutral events, read from a database (export_database()) or from a spool read
 * into memory (export_recording()); both give the same events in the same order. */
#ifndef GPUPROF_WRITER_WRITER_H
#define GPUPROF_WRITER_WRITER_H

#include <sqlite3.h>
#include <stdint.h>

#include "core/event.h"
#include "core/recording.h"
#include "util/error.h"
#include "util/strbuf.h"

struct output_options {
	const char *prefix;   /* outputs are <prefix>_<name>.<ext> */
	int truncate_kernels; /* kernel names cut to their base name */
	int rename_kernels;   /* kernels named after their innermost marker range (spools) */
	int stats;            /* also the *_stats.csv files */
	const char *summary_units; /* for the summary writer: sec, msec, usec or nsec */
	/* a time window, in ns from each process's start: the timed events that end before
	 * from or begin after to are left out (to 0: no end); both 0 (as zeroed): all */
	int64_t window_from_ns, window_to_ns;
	void *context;        /* for writers that gather across exports (gpuprof summary) */
};

struct writer_ops {
	const char *format; /* the -f name */
	int (*begin)(void **state, const struct output_options *options, struct error *err);
	int (*event)(void *state, const struct event *event, struct error *err);
	/* Writes what remains, lists the files it wrote (one per line, appended to
	 * `written`) and frees the state. With `failed` set it only removes what it began
	 * to write and frees the state. */
	int (*end)(void *state, int failed, struct strbuf *written, struct error *err);
	int timeline; /* a timeline: reads event.linked and shows the sampled stacks, which
		       * the export works out only for such writers */
};

extern const struct writer_ops csv_writer;
extern const struct writer_ops json_writer;
extern const struct writer_ops pftrace_writer;
extern const struct writer_ops summary_writer;

/* Streams every event of db through the writers: its processes, then its agents, then
 * kernels, copies, allocations and API calls merged in start-time order (of equal
 * starts, in that order of kinds). Files written are listed in `written`. */
int export_database(sqlite3 *db, const struct writer_ops *const *writers, int count,
		    const struct output_options *options, struct strbuf *written,
		    struct error *err);

/* The same from a spool read into memory: the events the database built from it would
 * give, in the same order. */
int export_recording(const struct recording *rec, const struct writer_ops *const *writers,
		     int count, const struct output_options *options, struct strbuf *written,
		     struct error *err);

/* Kernel names without namespaces, template arguments and parameters
 * ("ns::k<int>(float*)" becomes "k"), as rocprofv3's --truncate-kernels. */
void writer_truncate_name(const char *name, struct strbuf *out);

/* "HOST", "PROCESS" or "GPU" for an enum metric_source. */
const char *writer_metric_source_name(int64_t source);

/* Appends what a metric series measures, whose it is first: "GPU 0 power", "process 42
 * CPU", "CPU 3 utilization" (one CPU of the machine), "machine memory used". */
void writer_metric_label(struct strbuf *out, const char *source, int64_t device, int64_t pid,
			 const char *name);

#endif
