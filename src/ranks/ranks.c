/* gpuprof-ranks-IMPL: the cross-rank analysis of an MPI run where its ranks ran, under
 * the launcher that ran them (`mpirun -n N gpuprof summary --mpi PATTERN`, which starts
 * this helper of the launcher's MPI): each rank reads its own recording and does its
 * part of the analysis of analysis/mpi-ranks.h in SQLite's temporary tables; what the
 * part needs of the others travels over MPI rather than the recordings to one host:
 *   - the names of the communicators and functions, gathered, so that each collective
 *     instance has one place in a vector on every rank;
 *   - each instance's last arrival and who made it (MPI_MAXLOC), its root's arrival and
 *     its ranks, reduced to every rank, which then computes its own waits;
 *   - the sends, each to the rank it went to, which matches them with its receives;
 *   - each instance's waits (their sum and longest) and each rank's row, late senders
 *     and message counts, to rank 0, which prints the tables and the finding.
 * Memory holds a rank's own sends and one vector of the instances at a time.
 *
 *   gpuprof-ranks-IMPL PATTERN FORMAT UNITS     PATTERN's %rank% is the rank */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "analysis/insight.h"
#include "analysis/mpi-ranks.h"
#include "store/store.h"
#include "util/error.h"
#include "util/sort.h"
#include "util/strbuf.h"
#include "util/table.h"
#include "writer/mpi-summary.h"

static int rank, size;

static void fail(const char *message)
{
	fprintf(stderr, "gpuprof: summary --mpi: rank %d: %s\n", rank, message);
}

/* Whether every rank got this far (ok on this one): all go on or all stop together. */
static int all_ok(int ok)
{
	int all = 0;
	MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
	return all;
}

/* ---- what each rank was given ------------------------------------------------------------ */

/* This rank's recording checked against the launcher: one process's MPI calls (not a
 * merged database), of this rank (the pattern named each rank's own), of a job of this
 * size. *window: its wall-clock span, ns (realtime start and end). 0, or -1 with err. */
static int check_recording(sqlite3 *db, const char *path, int64_t window[2], struct error *err)
{
	sqlite3_stmt *s;
	if (store_prepare(db, "SELECT COUNT(*), MIN(rank), MAX(rank), MIN(size), "
			  "MIN(realtime_start), MAX(realtime_start + COALESCE(end, start) - start) "
			  "FROM gpuprof_process WHERE id IN " STORE_MPI_PROCESSES, &s, err))
		return -1;
	int rc = 0;
	if (sqlite3_step(s) != SQLITE_ROW) {
		rc = error_set(err, "cannot read '%s': %s", path, sqlite3_errmsg(db));
	} else {
		int64_t count = sqlite3_column_int64(s, 0), low = sqlite3_column_int64(s, 1);
		int64_t high = sqlite3_column_int64(s, 2), job = sqlite3_column_int64(s, 3);
		window[0] = sqlite3_column_int64(s, 4);
		window[1] = sqlite3_column_int64(s, 5);
		if (count == 0)
			rc = error_set(err, "'%s' holds no MPI calls (recorded without --mpi-trace?)",
				       path);
		else if (count > 1)
			rc = error_set(err, "'%s' holds the MPI calls of %lld processes (ranks %lld "
				       "to %lld: a merged database?); summary --mpi reads each rank's "
				       "own recording, %%rank%% in the pattern standing for the rank",
				       path, (long long)count, (long long)low, (long long)high);
		else if (low != rank)
			rc = error_set(err, "'%s' is the recording of rank %lld, not of rank %d: "
				       "%%rank%% in the pattern must name each rank's own", path,
				       (long long)low, rank);
		else if (job > 0 && job != size)
			rc = error_set(err, "'%s' was recorded in a job of %lld ranks, and summary "
				       "--mpi runs as %d: start it with as many (mpirun -n %lld)",
				       path, (long long)job, size, (long long)job);
	}
	sqlite3_finalize(s);
	return rc;
}

/* Whether the ranks' recordings are of one run: each was recording while every other
 * was (from MPI_Init to MPI_Finalize the ranks run together). Rank 0 names the files of
 * those apart from most others: 0, or -1 (said). */
#define PATH_BYTES 512
static int check_one_run(const char *path, const int64_t window[2])
{
	struct {
		int64_t window[2];
		char path[PATH_BYTES];
	} mine = { { window[0], window[1] }, "" }, *all = NULL;
	snprintf(mine.path, sizeof(mine.path), "%s", path);
	if (rank == 0)
		all = xcalloc((size_t)size, sizeof(*all));
	MPI_Gather(&mine, (int)sizeof(mine), MPI_BYTE, all, (int)sizeof(mine), MPI_BYTE, 0,
		   MPI_COMM_WORLD);
	int ok = 1;
	for (int k = 0; rank == 0 && k < size; k++) {
		/* k is apart when its span misses those of most other ranks (a span is known
		 * where the process's end was recorded): the odd file, not the ranks it
		 * misses */
		int known = 0, missed = 0;
		for (int o = 0; o < size; o++) {
			if (o == k || all[k].window[1] <= all[k].window[0] ||
			    all[o].window[1] <= all[o].window[0])
				continue;
			known++;
			missed += all[k].window[1] < all[o].window[0] ||
				  all[o].window[1] < all[k].window[0];
		}
		if (!known || 2 * missed < known)
			continue;
		ok = 0;
		char when[64] = "";
		time_t t = (time_t)(all[k].window[0] / 1000000000);
		struct tm tm;
		if (localtime_r(&t, &tm))
			strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", &tm);
		fprintf(stderr, "gpuprof: summary --mpi: '%s' (rank %d, recorded from %s for %.3f s) "
				"did not record while every other rank did: the ranks' recordings are "
				"not of one run\n", all[k].path, k, when,
			(double)(all[k].window[1] - all[k].window[0]) / 1e9);
	}
	free(all);
	MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
	return ok ? 0 : -1;
}

/* ---- names known to every rank ------------------------------------------------------- */

struct names {
	char **items;      /* sorted, unique */
	int count;
};

static int by_text(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The union over the ranks of the texts sql gives on each. */
static int gather_names(sqlite3 *db, const char *sql, struct names *out, struct error *err)
{
	struct strbuf mine = STRBUF_INIT;
	sqlite3_stmt *s;
	if (store_prepare(db, sql, &s, err))
		return -1;
	while (sqlite3_step(s) == SQLITE_ROW) {
		const char *t = (const char *)sqlite3_column_text(s, 0);
		if (t)
			strbuf_add(&mine, t, strlen(t) + 1);
	}
	sqlite3_finalize(s);
	int length = (int)mine.len, *lengths = xcalloc((size_t)size, sizeof(int));
	int *offsets = xcalloc((size_t)size, sizeof(int));
	MPI_Allgather(&length, 1, MPI_INT, lengths, 1, MPI_INT, MPI_COMM_WORLD);
	size_t total = 0;
	for (int i = 0; i < size; i++) {
		offsets[i] = (int)total;
		total += (size_t)lengths[i];
	}
	char *all = xcalloc(total + 1, 1);
	MPI_Allgatherv(mine.buf, length, MPI_CHAR, all, lengths, offsets, MPI_CHAR, MPI_COMM_WORLD);
	out->items = NULL;
	out->count = 0;
	for (size_t at = 0; at < total; at += strlen(all + at) + 1) {
		out->items = xrealloc(out->items, (size_t)(out->count + 1) * sizeof(char *));
		out->items[out->count++] = xstrdup(all + at);
	}
	qsort(out->items, (size_t)out->count, sizeof(char *), by_text);
	int kept = 0;
	for (int i = 0; i < out->count; i++) {
		if (kept && !strcmp(out->items[kept - 1], out->items[i])) {
			free(out->items[i]);
			continue;
		}
		out->items[kept++] = out->items[i];
	}
	out->count = kept;
	free(all);
	free(lengths);
	free(offsets);
	strbuf_release(&mine);
	return 0;
}

static int name_index(const struct names *n, const char *text)
{
	char *const *found = text ? bsearch(&text, n->items, (size_t)n->count, sizeof(char *),
					    by_text) : NULL;
	return found ? (int)(found - n->items) : -1;
}

static void names_free(struct names *n)
{
	for (int i = 0; i < n->count; i++)
		free(n->items[i]);
	free(n->items);
}

/* ---- the collectives' instances ---------------------------------------------------------- */

struct instances {
	struct names comms, functions;
	int64_t *offset;   /* per communicator: where its instances begin */
	int64_t count;
};

struct arrival {
	double start;
	int rank;
};

static int number_instances(sqlite3 *db, struct instances *in, struct error *err)
{
	if (gather_names(db, "SELECT DISTINCT communicator FROM mpi_m WHERE pattern IS NOT NULL",
			 &in->comms, err) ||
	    gather_names(db, "SELECT DISTINCT function FROM mpi_m WHERE pattern IS NOT NULL",
			 &in->functions, err))
		return -1;
	int64_t *mine = xcalloc((size_t)in->comms.count + 1, sizeof(int64_t));
	int64_t *most = xcalloc((size_t)in->comms.count + 1, sizeof(int64_t));
	sqlite3_stmt *s;
	if (store_prepare(db, "SELECT communicator, MAX(sequence) FROM mpi_m WHERE pattern IS NOT "
			      "NULL GROUP BY communicator", &s, err)) {
		free(mine);
		free(most);
		return -1;
	}
	while (sqlite3_step(s) == SQLITE_ROW) {
		int c = name_index(&in->comms, (const char *)sqlite3_column_text(s, 0));
		if (c >= 0)
			mine[c] = sqlite3_column_int64(s, 1);
	}
	sqlite3_finalize(s);
	MPI_Allreduce(mine, most, in->comms.count, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD);
	in->offset = xcalloc((size_t)in->comms.count + 1, sizeof(int64_t));
	for (int c = 0; c < in->comms.count; c++)
		in->offset[c + 1] = in->offset[c] + most[c];
	in->count = in->offset[in->comms.count];
	free(mine);
	free(most);
	return 0;
}

/* The place of (communicator, sequence) in the instances' vectors; -1: none. */
static int64_t place_of(const struct instances *in, const char *comm, int64_t sequence)
{
	int c = name_index(&in->comms, comm);
	if (c < 0 || sequence < 1 || in->offset[c] + sequence > in->offset[c + 1])
		return -1;
	return in->offset[c] + sequence - 1;
}

/* mpi_inst of this rank's instances, from every rank's arrivals. */
static int reduce_instances(sqlite3 *db, const struct instances *in, struct error *err)
{
	size_t n = (size_t)in->count ? (size_t)in->count : 1;
	struct arrival *last = xcalloc(n, sizeof(*last)), *mine = xcalloc(n, sizeof(*mine));
	double *root = xcalloc(n, sizeof(double)), *my_root = xcalloc(n, sizeof(double));
	int *function = xcalloc(n, sizeof(int)), *my_function = xcalloc(n, sizeof(int));
	int64_t *ranks = xcalloc(n, sizeof(int64_t)), *my_ranks = xcalloc(n, sizeof(int64_t));
	for (size_t i = 0; i < n; i++) {
		mine[i] = (struct arrival){ -1e300, size };
		my_root[i] = -1e300;
		my_function[i] = -1;
	}
	sqlite3_stmt *s;
	int rc = store_prepare(db, "SELECT communicator, sequence, start, rank = root, function "
				   "FROM mpi_m WHERE pattern IS NOT NULL", &s, err);
	while (rc == 0 && sqlite3_step(s) == SQLITE_ROW) {
		int64_t at = place_of(in, (const char *)sqlite3_column_text(s, 0),
				      sqlite3_column_int64(s, 1));
		if (at < 0)
			continue;
		double start = (double)sqlite3_column_int64(s, 2);
		if (start >= mine[at].start)
			mine[at] = (struct arrival){ start, rank };
		if (sqlite3_column_int(s, 3))
			my_root[at] = start;
		my_function[at] = name_index(&in->functions, (const char *)sqlite3_column_text(s, 4));
		my_ranks[at] = 1;
	}
	if (rc == 0)
		sqlite3_finalize(s);
	/* of equal arrivals MAXLOC keeps the lower rank, as the one-database analysis does */
	MPI_Allreduce(mine, last, (int)in->count, MPI_DOUBLE_INT, MPI_MAXLOC, MPI_COMM_WORLD);
	MPI_Allreduce(my_root, root, (int)in->count, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
	MPI_Allreduce(my_function, function, (int)in->count, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
	MPI_Allreduce(my_ranks, ranks, (int)in->count, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
	if (rc == 0)
		rc = store_exec(db, "DROP TABLE IF EXISTS temp.mpi_inst; CREATE TEMP TABLE mpi_inst "
				"(communicator TEXT, sequence INTEGER, function TEXT, last INTEGER, "
				"ranks INTEGER, root_start INTEGER, pattern TEXT, last_rank INTEGER); "
				"CREATE INDEX temp.mpi_inst_key ON mpi_inst (communicator, sequence)",
				err);
	sqlite3_stmt *insert = NULL;
	if (rc == 0)
		rc = store_prepare(db, "INSERT INTO mpi_inst VALUES (?, ?, ?, ?, ?, ?, NULL, ?)",
				   &insert, err);
	for (int c = 0; rc == 0 && c < in->comms.count; c++)
		for (int64_t q = in->offset[c]; q < in->offset[c + 1]; q++) {
			if (mine[q].rank == size) /* not this rank's */
				continue;
			sqlite3_bind_text(insert, 1, in->comms.items[c], -1, SQLITE_STATIC);
			sqlite3_bind_int64(insert, 2, q - in->offset[c] + 1);
			sqlite3_bind_text(insert, 3, function[q] >= 0 ? in->functions.items[function[q]]
								  : "", -1, SQLITE_STATIC);
			sqlite3_bind_int64(insert, 4, (int64_t)last[q].start);
			sqlite3_bind_int64(insert, 5, ranks[q]);
			if (root[q] > -1e299)
				sqlite3_bind_int64(insert, 6, (int64_t)root[q]);
			else
				sqlite3_bind_null(insert, 6);
			sqlite3_bind_int64(insert, 7, last[q].rank);
			if (sqlite3_step(insert) != SQLITE_DONE)
				rc = error_set(err, "%s", sqlite3_errmsg(db));
			sqlite3_reset(insert);
		}
	sqlite3_finalize(insert);
	free(last);
	free(mine);
	free(root);
	free(my_root);
	free(function);
	free(my_function);
	free(ranks);
	free(my_ranks);
	return rc;
}

/* mpi_per on rank 0: each instance's waits over all ranks (and who arrived last). */
static int reduce_waits(sqlite3 *db, const struct instances *in, struct error *err)
{
	size_t n = (size_t)in->count ? (size_t)in->count : 1;
	int64_t *sum = xcalloc(n, sizeof(int64_t)), *most = xcalloc(n, sizeof(int64_t));
	int64_t *my_sum = xcalloc(n, sizeof(int64_t)), *my_most = xcalloc(n, sizeof(int64_t));
	int64_t *last = xcalloc(n, sizeof(int64_t)), *ranks = xcalloc(n, sizeof(int64_t));
	int64_t *my_last = xcalloc(n, sizeof(int64_t)), *my_ranks = xcalloc(n, sizeof(int64_t));
	int *function = xcalloc(n, sizeof(int)), *my_function = xcalloc(n, sizeof(int));
	for (size_t i = 0; i < n; i++)
		my_last[i] = my_function[i] = -1;
	sqlite3_stmt *s;
	int rc = store_prepare(db, "SELECT communicator, sequence, wait, last_rank, function "
				   "FROM mpi_w", &s, err);
	while (rc == 0 && sqlite3_step(s) == SQLITE_ROW) {
		int64_t at = place_of(in, (const char *)sqlite3_column_text(s, 0),
				      sqlite3_column_int64(s, 1));
		if (at < 0)
			continue;
		int64_t wait = sqlite3_column_int64(s, 2);
		my_sum[at] += wait;
		my_most[at] = wait > my_most[at] ? wait : my_most[at];
		my_last[at] = sqlite3_column_int64(s, 3);
		my_ranks[at]++;
		my_function[at] = name_index(&in->functions, (const char *)sqlite3_column_text(s, 4));
	}
	if (rc == 0)
		sqlite3_finalize(s);
	MPI_Reduce(my_sum, sum, (int)in->count, MPI_INT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
	MPI_Reduce(my_most, most, (int)in->count, MPI_INT64_T, MPI_MAX, 0, MPI_COMM_WORLD);
	MPI_Reduce(my_last, last, (int)in->count, MPI_INT64_T, MPI_MAX, 0, MPI_COMM_WORLD);
	MPI_Reduce(my_ranks, ranks, (int)in->count, MPI_INT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
	MPI_Reduce(my_function, function, (int)in->count, MPI_INT, MPI_MAX, 0, MPI_COMM_WORLD);
	sqlite3_stmt *insert = NULL;
	if (rc == 0 && rank == 0)
		rc = store_exec(db, "DELETE FROM mpi_per; DELETE FROM mpi_caused", err) ||
		     store_prepare(db, "INSERT INTO mpi_per VALUES (?, ?, ?, ?, ?, ?, ?)", &insert,
				   err);
	for (int c = 0; rc == 0 && rank == 0 && c < in->comms.count; c++)
		for (int64_t q = in->offset[c]; q < in->offset[c + 1]; q++) {
			if (!ranks[q])
				continue;
			sqlite3_bind_text(insert, 1, in->comms.items[c], -1, SQLITE_STATIC);
			sqlite3_bind_int64(insert, 2, q - in->offset[c] + 1);
			sqlite3_bind_text(insert, 3, function[q] >= 0 ? in->functions.items[function[q]]
								  : "", -1, SQLITE_STATIC);
			sqlite3_bind_int64(insert, 4, last[q]);
			sqlite3_bind_int64(insert, 5, ranks[q]);
			sqlite3_bind_int64(insert, 6, sum[q]);
			sqlite3_bind_int64(insert, 7, most[q]);
			if (sqlite3_step(insert) != SQLITE_DONE)
				rc = error_set(err, "%s", sqlite3_errmsg(db));
			sqlite3_reset(insert);
		}
	sqlite3_finalize(insert);
	if (rc == 0 && rank == 0)
		rc = store_exec(db, "INSERT INTO mpi_caused SELECT last_rank, COUNT(*), SUM(wait) "
				"FROM mpi_per GROUP BY last_rank", err);
	free(sum);
	free(most);
	free(my_sum);
	free(my_most);
	free(last);
	free(ranks);
	free(my_last);
	free(my_ranks);
	free(function);
	free(my_function);
	return rc;
}

/* ---- messages: the sends to the ranks that received them ------------------------------ */

struct send {
	int32_t comm, sender, receiver, tag;
	int64_t k, start, id;
};

static int route_sends(sqlite3 *db, const struct names *comms, struct error *err)
{
	struct send *mine = NULL;
	size_t count = 0;
	sqlite3_stmt *s;
	if (store_prepare(db, "SELECT communicator, sender, receiver, tag, k, start, id FROM mpi_s "
			      "ORDER BY receiver", &s, err))
		return -1;
	int *counts = xcalloc((size_t)size, sizeof(int)), *offsets = xcalloc((size_t)size, sizeof(int));
	while (sqlite3_step(s) == SQLITE_ROW) {
		int32_t to = sqlite3_column_int(s, 2);
		int c = name_index(comms, (const char *)sqlite3_column_text(s, 0));
		if (to < 0 || to >= size || c < 0)
			continue;
		mine = xrealloc(mine, (count + 1) * sizeof(*mine));
		mine[count++] = (struct send){ c, sqlite3_column_int(s, 1), to,
					       sqlite3_column_int(s, 3), sqlite3_column_int64(s, 4),
					       sqlite3_column_int64(s, 5), sqlite3_column_int64(s, 6) };
		counts[to] += (int)sizeof(struct send);
	}
	sqlite3_finalize(s);
	int *in_counts = xcalloc((size_t)size, sizeof(int)), *in_offsets = xcalloc((size_t)size, sizeof(int));
	MPI_Alltoall(counts, 1, MPI_INT, in_counts, 1, MPI_INT, MPI_COMM_WORLD);
	size_t in_bytes = 0, out_bytes = 0;
	for (int i = 0; i < size; i++) {
		offsets[i] = (int)out_bytes;
		out_bytes += (size_t)counts[i];
		in_offsets[i] = (int)in_bytes;
		in_bytes += (size_t)in_counts[i];
	}
	struct send *theirs = xcalloc(in_bytes / sizeof(struct send) + 1, sizeof(struct send));
	MPI_Alltoallv(mine, counts, offsets, MPI_BYTE, theirs, in_counts, in_offsets, MPI_BYTE,
		      MPI_COMM_WORLD);
	sqlite3_stmt *insert = NULL;
	int rc = store_exec(db, "DELETE FROM mpi_s", err) ||
		 store_prepare(db, "INSERT INTO mpi_s (id, sender, receiver, tag, communicator, start, "
			       "k) VALUES (?, ?, ?, ?, ?, ?, ?)", &insert, err);
	for (size_t i = 0; rc == 0 && i < in_bytes / sizeof(struct send); i++) {
		const struct send *x = &theirs[i];
		sqlite3_bind_int64(insert, 1, x->id);
		sqlite3_bind_int(insert, 2, x->sender);
		sqlite3_bind_int(insert, 3, x->receiver);
		sqlite3_bind_int(insert, 4, x->tag);
		sqlite3_bind_text(insert, 5, comms->items[x->comm], -1, SQLITE_STATIC);
		sqlite3_bind_int64(insert, 6, x->start);
		sqlite3_bind_int64(insert, 7, x->k);
		if (sqlite3_step(insert) != SQLITE_DONE)
			rc = error_set(err, "%s", sqlite3_errmsg(db));
		sqlite3_reset(insert);
	}
	sqlite3_finalize(insert);
	free(mine);
	free(theirs);
	free(counts);
	free(offsets);
	free(in_counts);
	free(in_offsets);
	return rc;
}

/* ---- rank 0 gathers the rows -------------------------------------------------------------- */

struct rank_row {
	int64_t rank, pid, window_ns, mpi_ns, wait_ns, calls, sent, received;
	int64_t device_busy_ns, device_known;
	char host[64];
};

static void gather_rows(struct mpi_ranks *local, struct mpi_ranks *all)
{
	struct rank_row mine = { .rank = rank };
	if (local->rank_count) {
		const struct mpi_rank *k = &local->ranks[0];
		mine = (struct rank_row){ k->rank, k->pid, k->window_ns, k->mpi_ns, k->wait_ns,
					  k->calls, k->bytes_sent, k->bytes_received,
					  k->device_busy_ns, k->device_known, "" };
		snprintf(mine.host, sizeof(mine.host), "%s", k->host);
	}
	struct rank_row *rows = rank == 0 ? xcalloc((size_t)size, sizeof(*rows)) : NULL;
	MPI_Gather(&mine, sizeof(mine), MPI_BYTE, rows, sizeof(mine), MPI_BYTE, 0, MPI_COMM_WORLD);
	/* late senders: each receiver's */
	int bytes = (int)(local->late_count * sizeof(struct mpi_late_sender));
	int *counts = rank == 0 ? xcalloc((size_t)size, sizeof(int)) : NULL;
	int *offsets = rank == 0 ? xcalloc((size_t)size, sizeof(int)) : NULL;
	MPI_Gather(&bytes, 1, MPI_INT, counts, 1, MPI_INT, 0, MPI_COMM_WORLD);
	size_t total = 0;
	for (int i = 0; rank == 0 && i < size; i++) {
		offsets[i] = (int)total;
		total += (size_t)counts[i];
	}
	struct mpi_late_sender *late = rank == 0 ? xcalloc(total / sizeof(*late) + 1, sizeof(*late))
						 : NULL;
	MPI_Gatherv(local->late, bytes, MPI_BYTE, late, counts, offsets, MPI_BYTE, 0,
		    MPI_COMM_WORLD);
	/* each rank's calls by function and its device then: its own */
	int call_bytes = (int)(local->call_device_count * sizeof(struct mpi_call_device));
	int *call_counts = rank == 0 ? xcalloc((size_t)size, sizeof(int)) : NULL;
	int *call_offsets = rank == 0 ? xcalloc((size_t)size, sizeof(int)) : NULL;
	MPI_Gather(&call_bytes, 1, MPI_INT, call_counts, 1, MPI_INT, 0, MPI_COMM_WORLD);
	size_t call_total = 0;
	for (int i = 0; rank == 0 && i < size; i++) {
		call_offsets[i] = (int)call_total;
		call_total += (size_t)call_counts[i];
	}
	struct mpi_call_device *calls = rank == 0
		? xcalloc(call_total / sizeof(*calls) + 1, sizeof(*calls)) : NULL;
	MPI_Gatherv(local->call_devices, call_bytes, MPI_BYTE, calls, call_counts, call_offsets,
		    MPI_BYTE, 0, MPI_COMM_WORLD);
	free(call_counts);
	free(call_offsets);
	int64_t mine_counts[3] = { local->messages, local->unmatched_sends,
				   local->unmatched_receives }, sums[3] = { 0 };
	MPI_Reduce(mine_counts, sums, 3, MPI_INT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
	if (rank != 0)
		return;
	all->ranks = xcalloc((size_t)size, sizeof(*all->ranks));
	for (int i = 0; i < size; i++) {
		struct mpi_rank *k = &all->ranks[all->rank_count++];
		*k = (struct mpi_rank){ rows[i].rank, rows[i].pid, xstrdup(rows[i].host),
					rows[i].window_ns, rows[i].mpi_ns, rows[i].wait_ns,
					rows[i].calls, rows[i].sent, rows[i].received, 0, 0,
					rows[i].device_busy_ns, (int)rows[i].device_known };
	}
	all->late = late;
	all->late_count = total / sizeof(*late);
	all->call_devices = calls;
	all->call_device_count = call_total / sizeof(*calls);
	all->messages = sums[0];
	all->unmatched_sends = sums[1];
	all->unmatched_receives = sums[2];
	free(rows);
	free(counts);
	free(offsets);
}

static int by_wait(const void *a, const void *b)
{
	const struct mpi_late_sender *x = a, *y = b;
	if (x->wait_ns != y->wait_ns)
		return x->wait_ns > y->wait_ns ? -1 : 1;
	return x->sender != y->sender ? (x->sender > y->sender) - (x->sender < y->sender)
				      : (x->receiver > y->receiver) - (x->receiver < y->receiver);
}

/* Rank 0: the collectives' rows and the costs of the last arrivals, then the output. */
static int report(sqlite3 *db, struct mpi_ranks *all, const char *format, const char *units,
		  struct error *err)
{
	if (mpi_phase_collective_rows(db, all, err))
		return -1;
	sqlite3_stmt *s;
	if (store_prepare(db, "SELECT rank, last, caused FROM mpi_caused", &s, err))
		return -1;
	while (sqlite3_step(s) == SQLITE_ROW)
		for (size_t i = 0; i < all->rank_count; i++)
			if (all->ranks[i].rank == sqlite3_column_int64(s, 0)) {
				all->ranks[i].last_arrivals = sqlite3_column_int64(s, 1);
				all->ranks[i].caused_ns = sqlite3_column_int64(s, 2);
			}
	sqlite3_finalize(s);
	qsort(all->late, all->late_count, sizeof(*all->late), by_wait);
	mpi_ranks_name_straggler(all);
	struct mpi_summary_units u = mpi_summary_units_of(units);
	enum table_format kind = (enum table_format)table_parse_format(format);
	int64_t input = 0;
	table_output_begin(stdout, kind);
	int rc = mpi_summary_tables(stdout, kind, &u, all, &input, 1, err);
	table_output_end(stdout, kind);
	struct findings found = { NULL, 0 };
	mpi_ranks_findings(all, &found);
	if (rc == 0 && kind == TABLE_TEXT && found.count)
		printf("\nFINDINGS\n");
	for (size_t i = 0; rc == 0 && kind == TABLE_TEXT && i < found.count; i++)
		finding_print_text(stdout, &found.items[i], i + 1);
	findings_release(&found);
	return rc;
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (argc != 4) {
		if (rank == 0)
			fprintf(stderr, "usage: %s PATTERN FORMAT UNITS (gpuprof summary --mpi starts "
					"it)\n", argv[0]);
		MPI_Finalize();
		return 2;
	}
	/* this rank's recording: %rank% in the pattern is its rank */
	struct strbuf path = STRBUF_INIT;
	for (const char *at = argv[1]; *at; ) {
		const char *mark = strstr(at, "%rank%");
		if (!mark) {
			strbuf_addstr(&path, at);
			break;
		}
		strbuf_add(&path, at, (size_t)(mark - at));
		strbuf_addf(&path, "%d", rank);
		at = mark + strlen("%rank%");
	}
	struct error err = { 0 };
	sqlite3 *db = NULL;
	struct mpi_ranks local = { 0 }, all = { 0 };
	struct instances in = { 0 };
	/* what each rank was given, checked before anything is read: one line per rank
	 * whose file is wrong, said once */
	int64_t window[2] = { 0, 0 };
	int ok = store_open(path.buf, &db, &err) == 0;
	if (ok && !store_has_table(db, "gpuprof_mpi_call")) {
		error_set(&err, "'%s' holds no MPI calls (recorded without --mpi-trace?)", path.buf);
		ok = 0;
	}
	ok = ok && check_recording(db, path.buf, window, &err) == 0;
	if (!ok) {
		fail(err.message);
		err.message[0] = '\0';
	}
	ok = all_ok(ok) && check_one_run(path.buf, window) == 0;
	ok = ok && all_ok(mpi_phase_calls(db, &err) == 0);
	ok = ok && all_ok(number_instances(db, &in, &err) == 0);
	ok = ok && all_ok(route_sends(db, &in.comms, &err) == 0 && mpi_phase_messages(db, &err) == 0);
	ok = ok && all_ok(reduce_instances(db, &in, &err) == 0 && mpi_phase_waits(db, &err) == 0);
	ok = ok && all_ok(reduce_waits(db, &in, &err) == 0 &&
			  mpi_phase_rank_rows(db, &local, &err) == 0 &&
			  mpi_phase_device_busy(db, &local, &err) == 0 &&
			  mpi_phase_message_rows(db, &local, &err) == 0);
	if (ok) {
		gather_rows(&local, &all);
		if (rank == 0 && report(db, &all, argv[2], argv[3], &err))
			ok = 0;
	} else if (err.message[0]) {
		fail(err.message);
	}
	if (ok && rank == 0 && fflush(stdout))
		ok = 0;
	ok = all_ok(ok);
	mpi_ranks_release(&local);
	mpi_ranks_release(&all);
	names_free(&in.comms);
	names_free(&in.functions);
	free(in.offset);
	if (db)
		sqlite3_close(db);
	strbuf_release(&path);
	MPI_Finalize();
	return ok ? 0 : 1;
}
