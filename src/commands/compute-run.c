/* gpuprof compute profile's runs (compute.c has the command): the program under
 * gpuprof trace --pmc, once or once per group of metrics, and once more under PC sampling
 * (block 21); the roofline measurement; the workload's files written from the database. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "analysis/pc-samples.h"
#include "commands/commands.h"
#include "commands/compute.h"
#include "compute/torch-ops.h"
#include "compute/workload.h"
#include "store/store.h"
#include "util/error.h"
#include "util/install.h"
#include "util/strbuf.h"

const char *const compute_workload_files[] = { "pmc_perf.csv", "sysinfo.csv",
					       "profiling_config.yaml", "log.txt", "roofline.csv",
					       "roofline.html", "pc_sampling.csv",
					       "torch_trace/consolidated.csv", NULL };

/* The lines of a newline-separated list (a group's metrics), joined by sep into out. */
void compute_join_lines(const char *list, const char *sep, struct strbuf *out)
{
	for (const char *c = list; *c; c++)
		if (*c != '\n')
			strbuf_addch(out, *c);
		else if (c[1])
			strbuf_addstr(out, sep);
}

/* Runs argv (argv[0] a path) and waits for it: its exit status, 128 + the signal that
 * ended it, or -1 when it could not start. */
static int run_child(const char *const *argv)
{
	fflush(NULL);
	pid_t child = fork();
	if (child == 0) {
		execv(argv[0], (char **)argv);
		_exit(127);
	}
	int status = 0;
	while (child > 0 && waitpid(child, &status, 0) < 0 && errno == EINTR)
		;
	if (child < 0)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* Runs `gpuprof trace --pmc` on the command for the metrics of run (newline-separated
 * in application replay; all of them otherwise), or, run -1, `gpuprof trace
 * --pc-sampling-beta-enabled`; returns its exit status (the program's), or -1 when it
 * could not run. */
static int run_trace(const struct profile_run *p, long run, const char *trace_dir,
		     const char *include, const char *iterations)
{
	struct strbuf self = STRBUF_INIT, metrics = STRBUF_INIT;
	struct error err;
	if (install_path("bin/gpuprof", &self, &err)) {
		warn("compute profile: %s", err.message);
		return -1;
	}
	if (run < 0) {
		/* no metrics */
	} else if (p->groups) {
		compute_join_lines(p->groups[run].buf, ",", &metrics);
	} else {
		for (size_t i = 0; i < p->metric_count; i++)
			strbuf_addf(&metrics, "%s%s", i ? "," : "", p->metrics[i]);
	}
	const char *args[64];
	int n = 0;
	args[n++] = self.buf;
	args[n++] = "trace";
	if (run < 0) { /* the PC sampling run: no counters */
		args[n++] = "--kernel-trace";
		args[n++] = "--pc-sampling-beta-enabled";
		args[n++] = "--pc-sampling-method";
		args[n++] = p->pc_method;
		args[n++] = "--pc-sampling-unit";
		args[n++] = p->pc_unit;
		args[n++] = "--pc-sampling-interval";
		args[n++] = p->pc_interval;
		iterations = ""; /* continuous sampling: every launch of a kernel together */
	} else {
		args[n++] = "--pmc";
		args[n++] = metrics.buf;
	}
	if (p->multiplex && run >= 0) {
		args[n++] = "--pmc-multiplex";
		args[n++] = p->multiplex;
	}
	if (p->torch)
		args[n++] = "--torch-trace";
	if (*include) {
		args[n++] = "--kernel-include-regex";
		args[n++] = include;
	}
	if (*iterations) {
		args[n++] = "--kernel-iteration-range";
		args[n++] = iterations;
	}
	args[n++] = "-d";
	args[n++] = trace_dir;
	args[n++] = "-o";
	args[n++] = "%hostname%_%pid%";
	args[n++] = "-f";
	args[n++] = "sqlite";
	args[n++] = "--";
	size_t command_count = 0;
	while (p->command[command_count])
		command_count++;
	const char **argv = xcalloc((size_t)n + command_count + 1, sizeof(*argv));
	memcpy(argv, args, (size_t)n * sizeof(*argv));
	memcpy(argv + n, p->command, command_count * sizeof(*argv));
	int status = run_child(argv);
	free(argv);
	strbuf_release(&self);
	strbuf_release(&metrics);
	return status;
}

/* `gpuprof roofline` on CUDA device 0 (the GPU profiled) into the workload directory:
 * roofline.csv and roofline.html, measured or taken from the cache. 0, or the status it
 * failed with. */
int compute_run_roofline(const char *dir, int quiet)
{
	struct strbuf self = STRBUF_INIT;
	struct error err;
	if (install_path("bin/gpuprof", &self, &err)) {
		warn("compute profile: %s", err.message);
		return -1;
	}
	const char *argv[] = { self.buf, "roofline", "--backend", "cuda", "--device", "0", "-o",
			       dir, "-q", NULL };
	if (!quiet)
		fprintf(stderr, "gpuprof: compute profile: the roofline of CUDA device 0 (gpuprof "
				"roofline: measured once, then reused from its cache)\n");
	int status = run_child(argv);
	strbuf_release(&self);
	return status;
}

/* The databases trace wrote, joined into one when the program made several processes. */
static int workload_database(const char *trace_dir, struct strbuf *db, struct error *err)
{
	DIR *d = opendir(trace_dir);
	if (!d)
		return error_set(err, "'%s': %s", trace_dir, strerror(errno));
	char *inputs[256];
	int count = 0;
	struct dirent *e;
	while ((e = readdir(d)) && count < 256) {
		size_t n = strlen(e->d_name);
		if (n > 11 && !strcmp(e->d_name + n - 11, "_results.db")) {
			struct strbuf path = STRBUF_INIT;
			strbuf_addf(&path, "%s/%s", trace_dir, e->d_name);
			inputs[count++] = strbuf_detach(&path);
		}
	}
	closedir(d);
	int rc = 0;
	if (!count) {
		rc = error_set(err, "the program left no database in '%s' (it made no CUDA "
				    "work, or the trace failed: see above)", trace_dir);
	} else if (count == 1) {
		strbuf_addstr(db, inputs[0]);
	} else {
		struct strbuf warnings = STRBUF_INIT;
		strbuf_addf(db, "%s/all_results.db", trace_dir);
		rc = store_merge(inputs, count, NULL, 0, db->buf, &warnings, NULL, err);
		strbuf_release(&warnings);
	}
	for (int i = 0; i < count; i++)
		free(inputs[i]);
	return rc;
}

/* Block 21: the program run once more under PC sampling, its samples into
 * dir/pc_sampling.csv (*rows of it). 0, or 1 when it failed (said). */
int compute_sample_pcs(const struct profile_run *p, const char *dir, const char *trace_dir,
		      const char *include, size_t *rows)
{
	struct strbuf pc_dir = STRBUF_INIT, db_path = STRBUF_INIT, path = STRBUF_INIT;
	struct error err;
	int rc = 1;
	strbuf_addf(&pc_dir, "%s/pc_sampling", trace_dir);
	if (!p->quiet)
		fprintf(stderr, "gpuprof: compute profile: one more run, with PC sampling "
				"(block 21)\n");
	int status = run_trace(p, -1, pc_dir.buf, include, "");
	sqlite3 *db = NULL;
	if (status != 0) {
		warn("compute profile: the PC sampling run %s: no pc_sampling.csv", status < 0 ?
		     "could not start" : "failed");
	} else if (workload_database(pc_dir.buf, &db_path, &err) || store_open(db_path.buf, &db, &err)) {
		warn("compute profile: PC sampling: %s", err.message);
	} else {
		strbuf_addf(&path, "%s/pc_sampling.csv", dir);
		FILE *out = fopen(path.buf, "w");
		if (!out)
			warn("compute profile: cannot create '%s': %s", path.buf, strerror(errno));
		else if (pc_samples_write_csv(db, out, rows, &err))
			warn("compute profile: %s: %s", path.buf, err.message);
		else
			rc = 0;
		if (out && (ferror(out) | fclose(out)) && rc == 0) {
			warn("compute profile: cannot write '%s': %s", path.buf, strerror(errno));
			rc = 1;
		}
		if (rc == 0 && !*rows)
			warn("compute profile: the PC sampling run gave no samples (a GPU of compute "
			     "capability 7.0 or later, and kernels long enough to be sampled, are "
			     "needed): pc_sampling.csv is empty");
	}
	sqlite3_close(db);
	strbuf_release(&pc_dir);
	strbuf_release(&db_path);
	strbuf_release(&path);
	return rc;
}

int compute_write_torch(const char *dir, const char *db_path, size_t *rows, size_t *inside,
			size_t *dispatches, struct error *err)
{
	sqlite3 *db;
	if (store_open(db_path, &db, err))
		return -1;
	struct strbuf path = STRBUF_INIT, final = STRBUF_INIT;
	strbuf_addf(&final, "%s/torch_trace", dir);
	mkdir(final.buf, 0777);
	strbuf_addstr(&final, "/consolidated.csv");
	strbuf_addf(&path, "%s.partial", final.buf);
	int rc = 0;
	FILE *out = fopen(path.buf, "w");
	if (!out)
		rc = error_set(err, "cannot create '%s': %s", path.buf, strerror(errno));
	if (rc == 0) {
		rc = torch_ops_write(db, out, rows, err);
		if ((ferror(out) | fclose(out)) && rc == 0)
			rc = error_set(err, "cannot write '%s': %s", path.buf, strerror(errno));
		if (rc == 0 && rename(path.buf, final.buf) < 0)
			rc = error_set(err, "cannot create '%s': %s", final.buf, strerror(errno));
		if (rc)
			unlink(path.buf);
	}
	sqlite3_stmt *s;
	*inside = *dispatches = 0;
	if (rc == 0 && store_prepare(db, "SELECT COUNT(*), COUNT(m.id) FROM gpuprof_kernel k "
				     "LEFT JOIN gpuprof_marker m ON m.process_id = k.process_id AND "
				     "m.range_id = k.range_id AND m.domain_id IN (SELECT id FROM "
				     "gpuprof_string WHERE string = 'torch')", &s, err) == 0) {
		if (sqlite3_step(s) == SQLITE_ROW) {
			*dispatches = (size_t)sqlite3_column_int64(s, 0);
			*inside = (size_t)sqlite3_column_int64(s, 1);
		}
		sqlite3_finalize(s);
	}
	strbuf_release(&path);
	strbuf_release(&final);
	sqlite3_close(db);
	return rc;
}

/* pmc_perf.csv and sysinfo.csv from the database, written whole or not at all. */
int compute_write_workload(const char *dir, const char *db_path, size_t *dispatches,
			  struct error *err)
{
	sqlite3 *db;
	if (store_open(db_path, &db, err))
		return -1;
	struct strbuf path = STRBUF_INIT;
	int rc = 0;
	for (int f = 0; rc == 0 && f < 2; f++) {
		strbuf_reset(&path);
		strbuf_addf(&path, "%s/%s.partial", dir, compute_workload_files[f]);
		FILE *out = fopen(path.buf, "w");
		if (!out) {
			rc = error_set(err, "cannot create '%s': %s", path.buf, strerror(errno));
			break;
		}
		rc = f == 0 ? workload_write_dispatches(db, out, dispatches, err)
			    : workload_write_facts(db, out, err);
		if ((ferror(out) | fclose(out)) && rc == 0)
			rc = error_set(err, "cannot write '%s': %s", path.buf, strerror(errno));
		struct strbuf final = STRBUF_INIT;
		strbuf_addf(&final, "%s/%s", dir, compute_workload_files[f]);
		if (rc == 0 && rename(path.buf, final.buf) < 0)
			rc = error_set(err, "cannot create '%s': %s", final.buf, strerror(errno));
		if (rc)
			unlink(path.buf);
		strbuf_release(&final);
	}
	strbuf_release(&path);
	sqlite3_close(db);
	return rc;
}

/* The program run under trace --pmc: once (kernel replay), or once per group of metrics
 * (application replay, each into trace/pass_N, their counters joined onto the first
 * run's kernels; a run that fails ends the replay, the later groups not collected).
 * The program's exit status into *status; the workload's database into db, or -1 with
 * err when there is none. */
int compute_collect(const struct profile_run *p, const char *trace_dir, const char *include,
		   const char *iterations, struct strbuf *db, int *status, struct error *err)
{
	if (!p->groups) {
		if ((*status = run_trace(p, 0, trace_dir, include, iterations)) < 0)
			die("compute profile: cannot run gpuprof trace");
		return workload_database(trace_dir, db, err);
	}
	char **runs = xcalloc((size_t)p->runs, sizeof(*runs));
	long done = 0;
	int failed = 0;
	*status = 0;
	while (done < p->runs && *status == 0 && !failed) {
		struct strbuf pass = STRBUF_INIT, one = STRBUF_INIT;
		strbuf_addf(&pass, "%s/pass_%ld", trace_dir, done + 1);
		if (!p->quiet)
			fprintf(stderr, "gpuprof: compute profile: run %ld of %ld\n", done + 1,
				p->runs);
		if ((*status = run_trace(p, done, pass.buf, include, iterations)) < 0)
			die("compute profile: cannot run gpuprof trace");
		failed = workload_database(pass.buf, &one, err);
		if (!failed)
			runs[done++] = strbuf_detach(&one);
		else if (done)
			warn("compute profile: %s", err->message);
		if ((*status || failed) && done < p->runs)
			warn("compute profile: run %ld of %ld %s: the metrics of the later runs "
			     "are not collected", done + failed, p->runs,
			     failed ? "left no database" : "failed");
		strbuf_release(&pass);
		strbuf_release(&one);
	}
	int rc = done ? 0 : -1;
	if (done) {
		struct strbuf warnings = STRBUF_INIT;
		strbuf_addf(db, "%s/all_results.db", trace_dir);
		rc = store_merge(runs, 1, runs + 1, (int)done - 1, db->buf, &warnings, NULL, err);
		for (const char *line = warnings.buf; *line; line = strchr(line, '\n') + 1)
			warn("compute profile: %.*s", (int)(strchr(line, '\n') - line), line);
		strbuf_release(&warnings);
	}
	for (long i = 0; i < done; i++)
		free(runs[i]);
	free(runs);
	return rc;
}
