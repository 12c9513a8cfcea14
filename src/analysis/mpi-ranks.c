/* Which rank holds the others back (see mpi-ranks.h). */
#include "analysis/mpi-ranks.h"
#include "analysis/device-busy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/store.h"
#include "util/strbuf.h"

/* The calls with what the analysis needs, and a collective's kind of wait (N: every
 * rank waits for the last; B: the others wait for the root; R: the root waits for the
 * last). Nonblocking collectives wait in their completion, which is not attributed. */
static const char calls_sql[] =
	"DROP TABLE IF EXISTS temp.mpi_m; DROP TABLE IF EXISTS temp.mpi_msg;"
	"DROP TABLE IF EXISTS temp.mpi_s; DROP TABLE IF EXISTS temp.mpi_r;"
	"CREATE TEMP TABLE mpi_m AS SELECT c.id, c.process_id, COALESCE(p.rank, -1) AS rank, "
	" p.pid, p.hostname AS host, c.call_id, f.string AS function, c.start, c.end, "
	" m.string AS communicator, c.root, "
	" CASE WHEN d.peer >= 0 THEN d.peer ELSE c.peer END AS peer, "
	" CASE WHEN d.tag >= 0 THEN d.tag ELSE c.tag END AS tag, c.sequence, c.bytes_sent, "
	" CASE WHEN d.bytes_received > 0 THEN d.bytes_received ELSE c.bytes_received END "
	"  AS bytes_received, d.completed_by, "
	" CASE WHEN c.sequence = 0 OR f.string LIKE 'MPI_I%' THEN NULL "
	"      WHEN f.string IN ('MPI_Bcast', 'MPI_Scatter', 'MPI_Scatterv', 'ncclBroadcast', "
	"       'torch.distributed.broadcast', 'torch.distributed.scatter') THEN 'B' "
	"      WHEN f.string IN ('MPI_Reduce', 'MPI_Gather', 'MPI_Gatherv', 'ncclReduce', "
	"       'torch.distributed.reduce', 'torch.distributed.gather') THEN 'R' "
	"      ELSE 'N' END AS pattern "
	"FROM main.gpuprof_mpi_call c JOIN main.gpuprof_process p ON p.id = c.process_id "
	"LEFT JOIN main.gpuprof_string f ON f.id = c.function_id "
	"LEFT JOIN main.gpuprof_string m ON m.id = c.communicator_id "
	"LEFT JOIN main.gpuprof_mpi_completion d ON d.process_id = c.process_id "
	" AND d.request = c.request AND c.request > 0;"
	"CREATE INDEX temp.mpi_m_call ON mpi_m (process_id, call_id);"
	/* point-to-point: the k-th send from a to b with a tag on a communicator matches the
	 * k-th receive posted there (MPI's messages do not overtake); a nonblocking receive
	 * ends in the call that completed it */
	"CREATE TEMP TABLE mpi_s AS SELECT id, process_id, call_id, rank AS sender, "
	" peer AS receiver, tag, communicator, start, "
	" ROW_NUMBER() OVER (PARTITION BY communicator, rank, peer, tag ORDER BY start, id) AS k "
	" FROM mpi_m WHERE peer >= 0 AND function IN ('MPI_Send', 'MPI_Ssend', 'MPI_Bsend', "
	" 'MPI_Rsend', 'MPI_Isend', 'MPI_Issend', 'MPI_Ibsend', 'MPI_Irsend', 'MPI_Sendrecv', "
	" 'MPI_Sendrecv_replace');"
	"CREATE INDEX temp.mpi_s_key ON mpi_s (communicator, sender, receiver, tag, k);"
	"CREATE TEMP TABLE mpi_r AS SELECT id, process_id, call_id, peer AS sender, "
	" rank AS receiver, tag, communicator, start, end, function, completed_by, "
	" ROW_NUMBER() OVER (PARTITION BY communicator, peer, rank, tag ORDER BY start, id) AS k "
	" FROM mpi_m WHERE peer >= 0 AND function IN ('MPI_Recv', 'MPI_Irecv');"
	"CREATE INDEX temp.mpi_r_key ON mpi_r (communicator, sender, receiver, tag, k);";

/* The messages: each send (mpi_s) with the receive (mpi_r) of its place. */
static const char messages_sql[] =
	"CREATE TEMP TABLE mpi_msg AS "
	"SELECT s.id AS send_id, r.id AS recv_id, s.process_id AS send_process, "
	" s.call_id AS send_call, r.process_id AS recv_process, "
	" CASE WHEN r.function = 'MPI_Irecv' THEN r.completed_by ELSE r.call_id END AS recv_call, "
	" s.sender, s.receiver, s.tag, s.start AS sent, "
	" MAX(0, CASE WHEN r.id IS NULL THEN 0 WHEN r.function = 'MPI_Recv' "
	"  THEN MIN(r.end - r.start, s.start - r.start) "
	"  ELSE COALESCE((SELECT MIN(w.end - w.start, s.start - w.start) FROM mpi_m w "
	"   WHERE w.process_id = r.process_id AND w.call_id = r.completed_by), 0) END) AS wait "
	"FROM mpi_s s LEFT JOIN mpi_r r ON r.communicator = s.communicator AND "
	" r.sender = s.sender AND r.receiver = s.receiver AND r.tag = s.tag AND r.k = s.k "
	"UNION ALL SELECT NULL, r.id, NULL, NULL, r.process_id, "
	" CASE WHEN r.function = 'MPI_Irecv' THEN r.completed_by ELSE r.call_id END, r.sender, "
	" r.receiver, r.tag, NULL, 0 FROM mpi_r r WHERE NOT EXISTS (SELECT 1 FROM mpi_s s WHERE "
	" s.communicator = r.communicator AND s.sender = r.sender AND s.receiver = r.receiver "
	" AND s.tag = r.tag AND s.k = r.k);"
	"DROP TABLE temp.mpi_s; DROP TABLE temp.mpi_r;";


/* Each collective instance's last arrival (and who), its root's, its ranks. */
static const char instances_sql[] =
	"DROP TABLE IF EXISTS temp.mpi_inst;"
	"CREATE TEMP TABLE mpi_inst AS SELECT communicator, sequence, MIN(function) AS function, "
	" MAX(start) AS last, COUNT(*) AS ranks, MAX(CASE WHEN rank = root THEN start END) "
	"  AS root_start, MIN(pattern) AS pattern, "
	" MAX(CASE WHEN place = 1 THEN rank END) AS last_rank "
	"FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY communicator, sequence ORDER BY "
	" start DESC, rank) AS place FROM mpi_m WHERE pattern IS NOT NULL) "
	"GROUP BY communicator, sequence;"
	"CREATE INDEX temp.mpi_inst_key ON mpi_inst (communicator, sequence);";

#define PER_SQL \
	"CREATE TEMP TABLE mpi_per AS SELECT communicator, sequence, MIN(function) AS function, " \
	" MAX(last_rank) AS last_rank, COUNT(*) AS ranks, SUM(wait) AS wait, " \
	" MAX(wait) AS max_wait FROM mpi_w GROUP BY communicator, sequence;"
#define CAUSED_SQL \
	"CREATE TEMP TABLE mpi_caused AS SELECT last_rank AS rank, COUNT(*) AS last, " \
	" SUM(wait) AS caused FROM mpi_per GROUP BY last_rank;"

/* Each call's wait; per instance (mpi_per) the waits, the longest and who arrived last;
 * per rank (mpi_caused) the instances it arrived at last and what they cost the others
 * (the last rank itself waits 0 in every pattern). */
static const char waits_sql[] =
	"DROP TABLE IF EXISTS temp.mpi_w; DROP TABLE IF EXISTS temp.mpi_per;"
	"DROP TABLE IF EXISTS temp.mpi_caused;"
	"CREATE TEMP TABLE mpi_w AS SELECT c.rank, c.communicator, c.sequence, c.function, "
	" i.last_rank, MAX(0, MIN(c.end - c.start, CASE c.pattern "
	"  WHEN 'N' THEN i.last - c.start "
	"  WHEN 'B' THEN CASE WHEN c.rank = c.root THEN 0 ELSE COALESCE(i.root_start, c.start) "
	"                - c.start END "
	"  ELSE CASE WHEN c.rank = c.root THEN i.last - c.start ELSE 0 END END)) AS wait "
	"FROM mpi_m c JOIN mpi_inst i ON i.communicator = c.communicator AND "
	" i.sequence = c.sequence WHERE c.pattern IS NOT NULL;"
	"CREATE INDEX temp.mpi_w_key ON mpi_w (communicator, sequence);"
	PER_SQL CAUSED_SQL;

static const char drop_sql[] =
	"DROP TABLE IF EXISTS temp.mpi_m; DROP TABLE IF EXISTS temp.mpi_inst; "
	"DROP TABLE IF EXISTS temp.mpi_w; DROP TABLE IF EXISTS temp.mpi_msg; "
	"DROP TABLE IF EXISTS temp.mpi_s; DROP TABLE IF EXISTS temp.mpi_r; "
	"DROP TABLE IF EXISTS temp.mpi_per; DROP TABLE IF EXISTS temp.mpi_caused;";

/* The temporary tables' pages: joins look rows up in them at random, and SQLite's default
 * cache of 2,000 KiB made each lookup a read of the temporary file (the analysis of
 * 1,640,448 calls took 2.4 times that of half as many). A fixed 64 MiB, as the store
 * gives its writer. */
#define TEMP_CACHE "PRAGMA temp.cache_size = -65536;"

int mpi_phase_calls(sqlite3 *db, struct error *err)
{
	return store_exec(db, TEMP_CACHE, err) || store_exec(db, calls_sql, err) ? -1 : 0;
}

int mpi_phase_messages(sqlite3 *db, struct error *err)
{
	return store_exec(db, messages_sql, err);
}

int mpi_phase_instances(sqlite3 *db, struct error *err)
{
	return store_exec(db, instances_sql, err);
}

int mpi_phase_waits(sqlite3 *db, struct error *err)
{
	return store_exec(db, waits_sql, err);
}

int mpi_match_messages(sqlite3 *db, struct error *err)
{
	return mpi_phase_calls(db, err) || mpi_phase_messages(db, err) ? -1 : 0;
}

void mpi_match_release(sqlite3 *db)
{
	struct error ignored;
	store_exec(db, drop_sql, &ignored);
}

static char *text_of(sqlite3_stmt *s, int column)
{
	const unsigned char *t = sqlite3_column_text(s, column);
	return xstrdup(t ? (const char *)t : "");
}

/* Runs sql, calling row() for each row. */
static int each_row(sqlite3 *db, const char *sql, void (*row)(sqlite3_stmt *, void *),
		    void *arg, struct error *err)
{
	sqlite3_stmt *s;
	if (store_prepare(db, sql, &s, err))
		return -1;
	int step;
	while ((step = sqlite3_step(s)) == SQLITE_ROW)
		row(s, arg);
	sqlite3_finalize(s);
	if (step != SQLITE_DONE)
		return error_set(err, "cannot analyse the MPI calls of '%s': %s",
				 sqlite3_db_filename(db, "main"), sqlite3_errmsg(db));
	return 0;
}

static void rank_row(sqlite3_stmt *s, void *arg)
{
	struct mpi_ranks *r = arg;
	r->ranks = xrealloc(r->ranks, (r->rank_count + 1) * sizeof(*r->ranks));
	struct mpi_rank *k = &r->ranks[r->rank_count++];
	k->rank = sqlite3_column_int64(s, 0);
	k->pid = sqlite3_column_int64(s, 1);
	k->host = text_of(s, 2);
	k->window_ns = sqlite3_column_int64(s, 3);
	k->mpi_ns = sqlite3_column_int64(s, 4);
	k->wait_ns = sqlite3_column_int64(s, 5);
	k->calls = sqlite3_column_int64(s, 6);
	k->bytes_sent = sqlite3_column_int64(s, 7);
	k->bytes_received = sqlite3_column_int64(s, 8);
	k->last_arrivals = sqlite3_column_int64(s, 9);
	k->caused_ns = sqlite3_column_int64(s, 10);
	k->device_busy_ns = 0; /* mpi_phase_device_busy() */
	k->device_known = 0;
}

static void collective_row(sqlite3_stmt *s, void *arg)
{
	struct mpi_ranks *r = arg;
	r->collectives = xrealloc(r->collectives,
				  (r->collective_count + 1) * sizeof(*r->collectives));
	struct mpi_collective *c = &r->collectives[r->collective_count++];
	c->function = text_of(s, 0);
	c->communicator = text_of(s, 1);
	c->instances = sqlite3_column_int64(s, 2);
	c->ranks = sqlite3_column_int64(s, 3);
	c->wait_ns = sqlite3_column_int64(s, 4);
	c->max_wait_ns = sqlite3_column_int64(s, 5);
	c->last_rank = sqlite3_column_int64(s, 6);
	c->last_count = sqlite3_column_int64(s, 7);
}

static void late_row(sqlite3_stmt *s, void *arg)
{
	struct mpi_ranks *r = arg;
	r->late = xrealloc(r->late, (r->late_count + 1) * sizeof(*r->late));
	struct mpi_late_sender *l = &r->late[r->late_count++];
	l->sender = sqlite3_column_int64(s, 0);
	l->receiver = sqlite3_column_int64(s, 1);
	l->tag = sqlite3_column_int64(s, 2);
	l->messages = sqlite3_column_int64(s, 3);
	l->wait_ns = sqlite3_column_int64(s, 4);
}

static void counts_row(sqlite3_stmt *s, void *arg)
{
	struct mpi_ranks *r = arg;
	r->messages = sqlite3_column_int64(s, 0);
	r->unmatched_sends = sqlite3_column_int64(s, 1);
	r->unmatched_receives = sqlite3_column_int64(s, 2);
}

/* Whether db holds communication calls. */
static int has_calls(sqlite3 *db)
{
	sqlite3_stmt *any;
	int have = 0;
	if (!store_has_table(db, "gpuprof_mpi_call"))
		return 0;
	if (sqlite3_prepare_v2(db, "SELECT 1 FROM main.gpuprof_mpi_call LIMIT 1", -1, &any,
			       NULL) == SQLITE_OK)
		have = sqlite3_step(any) == SQLITE_ROW;
	sqlite3_finalize(any);
	return have;
}

int mpi_phase_rank_rows(sqlite3 *db, struct mpi_ranks *out, struct error *err)
{
	return each_row(db,
		"WITH calls AS (SELECT rank, MIN(pid) AS pid, MIN(host) AS host, process_id, "
		" COUNT(*) AS calls, SUM(bytes_sent) AS sent, SUM(bytes_received) AS received, "
		" SUM(CASE WHEN function IN ('MPI_Init', 'MPI_Init_thread', 'MPI_Finalize') THEN 0 "
		"  ELSE end - start END) AS mpi_ns, "
		" MAX(CASE WHEN function IN ('MPI_Init', 'MPI_Init_thread') THEN end END) AS from_, "
		" MIN(CASE WHEN function = 'MPI_Finalize' THEN start END) AS to_ "
		" FROM mpi_m GROUP BY process_id), "
		"waits AS (SELECT rank, SUM(wait) AS wait FROM (SELECT rank, wait FROM mpi_w "
		" UNION ALL SELECT receiver, wait FROM mpi_msg WHERE recv_id IS NOT NULL) "
		" GROUP BY rank) "
		"SELECT c.rank, c.pid, c.host, COALESCE(c.to_, p.end) - COALESCE(c.from_, p.start), "
		" c.mpi_ns, COALESCE(w.wait, 0), c.calls, c.sent, c.received, "
		" COALESCE(x.last, 0), COALESCE(x.caused, 0) "
		"FROM calls c JOIN main.gpuprof_process p ON p.id = c.process_id "
		"LEFT JOIN waits w ON w.rank = c.rank LEFT JOIN mpi_caused x ON x.rank = c.rank "
		"ORDER BY c.rank, c.pid", rank_row, out, err);
}

int mpi_phase_collective_rows(sqlite3 *db, struct mpi_ranks *out, struct error *err)
{
	return each_row(db,
		"WITH lasts AS (SELECT function, communicator, last_rank, COUNT(*) AS n, "
		" ROW_NUMBER() OVER (PARTITION BY function, communicator ORDER BY COUNT(*) "
		"  DESC, last_rank) AS place FROM mpi_per GROUP BY function, communicator, "
		"  last_rank) "
		"SELECT p.function, p.communicator, COUNT(*), MAX(p.ranks), SUM(p.wait), "
		" MAX(p.max_wait), l.last_rank, l.n FROM mpi_per p JOIN lasts l ON "
		" l.function = p.function AND l.communicator = p.communicator AND l.place = 1 "
		"GROUP BY p.function, p.communicator ORDER BY SUM(p.wait) DESC, p.function, "
		"p.communicator", collective_row, out, err);
}

int mpi_phase_message_rows(sqlite3 *db, struct mpi_ranks *out, struct error *err)
{
	return each_row(db,
			"SELECT sender, receiver, tag, COUNT(*), SUM(wait) FROM mpi_msg WHERE "
			"send_id IS NOT NULL AND recv_id IS NOT NULL GROUP BY sender, receiver, tag "
			"HAVING SUM(wait) > 0 ORDER BY SUM(wait) DESC, sender, receiver, tag",
			late_row, out, err) ||
	       each_row(db,
			"SELECT COUNT(send_id IS NOT NULL AND recv_id IS NOT NULL OR NULL), "
			"COUNT(recv_id IS NULL OR NULL), COUNT(send_id IS NULL OR NULL) FROM mpi_msg",
			counts_row, out, err) ? -1 : 0;
}

void mpi_ranks_name_straggler(struct mpi_ranks *out)
{
	int64_t most = 0;
	out->straggler = -1;
	for (size_t i = 0; i < out->rank_count; i++)
		if (out->ranks[i].caused_ns > most) {
			most = out->ranks[i].caused_ns;
			out->straggler = out->ranks[i].rank;
		}
}

/* A rank's calls of one function: a row of call_devices, and their busy time added to
 * the rank's. */
static void busy_row(sqlite3_stmt *s, void *arg)
{
	struct mpi_ranks *r = arg;
	int64_t rank = sqlite3_column_int64(s, 0), pid = sqlite3_column_int64(s, 1);
	int64_t busy = sqlite3_column_int64(s, 5);
	for (size_t i = 0; i < r->rank_count; i++)
		if (r->ranks[i].rank == rank && r->ranks[i].pid == pid) {
			r->ranks[i].device_busy_ns += busy;
			r->ranks[i].device_known = 1;
		}
	r->call_devices = xrealloc(r->call_devices,
				   (r->call_device_count + 1) * sizeof(*r->call_devices));
	struct mpi_call_device *d = &r->call_devices[r->call_device_count++];
	*d = (struct mpi_call_device){ .rank = rank, .pid = pid,
				       .calls = sqlite3_column_int64(s, 3),
				       .mpi_ns = sqlite3_column_int64(s, 4), .busy_ns = busy };
	const unsigned char *function = sqlite3_column_text(s, 2);
	snprintf(d->function, sizeof(d->function), "%s", function ? (const char *)function : "");
}

/* The time each rank's device work ran during its MPI calls (the same calls as mpi_ns):
 * their overlap with its merged busy intervals (disjoint, by start: those from the last
 * to begin at or before the call's start to the call's end). A rank whose process ran no
 * device work is not measured (no device to be idle). */
int mpi_phase_device_busy(sqlite3 *db, struct mpi_ranks *out, struct error *err)
{
	int rc = device_busy_table(db, "mpi_busy", err) ||
		 each_row(db,
			  "SELECT MIN(c.rank), MIN(p.pid), c.function, COUNT(*), SUM(c.end - "
			  "c.start), COALESCE(SUM((SELECT SUM(MIN(c.end, "
			  "b.end) - MAX(c.start, b.start)) FROM temp.mpi_busy b WHERE b.process_id "
			  "= c.process_id AND b.start < c.end AND b.end > c.start AND b.start >= "
			  "COALESCE((SELECT MAX(x.start) FROM temp.mpi_busy x WHERE x.process_id = "
			  "c.process_id AND x.start <= c.start), 0))), 0) FROM mpi_m c JOIN "
			  "main.gpuprof_process p ON p.id = c.process_id WHERE c.function NOT IN "
			  "('MPI_Init', 'MPI_Init_thread', 'MPI_Finalize') AND EXISTS (SELECT 1 FROM "
			  "temp.mpi_busy y WHERE y.process_id = c.process_id) GROUP BY c.process_id, "
			  "c.function ORDER BY 1, 5 DESC, 3",
			  busy_row, out, err);
	struct error ignored;
	store_exec(db, "DROP TABLE IF EXISTS temp.mpi_busy", &ignored);
	return rc ? -1 : 0;
}

int mpi_ranks_analyze(sqlite3 *db, struct mpi_ranks *out, struct error *err)
{
	memset(out, 0, sizeof(*out));
	out->straggler = -1;
	if (!has_calls(db))
		return 0;
	int rc = mpi_match_messages(db, err) || mpi_phase_instances(db, err) ||
		 mpi_phase_waits(db, err) || mpi_phase_rank_rows(db, out, err) ||
		 mpi_phase_device_busy(db, out, err) ||
		 mpi_phase_collective_rows(db, out, err) || mpi_phase_message_rows(db, out, err);
	mpi_ranks_name_straggler(out);
	mpi_match_release(db);
	if (rc)
		mpi_ranks_release(out);
	return rc ? -1 : 0;
}

void mpi_ranks_findings(const struct mpi_ranks *r, struct findings *out)
{
	const struct mpi_rank *s = NULL;
	int64_t others_window = 0, others_compute = 0, others = 0, instances = 0;
	for (size_t i = 0; i < r->rank_count; i++) {
		if (r->ranks[i].rank == r->straggler && !s) {
			s = &r->ranks[i];
			continue;
		}
		others_window += r->ranks[i].window_ns;
		others_compute += r->ranks[i].window_ns - r->ranks[i].mpi_ns;
		others++;
	}
	for (size_t i = 0; i < r->collective_count; i++)
		instances += r->collectives[i].instances;
	if (!s || !others || s->caused_ns <= 0)
		return;
	out->items = xrealloc(out->items, (out->count + 1) * sizeof(*out->items));
	struct finding *f = &out->items[out->count++];
	memset(f, 0, sizeof(*f));
	f->rule = "mpi-imbalance";
	f->pid = s->pid;
	f->cost_ns = s->caused_ns;
	/* of the time of the ranks that waited: their waiting for this one can be longer
	 * than its own run */
	f->cost_pct = others_window > 0 ? 100.0 * (double)s->caused_ns / (double)others_window : 0;
	f->share_of = "the other ranks' time";
	strbuf_init(&f->what);
	strbuf_init(&f->evidence);
	strbuf_init(&f->advice);
	struct strbuf caused = STRBUF_INIT, mine = STRBUF_INIT, theirs = STRBUF_INIT;
	insight_duration(&caused, s->caused_ns);
	insight_duration(&mine, s->window_ns - s->mpi_ns);
	insight_duration(&theirs, others_compute / others);
	strbuf_addf(&f->what, "Rank %lld holds the others back: it arrived last at %lld of %lld "
			      "collectives, and the other ranks waited %s for it there (%.1f %% of "
			      "their time)", (long long)s->rank, (long long)s->last_arrivals,
		    (long long)instances, caused.buf, f->cost_pct);
	strbuf_addf(&f->evidence, "rank %lld (pid %lld on %s) computed %s outside MPI; the "
				  "other %lld ranks %s each on average\n", (long long)s->rank,
		    (long long)s->pid, s->host, mine.buf, (long long)others, theirs.buf);
	for (size_t i = 0; i < r->collective_count && i < 3; i++) {
		const struct mpi_collective *c = &r->collectives[i];
		struct strbuf w = STRBUF_INIT;
		insight_duration(&w, c->wait_ns);
		strbuf_addf(&f->evidence, "%s on %s: %lld instances, %s waited in all, rank %lld "
					  "last in %lld\n", c->function, c->communicator,
			    (long long)c->instances, w.buf, (long long)c->last_rank,
			    (long long)c->last_count);
		strbuf_release(&w);
	}
	strbuf_addf(&f->advice, "Give rank %lld less of the work between collectives "
				"(or find what it does more of than the others: `gpuprof profile` of "
				"its recording); balanced, the others would not wait the %s",
		    (long long)s->rank, caused.buf);
	strbuf_release(&caused);
	strbuf_release(&mine);
	strbuf_release(&theirs);
}

void mpi_ranks_release(struct mpi_ranks *r)
{
	for (size_t i = 0; i < r->rank_count; i++)
		free(r->ranks[i].host);
	for (size_t i = 0; i < r->collective_count; i++) {
		free(r->collectives[i].function);
		free(r->collectives[i].communicator);
	}
	free(r->ranks);
	free(r->collectives);
	free(r->late);
	free(r->call_devices);
	memset(r, 0, sizeof(*r));
	r->straggler = -1;
}
