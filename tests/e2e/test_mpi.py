"""Multi-rank runs: `mpirun -n 4 gpuprof trace ... -- app` with Open MPI from Debian,
each rank running the busy OpenCL sample; then `gpuprof merge` of the four outputs."""
import os
import shutil

import pytest

from conftest import GPUPROF, HOST, SAMPLES, outputs, run

MPIRUN = shutil.which("mpirun")
pytestmark = pytest.mark.skipif(not MPIRUN, reason="mpirun not installed (Debian package "
                                                   "openmpi-bin, in scripts/debian-packages.txt)")
RANKS = 4
KERNELS, COPIES = 6, 12  # busy -i 1: per thread 3 kernels, 4 transfers, a map and an unmap


def mpi_trace(tmp_path, options):
    r = run([MPIRUN, "--allow-run-as-root", "--oversubscribe", "-n", str(RANKS), GPUPROF,
             "trace", "-r", *options, "--", os.path.join(SAMPLES, "busy"), "-i", "1"],
            cwd=tmp_path, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    return r


def check_rank_outputs(found):
    assert len(found) == RANKS
    ranks = []
    for out in found:
        (p,) = out.query("SELECT pid, rank, size, hostname, clean_exit FROM processes")
        assert (p["size"], p["hostname"], p["clean_exit"]) == (RANKS, HOST, 1)
        ranks.append(p["rank"])
        assert out.query("SELECT COUNT(*) AS n FROM kernels") == [{"n": KERNELS}]
        assert out.query("SELECT COUNT(*) AS n FROM memory_copies") == [{"n": COPIES}]
        assert len(out.csv("kernel_trace.csv")) == KERNELS
        assert {int(r["Process_Id"]) for r in out.csv("opencl_api_trace.csv")} == {p["pid"]}
    assert sorted(ranks) == list(range(RANKS))
    return ranks


def test_four_ranks_by_pid_then_merged(tmp_path):
    mpi_trace(tmp_path, ["-d", "out"])
    found = outputs(str(tmp_path / "out"))
    check_rank_outputs(found)
    pids = sorted(o.pid for o in found)
    assert len(set(pids)) == RANKS

    merged = str(tmp_path / "all.db")
    r = run([GPUPROF, "merge", "-o", merged, *[o.path("results.db") for o in found]], cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    import sqlite3
    with sqlite3.connect(merged) as con:
        rows = con.execute("SELECT pid, rank FROM processes ORDER BY rank").fetchall()
        assert [rank for _, rank in rows] == list(range(RANKS))
        assert sorted(pid for pid, _ in rows) == pids
        per_pid = dict(con.execute("SELECT pid, COUNT(*) FROM kernels GROUP BY pid").fetchall())
        assert per_pid == {pid: KERNELS for pid in pids}
        assert con.execute("SELECT COUNT(*) FROM memory_copies").fetchone()[0] == RANKS * COPIES
    r = run([GPUPROF, "summary", "--format", "csv", merged], cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    # the table's rows: up to the blank line before the next table
    processes = r.stdout.split("# PROCESSES AND RANKS")[1].strip().split("\n\n")[0]
    processes = processes.splitlines()[1:]
    assert sorted(int(line.split(",")[3]) for line in processes) == list(range(RANKS))


def test_rank_placeholder_names_each_output(tmp_path):
    mpi_trace(tmp_path, ["-d", "out", "-o", "rank%rank%_of_%size%"])
    names = sorted(os.listdir(tmp_path / "out"))
    assert [n for n in names if n.endswith("_results.db")] == [
        f"rank{r}_of_{RANKS}_results.db" for r in range(RANKS)]
    found = outputs(str(tmp_path / "out"))
    ranks = check_rank_outputs(found)
    for out, rank in zip(found, ranks):
        assert os.path.basename(out.prefix) == f"rank{rank}_of_{RANKS}"
