"""gpuprof advise. The rules of time fire on recordings with the exact times their premise
needs (make-recording), with the costs computed here by hand, at their thresholds and
not on the fixed versions; on the real programs made for them (PoCL), whatever fires
costs what the recorded rows give, and the rule of counts (a wait after every launch)
fires; the rules of CUDA records and counters; the findings section of gpuprof summary;
bad input."""
import json
import os
import sqlite3

import pytest

from conftest import GPUPROF, SAMPLES, TESTS, advise_findings, recording, run


def record(tmp_path, program, *args):
    """Runs a program under gpuprof trace --runtime-trace; returns its database."""
    out = tmp_path / "_".join([os.path.basename(program), *[a.strip("-") for a in args]])
    r = run([GPUPROF, "trace", "--runtime-trace", "-d", str(out), "-o", "run", "-f", "sqlite",
             "--", program, *args], cwd=tmp_path, timeout=300)
    assert r.returncode == 0, r.stderr
    return str(out / "run_results.db")


findings = advise_findings


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


US = 1000
HEAD = ["process pid=4242 command=app", "agent id=0 type=cpu name=Host",
        'agent id=1 name="Test GPU"', "queue id=1 agent=1"]


def loop(iterations, period, kernel, enqueue=10 * US, wait=None, copies=None):
    """The lines of a launch loop with exact times: every `period` ns the host enqueues a
    kernel (an API call of `enqueue` ns) that runs `kernel` ns from 10 us after the call
    began; with `wait` the host then waits (clFinish) until that many ns after the
    kernel's end; with `copies` (bytes) each kernel is fed by a write before it and
    drained by a read after it, 20 us each, on the same queue. Ends with one clFinish."""
    lines, t = list(HEAD), 1_000_000
    for _ in range(iterations):
        k = t + 10 * US
        if copies:
            lines += [f"api name=clEnqueueWriteBuffer start={t} end={t + 5 * US}",
                      f"copy start={t + 5 * US} end={t + 25 * US} bytes={copies} direction=h2d"]
            k = t + 30 * US
        lines += [f"api name=clEnqueueNDRangeKernel start={k - 10 * US} end={k - 10 * US + enqueue}",
                  f"kernel name=work start={k} end={k + kernel}"]
        end = k + kernel
        if copies:
            lines += [f"api name=clEnqueueReadBuffer start={end} end={end + 5 * US}",
                      f"copy start={end + 5 * US} end={end + 25 * US} bytes={copies} "
                      "direction=d2h function=clEnqueueReadBuffer"]
            end += 25 * US
        if wait is not None:
            lines.append(f"api name=clFinish start={k - 10 * US + enqueue} end={end + wait}")
        t += period
    lines += [f"api name=clFinish start={t} end={t + 1000 * US}", f"end time={t + 2000 * US}"]
    return lines


def advise_recording(tmp_path, name, lines):
    return findings(tmp_path, recording(tmp_path / name, lines))


def test_sync_per_launch_and_device_idle_with_exact_times(tmp_path):
    """200 launches, each waited for: the kernel runs 50 us, the wait ends 10 us after it,
    the next launch comes 120 us after the last and its call returns as its kernel starts,
    so the device idles 70 us between kernels, all of it before the next work was
    enqueued."""
    found = advise_recording(tmp_path, "sync", loop(200, 120 * US, 50 * US, wait=10 * US))
    assert set(found) == {"sync-per-launch", "device-idle"}, found
    assert found["sync-per-launch"]["Cost_ns"] == 199 * 70 * US
    assert found["sync-per-launch"]["Finding"].startswith(
        "thread 4242 waited for the device after 200 of its 200 launches")
    assert "launches: clEnqueueNDRangeKernel (kernel work, 200 run)" in \
        found["sync-per-launch"]["Evidence"]
    assert found["device-idle"]["Cost_ns"] == 199 * 70 * US
    window = 199 * 120 * US + 50 * US
    assert found["device-idle"]["Finding"] == (
        f"GPU 1 (Test GPU) was idle 13.930 ms between its first and last kernel, "
        f"{100 * 199 * 70 * US / window:.1f} % of that time, in 199 gaps; for 13.930 ms of "
        "it the host had not yet enqueued the next work")
    assert "was in clFinish" in found["device-idle"]["Evidence"]
    # the same work back to back, one wait at the end: nothing
    assert advise_recording(tmp_path, "fixed", loop(200, 50 * US, 50 * US)) == {}


def test_device_idle_at_its_threshold(tmp_path):
    """100 kernels of 290 us, one every 400 us; each is enqueued `starved` us after the
    last ended. The host's share of the kernels' window, 99 starved / (99 * 400 + 290),
    passes 25 % between 100 us (24.8 %) and 101 us (25.1 %)."""
    for starved, fires in ((100, False), (101, True)):
        assert (99 * starved / (99 * 400 + 290) >= 0.25) == fires
        lines, t = list(HEAD), 1_000_000
        for i in range(100):
            enqueued = t - (110 - starved) * US if i else t
            lines += [f"api name=clEnqueueNDRangeKernel start={enqueued - 2 * US} end={enqueued}",
                      f"kernel name=work start={t} end={t + 290 * US}"]
            t += 400 * US
        lines += [f"api name=clFinish start={t} end={t + 10 * US}", f"end time={t + 20 * US}"]
        found = advise_recording(tmp_path, f"idle{starved}", lines)
        assert set(found) == ({"device-idle"} if fires else set()), (starved, found)
        if fires:
            assert found["device-idle"]["Cost_ns"] == 99 * 110 * US


def test_launch_bound_with_exact_times(tmp_path):
    """2000 kernels of 5 us, one launch every 20 us, one wait at the end: launch-bound
    costs the 15 us before each of the 1999 unwaited kernels but the first; device-idle
    the 1999 gaps of 15 us."""
    found = advise_recording(tmp_path, "launch", loop(2000, 20 * US, 5 * US, enqueue=2 * US))
    assert set(found) == {"launch-bound", "device-idle"}, found
    assert found["launch-bound"]["Cost_ns"] == 1998 * 15 * US
    assert found["launch-bound"]["Finding"].startswith(
        "1999 kernels on GPU 1 (Test GPU) ran 5.000 us each (median) after the device had "
        "idled 15.000 us for them: it was busy 25.0 % of the time")
    assert found["device-idle"]["Cost_ns"] == 1999 * 15 * US
    # 2000 kernels of 15 us every 20 us: busy 75 % of the time, nothing
    assert advise_recording(tmp_path, "busy", loop(2000, 20 * US, 15 * US, enqueue=2 * US)) == {}


def test_small_copies_and_copy_kernel_serial_with_exact_times(tmp_path):
    """300 rounds of a 16 KiB write, a 40 us kernel and a 16 KiB read, one after another on
    one queue, launched back to back: small-copies costs the 600 copies' 12 ms,
    copy-kernel-serial the smaller of copies and kernels (12 ms against 12 ms)."""
    found = advise_recording(tmp_path, "copies", loop(300, 90 * US, 40 * US, copies=16384))
    assert set(found) == {"small-copies", "copy-kernel-serial"}, found
    assert found["small-copies"]["Cost_ns"] == 600 * 20 * US
    assert found["copy-kernel-serial"]["Cost_ns"] == min(600 * 20 * US, 300 * 40 * US)
    assert found["small-copies"]["Finding"].startswith("600 copies of less than 64 KiB")
    # the same with 1 MiB copies: not small, still serial
    found = advise_recording(tmp_path, "big", loop(300, 90 * US, 40 * US, copies=1 << 20))
    assert set(found) == {"copy-kernel-serial"}, found


def test_one_queue_with_exact_times(tmp_path):
    """Two threads launch on one queue, 30 kernels of 100 us and 20 of 50 us, one after
    another: one-queue costs the work of the thread with less (1 ms)."""
    lines, t = list(HEAD), 1_000_000
    for i in range(50):
        tid, d = (4242, 100 * US) if i % 5 < 3 else (4243, 50 * US)
        lines += [f"api name=clEnqueueNDRangeKernel tid={tid} start={t} end={t + US}",
                  f"kernel name=work{tid} tid={tid} start={t + 2 * US} end={t + 2 * US + d}"]
        t += 2 * US + d
    lines += [f"api name=clFinish start={t} end={t + 10 * US}", f"end time={t + 20 * US}"]
    found = advise_recording(tmp_path, "shared", lines)
    assert set(found) == {"one-queue"}, found
    assert found["one-queue"]["Cost_ns"] == 20 * 50 * US


def rule_costs(db):
    """What each rule that can fire on an OpenCL run costs, computed here from the rows:
    a finding's cost must be its rows' own arithmetic, however fast the run was."""
    rows = activities(db)
    busy = busy_intervals(rows)
    kernels = [r for r in rows if r[2] == "kernel"]
    copies = [r for r in rows if r[2] == "copy"]
    after_kernels = sum(nxt[0] - cur[1] for cur, nxt in zip(busy, busy[1:])
                        if any(r[2] == "kernel" and r[1] == cur[1] for r in rows))
    starts = {b[0]: i for i, b in enumerate(busy)}
    # launch-bound: the last kernel is the one clFinish waited for
    launch = sum(k[0] - busy[starts[k[0]] - 1][1] for k in kernels[:-1][1:]
                 if k[0] in starts and starts[k[0]] > 0)
    copy_ns = sum(r[1] - r[0] for r in copies)
    kernel_ns = sum(r[1] - r[0] for r in kernels)
    with sqlite3.connect(db) as c:
        per_thread = [ns for (ns,) in c.execute(
            "SELECT SUM(end - start) FROM gpuprof_kernel GROUP BY tid")]
    return {"sync-per-launch": after_kernels, "device-idle": idle_between_kernels(rows),
            "launch-bound": launch, "small-copies": copy_ns,
            "copy-kernel-serial": min(copy_ns, kernel_ns), "one-queue": min(per_thread)}


def check_costs(found, db):
    costs = rule_costs(db)
    for rule, row in found.items():
        assert row["Cost_ns"] == costs[rule], (rule, row, costs[rule])


def test_real_programs(tmp_path):
    """The samples made for the rules, on PoCL: what is exact there. sync-per-launch
    fires on hostsync (every launch waited for: a count), not on --fixed; every finding's
    cost is its rows' arithmetic. Whether a rule of time fires depends on how fast a
    shared CPU ran the kernels: the tests above give those premises exact times."""
    db = record(tmp_path, os.path.join(SAMPLES, "hostsync"))
    found = findings(tmp_path, db)
    assert "sync-per-launch" in found, found
    assert "waited for the device after 200 of its 200 launches" in \
        found["sync-per-launch"]["Finding"]
    check_costs(found, db)
    db = record(tmp_path, os.path.join(SAMPLES, "hostsync"), "--fixed")
    found = findings(tmp_path, db)
    assert "sync-per-launch" not in found, found
    check_costs(found, db)
    for program, kernels, copies in ((os.path.join(SAMPLES, "launchbound"), 2000, None),
                                     (os.path.join(SAMPLES, "copies"), 300, 600),
                                     (os.path.join(TESTS, "shared-queue"), None, None)):
        db = record(tmp_path, program)
        rows = activities(db)
        if kernels:
            assert len([r for r in rows if r[2] == "kernel"]) == kernels
        if copies is not None:
            assert [r[3] for r in rows if r[2] == "copy"] == [16384] * copies
        check_costs(findings(tmp_path, db), db)


def test_idle_gaps_name_the_sampled_functions(tmp_path):
    """Under gpuprof sys (wall-clock sampling), device-idle's evidence names the functions
    the threads were sampled in during the gaps, counted here from the samples view. The
    premise, a device idle for most of the run, is written into the real recording: each
    kernel is made to run 1 us from the moment its launch returned."""
    out = tmp_path / "sys"
    r = run([GPUPROF, "sys", "--sampling-realtime", "--sampling-freq", "1000", "-d", str(out),
             "-o", "run", "-f", "sqlite", "--", os.path.join(SAMPLES, "hostsync")],
            cwd=tmp_path, timeout=300)
    assert r.returncode == 0, r.stderr
    db = str(out / "run_results.db")
    with sqlite3.connect(db) as c:
        c.execute("UPDATE gpuprof_kernel SET start = (SELECT a.end FROM gpuprof_api_call a "
                  "WHERE a.correlation_id = gpuprof_kernel.correlation_id AND "
                  "a.process_id = gpuprof_kernel.process_id)")
        c.execute("UPDATE gpuprof_kernel SET end = start + 1000")
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


@pytest.mark.skipif(not os.path.exists(os.path.join(TESTS, "cuda-spool")),
                    reason="built without the CUDA toolkit (tests/e2e/cuda-spool.c needs its headers)")
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
    db = recording(tmp_path / "sync", loop(200, 120 * US, 50 * US, wait=10 * US))
    r = run([GPUPROF, "advise", db], cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert [line.split(",")[0] for line in lines if line[:1].isdigit()] == [
        "1. [device-idle] pid 4242", "2. [sync-per-launch] pid 4242"]
    assert any(line.startswith("   change: launch the loop's kernels back to back")
               for line in lines)
    r = run([GPUPROF, "summary", "--format", "json", db], cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    table = {t["name"]: t for t in json.loads(r.stdout)}["findings"]
    assert sorted(row[2] for row in table["rows"]) == ["device-idle", "sync-per-launch"]
    r = run([GPUPROF, "advise", "--list-rules"], cwd=tmp_path)
    assert [line.split()[0] for line in r.stdout.splitlines()] == [
        "device-idle", "sync-per-launch", "launch-bound", "small-copies", "pageable-copies",
        "copy-kernel-serial", "one-queue", "latency-bound", "exposed-communication",
        "memory-churn", "memory-leak", "memory-peak-site", "mpi-imbalance"]
    (tmp_path / "text.db").write_text("not a database")
    for args, status, message in [
            ([], 2, "advise: no database given"),
            ([str(tmp_path / "missing.db")], 1, "cannot open"),
            ([str(tmp_path / "text.db")], 1, "text.db"),
            (["--format", "xml", db], 2, "xml")]:
        r = run([GPUPROF, "advise", *args], cwd=tmp_path)
        assert r.returncode == status and message in r.stderr, (args, r.stderr)
        assert r.stderr.count("\n") == 1 and r.stdout == "", (args, r.stderr)


@pytest.mark.skipif(not os.path.exists(os.path.join(TESTS, "cuda-spool")),
                    reason="built without the CUDA toolkit (tests/e2e/cuda-spool.c needs its headers)")
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
