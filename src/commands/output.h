/* Post-processing shared by `trace` and `convert`: a spool, read and sorted in memory,
 * becomes a database and the requested files at the same time; a database becomes the
 * same files. */
#ifndef GPUPROF_COMMANDS_OUTPUT_H
#define GPUPROF_COMMANDS_OUTPUT_H

#include "util/error.h"
#include "util/options.h"
#include "writer/writer.h"

enum output_format {
	FORMAT_CSV = 1 << 0,
	FORMAT_SQLITE = 1 << 1,
	FORMAT_JSON = 1 << 2,
	FORMAT_PFTRACE = 1 << 3,
	FORMAT_HTML = 1 << 4,   /* the report (writer/report.h), made from the database */
	FORMAT_OTF2 = 1 << 5,   /* an OTF2 archive (writer/otf2.h), made from the database */
};

/* Every format name -f knows, including those of later versions (refused by name). */
#define OUTPUT_FORMAT_WORDS "csv|sqlite|rocpd|json|pftrace|perfetto|html|otf2"

struct kernel_filter;

struct output_request {
	unsigned formats;      /* enum output_format bits */
	int summary;           /* print the summary tables on stderr */
	const struct kernel_filter *kernel_filter; /* spools only; NULL: every kernel */
	struct output_options options; /* options.prefix is set per input */
	int skip_empty;        /* a spool of a process that recorded nothing of its own (no
				* API call, device work, marker, sample or counter: its metrics
				* are gpuprof's) gets no outputs: output_from_spool returns 1 */
};

/* Parses -f values: csv, sqlite (alias rocpd), json, pftrace (alias perfetto), html,
 * otf2. */
int output_parse_formats(const struct option_list *list, unsigned *formats, struct error *err);

/* Turns one spool into outputs named <prefix>_<name>.<ext>: the database on a second
 * thread while the files are written. Prints a line about the process and the files
 * written. keep_spool leaves the spool in place; otherwise it is removed once every
 * output was written. Returns 0, -1 on an error, 1 when request->skip_empty left an
 * empty one alone (nothing written or removed). */
int output_from_spool(const char *spool_path, const char *prefix,
		      const struct output_request *request, int keep_spool, struct error *err);

/* The same from an existing database. */
int output_from_database(const char *db_path, const char *prefix,
			 const struct output_request *request, struct error *err);

#endif
