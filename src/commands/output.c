/* Post-processing shared by `trace` and `convert` (see output.h). */
#include "commands/output.h"

#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "analysis/profile.h"
#include "analysis/unwind.h"
#include "store/store.h"
#include "util/hash.h"
#include "util/progress.h"
#include "util/strbuf.h"
#include "util/thread.h"
#include "util/unfinished.h"
#include "writer/output-file.h"
#include "writer/otf2.h"
#include "writer/report.h"

#define FORMATS_AVAILABLE "csv, sqlite, json, pftrace, html, otf2"

int output_parse_formats(const struct option_list *list, unsigned *formats, struct error *err)
{
	static const struct {
		const char *name;
		unsigned format;
	} names[] = {
		{ "csv", FORMAT_CSV }, { "sqlite", FORMAT_SQLITE }, { "rocpd", FORMAT_SQLITE },
		{ "json", FORMAT_JSON }, { "pftrace", FORMAT_PFTRACE },
		{ "perfetto", FORMAT_PFTRACE }, { "html", FORMAT_HTML }, { "otf2", FORMAT_OTF2 },
	};
	*formats = 0;
	for (int i = 0; i < list->count; i++) {
		const char *f = list->items[i];
		size_t j = 0;
		while (j < sizeof(names) / sizeof(names[0]) && strcmp(f, names[j].name))
			j++;
		if (j < sizeof(names) / sizeof(names[0])) {
			*formats |= names[j].format;
			continue;
		}
		return error_set(err, "unknown output format '%s' (available: "
				 FORMATS_AVAILABLE ")", f);
	}
	return 0;
}

/* The writers of the file formats requested (the database is written apart). */
static int file_writers(unsigned formats, const struct writer_ops *writers[3])
{
	int n = 0;
	if (formats & FORMAT_CSV)
		writers[n++] = &csv_writer;
	if (formats & FORMAT_JSON)
		writers[n++] = &json_writer;
	if (formats & FORMAT_PFTRACE)
		writers[n++] = &pftrace_writer;
	return n;
}

static void print_written(const struct strbuf *written)
{
	for (const char *line = written->buf; *line;) {
		const char *end = strchr(line, '\n');
		int len = end ? (int)(end - line) : (int)strlen(line);
		fprintf(stderr, "gpuprof:   %.*s\n", len, line);
		line += len + (end ? 1 : 0);
	}
}

/* Files named like this recording's outputs (<prefix>_*) that were not written since
 * `since`: an earlier run's, beside the new ones. Says which, so that an old
 * kernel_stats.csv is not read as this run's; removes the unfinished ones
 * (<output>.partial) of a gpuprof stopped midway. The input the outputs were made from
 * (`convert X_results.db` in place) is never one of them. */
static void warn_earlier_files(const char *prefix, const struct timespec *since,
			       const char *input)
{
	struct stat given;
	int has_input = stat(input, &given) == 0;
	const char *slash = strrchr(prefix, '/');
	struct strbuf dir = STRBUF_INIT, start = STRBUF_INIT, names = STRBUF_INIT;
	if (slash)
		strbuf_add(&dir, prefix, (size_t)(slash - prefix) + (slash == prefix));
	else
		strbuf_addstr(&dir, ".");
	strbuf_addf(&start, "%s_", slash ? slash + 1 : prefix);
	DIR *d = opendir(dir.buf);
	int count = 0, removed = 0;
	struct dirent *e;
	while (d && (e = readdir(d))) {
		struct stat st;
		size_t length = strlen(e->d_name);
		if (strncmp(e->d_name, start.buf, start.len) ||
		    fstatat(dirfd(d), e->d_name, &st, 0) < 0 || !S_ISREG(st.st_mode) ||
		    (has_input && st.st_dev == given.st_dev && st.st_ino == given.st_ino))
			continue;
		if (st.st_mtim.tv_sec > since->tv_sec ||
		    (st.st_mtim.tv_sec == since->tv_sec && st.st_mtim.tv_nsec >= since->tv_nsec))
			continue;
		/* <prefix>_<pid>...: another process of a run, named after its pid when the
		 * name was taken; its outputs are its own conversion's */
		size_t digits = strspn(e->d_name + start.len, "0123456789");
		if (digits && strchr("_.-", e->d_name[start.len + digits]))
			continue;
		if (length > 8 && !strcmp(e->d_name + length - 8, ".partial")) {
			/* an output an earlier gpuprof did not finish: never one to read */
			if (!unlinkat(dirfd(d), e->d_name, 0))
				removed++;
			continue;
		}
		if (count++ < 5)
			strbuf_addf(&names, "%s'%s'", count > 1 ? ", " : "", e->d_name);
	}
	if (d)
		closedir(d);
	if (removed)
		fprintf(stderr, "gpuprof: removed %d unfinished output%s ('*.partial') that an earlier, "
				"stopped gpuprof left in '%s'\n", removed, removed > 1 ? "s" : "", dir.buf);
	if (count)
		fprintf(stderr, "gpuprof: %d file%s in '%s' named like these outputs %s not written "
				"by this run (an earlier run's): %s%s; remove %s or choose another -o or -d\n",
			count, count > 1 ? "s" : "", dir.buf, count > 1 ? "were" : "was", names.buf,
			count > 5 ? ", ..." : "", count > 1 ? "them" : "it");
	strbuf_release(&dir);
	strbuf_release(&start);
	strbuf_release(&names);
}

/* Runs writers over the database at db_path, in one pass. */
static int export_with(const char *db_path, const struct writer_ops **writers, int count,
		       const struct output_request *request, const char *prefix,
		       struct strbuf *written, struct error *err)
{
	sqlite3 *db;
	if (store_open(db_path, &db, err))
		return -1;
	struct output_options options = request->options;
	options.prefix = prefix;
	int rc = export_database(db, writers, count, &options, written, err);
	sqlite3_close(db);
	return rc;
}

/* The stacks.folded of a database's samples, as from its spool (nothing without). */
static int write_folded_from_database(const char *db_path, const char *prefix,
				      struct strbuf *written, struct error *err)
{
	sqlite3 *db;
	struct profile_filter all = PROFILE_ALL;
	struct profile_tree t;
	profile_init(&t);
	t.all_frames = 1; /* every frame, as the spool's stacks.folded has them */
	int rc = store_open(db_path, &db, err) || profile_gather(db, &all, &t, err);
	sqlite3_close(db);
	if (rc == 0 && t.samples) {
		struct strbuf folded = STRBUF_INIT;
		struct output_file file;
		profile_folded(&t, &folded);
		rc = output_file_open(&file, prefix, "_stacks.folded", err) ||
		     output_file_write(&file, folded.buf, folded.len, err);
		if (file.out || rc == 0)
			rc = output_file_close(&file, rc != 0, written, err) || rc;
		strbuf_release(&folded);
	}
	profile_release(&t);
	return rc ? -1 : 0;
}

/* Writes the requested files, lists them, then prints the summary tables. */
/* <prefix>_report.html from a database. */
static int write_report(const char *db_path, const char *prefix, struct strbuf *written,
			struct error *err)
{
	struct strbuf path = STRBUF_INIT;
	strbuf_addf(&path, "%s_report.html", prefix);
	char *inputs[] = { (char *)db_path };
	int rc = report_write(inputs, 1, NULL, path.buf, err);
	if (rc == 0)
		strbuf_addf(written, "%s\n", path.buf);
	strbuf_release(&path);
	return rc;
}

/* <prefix>_otf2/traces.otf2 from a database. */
static int write_otf2(const char *db_path, const char *prefix, struct strbuf *written,
		      struct error *err)
{
	struct strbuf directory = STRBUF_INIT;
	strbuf_addf(&directory, "%s_otf2", prefix);
	int rc = otf2_write(db_path, directory.buf, written, err);
	strbuf_release(&directory);
	/* one rank of a larger job: its archive holds its side of each message and
	 * collective only, in a world of one */
	sqlite3 *db;
	sqlite3_stmt *s = NULL;
	if (rc == 0 && store_open(db_path, &db, NULL) == 0) {
		if (store_has_table(db, "gpuprof_mpi_call") &&
		    sqlite3_prepare_v2(db, "SELECT COUNT(*), MAX(rank), MAX(size) FROM "
				       "gpuprof_process WHERE id IN " STORE_MPI_PROCESSES, -1, &s,
				       NULL) == SQLITE_OK &&
		    sqlite3_step(s) == SQLITE_ROW && sqlite3_column_int64(s, 0) == 1 &&
		    sqlite3_column_int64(s, 2) > 1)
			fprintf(stderr, "gpuprof: %s_otf2: rank %lld of a job of %lld ranks alone: "
					"its messages and collectives lack the other ranks' sides; "
					"`gpuprof merge` the ranks' databases, then convert the merged "
					"one with -f otf2, for the whole run\n", prefix,
				(long long)sqlite3_column_int64(s, 1),
				(long long)sqlite3_column_int64(s, 2));
		sqlite3_finalize(s);
		sqlite3_close(db);
	}
	return rc;
}

static int export_outputs(const char *db_path, const struct output_request *request,
			  const char *prefix, struct strbuf *written, struct error *err)
{
	int rc = 0;
	const struct writer_ops *writers[3];
	int count = file_writers(request->formats, writers);
	if (count) {
		progress_begin();
		rc = export_with(db_path, writers, count, request, prefix, written, err);
		progress_end();
	}
	if (rc == 0 && (request->formats & FORMAT_CSV))
		rc = write_folded_from_database(db_path, prefix, written, err);
	if (rc == 0 && (request->formats & FORMAT_HTML))
		rc = write_report(db_path, prefix, written, err);
	if (rc == 0 && (request->formats & FORMAT_OTF2))
		rc = write_otf2(db_path, prefix, written, err);
	print_written(written);
	strbuf_reset(written);
	const struct writer_ops *summary = &summary_writer;
	if (rc == 0 && request->summary)
		rc = export_with(db_path, &summary, 1, request, prefix, written, err);
	return rc;
}

/* Why records of a drop reason were lost, and what helps, if anything does. */
static const char *dropped_advice(uint32_t reason)
{
	switch (reason) {
	case DROPPED_BUFFER_FULL:
		return "a thread's buffer filled between two flushes; --buffer-size makes it larger";
	case DROPPED_NO_BUFFER:
		return "the memory cap was reached; --buffer-limit raises it";
	case DROPPED_WRITE_FAILED:
		return "the spool could not be written (a full disk, or the file size limit, "
		       "ulimit -f?); free space, raise the limit or choose -d";
	case DROPPED_NO_SLOT:
		return "more device commands in flight than gpuprof follows (4,194,304), or no "
		       "memory to follow more";
	case DROPPED_NO_TIMESTAMPS:
		return "the runtime gave no timestamps for these completed commands";
	case DROPPED_UNTRACKED_QUEUE:
		return "commands on queues created before gpuprof could see them";
	case DROPPED_BY_TRACER:
		return "lost inside the vendor's tracer (CUPTI)";
	case DROPPED_MARKER_DEPTH:
		return "marker ranges nested deeper than gpuprof follows";
	case DROPPED_SAMPLES:
		return "the kernel's sample buffer was full (its size: GPUPROF_SAMPLE_BUFFER_KB "
		       "within `ulimit -l`; or a lower --sampling-freq); gpuprof profile counts "
		       "them with their time";
	case DROPPED_COUNTERS:
		return "the profiler gave no counter values for these kernels (see the warnings "
		       "of the run)";
	case DROPPED_UNFINISHED:
		return "device work not finished when the process ended (finish the queues "
		       "before exit to keep it)";
	}
	return "unknown reason";
}

static void describe(const char *spool_path, const struct recording *rec)
{
	/* the line written whole: the processes of an MPI job write theirs at once */
	const struct recording_stats *s = &rec->stats;
	struct strbuf line = STRBUF_INIT;
	strbuf_addf(&line, "gpuprof: %s: %llu kernels, %llu memory copies, %llu API calls",
		spool_path, (unsigned long long)s->records[RECORD_KERNEL],
		(unsigned long long)s->records[RECORD_MEMORY_COPY],
		(unsigned long long)s->records[RECORD_API_CALL]);
	if (s->records[RECORD_MEMORY_ALLOCATION])
		strbuf_addf(&line, ", %llu allocations and frees",
			(unsigned long long)s->records[RECORD_MEMORY_ALLOCATION]);
	if (rec->mpi_calls.count)
		strbuf_addf(&line, ", %zu communication calls", rec->mpi_calls.count);
	if (rec->marker_count)
		strbuf_addf(&line, ", %zu markers", rec->marker_count);
	if (rec->samples.count)
		strbuf_addf(&line, ", %zu call-stack samples", rec->samples.count);
	uint64_t pc_taken = 0, pc_dropped = 0;
	for (size_t i = 0; i < rec->pc_sampling.count; i++) {
		const struct record_pc_sampling *p = (const void *)rec->pc_sampling.items[i];
		pc_taken += p->samples;
		pc_dropped += p->dropped;
	}
	if (rec->pc_sampling.count)
		strbuf_addf(&line, ", %llu PC samples taken on the devices",
			(unsigned long long)pc_taken);
	strbuf_addch(&line, '\n');
	fputs(line.buf, stderr);
	strbuf_release(&line);
	if (pc_dropped)
		fprintf(stderr, "gpuprof: %s: the devices lost %llu of their %llu PC samples (the "
				"sample buffer was full): a longer --pc-sampling-interval samples less "
				"often\n", spool_path, (unsigned long long)pc_dropped,
			(unsigned long long)pc_taken);
	if (rec->overheads.count) {
		uint64_t total = 0;
		for (size_t i = 0; i < rec->overheads.count; i++) {
			const struct record_overhead *o = (const void *)rec->overheads.items[i];
			total += o->end_ns > o->start_ns ? o->end_ns - o->start_ns : 0;
		}
		fprintf(stderr, "gpuprof: %s: the vendor tracer reported %.3f ms of its own "
				"overhead (%zu records: the overheads view of the database)\n",
			spool_path, (double)total / 1e6, rec->overheads.count);
	}
	if (!s->clean_exit)
		fprintf(stderr, "gpuprof: %s: the process did not exit normally; everything "
				"recorded up to its last flush is kept\n", spool_path);
	if (s->truncated_bytes)
		fprintf(stderr, "gpuprof: %s: ignored an incomplete last chunk of %llu bytes\n",
			spool_path, (unsigned long long)s->truncated_bytes);
	for (uint32_t reason = 1; reason < DROPPED_REASON_COUNT; reason++)
		if (rec->dropped[reason][0])
			fprintf(stderr, "gpuprof: %s: %llu records were dropped while recording: "
					"%s (gpuprof_dropped in the database)\n", spool_path,
				(unsigned long long)rec->dropped[reason][0], dropped_advice(reason));
	if (s->unknown_records)
		fprintf(stderr, "gpuprof: %s: skipped %llu records of kinds this version does "
				"not know\n", spool_path, (unsigned long long)s->unknown_records);
}

/* The database of a recording, built on a thread of its own. */
struct database_job {
	const struct recording *rec;
	const char *spool_path, *db_path;
	int rc;
	struct error err;
};

static void *build_database(void *arg)
{
	struct database_job *job = arg;
	job->rc = store_write(job->rec, job->spool_path, job->db_path, &job->err);
	return NULL;
}

/* The samples' stacks as folded stacks (<prefix>_stacks.folded): one line per stack,
 * its frames from the root down separated by ';', then a space and its count of
 * samples; what flamegraph.pl, inferno and speedscope read. */
static int write_folded(const struct recording *rec, const char *prefix, struct strbuf *written,
			struct error *err)
{
	const struct sample_stacks *st = rec->stacks;
	/* a function sampled at several lines (or in two files of one name) has a frame
	 * per line: the stacks are folded by the functions' names, the format's only
	 * field, each node counted at the first node of its path */
	uint32_t *same = xcalloc(st->node_count, sizeof(*same));
	size_t slot_count = 16;
	while (slot_count < 2 * st->node_count)
		slot_count *= 2;
	uint32_t *slots = xcalloc(slot_count, sizeof(*slots));
	for (size_t node = 1; node < st->node_count; node++) {
		const struct stack_frame *f = &st->frames[st->nodes[node].frame];
		uint32_t parent = same[st->nodes[node].parent]; /* a parent comes first */
		size_t j = (hash_int(parent) ^ hash_string(f->function)) & (slot_count - 1);
		for (; slots[j]; j = (j + 1) & (slot_count - 1)) {
			const struct stack_frame *g = &st->frames[st->nodes[slots[j]].frame];
			if (same[st->nodes[slots[j]].parent] == parent && !strcmp(g->function, f->function))
				break;
		}
		if (!slots[j])
			slots[j] = (uint32_t)node;
		same[node] = slots[j];
	}
	free(slots);
	uint64_t *count = xcalloc(st->node_count, sizeof(*count));
	for (size_t i = 0; i < st->sample_count; i++)
		count[same[st->leaf[i]]]++;
	free(same);
	struct output_file file;
	int rc = output_file_open(&file, prefix, "_stacks.folded", err);
	struct strbuf line = STRBUF_INIT;
	uint32_t frames[UNWIND_MAX_FRAMES];
	const char *functions[UNWIND_MAX_FRAMES];
	for (size_t node = 1; rc == 0 && node < st->node_count; node++) {
		if (!count[node])
			continue;
		size_t n = sample_stack_frames(st, (uint32_t)node, frames, UNWIND_MAX_FRAMES);
		for (size_t i = 0; i < n; i++) /* from the root */
			functions[i] = st->frames[frames[n - 1 - i]].function;
		strbuf_reset(&line);
		profile_folded_line(&line, functions, n, count[node]);
		rc = output_file_write(&file, line.buf, line.len, err);
	}
	if (file.out || rc == 0)
		rc = output_file_close(&file, rc != 0, written, err) || rc;
	strbuf_release(&line);
	free(count);
	return rc ? -1 : 0;
}

/* Writes the files of writers from a recording, in one pass. */
static int export_recording_with(const struct recording *rec,
				 const struct writer_ops **writers, int count,
				 const struct output_request *request, const char *prefix,
				 struct strbuf *written, struct error *err)
{
	struct output_options options = request->options;
	options.prefix = prefix;
	return export_recording(rec, writers, count, &options, written, err);
}

int output_from_spool(const char *spool_path, const char *prefix,
		      const struct output_request *request, int keep_spool, struct error *err)
{
	struct timespec began; /* the clock file times are taken from */
	clock_gettime(CLOCK_REALTIME_COARSE, &began);
	struct recording rec;
	progress_begin();
	int read = recording_read(&rec, spool_path, err);
	progress_end();
	if (read)
		return -1;
	if (request->skip_empty && recording_empty(&rec)) {
		recording_release(&rec);
		return 1;
	}
	rec.rename_kernels = request->options.rename_kernels;
	struct sample_stacks stacks;
	sample_stacks_build(&rec, &stacks);
	if (rec.samples.count || rec.launch_stacks.count)
		rec.stacks = &stacks;
	size_t filtered = recording_filter_kernels(&rec, request->kernel_filter);
	describe(spool_path, &rec);
	for (const char *at = stacks.unreadable; at && *at; at = strchr(at, '\n') + 1)
		fprintf(stderr, "gpuprof: %s: %.*s\n", spool_path, (int)(strchr(at, '\n') - at), at);
	if (stacks.cut)
		fprintf(stderr, "gpuprof: %s: %zu call-stack samples were deeper than %d frames: "
				"their outermost frames are left out\n", spool_path, stacks.cut,
			UNWIND_MAX_FRAMES);
	if (stacks.incomplete)
		fprintf(stderr, "gpuprof: %s: %zu of %zu call-stack samples had stacks deeper than "
				"the %u bytes copied: their outermost frames are missing, under one "
				"[truncated] root (--sampling-stack-size, up to %d, copies more)\n",
			spool_path, stacks.incomplete, rec.samples.count, stacks.copied_bytes,
			SAMPLE_STACK_MAX);
	if (filtered)
		fprintf(stderr, "gpuprof: %s: %zu kernels left out by the kernel filters, %zu kept\n",
			spool_path, filtered, rec.kernels.count);

	/* The database and the files come from the same sorted records: the inserts run
	 * on a second thread while the files are written here. */
	struct strbuf db_path = STRBUF_INIT, written = STRBUF_INIT;
	struct database_job job = { .rec = &rec, .spool_path = spool_path };
	pthread_t thread;
	int threaded = 0, rc = 0;
	progress_begin();
	/* the report and OTF2 are made from a database: a temporary one when none is asked
	 * for */
	unsigned from_database = FORMAT_HTML | FORMAT_OTF2;
	int temporary = (request->formats & from_database) && !(request->formats & FORMAT_SQLITE);
	if (request->formats & (FORMAT_SQLITE | from_database)) {
		strbuf_addf(&db_path, temporary ? "%s_report.db.partial" : "%s_results.db", prefix);
		job.db_path = db_path.buf;
		if (temporary) /* made by the database thread's rename */
			unfinished_list(db_path.buf);
		threaded = thread_create(&thread, build_database, &job) == 0;
		if (!threaded)
			build_database(&job);
	}
	const struct writer_ops *writers[3];
	int count = file_writers(request->formats, writers);
	if (count)
		rc = export_recording_with(&rec, writers, count, request, prefix, &written, err);
	if (rc == 0 && rec.stacks && rec.samples.count && (request->formats & FORMAT_CSV))
		rc = write_folded(&rec, prefix, &written, err);
	if (threaded)
		pthread_join(thread, NULL);
	if (job.db_path && job.rc == 0 && rc == 0 && (request->formats & FORMAT_HTML))
		rc = write_report(db_path.buf, prefix, &written, err);
	if (job.db_path && job.rc == 0 && rc == 0 && (request->formats & FORMAT_OTF2))
		rc = write_otf2(db_path.buf, prefix, &written, err);
	if (temporary) {
		unlink(db_path.buf);
		unfinished_forget(db_path.buf);
	}
	progress_end();
	struct strbuf listing = STRBUF_INIT; /* the database first, then the files */
	if (job.db_path && job.rc == 0 && !temporary)
		strbuf_addf(&listing, "%s\n", db_path.buf);
	strbuf_addstr(&listing, written.buf);
	if (job.db_path && job.rc && rc == 0) {
		*err = job.err;
		rc = -1;
	}
	print_written(&listing);
	strbuf_release(&listing);
	strbuf_reset(&written);
	const struct writer_ops *summary = &summary_writer;
	if (rc == 0 && request->summary)
		rc = export_recording_with(&rec, &summary, 1, request, prefix, &written, err);
	sample_stacks_release(&stacks);
	recording_release(&rec);
	if (rc == 0)
		warn_earlier_files(prefix, &began, spool_path);
	if (rc == 0 && !keep_spool && unlink(spool_path) < 0)
		fprintf(stderr, "gpuprof: cannot remove '%s': %s\n", spool_path, strerror(errno));
	strbuf_release(&db_path);
	strbuf_release(&written);
	return rc;
}

/* Copies from into to, written as to.partial until complete. */
static int copy_file(const char *from, const char *target, struct error *err)
{
	struct strbuf partial = STRBUF_INIT;
	output_partial_name(&partial, target);
	const char *to = partial.buf;
	int in = open(from, O_RDONLY | O_CLOEXEC);
	if (in >= 0)
		unfinished_add(to);
	int out = in < 0 ? -1 : open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
	if (out >= 0)
		unfinished_created(to);
	if (out < 0) {
		unfinished_forget(to);
		int rc = in < 0 ? error_set(err, "cannot open '%s': %s", from, strerror(errno))
				: error_set(err, "cannot create '%s': %s", to, strerror(errno));
		if (in >= 0)
			close(in);
		strbuf_release(&partial);
		return rc;
	}
	char buffer[1 << 16];
	ssize_t n;
	int rc = 0;
	while ((n = read(in, buffer, sizeof(buffer))) > 0)
		if (write(out, buffer, (size_t)n) != n) {
			rc = error_set(err, "cannot write '%s': %s", to, strerror(errno));
			break;
		}
	if (n < 0)
		rc = error_set(err, "cannot read '%s': %s", from, strerror(errno));
	if (close(out) < 0 && rc == 0)
		rc = error_set(err, "cannot write '%s': %s", to, strerror(errno));
	close(in);
	if (rc)
		output_discard(target);
	else
		rc = output_publish(target, err);
	strbuf_release(&partial);
	return rc;
}

int output_from_database(const char *db_path, const char *prefix,
			 const struct output_request *request, struct error *err)
{
	struct strbuf written = STRBUF_INIT, target = STRBUF_INIT;
	struct timespec began;
	clock_gettime(CLOCK_REALTIME_COARSE, &began);
	sqlite3 *db;
	if (store_open(db_path, &db, err))
		return -1;
	sqlite3_close(db);
	int rc = 0;
	if (request->formats & FORMAT_SQLITE) {
		strbuf_addf(&target, "%s_results.db", prefix);
		struct stat a, b;
		int same = stat(db_path, &a) == 0 && stat(target.buf, &b) == 0 &&
			   a.st_dev == b.st_dev && a.st_ino == b.st_ino;
		if (!same)
			rc = copy_file(db_path, target.buf, err);
		if (rc == 0)
			strbuf_addf(&written, "%s\n", target.buf);
	}
	fprintf(stderr, "gpuprof: %s:\n", db_path);
	if (rc == 0)
		rc = export_outputs(db_path, request, prefix, &written, err);
	if (rc == 0)
		warn_earlier_files(prefix, &began, db_path);
	strbuf_release(&written);
	strbuf_release(&target);
	return rc;
}
