"""gpuprof advise: each rule fires on the program made for it, with the cost the recorded
rows give (computed here from the database), and not on its fixed version; no rule fires
on vcopy; the findings section of gpuprof summary; bad input."""
import json
import os
import sqlite3

import pytest
from conftest import GPUPROF, SAMPLES, TESTS, run

# Under a sanitizer the recording library is several times slower: a program launching
# back to back can starve its device then, which the rules rightly see. Where a test
# says nothing fires, it says so only without one.
SANITIZED = bool(os.environ.get("GPUPROF_SANITIZER"))


def clean(tmp_path, db):
    """Nothing fires (not checked under a sanitizer, see SANITIZED)."""
    found = findings(tmp_path, db)
    assert SANITIZED or found == {}, found


def record(tmp_path, program, *args):
    """Runs a program under gpuprof trace --runtime-trace; returns its database."""
    out = tmp_path / "_".join([os.path.basename(program), *[a.strip("-") for a in args]])
    r = run([GPUPROF, "trace", "--runtime-trace", "-d", str(out), "-o", "run", "-f", "sqlite",
             "--", program, *args], cwd=tmp_path, timeout=300)
    assert r.returncode == 0, r.stderr
    return str(out / "run_results.db")


def findings(tmp_path, db):
    r = run([GPUPROF, "advise", "--format", "json", db], cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    [table] = json.loads(r.stdout)
    assert table["name"] == "findings"
    return {row["Rule"]: row for row in (dict(zip(table["columns"], r)) for r in table["rows"])}


def activities(db):
    """The device's kernels and copies: (start, end, kind, bytes, queue), by start."""
    with sqlite3.connect(db) as c:
        rows = c.execute("SELECT start, end, 'kernel', 0, queue_index FROM gpuprof_kernel "
                         "UNION ALL SELECT start, end, 'copy', bytes, queue_index "
                         "FROM gpuprof_memory_copy WHERE operation = 1").fetchall()
    return sorted(rows)


def busy_intervals(rows):
    busy = []
    for start, end, *_ in rows:
        if busy and start <= busy[-1][1]:
            busy[-1][1] = max(busy[-1][1], end)
        else:
            busy.append([start, end])
    return busy


def idle_between_kernels(rows):
    kernels = [r for r in rows if r[2] == "kernel"]
    first, last = min(k[0] for k in kernels), max(k[1] for k in kernels)
    busy = busy_intervals(rows)
    return sum(b[0] - a[1] for a, b in zip(busy, busy[1:]) if a[1] >= first and b[0] <= last)


def test_hostsync(tmp_path):
    """A wait after every launch: sync-per-launch costs the device's idle time after each
    kernel until its next work, device-idle the idle time between the first and the last
    kernel, both summed here from the rows; --fixed waits once and nothing fires."""
    db = record(tmp_path, os.path.join(SAMPLES, "hostsync"))
    found = findings(tmp_path, db)
    assert set(found) == {"sync-per-launch", "device-idle"} or SANITIZED, found
    rows = activities(db)
    busy = busy_intervals(rows)
    after_kernels = sum(nxt[0] - cur[1] for cur, nxt in zip(busy, busy[1:])
                        if any(r[2] == "kernel" and r[1] == cur[1] for r in rows))
    assert found["sync-per-launch"]["Cost_ns"] == after_kernels
    assert found["device-idle"]["Cost_ns"] == idle_between_kernels(rows)
    assert "waited for the device after 200 of its 200 launches" in \
        found["sync-per-launch"]["Finding"]
    assert "launches: clEnqueueNDRangeKernel (kernel mycopy, 200 run)" in \
        found["sync-per-launch"]["Evidence"]
    assert "was in clFinish" in found["device-idle"]["Evidence"]
    clean(tmp_path, record(tmp_path, os.path.join(SAMPLES, "hostsync"), "--fixed"))


def test_idle_gaps_name_the_sampled_functions(tmp_path):
    """Under gpuprof sys (wall-clock sampling), device-idle's evidence names the functions
    the threads were sampled in during the gaps, counted here from the samples view."""
    out = tmp_path / "sys"
    r = run([GPUPROF, "sys", "--sampling-realtime", "--sampling-freq", "1000", "-d", str(out),
             "-o", "run", "-f", "sqlite", "--", os.path.join(SAMPLES, "hostsync")],
            cwd=tmp_path, timeout=300)
    assert r.returncode == 0, r.stderr
    db = str(out / "run_results.db")
    evidence = findings(tmp_path, db)["device-idle"]["Evidence"].splitlines()
    rows = activities(db)
    kernels = [r for r in rows if r[2] == "kernel"]
    first, last = min(k[0] for k in kernels), max(k[1] for k in kernels)
    busy = busy_intervals(rows)
    gaps = [(a[1], b[0]) for a, b in zip(busy, busy[1:]) if a[1] >= first and b[0] <= last]
    with sqlite3.connect(db) as c:
        samples = c.execute("SELECT tid, time, function FROM samples").fetchall()
    inside = {}
    for tid, time, function in samples:
        if any(start <= time < end for start, end in gaps):
            inside[(tid, function)] = inside.get((tid, function), 0) + 1
    total = sum(inside.values())
    assert total > 0
    lines = [line for line in evidence if line.startswith("sampled while idle: ")]
    top = sorted(inside.values(), reverse=True)[:3]
    assert [int(line.split(" (")[-1].split(" of ")[0]) for line in lines] == top
    assert all(line.endswith(f" of {total} samples)") for line in lines)


def test_launchbound(tmp_path):
    """2000 tiny kernels: launch-bound costs the device's idle time before each kernel
    that starts its work again; one launch of the same work (--fixed): nothing."""
    db = record(tmp_path, os.path.join(SAMPLES, "launchbound"))
    found = findings(tmp_path, db)
    assert set(found) == {"launch-bound", "device-idle"} or SANITIZED, found
    rows = activities(db)
    busy = busy_intervals(rows)
    starts = {b[0]: i for i, b in enumerate(busy)}
    # the last kernel is the one clFinish waited for: left to sync-per-launch
    kernels = [r for r in rows if r[2] == "kernel"][:-1]
    idle = sum(k[0] - busy[starts[k[0]] - 1][1] for k in kernels[1:]
               if k[0] in starts and starts[k[0]] > 0)
    assert found["launch-bound"]["Cost_ns"] == idle
    assert found["launch-bound"]["Finding"].startswith("1999 kernels on ")
    clean(tmp_path, record(tmp_path, os.path.join(SAMPLES, "launchbound"), "--fixed"))


def test_copies(tmp_path):
    """300 chunks written, computed and read back on one queue: small-copies costs the
    600 copies' time; copy-kernel-serial up to the smaller of the copies' and the
    kernels' time; the whole data at once (--fixed): nothing."""
    db = record(tmp_path, os.path.join(SAMPLES, "copies"))
    found = findings(tmp_path, db)
    assert set(found) >= {"small-copies", "copy-kernel-serial"}, found
    assert set(found) == {"small-copies", "copy-kernel-serial"} or SANITIZED, found
    rows = activities(db)
    copies = [r for r in rows if r[2] == "copy"]
    assert len(copies) == 600 and all(r[3] == 16384 for r in copies)
    copy_ns = sum(r[1] - r[0] for r in copies)
    kernel_ns = sum(r[1] - r[0] for r in rows if r[2] == "kernel")
    assert found["small-copies"]["Cost_ns"] == copy_ns
    assert found["copy-kernel-serial"]["Cost_ns"] == min(copy_ns, kernel_ns)
    assert found["small-copies"]["Finding"].startswith("600 copies of less than 64 KiB")
    clean(tmp_path, record(tmp_path, os.path.join(SAMPLES, "copies"), "--fixed"))


def test_shared_queue(tmp_path):
    """Two threads on one queue: one-queue costs the work of the thread with less of it;
    a queue each (--own): nothing."""
    db = record(tmp_path, os.path.join(TESTS, "shared-queue"))
    found = findings(tmp_path, db)
    assert set(found) == {"one-queue"} or SANITIZED and "one-queue" in found, found
    with sqlite3.connect(db) as c:
        per_thread = [ns for (ns,) in c.execute(
            "SELECT SUM(end - start) FROM gpuprof_kernel GROUP BY tid")]
    assert len(per_thread) == 2 and found["one-queue"]["Cost_ns"] == min(per_thread)
    clean(tmp_path, record(tmp_path, os.path.join(TESTS, "shared-queue"), "--own"))


@pytest.mark.skipif(SANITIZED, reason="a sanitized recording library can starve the device")
@pytest.mark.parametrize("program", [["vcopy"], ["vcopy", "-i", "200"]])
def test_nothing_fires_on_plain_programs(tmp_path, program):
    db = record(tmp_path, os.path.join(SAMPLES, program[0]), *program[1:])
    assert findings(tmp_path, db) == {}
    r = run([GPUPROF, "advise", db], cwd=tmp_path)
    assert r.returncode == 0 and r.stdout == "no findings: none of the 8 rules saw a problem\n"


def test_pageable_copies_of_a_cuda_run(tmp_path):
    """The CUDA backend's records (tests/e2e/cuda-spool.c): a 4 MiB copy from pageable
    host memory, 330 us of the device's time."""
    spool = tmp_path / "4242.spool"
    assert run([os.path.join(TESTS, "cuda-spool"), str(spool)], cwd=tmp_path).returncode == 0
    assert run([GPUPROF, "convert", "-f", "sqlite", str(spool)], cwd=tmp_path).returncode == 0
    found = findings(tmp_path, str(tmp_path / "4242_results.db"))
    assert found["pageable-copies"]["Cost_ns"] == 330000
    assert found["pageable-copies"]["Finding"].startswith(
        "1 copies between GPU 1 (NVIDIA H200) and pageable host memory took 330.000 us")


def test_text_summary_and_bad_input(tmp_path):
    db = record(tmp_path, os.path.join(SAMPLES, "hostsync"))
    r = run([GPUPROF, "advise", db], cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].startswith("1. [sync-per-launch] pid ")
    assert any(line.startswith("   change: launch the loop's kernels back to back")
               for line in lines)
    r = run([GPUPROF, "summary", "--format", "json", db], cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    table = {t["name"]: t for t in json.loads(r.stdout)}["findings"]
    assert sorted(row[2] for row in table["rows"]) == ["device-idle", "sync-per-launch"]
    r = run([GPUPROF, "advise", "--list-rules"], cwd=tmp_path)
    assert [line.split()[0] for line in r.stdout.splitlines()] == [
        "device-idle", "sync-per-launch", "launch-bound", "small-copies", "pageable-copies",
        "copy-kernel-serial", "one-queue", "latency-bound"]
    (tmp_path / "text.db").write_text("not a database")
    for args, status, message in [
            ([], 2, "advise: no database given"),
            ([str(tmp_path / "missing.db")], 1, "cannot open"),
            ([str(tmp_path / "text.db")], 1, "text.db"),
            (["--format", "xml", db], 2, "xml")]:
        r = run([GPUPROF, "advise", *args], cwd=tmp_path)
        assert r.returncode == status and message in r.stderr, (args, r.stderr)
        assert r.stderr.count("\n") == 1 and r.stdout == "", (args, r.stderr)


def test_latency_bound_from_speed_of_light_counters(tmp_path):
    """Kernels with the speed-of-light counters (as gpuprof trace --pmc records them),
    written here: vecCopy's 4 dispatches of 40 us at SM 20/30/20/30 % and memory
    50/50/40/40 %: both under 60 %, the busiest (memory, 45 % on average) costs
    160 us x 0.55; at 70 % memory on one dispatch the average (52.5 %) still fires, and
    at 90 % on every dispatch nothing does."""
    spool = tmp_path / "4242.spool"
    assert run([os.path.join(TESTS, "cuda-spool"), str(spool)], cwd=tmp_path).returncode == 0
    assert run([GPUPROF, "convert", "-f", "sqlite", str(spool)], cwd=tmp_path).returncode == 0
    db = str(tmp_path / "4242_results.db")

    def counters(memory):
        with sqlite3.connect(db) as c:
            c.execute("DELETE FROM gpuprof_counter")
            ids = []
            for name in ("sm__throughput.avg.pct_of_peak_sustained_elapsed",
                         "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed"):
                ids.append(c.execute("INSERT INTO gpuprof_string (string) VALUES (?)",
                                     (name,)).lastrowid)
            for corr, sm, mem in zip((4, 5, 6, 7), (20, 30, 20, 30), memory):
                for name_id, value in zip(ids, (sm, mem)):
                    c.execute("INSERT INTO gpuprof_counter (process_id, correlation_id, "
                              "agent_index, name_id, value) VALUES (1, ?, 1, ?, ?)",
                              (corr, name_id, value))
        return findings(tmp_path, db)

    found = counters((50, 50, 40, 40))
    assert found["latency-bound"]["Cost_ns"] == int(160000 * (1 - 0.45))
    assert found["latency-bound"]["Finding"].startswith(
        "kernel vecCopy(float const*, float*, unsigned int) (160.000 us) reaches 25.0 % of "
        "the SMs' peak and 45.0 % of memory's")
    assert counters((70, 50, 50, 40))["latency-bound"]["Cost_ns"] == int(160000 * 0.475)
    assert "latency-bound" not in counters((90, 90, 90, 90))
