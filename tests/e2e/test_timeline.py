"""The timeline formats on real OpenCL programs: the same kernels, copies and API calls in
CSV, JSON, pftrace and SQLite; the pftrace decoded (tracks, slices, flows, counters,
interning); both formats identical whether written from the spool or the database;
overlapping slices moved to overlap tracks."""
import collections
import json
import os
import shutil
import sqlite3

import pytest

from conftest import GPUPROF, SAMPLES, outputs, run, trace
from pftrace import Trace

ITERATIONS = 4
KERNELS = 2 * 3 * ITERATIONS          # two threads, three kernels per round
COPIES = 2 * (4 * ITERATIONS + 2)     # write, fill, copy, read per round; a map and an unmap


@pytest.fixture(scope="module")
def busy_run(tmp_path_factory):
    """busy traced once with every format (its device work and calls: not its
    allocations, whose timeline is test_memory.py's)."""
    tmp = tmp_path_factory.mktemp("busy")
    busy = os.path.join(SAMPLES, "busy")
    r = trace(tmp, ["-r", "--memory-allocation-trace=false", "-f", "csv", "sqlite", "json",
                    "pftrace", "--keep-spool"],
              [busy, "-n", "4096", "-i", str(ITERATIONS)])
    assert r.returncode == 0, r.stderr
    found = outputs(tmp)
    assert len(found) == 1
    return tmp, found[0]


def json_events(out):
    with open(out.path("results.json")) as f:
        return json.load(f)


def test_same_counts_in_every_format(busy_run):
    _, out = busy_run
    csv_counts = {"KERNEL_DISPATCH": len(out.csv("kernel_trace.csv")),
                  "MEMORY_COPY": len(out.csv("memory_copy_trace.csv")),
                  "OPENCL_API": len(out.csv("opencl_api_trace.csv"))}
    assert csv_counts["KERNEL_DISPATCH"] == KERNELS
    assert csv_counts["MEMORY_COPY"] == COPIES
    db_counts = {"KERNEL_DISPATCH": out.query("SELECT COUNT(*) AS n FROM kernels")[0]["n"],
                 "MEMORY_COPY": out.query("SELECT COUNT(*) AS n FROM memory_copies")[0]["n"],
                 "OPENCL_API": out.query("SELECT COUNT(*) AS n FROM regions")[0]["n"]}
    doc = json_events(out)
    json_counts = collections.Counter(e["cat"] for e in doc["traceEvents"] if e["ph"] == "X")
    pf = Trace(out.path("results.pftrace"))
    pf_counts = collections.Counter(s["category"] for s in pf.slices)
    assert db_counts == csv_counts
    assert dict(json_counts) == csv_counts
    assert dict(pf_counts) == csv_counts


def test_pftrace_tracks_slices_and_flows(busy_run):
    _, out = busy_run
    pf = Trace(out.path("results.pftrace"))
    api = out.csv("opencl_api_trace.csv")
    kernels = out.csv("kernel_trace.csv")
    copies = out.csv("memory_copy_trace.csv")

    processes = pf.tracks_of("process")
    assert [t["pid"] for t in processes.values()] == [out.pid]
    process_uuid = next(iter(processes))
    threads = pf.tracks_of("thread")
    assert sorted(t["tid"] for t in threads.values()) == sorted({int(r["Thread_Id"]) for r in api})
    assert all(t["pid"] == out.pid for t in threads.values())

    # API calls: on their thread's track, at their exact times; those that enqueued device
    # work are the source of its flow, the others start none (a flow never has one end)
    by_corr = {int(r["Correlation_Id"]): r for r in api}
    enqueued = {int(r["Correlation_Id"]) for r in kernels + copies}
    assert len(enqueued) == KERNELS + COPIES and 0 not in enqueued
    api_slices = [s for s in pf.slices if s["category"] == "OPENCL_API"]
    flow_sources = {}
    for s in api_slices:
        row = by_corr[s["args"]["correlation_id"]]
        assert s["name"] == row["Function"]
        assert threads[s["track"]]["tid"] == int(row["Thread_Id"])
        assert (s["start"], s["end"]) == (int(row["Start_Timestamp"]), int(row["End_Timestamp"]))
        assert not s["terminating"]
        if s["args"]["correlation_id"] in enqueued:
            assert len(s["flows"]) == 1
            flow_sources[s["flows"][0]] = s
        else:
            assert s["flows"] == [], s["name"]
    assert len(flow_sources) == KERNELS + COPIES < len(api)

    # device work: on a queue track beneath the process, ending the flow of its API call
    queues = {}
    for s in pf.slices:
        if s["category"] == "OPENCL_API":
            continue
        track = pf.tracks[s["track"]]
        assert track["kind"] == "track" and track["parent"] == process_uuid
        assert s["flows"] == [] and len(s["terminating"]) == 1
        source = flow_sources[s["terminating"][0]]
        assert source["args"]["correlation_id"] == s["args"]["correlation_id"]
        assert source["start"] <= s["start"]
        base = track["name"].split(" (overlap")[0]
        queues.setdefault(s["args"]["queue"], set()).add(base)
        enqueuer = by_corr[s["args"]["correlation_id"]]["Function"]
        if s["category"] == "KERNEL_DISPATCH":
            assert enqueuer == "clEnqueueNDRangeKernel"
        else:
            assert enqueuer.startswith("clEnqueue")
    assert sorted(queues) == sorted({int(r["Queue_Id"]) for r in kernels})
    assert all(len(names) == 1 for names in queues.values())  # one track per queue

    # the slices carry the CSV's figures
    kernel_rows = {int(r["Correlation_Id"]): r for r in kernels}
    for s in (s for s in pf.slices if s["category"] == "KERNEL_DISPATCH"):
        row = kernel_rows[s["args"]["correlation_id"]]
        assert s["name"] == row["Kernel_Name"]
        assert s["args"]["grid_x"] == int(row["Grid_Size_X"])
        # a size the runtime chose (no local size given) is unknown: in neither
        assert s["args"].get("workgroup_x") == (int(row["Workgroup_Size_X"])
                                                if row["Workgroup_Size_X"] else None)
        assert (s["start"], s["end"]) == (int(row["Start_Timestamp"]), int(row["End_Timestamp"]))
    copy_rows = {int(r["Correlation_Id"]): r for r in copies}
    for s in (s for s in pf.slices if s["category"] == "MEMORY_COPY"):
        row = copy_rows[s["args"]["correlation_id"]]
        assert s["args"]["bytes"] == int(row["Bytes"])
        assert s["args"]["function"] == row["Function"]

    # the bytes being copied: up at each copy's start, down at its end, back to zero
    counters = pf.tracks_of("counter")
    assert [t["name"].endswith("bytes being copied") for t in counters.values()] == [True]
    assert [t["unit"] for t in counters.values()] == [3]  # UNIT_SIZE_BYTES
    values = [v for _, _, v in sorted(pf.counters, key=lambda c: c[1])]
    moved = [int(r["Bytes"]) for r in copies if int(r["Bytes"])]
    assert len(values) == 2 * len(moved)
    assert min(values) >= 0 and values[-1] == 0
    assert max(values) >= max(moved)

    # stamped with the layout's version
    assert [(i["name"], i["args"]["format_version"]) for i in pf.instants] == [("gpuprof", "1.0")]


def test_json_tracks_and_flows(busy_run):
    _, out = busy_run
    doc = json_events(out)
    assert doc["otherData"]["format_version"] == "1.0"
    events = doc["traceEvents"]
    api = out.csv("opencl_api_trace.csv")
    device = [e for e in events if e["ph"] == "X" and e["cat"] != "OPENCL_API"]
    starts = [e for e in events if e["ph"] == "s"]
    finishes = [e for e in events if e["ph"] == "f"]
    assert len(starts) == len(finishes) == len(device) == KERNELS + COPIES < len(api)
    assert all(f["bp"] == "e" for f in finishes)
    assert {f["id"] for f in finishes} == {s["id"] for s in starts}
    names = {(e["pid"], e["tid"]): e["args"]["name"] for e in events
             if e["ph"] == "M" and e["name"] == "thread_name"}
    for e in device:  # every device track is named
        assert (e["pid"], e["tid"]) in names
        assert ", queue " in names[(e["pid"], e["tid"])]
    for row in api:
        assert (out.pid, int(row["Thread_Id"])) in names
    counters = [e for e in events if e["ph"] == "C"]
    assert len(counters) == 2 * sum(1 for r in out.csv("memory_copy_trace.csv") if int(r["Bytes"]))


def test_database_gives_identical_timelines(busy_run, tmp_path):
    """convert from the database writes the same bytes as trace wrote from the spool."""
    _, out = busy_run
    r = run([GPUPROF, "convert", "-f", "json", "pftrace", "-d", str(tmp_path),
             out.path("results.db")], cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert sorted(os.listdir(tmp_path)) == [f"{out.pid}_results.json", f"{out.pid}_results.pftrace"]
    for name in ("results.json", "results.pftrace"):
        with open(out.path(name), "rb") as a, open(tmp_path / f"{out.pid}_{name}", "rb") as b:
            assert a.read() == b.read(), name


def database_copy(out, tmp_path, name):
    """A copy of the run's database to edit: its path and a connection to it."""
    db = str(tmp_path / f"{name}.db")
    shutil.copy(out.path("results.db"), db)
    return db, sqlite3.connect(db)


def test_overlapping_kernels_get_an_overlap_track(busy_run, tmp_path):
    _, out = busy_run
    db, con = database_copy(out, tmp_path, "overlap")
    last = con.execute("SELECT id, start, end FROM gpuprof_kernel "
                       "ORDER BY start DESC LIMIT 1").fetchone()
    _, start, end = last
    # a kernel on the same queue that begins inside the last one and ends after it (stored
    # last: rows are in start order)
    con.execute("INSERT INTO gpuprof_kernel (process_id, tid, agent_index, queue_index, "
                "name_id, correlation_id, start, end, grid_x, grid_y, grid_z, workgroup_x, "
                "workgroup_y, workgroup_z) SELECT process_id, tid, agent_index, "
                "queue_index, name_id, 0, ?, ?, 1, 1, 1, 1, 1, 1 FROM gpuprof_kernel "
                "WHERE id = ?", ((start + end) // 2, end + 10, last[0]))
    con.commit()
    con.close()
    r = run([GPUPROF, "convert", "-f", "pftrace", "json", "-d", str(tmp_path), db], cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    pf = Trace(str(tmp_path / "overlap_results.pftrace"))
    overlap = [u for u, t in pf.tracks.items() if t["name"] and t["name"].endswith("(overlap 1)")]
    assert len(overlap) == 1
    moved = [s for s in pf.slices if s["track"] == overlap[0]]
    assert [(s["start"], s["end"]) for s in moved] == [((start + end) // 2, end + 10)]
    assert sum(1 for s in pf.slices if s["category"] == "KERNEL_DISPATCH") == KERNELS + 1
    with open(tmp_path / "overlap_results.json") as f:
        events = json.load(f)["traceEvents"]
    names = {(e["pid"], e["tid"]): e["args"]["name"] for e in events
             if e["ph"] == "M" and e["name"] == "thread_name"}
    moved = [e for e in events if e["ph"] == "X" and names[(e["pid"], e["tid"])].endswith("(overlap 1)")]
    assert len(moved) == 1 and moved[0]["ts"] * 1000 == pytest.approx((start + end) // 2, abs=1)


def test_rows_out_of_time_order_are_refused(busy_run, tmp_path):
    _, out = busy_run
    db, con = database_copy(out, tmp_path, "unordered")
    con.execute("UPDATE gpuprof_kernel SET start = 1, end = 2 WHERE id = "
                "(SELECT MAX(id) FROM gpuprof_kernel)")
    con.commit()
    con.close()
    r = run([GPUPROF, "convert", "-f", "pftrace", "-d", str(tmp_path), db], cwd=tmp_path)
    assert r.returncode == 1
    assert "events out of time order (one starting at 1 after one starting at" in r.stderr
    assert not os.path.exists(tmp_path / "unordered_results.pftrace")


def test_a_flow_never_has_one_end(tmp_path):
    """Kernels and copies traced without their API calls carry no flow: the call that
    would start it is not in the output (item 19 of issue 13)."""
    r = trace(tmp_path, ["--kernel-trace", "--memory-copy-trace", "-f", "csv", "json", "pftrace"],
              [os.path.join(SAMPLES, "busy"), "-n", "4096", "-i", str(ITERATIONS)])
    assert r.returncode == 0, r.stderr
    out = outputs(tmp_path)[0]
    events = json_events(out)["traceEvents"]
    assert sum(1 for e in events if e["ph"] == "X") == KERNELS + COPIES
    assert [e for e in events if e["ph"] in ("s", "f")] == []
    pf = Trace(out.path("results.pftrace"))
    assert len(pf.slices) == KERNELS + COPIES
    assert [s for s in pf.slices if s["flows"] or s["terminating"]] == []


def test_an_overlap_lane_of_a_thread_sits_under_the_thread(busy_run, tmp_path):
    _, out = busy_run
    db, con = database_copy(out, tmp_path, "calls")
    last = con.execute("SELECT id, tid, start, end FROM gpuprof_api_call "
                       "ORDER BY start DESC LIMIT 1").fetchone()
    _, tid, start, end = last
    # a call on the same thread that begins inside the last one and ends after it
    con.execute("INSERT INTO gpuprof_api_call (process_id, domain, function_id, tid, start, "
                "end, correlation_id, result) SELECT process_id, domain, function_id, tid, "
                "?, ?, 0, 0 FROM gpuprof_api_call WHERE id = ?",
                ((start + end) // 2, end + 10, last[0]))
    con.commit()
    con.close()
    r = run([GPUPROF, "convert", "-f", "pftrace", "-d", str(tmp_path), db], cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    pf = Trace(str(tmp_path / "calls_results.pftrace"))
    thread = [u for u, t in pf.tracks_of("thread").items() if t["tid"] == tid]
    assert len(thread) == 1
    overlap = [(u, t) for u, t in pf.tracks.items() if t["name"] and "(overlap" in t["name"]]
    assert [(t["name"], t["parent"]) for _, t in overlap] == [(f"thread {tid} (overlap 1)", thread[0])]
    assert [(s["start"], s["end"]) for s in pf.slices if s["track"] == overlap[0][0]] == \
        [((start + end) // 2, end + 10)]
