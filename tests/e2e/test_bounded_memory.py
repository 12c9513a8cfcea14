"""The commands that read a recording, on a generated run of 1,000,000 records
(bench/make-spool's mix: 375,001 kernels, 124,999 copies, 500,000 API calls), each
under a hard cap of 32 MiB of data memory (RLIMIT_DATA: heap and private writable
mappings; SQLite's mapped database pages do not count), far below what arrays of the
run need (some 100 MiB): those that stream give their exact results; those that still
hold the run in memory are expected failures, named with what they hold, until they
stream (issue 33), and fail cleanly under the cap: a message and status 1, no crash.
The timelines' flow index (13 bytes a kernel or copy: 6.5 MiB here) fits under the cap at
this size, so this test cannot tell it from streaming: bench/scale.sh measures it."""
import csv
import os
import resource
import sqlite3
import subprocess

import pytest

from conftest import BUILD, GPUPROF, run

MAKE_SPOOL = os.path.join(BUILD, "bench", "make-spool")
RECORDS = 1000000
CAP = 32 << 20

pytestmark = [
    pytest.mark.skipif(bool(os.environ.get("GPUPROF_SANITIZER")),
                       reason="a sanitizer's runtime maps more than the cap by itself"),
    pytest.mark.skipif(not os.path.exists(MAKE_SPOOL), reason="bench/make-spool is not built"),
]


@pytest.fixture(scope="module")
def run_db(tmp_path_factory):
    d = tmp_path_factory.mktemp("bounded")
    subprocess.run([MAKE_SPOOL, str(d / "run.spool"), str(RECORDS)], check=True)
    r = run([GPUPROF, "convert", "-f", "sqlite", str(d / "run.spool")], cwd=d, timeout=300)
    assert r.returncode == 0, r.stderr
    os.unlink(d / "run.spool")
    return d / "run_results.db"


def capped(args, cwd):
    def limit():
        resource.setrlimit(resource.RLIMIT_DATA, (CAP, CAP))
    return subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=300,
                          preexec_fn=limit)


def rows(db, sql):
    with sqlite3.connect(db) as con:
        return con.execute(sql).fetchall()


def test_csv_under_the_cap(run_db, tmp_path):
    r = capped([GPUPROF, "convert", str(run_db), "-f", "csv", "-d", str(tmp_path)], tmp_path)
    assert r.returncode == 0, r.stderr
    for table, name in [("gpuprof_kernel", "kernel_trace"), ("gpuprof_memory_copy",
                                                             "memory_copy_trace"),
                        ("gpuprof_api_call", "opencl_api_trace")]:
        with open(tmp_path / f"run_{name}.csv", newline="") as f:
            count = sum(1 for _ in csv.DictReader(f))
        assert [(count,)] == rows(run_db, f"SELECT COUNT(*) FROM {table}"), name
    assert rows(run_db, "SELECT (SELECT COUNT(*) FROM gpuprof_kernel), (SELECT COUNT(*) FROM "
                        "gpuprof_memory_copy), (SELECT COUNT(*) FROM gpuprof_api_call)") == [
        (375001, 124999, 500000)]


def test_diff_query_and_profile_under_the_cap(run_db, tmp_path):
    r = capped([GPUPROF, "diff", "--format", "csv", str(run_db), str(run_db)], tmp_path)
    assert r.returncode == 0, r.stderr
    assert "k0" in r.stdout or "kernel" in r.stdout.lower(), r.stdout[:500]
    r = capped([GPUPROF, "query", str(run_db), "--format", "csv", "--sql",
                "SELECT COUNT(*) AS n, SUM(duration) AS d FROM kernels"], tmp_path)
    assert r.returncode == 0, r.stderr
    expected = rows(run_db, "SELECT COUNT(*), SUM(end - start) FROM gpuprof_kernel")[0]
    assert r.stdout.strip().splitlines()[-1] == f"{expected[0]},{expected[1]}"
    r = capped([GPUPROF, "profile", "--kernels", str(run_db)], tmp_path)
    assert r.returncode == 0 and "no launch with a call stack" in r.stderr, r.stderr


# what each command still holds for the whole run (docs/PERFORMANCE.md, issue 33)
HOLDING = {
    "summary": "the findings' arrays of the whole run",
    "advise": "the findings' arrays of the whole run",
    "report": "the findings' arrays of the whole run",
}


@pytest.mark.parametrize("command", sorted(HOLDING))
def test_not_yet_bounded(run_db, tmp_path, command):
    args = {"summary": ["summary", str(run_db)], "advise": ["advise", str(run_db)],
            "report": ["report", str(run_db), "-o", str(tmp_path / "r.html")]}[command]
    r = capped([GPUPROF, *args], tmp_path)
    if r.returncode == 0:
        pytest.fail(f"{command} now runs under the cap: move it to the bounded tests")
    # fails cleanly: one message, status 1, no signal
    assert r.returncode == 1 and "out of memory" in r.stderr, (r.returncode, r.stderr[-400:])
    pytest.xfail(f"{command} holds {HOLDING[command]}")
