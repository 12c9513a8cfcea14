"""The commands that read a recording, on a generated run of 1,000,000 records
(bench/make-spool's mix: 375,001 kernels, 124,999 copies, 500,000 API calls), each
under a hard cap of 32 MiB of data memory (RLIMIT_DATA: heap and private writable
mappings; SQLite's mapped database pages do not count), far below what arrays of the
run need (some 100 MiB), with their exact results: the findings (advise, summary,
report) recomputed here from the rows. The timelines' flows are matched through the
device work sorted on disk and mapped from a temporary file (writer/export-run.h), so no
command holds memory per event; bench/scale.sh measures the memory at 10^7 and 10^8
records."""
import csv
import io
import json
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


SPOOL_RECORDS = 3000000
SPOOL_CAP = 24 << 20


def test_spool_converted_under_the_cap(tmp_path):
    """A spool converted to CSV, a timeline and a database under 24 MiB, where the lists
    of its records alone (a pointer each, doubling as they grow) need some 36 MiB."""
    spool = tmp_path / "run.spool"
    subprocess.run([MAKE_SPOOL, str(spool), str(SPOOL_RECORDS)], check=True)

    def limit():
        resource.setrlimit(resource.RLIMIT_DATA, (SPOOL_CAP, SPOOL_CAP))
    r = subprocess.run([GPUPROF, "convert", "-f", "csv", "-f", "pftrace", "-f", "sqlite", "-d",
                        str(tmp_path), str(spool)], capture_output=True, text=True,
                       timeout=300, preexec_fn=limit)
    assert r.returncode == 0, r.stderr
    assert "1125001 kernels, 374999 memory copies, 1500000 API calls" in r.stderr
    for name, count in [("kernel_trace", 1125001), ("memory_copy_trace", 374999),
                        ("opencl_api_trace", 1500000)]:
        with open(tmp_path / f"run_{name}.csv", newline="") as f:
            assert sum(1 for _ in csv.DictReader(f)) == count, name
    assert (tmp_path / "run_results.pftrace").stat().st_size > 0
    assert rows(tmp_path / "run_results.db", "SELECT (SELECT COUNT(*) FROM gpuprof_kernel), "
                "(SELECT COUNT(*) FROM gpuprof_memory_copy), (SELECT COUNT(*) FROM "
                "gpuprof_api_call)") == [(1125001, 374999, 1500000)]


def test_json_under_the_cap(run_db, tmp_path):
    r = capped([GPUPROF, "convert", str(run_db), "-f", "json", "-d", str(tmp_path)], tmp_path)
    assert r.returncode == 0, r.stderr
    with open(tmp_path / "run_results.json") as f:
        events = json.load(f)["traceEvents"]
    names = {}
    for e in events:
        if e.get("ph") == "X":
            names[e.get("cat")] = names.get(e.get("cat"), 0) + 1
    assert sum(names.values()) == 375001 + 124999 + 500000, names


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


def duration(ns):
    """gpuprof's durations for people (insight_duration)."""
    for scale, unit in ((1e9, "s"), (1e6, "ms"), (1e3, "us")):
        if abs(ns) >= scale:
            return f"{ns / scale:.3f} {unit}"
    return f"{ns} ns"


def expected_findings(db):
    """The run's two findings recomputed here from its rows: its one device's busy
    intervals and the gaps between them inside the kernels' window, the part of each gap
    before the API call that enqueued the next work returned, the calls the thread was in
    during the gaps; and its one queue's copies and kernels."""
    call_end = {}
    items = rows(db, "SELECT start, end, correlation_id, 0 FROM gpuprof_kernel UNION ALL "
                     "SELECT start, end, correlation_id, 1 FROM gpuprof_memory_copy "
                     "ORDER BY 1, 4")
    calls = []  # the top-level ones: a call inside the one before is made by it
    for start, end, corr, name in rows(db, "SELECT c.start, c.end, c.correlation_id, s.string "
                                           "FROM gpuprof_api_call c JOIN gpuprof_string s ON "
                                           "s.id = c.function_id ORDER BY c.start, c.end DESC"):
        if calls and start >= calls[-1][0] and end <= calls[-1][1]:
            call_end[corr] = calls[-1][1]
        else:
            calls.append((start, end, corr, name))
            call_end[corr] = end
    first = min(start for start, _, _, kind in items if kind == 0)
    last = max(end for _, end, _, kind in items if kind == 0)
    gaps, busy_end = [], None
    for start, end, corr, _ in items:
        if busy_end is not None and start > busy_end:
            gaps.append((busy_end, start, corr))
        busy_end = end if busy_end is None else max(busy_end, end)
    gaps = [g for g in gaps if g[0] >= first and g[1] <= last]
    idle = sum(e - s for s, e, _ in gaps)
    starved = sum(max(0, min(call_end[c], e) - s) for s, e, c in gaps)
    longest = max(gaps, key=lambda g: g[1] - g[0])  # the first of the longest
    in_calls, named, outside, i = {}, {}, 0, 0
    for s, e, _ in gaps:  # the calls are one thread's, one after another
        while i < len(calls) and calls[i][1] <= s:
            i += 1
        covered, best, name, j = 0, 0, None, i
        while j < len(calls) and calls[j][0] < e:
            part = min(calls[j][1], e) - max(calls[j][0], s)
            if part > 0:
                covered += part
                if part > best:
                    best, name = part, calls[j][3]
            j += 1
        if covered:
            in_calls[name] = in_calls.get(name, 0) + covered
            named[name] = named.get(name, 0) + 1
        outside += e - s - covered
    copies = [(s, e) for s, e, _, kind in items if kind == 1]
    kernels = [(s, e) for s, e, _, kind in items if kind == 0]
    copy_ns = sum(e - s for s, e in copies)
    kernel_ns = sum(e - s for s, e in kernels)
    return {
        "idle": idle, "gaps": len(gaps), "starved": starved, "longest": longest,
        "in_calls": in_calls, "named": named, "outside": outside,
        "copies": len(copies), "copy_ns": copy_ns, "kernels": len(kernels),
        "kernel_ns": kernel_ns,
        "interleaved": sum(1 for s, e in copies if s > first and e < last),
    }


@pytest.fixture(scope="module")
def expected(run_db):
    return expected_findings(run_db)


def test_advise_under_the_cap(run_db, tmp_path, expected):
    r = capped([GPUPROF, "advise", "--format", "csv", str(run_db)], tmp_path)
    assert r.returncode == 0, r.stderr
    found = list(csv.DictReader(io.StringIO(r.stdout.split("\n", 1)[1])))
    assert [f["Rule"] for f in found] == ["device-idle", "copy-kernel-serial"]
    idle, serial = found
    x = expected
    assert int(idle["Cost_ns"]) == x["idle"]
    assert f"in {x['gaps']} gaps; for {duration(x['starved'])} of it" in idle["Finding"]
    (start, end, _) = x["longest"]
    assert f"longest gap: {duration(end - start)} from" in idle["Evidence"]
    [(name, ns)] = x["in_calls"].items()
    assert (f"while idle, thread 4243 was in {name}: {duration(ns)} "
            f"({100 * ns / x['idle']:.1f} % of the idle time, in {x['named'][name]} gaps)"
            in idle["Evidence"]), idle["Evidence"]
    assert (f"in no API call (the host's own code): {duration(x['outside'])} "
            f"({100 * x['outside'] / x['idle']:.1f} %)" in idle["Evidence"]), idle["Evidence"]
    assert int(serial["Cost_ns"]) == min(x["copy_ns"], x["kernel_ns"])
    assert (f"ran {x['copies']} copies ({duration(x['copy_ns'])}) and {x['kernels']} kernels "
            f"({duration(x['kernel_ns'])})" in serial["Finding"]), serial["Finding"]
    assert serial["Evidence"].startswith(f"{x['interleaved']} of the copies came between")


def test_summary_and_report_under_the_cap(run_db, tmp_path, expected):
    r = capped([GPUPROF, "summary", "--format", "csv", str(run_db)], tmp_path)
    assert r.returncode == 0, r.stderr
    table = r.stdout.split("# FINDINGS")[1].splitlines()[1:4]
    costs = [(f["Rule"], int(f["Cost (nsec)"])) for f in csv.DictReader(table)]
    assert costs == [("device-idle", expected["idle"]), (
        "copy-kernel-serial", min(expected["copy_ns"], expected["kernel_ns"]))]
    page = tmp_path / "r.html"
    r = capped([GPUPROF, "report", str(run_db), "-o", str(page)], tmp_path)
    assert r.returncode == 0, r.stderr
    html = page.read_text()
    assert f"in {expected['gaps']} gaps" in html
    assert html.count("copy-kernel-serial") >= 1


TIGHT_CAP = 8 << 20


def test_findings_under_a_cap_that_needs_merge_passes(run_db, tmp_path):
    """Under 8 MiB each sort holds 512 KiB: the 500,000 API calls, 64 bytes each, go to
    disk in 69 sorted runs, more than the 32 that 512 KiB gives a 16 KiB buffer each, so
    they are first merged into 3 runs, then read; SQLite's own sorter and the commands'
    threads hold as little. advise, summary and report give the same bytes as without a
    cap."""
    def limit():
        resource.setrlimit(resource.RLIMIT_DATA, (TIGHT_CAP, TIGHT_CAP))
    outputs = {}
    for name, setup in (("free", None), ("tight", limit)):
        page = tmp_path / f"{name}.html"
        for command in (["advise"], ["summary"], ["report", "-o", str(page)]):
            r = subprocess.run([GPUPROF, *command, str(run_db)], cwd=tmp_path,
                               capture_output=True, timeout=300, preexec_fn=setup)
            assert r.returncode == 0, (name, command, r.stderr)
            outputs[name, command[0]] = page.read_bytes() if command[0] == "report" else r.stdout
    for command in ("advise", "summary", "report"):
        assert outputs["tight", command] == outputs["free", command], command
    assert b"device-idle" in outputs["free", "advise"]
