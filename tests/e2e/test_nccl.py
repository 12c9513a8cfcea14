"""--nccl-trace (and its rocprofv3 name --rccl-trace) on the CPU: NCCL is not installed here
and needs a GPU, so two ranks of a program calling NCCL as a data-parallel trainer does
(tests/e2e/nccl-app.c) run against a stand-in libnccl.so.2 (tests/e2e/fake-nccl.c): each
call recorded with its bytes (count times the data type's size), root or peer, the
communicator named alike on both ranks (after its unique id), collectives numbered alike,
the library's result; merged, its collectives are analysed as MPI's are. The program
also runs from a library it loads privately (RTLD_LOCAL), as Python loads PyTorch and
PyTorch its NCCL: the interposer then finds NCCL where dlsym(RTLD_NEXT) does not look."""
import csv
import os
import sqlite3

import pytest

from conftest import GPUPROF, TESTS, merged_collectives, run

STEPS, RANKS = 3, 2


@pytest.mark.parametrize("option,app", [("--nccl-trace", "nccl-app"),
                                        ("--rccl-trace", "nccl-app"),
                                        ("--nccl-trace", "nccl-app-private")])
def test_two_ranks_of_nccl_calls(tmp_path, option, app):
    for rank in range(RANKS):
        r = run([GPUPROF, "trace", option, "-d", "out", "-o", f"rank{rank}", "--",
                 os.path.join(TESTS, app),
                 str(rank), str(RANKS), str(STEPS)], cwd=tmp_path)
        assert r.returncode == 0, r.stderr
        assert f"rank {rank} of {RANKS}: {STEPS} steps" in r.stdout
    names = set()
    for rank in range(RANKS):
        with sqlite3.connect(tmp_path / "out" / f"rank{rank}_results.db") as db:
            rows = db.execute("SELECT domain, function, communicator, communicator_size, peer, "
                              "root, bytes_sent, bytes_received, sequence, result "
                              "FROM mpi_calls ORDER BY call_id").fetchall()
        comm = rows[0][2]
        names.add(comm)
        assert comm.startswith("nccl-")
        right, left = (rank + 1) % RANKS, (rank + RANKS - 1) % RANKS
        assert rows == [
            ("NCCL", "ncclCommInitRank", comm, RANKS, -1, -1, 0, 0, 0, 0)] + [
            ("NCCL", "ncclAllReduce", comm, RANKS, -1, -1, 4096, 4096, s + 1, 0)
            for s in range(STEPS)] + [
            ("NCCL", "ncclBroadcast", comm, RANKS, -1, 0, 1024 if rank == 0 else 0,
             0 if rank == 0 else 1024, STEPS + 1, 0),
            ("NCCL", "ncclGroupStart", None, 0, -1, -1, 0, 0, 0, 0),
            ("NCCL", "ncclSend", comm, RANKS, right, -1, 800, 0, 0, 0),
            ("NCCL", "ncclRecv", comm, RANKS, left, -1, 0, 800, 0, 0),
            ("NCCL", "ncclGroupEnd", None, 0, -1, -1, 0, 0, 0, 0),
            ("NCCL", "ncclAllGather", comm, RANKS, -1, -1, 128, 128 * RANKS, STEPS + 2, 0),
            ("NCCL", "ncclReduceScatter", comm, RANKS, -1, -1, 64 * RANKS, 64, STEPS + 3, 0),
            ("NCCL", "ncclCommDestroy", comm, RANKS, -1, -1, 0, 0, 0, 0)]
        with open(tmp_path / "out" / f"rank{rank}_nccl_api_trace.csv") as f:
            trace = list(csv.DictReader(f))
        assert [(t["Domain"], t["Function"]) for t in trace] == \
            [("NCCL_API", row[1]) for row in rows]
    assert len(names) == 1  # one communicator, one name on both ranks

    rows = {r["Function"]: r for r in merged_collectives(tmp_path, RANKS)}
    assert (rows["ncclAllReduce"]["Instances"], rows["ncclAllReduce"]["Ranks"]) == \
        (str(STEPS), str(RANKS))


def test_without_nccl_the_program_runs(tmp_path):
    """A program that does not use NCCL, under --nccl-trace: the interposer loaded and
    idle, the program unchanged."""
    r = run([GPUPROF, "trace", "--nccl-trace", "--", "/bin/sh", "-c", "echo fine; exit 5"],
            cwd=tmp_path)
    assert r.returncode == 5 and r.stdout == "fine\n"
