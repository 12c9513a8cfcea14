"""The cross-rank analysis on generated recordings of exact times (bench/make-ranks.c):
130 ranks on three hosts whose clocks run 1 ms apart, an all-reduce per step that the
last rank reaches 1 ms after the others (who arrive spread over 100 us), a ring exchange.
Merged, every host is placed by its clock exchanges; the waits, the straggler and the
messages are exact."""
import os
import re
import shutil
import sqlite3

from conftest import BUILD, GPUPROF, csv_table, run
from test_mpi_trace import message_flows

MAKE_RANKS = os.path.join(BUILD, "bench", "make-ranks")
RANKS, STEPS = 130, 20
STRAGGLER = RANKS - 1
BASE = 10000000000 + 2000000  # rank 0's clock at the first step


def skew(rank, step):
    """When a rank reaches step's all-reduce after the step began (ns)."""
    return 1000000 if rank == STRAGGLER else ((rank * 7 + step * 13) % 100) * 1000


def edited_copy(source, copy, sql):
    """A copy of a database with sql run on it: a recording made to differ."""
    shutil.copy(source, copy)
    with sqlite3.connect(copy) as db:
        db.execute(sql)
    return copy


def test_waits_straggler_and_clocks_of_130_ranks(tmp_path):
    r = run([MAKE_RANKS, str(tmp_path), str(RANKS), str(STEPS)], cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    spools = [str(tmp_path / f"rank{k}.spool") for k in range(RANKS)]
    c = run([GPUPROF, "convert", "-f", "sqlite", *spools], cwd=tmp_path, timeout=300)
    assert c.returncode == 0, c.stderr
    merged = str(tmp_path / "all.db")
    m = run([GPUPROF, "merge", "-o", merged,
             *[str(tmp_path / f"rank{k}_results.db") for k in range(RANKS)]], cwd=tmp_path)
    assert m.returncode == 0, m.stderr
    # 61: two recordings of one rank (another run's: another pid), or ranks of jobs of
    # different sizes, are not one run; one recording given twice is merged once
    again = edited_copy(tmp_path / "rank0_results.db", tmp_path / "again.db",
                        "UPDATE gpuprof_process SET pid = pid + 1")
    twice = run([GPUPROF, "merge", "-o", str(tmp_path / "twice.db"),
                 *[str(tmp_path / f"rank{k}_results.db") for k in (0, 1)], str(again)],
                cwd=tmp_path)
    assert twice.returncode != 0 and (
        f"'{tmp_path}/rank0_results.db' and '{again}' both hold the MPI calls of rank 0") \
        in twice.stderr, twice.stderr
    same = run([GPUPROF, "merge", "-o", str(tmp_path / "same.db"),
                *[str(tmp_path / f"rank{k}_results.db") for k in (0, 1, 0)]], cwd=tmp_path)
    assert same.returncode == 0, same.stderr
    other = edited_copy(tmp_path / "rank1_results.db", tmp_path / "other.db",
                        "UPDATE gpuprof_process SET size = 2")
    sizes = run([GPUPROF, "merge", "-o", str(tmp_path / "sizes.db"),
                 str(tmp_path / "rank0_results.db"), str(other)], cwd=tmp_path)
    assert sizes.returncode != 0 and f"in a job of {RANKS} ranks and '{other}' in one of 2" \
        in sizes.stderr, sizes.stderr
    assert not (tmp_path / "twice.db").exists() and not (tmp_path / "sizes.db").exists()
    with sqlite3.connect(merged) as db:
        starts = db.execute("SELECT rank, sequence, start FROM mpi_calls WHERE function = "
                            "'MPI_Allreduce'").fetchall()
        hosts = dict(db.execute("SELECT rank, hostname FROM processes"))
    assert {hosts[k] for k in range(RANKS)} == {"node-0", "node-1", "node-2"}
    # on rank 0's clock: the hosts' 1 and 2 ms ahead taken off by their exchanges
    assert sorted(starts) == sorted((k, s + 1, BASE + s * 2000000 + skew(k, s))
                                    for k in range(RANKS) for s in range(STEPS))

    s = run([GPUPROF, "summary", "--format", "csv", merged], cwd=tmp_path)
    assert s.returncode == 0, s.stderr
    for row in csv_table(s.stdout, "# MPI RANKS"):
        k = int(row["Rank"])
        waited = sum(skew(STRAGGLER, st) - skew(k, st) for st in range(STEPS))
        assert int(row["Waiting (nsec)"]) == waited
        assert int(row["Last at collectives"]) == (STEPS if k == STRAGGLER else 0)
        assert int(row["Calls"]) == 4 * STEPS + 2
        assert (int(row["Bytes sent"]), int(row["Bytes received"])) == \
            (STEPS * (8 + 4096), STEPS * (8 + 4096))
    (allreduce,) = csv_table(s.stdout, "# MPI COLLECTIVES")
    total = sum(skew(STRAGGLER, st) - skew(k, st) for k in range(RANKS) for st in range(STEPS))
    assert (allreduce["Instances"], allreduce["Ranks"], int(allreduce["Waited (nsec)"]),
            allreduce["Last rank"], allreduce["Last times"]) == \
        (str(STEPS), str(RANKS), total, str(STRAGGLER), str(STEPS))
    assert "# MPI LATE SENDERS" not in s.stdout  # sends go first

    a = run([GPUPROF, "advise", merged], cwd=tmp_path)
    assert a.returncode == 0, a.stderr
    assert (f"Rank {STRAGGLER} holds the others back: it arrived last at {STEPS} of {STEPS} "
            "collectives") in a.stdout
    # 61: its heading's share is of the time it is a share of (the others' waiting can be
    # longer than the straggler's whole run), in the text, the table and the report
    (heading,) = [l for l in a.stdout.splitlines() if "[mpi-imbalance]" in l]
    assert re.search(r"\(\d+\.\d % of the other ranks' time\)$", heading), heading
    a = run([GPUPROF, "advise", "--format", "csv", merged], cwd=tmp_path)
    rows = csv_table(a.stdout, "# Findings")
    assert {(r["Rule"], r["Cost_pct_of"]) for r in rows if r["Rule"] == "mpi-imbalance"} == \
        {("mpi-imbalance", "the other ranks' time")}
    assert all(r["Cost_pct_of"] == "the process's time" for r in rows
               if r["Rule"] != "mpi-imbalance"), rows
    # every ring message paired, its send with its receive: a flow each on the timeline
    starts, ends = message_flows(tmp_path, merged)
    assert len(starts) == len(ends) == RANKS * STEPS and set(starts) == set(ends)


def test_device_busy_and_idle_during_mpi_calls(tmp_path):
    """64: per rank, the time its device worked (kernels, copies) during its MPI calls and
    the time it idled there, from recordings of exact times: rank 0 computes through part
    of an all-reduce and a whole send, and idles in a barrier; rank 1's device never works
    during its MPI calls."""
    from conftest import csv_table, recording
    ranks = [
        ["process pid=5000 start=0 rank=0 size=2 host=h", "agent id=1 type=gpu name=GPU0",
         "queue id=1 agent=1",
         "mpi name=MPI_Init start=0 end=10000000",
         "kernel name=k start=100000000 end=300000000",
         "copy start=350000000 end=360000000 bytes=4096",
         "mpi name=MPI_Allreduce start=50000000 end=150000000 comm=WORLD size=2 sequence=1",
         "mpi name=MPI_Send start=200000000 end=280000000 peer=1 sent=64",
         "mpi name=MPI_Barrier start=400000000 end=450000000 comm=WORLD size=2 sequence=2",
         "mpi name=MPI_Finalize start=500000000 end=510000000",
         "end time=520000000"],
        ["process pid=5001 start=0 rank=1 size=2 host=h", "agent id=1 type=gpu name=GPU1",
         "queue id=1 agent=1",
         "mpi name=MPI_Init start=0 end=10000000",
         "kernel name=k start=20000000 end=40000000",
         "mpi name=MPI_Allreduce start=140000000 end=150000000 comm=WORLD size=2 sequence=1",
         "mpi name=MPI_Recv start=160000000 end=280000000 peer=0 received=64",
         "mpi name=MPI_Barrier start=440000000 end=450000000 comm=WORLD size=2 sequence=2",
         "mpi name=MPI_Finalize start=500000000 end=510000000",
         "end time=520000000"]]
    dbs = [recording(tmp_path / f"rank{k}", lines, pid=5000 + k) for k, lines in enumerate(ranks)]
    merged = str(tmp_path / "all.db")
    r = run([GPUPROF, "merge", "-o", merged, *dbs], cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    s = run([GPUPROF, "summary", "--format", "csv", "-u", "msec", merged], cwd=tmp_path)
    assert s.returncode == 0, s.stderr
    rows = {int(x["Rank"]): x for x in csv_table(s.stdout, "# MPI RANKS")}
    # rank 0: in MPI 100 + 80 + 50 ms; its kernel ran 50 ms of the all-reduce and the
    # whole 80 ms send, its copy in none of them
    assert (float(rows[0]["In MPI (msec)"]), float(rows[0]["Device busy in MPI (msec)"]),
            float(rows[0]["Device idle in MPI (msec)"])) == (230.0, 130.0, 100.0)
    assert (float(rows[1]["In MPI (msec)"]), float(rows[1]["Device busy in MPI (msec)"]),
            float(rows[1]["Device idle in MPI (msec)"])) == (140.0, 0.0, 140.0)
    # per call: the all-reduce half busy, the send busy whole, the barrier idle; rank 1's
    # device idle in all, its longest call first
    calls = [(int(x["Rank"]), x["Function"], int(x["Calls"]), float(x["In calls (msec)"]),
              float(x["Device busy (msec)"]), float(x["Device idle (msec)"]), x["Idle %"])
             for x in csv_table(s.stdout, "# MPI CALLS AND THE DEVICE")]
    assert calls == [(0, "MPI_Allreduce", 1, 100.0, 50.0, 50.0, "50.00"),
                     (0, "MPI_Send", 1, 80.0, 80.0, 0.0, "0.00"),
                     (0, "MPI_Barrier", 1, 50.0, 0.0, 50.0, "100.00"),
                     (1, "MPI_Recv", 1, 120.0, 0.0, 120.0, "100.00"),
                     (1, "MPI_Allreduce", 1, 10.0, 0.0, 10.0, "100.00"),
                     (1, "MPI_Barrier", 1, 10.0, 0.0, 10.0, "100.00")]
