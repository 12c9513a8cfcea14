/* Which rank holds the others back (--mpi-trace): over the MPI calls of one database
 * (a merged run, or one rank), per rank the time computing, in MPI and waiting; per
 * collective, how long the ranks waited for the last to arrive; per pair of ranks, the
 * time receives waited for late senders; the straggler named with what it cost. The
 * wait patterns are Scalasca's: wait at N x N (every rank waits for the last), late
 * broadcast (a rank waits for the root of a one-to-all), early reduce (the root of an
 * all-to-one waits for the last), late sender (a receive waits for its send). SQLite
 * does the grouping, so memory holds the result rows only. */
#ifndef GPUPROF_ANALYSIS_MPI_RANKS_H
#define GPUPROF_ANALYSIS_MPI_RANKS_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

#include "analysis/insight.h"
#include "util/error.h"

struct mpi_rank {
	int64_t rank, pid;
	char *host;
	int64_t window_ns;     /* from the end of MPI_Init to the start of MPI_Finalize (the
				* process's recording where it has neither) */
	int64_t mpi_ns;        /* in MPI calls other than MPI_Init and MPI_Finalize */
	int64_t wait_ns;       /* of mpi_ns, waiting for other ranks (the patterns above) */
	int64_t calls, bytes_sent, bytes_received;
	int64_t last_arrivals; /* collective instances it arrived at last */
	int64_t caused_ns;     /* the waits of the other ranks in those */
	int64_t device_busy_ns; /* of mpi_ns, while its device work ran (kernels, copies) */
	int device_known;      /* device_busy_ns was measured (its process ran device work) */
};

struct mpi_collective {
	char *function, *communicator;
	int64_t instances, ranks; /* ranks: the most that took part in one */
	int64_t wait_ns;       /* every rank's waits together */
	int64_t max_wait_ns;   /* the longest of one rank in one instance */
	int64_t last_rank, last_count; /* the rank that arrived last most often, how often */
};

struct mpi_late_sender {
	int64_t sender, receiver, tag, messages, wait_ns;
};

/* A rank's calls of one function (MPI_Init and MPI_Finalize left out) and what its
 * device did meanwhile: for ranks whose process ran device work. Fixed size: the ranks'
 * helper gathers them as bytes. */
struct mpi_call_device {
	int64_t rank, pid;
	char function[48];
	int64_t calls, mpi_ns, busy_ns; /* busy_ns: of mpi_ns, while its device work ran */
};

struct mpi_ranks {
	struct mpi_rank *ranks;
	size_t rank_count;
	struct mpi_collective *collectives;
	size_t collective_count;
	struct mpi_late_sender *late;
	size_t late_count;
	struct mpi_call_device *call_devices; /* by rank, then the most time first */
	size_t call_device_count;
	int64_t messages, unmatched_sends, unmatched_receives; /* point-to-point */
	int64_t straggler;     /* the rank whose late arrivals cost the others most; -1 */
};

/* The analysis in phases, over SQLite's temporary tables, for a run whose ranks are not
 * in one database (the ranks' own recordings analysed under the launcher, each rank its
 * own: commands/ranks-mpi.c) to fill some tables with what the ranks exchanged:
 *   calls       mpi_m (the calls), mpi_s (the sends), mpi_r (the receives)
 *   messages    mpi_msg, from mpi_s and mpi_r
 *   instances   mpi_inst (each collective's last arrival, the rank that made it, its
 *               root's arrival), from mpi_m
 *   waits       mpi_w (each collective call's wait), from mpi_m and mpi_inst; mpi_per
 *               (per instance) and mpi_caused (per last rank), from mpi_w
 * then the rows: of ranks (from mpi_m, mpi_w, mpi_msg, mpi_caused), of collectives (from
 * mpi_per), of late senders and message counts (from mpi_msg). Each 0, or -1 with err. */
int mpi_phase_calls(sqlite3 *db, struct error *err);
int mpi_phase_messages(sqlite3 *db, struct error *err);
int mpi_phase_instances(sqlite3 *db, struct error *err);
int mpi_phase_waits(sqlite3 *db, struct error *err);
int mpi_phase_rank_rows(sqlite3 *db, struct mpi_ranks *out, struct error *err);
/* The time each rank's device work ran during its MPI calls (the rows' device_busy_ns,
 * device_known, and call_devices by function), from mpi_m and the database's kernels and
 * copies. */
int mpi_phase_device_busy(sqlite3 *db, struct mpi_ranks *out, struct error *err);
int mpi_phase_collective_rows(sqlite3 *db, struct mpi_ranks *out, struct error *err);
int mpi_phase_message_rows(sqlite3 *db, struct mpi_ranks *out, struct error *err);
/* Names the rank whose late arrivals cost the others most (out->straggler; -1: none). */
void mpi_ranks_name_straggler(struct mpi_ranks *out);

/* The point-to-point messages of db's MPI calls matched, each send with its receive, in
 * SQLite's temporary table mpi_msg (send_process, send_call, recv_process, recv_call:
 * the call where the receive ended, its completion for a nonblocking one; sender,
 * receiver, tag, sent, wait; a side without its match is NULL), beside temp.mpi_m, the
 * calls. mpi_match_release() drops them. 0, or -1 with err set. */
int mpi_match_messages(sqlite3 *db, struct error *err);
void mpi_match_release(sqlite3 *db);

/* The analysis of db's MPI calls (none recorded: zero ranks). 0, or -1 with err set. */
int mpi_ranks_analyze(sqlite3 *db, struct mpi_ranks *out, struct error *err);
/* The straggler as a finding ("mpi-imbalance"), when the others waited for it. */
void mpi_ranks_findings(const struct mpi_ranks *r, struct findings *out);
void mpi_ranks_release(struct mpi_ranks *r);

#endif
