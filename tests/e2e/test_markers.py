"""Markers: the gpuprof marker API, the ROCTX library found by name, and Python through
ctypes; their rows in every format; kernels attributed to and renamed after ranges; and
collection control (--selected-regions, pause/resume, --collection-period)."""
import csv
import json
import os
import re
import sqlite3
import sys

import pytest

from conftest import GPUPROF, TESTS, outputs, run, trace
from pftrace import Trace

MARKERS = os.path.join(TESTS, "markers")
HEADER = ["Domain", "Function", "Process_Id", "Thread_Id", "Correlation_Id",
          "Start_Timestamp", "End_Timestamp", "Marker_Domain", "Module_Path"]
NEST_OUTPUT = ("push outer: 0\npush inner: 1\npop: 1\npop: 0\npop: -1\n"
               "start crossing: nonzero\nworker push work: 0\nworker pop: 0\n")


def one_output(directory):
    found = outputs(str(directory))
    assert len(found) == 1, found
    return found[0]


def test_ranges_nest_marks_are_instants_and_start_stop_crosses_threads(tmp_path):
    r = trace(tmp_path, ["--marker-trace", "--stats", "-f", "csv", "sqlite", "json", "pftrace"],
              [MARKERS, "nest"])
    assert r.returncode == 0, r.stderr
    assert r.stdout == NEST_OUTPUT  # ROCTX's return values, with a profiler present
    assert ", 5 markers" in r.stderr
    out = one_output(tmp_path)
    assert out.csv_header("marker_api_trace.csv") == HEADER
    rows = out.csv("marker_api_trace.csv")
    assert [(x["Domain"], x["Function"]) for x in rows] == [
        ("MARKER_CORE_API", "outer"), ("MARKER_CORE_API", "inner"), ("MARKER_CORE_API", "tick"),
        ("MARKER_CORE_RANGE_API", "crossing"), ("MARKER_CORE_API", "work")]
    by = {x["Function"]: {k: int(v) for k, v in x.items() if k in HEADER[2:7]}
          for x in rows}
    main_tid = by["outer"]["Thread_Id"]
    assert main_tid == out.pid and by["work"]["Thread_Id"] != main_tid
    assert by["tick"]["Start_Timestamp"] == by["tick"]["End_Timestamp"]
    for inner, outer in (("inner", "outer"), ("tick", "inner")):
        assert by[outer]["Start_Timestamp"] <= by[inner]["Start_Timestamp"]
        assert by[inner]["End_Timestamp"] <= by[outer]["End_Timestamp"]
    # the worker stops "crossing" while its own "work" is open: they overlap, not nest
    assert by["crossing"]["Start_Timestamp"] < by["work"]["Start_Timestamp"]
    assert by["crossing"]["End_Timestamp"] < by["work"]["End_Timestamp"]
    assert by["inner"]["End_Timestamp"] <= by["outer"]["End_Timestamp"] < by["crossing"]["Start_Timestamp"]

    db = {m["name"]: m for m in out.query("SELECT * FROM markers")}
    assert db["inner"]["parent_id"] == db["outer"]["range_id"]
    assert db["tick"]["parent_id"] == db["inner"]["range_id"] and db["tick"]["kind"] == "MARK"
    assert db["outer"]["parent_id"] == 0 and db["work"]["parent_id"] == 0
    assert db["crossing"]["kind"] == "START_STOP"
    assert (db["crossing"]["tid"], db["crossing"]["end_tid"]) == (main_tid, by["work"]["Thread_Id"])
    assert all(m["ended"] == 1 for m in db.values())
    assert out.query("SELECT tid, name FROM threads WHERE name IS NOT NULL") == [
        {"tid": by["work"]["Thread_Id"], "name": "worker"}]
    # 19: the name reaches the Perfetto thread track, as it reaches JSON's
    worker = by["work"]["Thread_Id"]
    threads = {t["tid"]: t["name"] for t in Trace(out.path("results.pftrace")).tracks_of("thread").values()}
    assert threads == {main_tid: f"thread {main_tid}", worker: f"worker (thread {worker})"}

    stats = out.csv("marker_api_stats.csv")  # ranges only: the mark is an instant
    assert sorted((x["Name"], x["Calls"]) for x in stats) == [
        ("crossing", "1"), ("inner", "1"), ("outer", "1"), ("work", "1")]
    # 44: nested ranges with their self time: "outer" less "inner", the others whole
    # ("crossing" overlaps "work" on no one thread: nobody's parent); the percentages,
    # of the self time, add up to 100; the domain total counts each moment once
    span = {n: int(by[n]["End_Timestamp"]) - int(by[n]["Start_Timestamp"]) for n in by}
    self_ns = {x["Name"]: int(x["SelfDurationNs"]) for x in stats}
    assert self_ns == {"outer": span["outer"] - span["inner"], "inner": span["inner"],
                       "crossing": span["crossing"], "work": span["work"]}
    assert abs(sum(float(x["Percentage"]) for x in stats) - 100) < 0.02
    domain = {x["Name"]: x for x in out.csv("domain_stats.csv")}["MARKER_API"]
    assert int(domain["TotalDurationNs"]) == sum(self_ns.values())

    with open(out.path("results.json")) as f:
        events = json.load(f)["traceEvents"]
    slices = {e["name"]: e for e in events if e.get("ph") == "X" and e["cat"].startswith("MARKER")}
    assert sorted(slices) == ["crossing", "inner", "outer", "tick", "work"]
    assert slices["tick"]["dur"] == 0
    assert slices["work"]["tid"] == by["work"]["Thread_Id"]
    names = {e["tid"]: e["args"]["name"] for e in events if e.get("name") == "thread_name"}
    assert names[by["work"]["Thread_Id"]] == f"worker (thread {by['work']['Thread_Id']})"

    # the database gives the same timelines, byte for byte
    again = tmp_path / "again"
    r = run([GPUPROF, "convert", "-f", "json", "pftrace", "-d", str(again), out.path("results.db")],
            cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    for name in ("results.json", "results.pftrace"):
        with open(out.path(name), "rb") as a, open(again / f"{out.pid}_{name}", "rb") as b:
            assert a.read() == b.read(), name

    pf = Trace(out.path("results.pftrace"))
    threads = pf.tracks_of("thread")
    marker_slices = [s for s in pf.slices if s["category"].startswith("MARKER")]
    assert sorted(s["name"] for s in marker_slices) == ["crossing", "inner", "outer", "tick", "work"]
    for s in marker_slices:
        assert threads[s["track"]]["tid"] == by[s["name"]]["Thread_Id"]
        assert (s["start"], s["end"]) == (by[s["name"]]["Start_Timestamp"], by[s["name"]]["End_Timestamp"])
        assert s["args"]["range_id"] == by[s["name"]]["Correlation_Id"]


def test_without_a_profiler_markers_cost_nothing_and_return_the_same(tmp_path):
    r = run([MARKERS, "nest"], cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout == NEST_OUTPUT
    assert os.listdir(tmp_path) == []


def test_markers_are_not_recorded_unless_asked(tmp_path):
    r = trace(tmp_path, ["--kernel-trace"], [MARKERS, "nest"])
    assert r.returncode == 0, r.stderr
    assert r.stdout == NEST_OUTPUT
    for out in outputs(str(tmp_path)):
        assert not out.exists("marker_api_trace.csv")
        assert out.query("SELECT COUNT(*) AS n FROM markers") == [{"n": 0}]


def kernels_run(tmp_path, options):
    r = trace(tmp_path, ["--kernel-trace", *options], [MARKERS, "kernels"])
    assert r.returncode == 0, r.stderr
    return one_output(tmp_path)


def test_kernels_are_attributed_to_their_innermost_range(tmp_path):
    out = kernels_run(tmp_path, ["--marker-trace"])
    rows = out.query("SELECT name, range_name FROM kernels ORDER BY dispatch_id")
    assert rows == [{"name": "scale", "range_name": n} for n in (None, "step", "step", "inner", None)]
    kernels = out.csv("kernel_trace.csv")
    assert [k["Kernel_Name"] for k in kernels] == ["scale"] * 5


def test_kernel_rename_names_exactly_the_kernels_inside_a_range(tmp_path):
    out = kernels_run(tmp_path, ["--kernel-rename", "-f", "csv", "sqlite", "json"])
    kernels = out.csv("kernel_trace.csv")
    assert [k["Kernel_Name"] for k in kernels] == ["scale", "step", "step", "inner", "scale"]
    assert [r["name"] for r in out.query("SELECT name FROM kernels ORDER BY dispatch_id")] == [
        "scale", "step", "step", "inner", "scale"]
    with open(out.path("results.json")) as f:
        events = json.load(f)["traceEvents"]
    assert sorted(e["name"] for e in events if e.get("cat") == "KERNEL_DISPATCH") == [
        "inner", "scale", "scale", "step", "step"]

    # gpuprof summary: the GPU time per range, nested ranges included, from the CSV
    duration = [int(k["End_Timestamp"]) - int(k["Start_Timestamp"]) for k in kernels]
    r = run([GPUPROF, "summary", "--format", "csv", out.path("results.db")], cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    block = r.stdout.split("GPU TIME PER MARKER RANGE")[1].strip().split("\n\n")[0].splitlines()
    assert block[1] == '"Range","Kernels","GPU time (nsec)","Average (nsec)","% of kernel time"'
    rows = {line.split(",")[0].strip('"'): line.split(",") for line in block[2:]}
    assert sorted(rows) == ["inner", "step"]
    assert (int(rows["step"][1]), int(rows["step"][2])) == (3, sum(duration[1:4]))
    assert (int(rows["inner"][1]), int(rows["inner"][2])) == (1, duration[3])


def test_selected_regions_keep_only_what_ran_between_resume_and_pause(tmp_path):
    out = kernels_run_mode(tmp_path / "selected", ["--selected-regions"], "regions")
    assert len(out.csv("kernel_trace.csv")) == 3
    # without --selected-regions collection starts on; pause and resume still apply
    out = kernels_run_mode(tmp_path / "all", [], "regions")
    assert len(out.csv("kernel_trace.csv")) == 4


def kernels_run_mode(directory, options, mode):
    os.makedirs(directory)
    r = trace(directory, ["--runtime-trace", *options], [MARKERS, mode])
    assert r.returncode == 0, r.stderr
    out = one_output(directory)
    # API calls are kept by the same rule as kernels: one clEnqueueNDRangeKernel each
    calls = [c for c in out.csv("opencl_api_trace.csv") if c["Function"] == "clEnqueueNDRangeKernel"]
    assert len(calls) == len(out.csv("kernel_trace.csv"))
    return out


def test_collection_period_keeps_only_the_second_of_three_phases(tmp_path):
    # phases of 2, 3 and 4 kernels at 1.0, 2.0 and 3.0 s; collect from 1.5 s for 1 s
    r = trace(tmp_path, ["--kernel-trace", "-P", "1500:1000:1", "--collection-period-unit",
                         "msec"], [MARKERS, "periods"])
    assert r.returncode == 0, r.stderr
    # a loaded machine can make the set-up outlast a phase's time: the phases that fell
    # inside the window, by the ages the program gives, are the ones kept
    phases = [tuple(float(v) for v in m) for m in re.findall(
        r"phase \d: (\d+) kernels from ([\d.]+) to ([\d.]+) s", r.stdout)]
    assert [p[0] for p in phases] == [2, 3, 4], r.stdout
    if any(began - 0.1 < edge < ended + 0.1 for _, began, ended in phases for edge in (1.5, 2.5)):
        pytest.skip(f"a phase ran within 0.1 s of the window's edge: {r.stdout}")
    inside = sum(int(n) for n, began, ended in phases if 1.5 < began and ended < 2.5)
    if inside != 3:  # a late set-up: the window still keeps what fell in it
        assert phases[0][1] > 1.1, r.stdout
    assert len(one_output(tmp_path).csv("kernel_trace.csv")) == inside


def test_roctx_found_by_name_at_run_time(tmp_path):
    program = os.path.join(TESTS, "roctx-dlopen")
    r = trace(tmp_path, ["--marker-trace"], [program])
    assert r.returncode == 0, r.stderr
    assert r.stdout == "push load: 0\npush parse: 1\npop: 1\npop: 0\npop: -1\n"
    rows = one_output(tmp_path).csv("marker_api_trace.csv")
    assert [(x["Domain"], x["Function"]) for x in rows] == [
        ("MARKER_CORE_API", "load"), ("MARKER_CORE_API", "parse"),
        ("MARKER_CORE_API", "checkpoint"), ("MARKER_CORE_RANGE_API", "async")]


def test_python_through_ctypes(tmp_path):
    script = os.path.join(os.path.dirname(__file__), "../../samples/python/markers.py")
    r = trace(tmp_path, ["--marker-trace"], [sys.executable, script])
    assert r.returncode == 0, r.stderr
    out = one_output(tmp_path)
    names = sorted(x["Function"] for x in out.csv("marker_api_trace.csv"))
    assert names == sorted(["epoch 0", "epoch 1", "epoch 0 done", "epoch 1 done"] + ["step"] * 6)
    assert out.query("SELECT name FROM threads WHERE name IS NOT NULL") == [{"name": "python main"}]


def test_bad_marker_options(tmp_path):
    for options, message in (
            (["-P", "1:x:1"], "'1:x:1' is not START:DURATION:REPEAT"),
            (["-P", "1:0:1"], "'1:0:1' is not START:DURATION:REPEAT"),
            (["-P", "1:2:-1"], "'1:2:-1' is not START:DURATION:REPEAT"),
            (["--collection-period-unit", "days"], "days"),
            (["--selected-regions", "-P", "1:1:1"], "cannot go together"),
            (["--marker-trace", "--nvtx-capture", "step", "-P", "1:1:1"], "cannot go together"),
            (["--marker-trace", "--nvtx-capture", "step", "--selected-regions"],
             "--nvtx-capture and --selected-regions cannot go together"),
            (["--nvtx-capture", "step"], "markers are not traced: add --marker-trace"),
            (["--marker-trace", "--nvtx-capture", "@torch"], "is not NAME, NAME@DOMAIN"),
            (["--marker-trace", "--nvtx-capture", "step@"], "is not NAME, NAME@DOMAIN"),
            (["--marker-trace", "--nvtx-capture", "step", "--nvtx-domain-include", "a"],
             "cannot go with --nvtx-domain-include"),
            (["--kernel-rename", "--marker-trace=false"], "--kernel-rename needs the marker ranges")):
        r = trace(tmp_path, options, [MARKERS, "nest"])
        assert r.returncode == 2, (options, r.stderr)
        assert message in r.stderr, (options, r.stderr)
    assert os.listdir(tmp_path) == []


NVTX_APP = os.path.join(TESTS, "nvtx-app")


@pytest.mark.skipif(not os.path.exists(NVTX_APP),
                    reason="built without the CUDA toolkit (its header-only nvtx3 API)")
def test_nvtx_ranges_marks_and_domains(tmp_path):
    # each domain's depth its own: allreduce is the first range of the domain nccl
    expected = ("push epoch: 0\npush forward: 1\npop: 1\npush allreduce: 0\npop: 0\n"
                "push wide: 1\npop: 1\npop: 0\n")
    r = trace(tmp_path, ["--marker-trace"], [NVTX_APP])
    assert r.returncode == 0, r.stderr
    assert r.stdout == expected
    out = one_output(tmp_path)
    rows = out.csv("marker_api_trace.csv")
    assert [(x["Domain"], x["Function"]) for x in rows] == [
        ("MARKER_CORE_API", "epoch"), ("MARKER_CORE_API", "forward"), ("MARKER_CORE_API", "loss"),
        ("MARKER_CORE_RANGE_API", "prefetch"), ("MARKER_CORE_API", "allreduce"),
        ("MARKER_CORE_API", "wide \u00fc")]
    assert [x["Marker_Domain"] for x in rows] == ["", "", "", "", "nccl", ""]
    db = {m["name"]: m for m in out.query("SELECT * FROM markers")}
    assert db["allreduce"]["domain"] == "nccl" and db["epoch"]["domain"] == ""
    assert db["loss"]["kind"] == "MARK" and db["loss"]["parent_id"] == db["forward"]["range_id"]
    assert db["forward"]["parent_id"] == db["epoch"]["range_id"]
    assert db["allreduce"]["parent_id"] == db["epoch"]["range_id"]
    assert db["prefetch"]["end_tid"] != db["prefetch"]["tid"]
    assert out.query("SELECT tid, name FROM threads WHERE name IS NOT NULL") == [
        {"tid": db["prefetch"]["end_tid"], "name": "loader"}]
    # without a profiler NVTX calls do nothing (NVTX_NO_PUSH_POP_TRACKING, -2)
    r = run([NVTX_APP], cwd=tmp_path)
    assert r.returncode == 0 and r.stdout.count(": -2\n") == 8


def test_a_database_before_module_paths_reads_as_one_without_them(tmp_path):
    """A database of schema 3.6 (no gpuprof_marker.module_id, a markers view without
    module_path): converted, summarised, merged with a new one and reported on, its
    ranges are there with empty module paths."""
    (tmp_path / "run").mkdir()
    r = trace(tmp_path / "run", ["--marker-trace", "-f", "sqlite"], [MARKERS, "nest"])
    assert r.returncode == 0, r.stderr
    new = one_output(tmp_path / "run").path("results.db")
    old = str(tmp_path / "old.db")
    with sqlite3.connect(new) as db:
        db.execute("VACUUM INTO ?", (old,))
    with sqlite3.connect(old) as db:
        view = db.execute("SELECT sql FROM sqlite_master WHERE name = 'markers'").fetchone()[0]
        db.executescript(
            "DROP VIEW markers; ALTER TABLE gpuprof_marker DROP COLUMN module_id; " +
            view.replace(",\n         COALESCE(u.string, '') AS module_path", "")
                .replace("\n  LEFT JOIN gpuprof_string u ON u.id = m.module_id", "") + ";"
            "UPDATE gpuprof_metadata SET value = '3.6.0' WHERE tag = 'schema_version'")
        assert "module_path" not in db.execute("SELECT * FROM markers").description[-1]
    r = run([GPUPROF, "convert", "-f", "csv", "-d", str(tmp_path / "csv"), old], cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    rows = list(csv.DictReader(open(tmp_path / "csv" / "old_marker_api_trace.csv")))
    assert [(x["Function"], x["Module_Path"]) for x in rows] == [
        ("outer", ""), ("inner", ""), ("tick", ""), ("crossing", ""), ("work", "")]
    (tmp_path / "run2").mkdir()
    r = trace(tmp_path / "run2", ["--marker-trace", "-f", "sqlite"], [MARKERS, "nest"])
    assert r.returncode == 0, r.stderr
    merged = str(tmp_path / "merged.db")
    r = run([GPUPROF, "merge", "-o", merged, old, one_output(tmp_path / "run2").path("results.db")],
            cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    with sqlite3.connect(merged) as db:
        assert db.execute("SELECT COUNT(*), SUM(module_path = '') FROM markers").fetchone() == (10, 10)
    for command in (["summary", old], ["report", "-o", str(tmp_path / "r.html"), old],
                    ["profile", "--range", "outer", old]):
        r = run([GPUPROF, *command], cwd=tmp_path)
        assert "no such column" not in r.stderr and "no such table" not in r.stderr, r.stderr
        assert r.returncode in (0, 1), (command, r.stderr)


@pytest.mark.skipif(not os.path.exists(NVTX_APP),
                    reason="built without the CUDA toolkit (its header-only nvtx3 API)")
def test_nvtx_domains_keep_their_own_nesting(tmp_path):
    """Two domains' push/pop ranges interleaved on one thread (NCCL's and the program's, as
    in PyTorch's distributed training): each pop closes its own domain's innermost range,
    as the NVTX specification has it, and returns that domain's depth; a range's parent is
    the range open on the thread when it began. --nvtx-domain-include and -exclude choose
    the domains recorded (nsys's names; "default" the default domain)."""
    (tmp_path / "all").mkdir()
    r = trace(tmp_path / "all", ["--marker-trace", "-f", "csv", "sqlite"], [NVTX_APP, "interleave"])
    assert r.returncode == 0, r.stderr
    assert r.stdout == ("push step: 0\npush comm: 0\npop app: 0\npush next: 0\n"
                        "pop nccl: 0\npop app: 0\npop app: -1\n")
    out = one_output(tmp_path / "all")
    m = {x["name"]: x for x in out.query("SELECT * FROM markers")}
    assert {n: x["domain"] for n, x in m.items()} == {
        "step": "app", "comm": "nccl", "app mark": "app", "next": "app", "nccl mark": "nccl",
        "default mark": ""}
    # step ended at app's pop, before next began; comm at nccl's, after next began
    assert m["comm"]["start"] <= m["app mark"]["start"] < m["step"]["end"] <= m["next"]["start"]
    assert m["next"]["start"] <= m["nccl mark"]["start"] < m["comm"]["end"] <= m["default mark"]["start"]
    assert m["default mark"]["start"] < m["next"]["end"]
    assert all(m[n]["ended"] == 1 for n in ("step", "comm", "next"))
    assert m["comm"]["parent_id"] == m["step"]["range_id"]
    assert m["next"]["parent_id"] == m["comm"]["range_id"]
    rows = out.csv("marker_api_trace.csv")
    assert sorted((x["Function"], x["Marker_Domain"]) for x in rows) == sorted(
        (n, x["domain"]) for n, x in m.items())
    for option, value, kept in [
            ("--nvtx-domain-exclude", "nccl", {"step", "app mark", "next", "default mark"}),
            ("--nvtx-domain-include", "nccl", {"comm", "nccl mark"}),
            ("--nvtx-domain-include", "default,nccl", {"comm", "nccl mark", "default mark"}),
            ("--nvtx-domain-exclude", "app,default", {"comm", "nccl mark"})]:
        where = tmp_path / (option + value)
        where.mkdir()
        r = trace(where, ["--marker-trace", "-f", "sqlite", option, value], [NVTX_APP, "interleave"])
        assert r.returncode == 0, r.stderr
        # the program sees the same return values, its domains recorded or not
        assert r.stdout == ("push step: 0\npush comm: 0\npop app: 0\npush next: 0\n"
                            "pop nccl: 0\npop app: 0\npop app: -1\n"), r.stdout
        names = {x["name"] for x in one_output(where).query("SELECT name FROM markers")}
        assert names == kept, (option, value, names)
    both = run([GPUPROF, "trace", "--marker-trace", "--nvtx-domain-include", "a",
                "--nvtx-domain-exclude", "b", "--", NVTX_APP], cwd=tmp_path)
    assert both.returncode == 2 and "cannot go together" in both.stderr
    off = run([GPUPROF, "trace", "--kernel-trace", "--nvtx-domain-include", "a", "--", NVTX_APP],
              cwd=tmp_path)
    assert off.returncode == 2 and "add --marker-trace" in off.stderr


@pytest.mark.skipif(not os.path.exists(NVTX_APP),
                    reason="built without the CUDA toolkit (its header-only nvtx3 API)")
def test_a_program_out_of_memory_is_not_ended_by_the_profiler(tmp_path):
    """A program that runs out of memory and goes on (its address space capped) while it
    makes NVTX domains, registers strings and marks: gpuprof's libraries find no memory
    for a name or a handle either, and leave it out; the program ends its own way, with
    every mark recorded."""
    if os.environ.get("GPUPROF_SANITIZER"):
        pytest.skip("a sanitizer's runtime maps terabytes of shadow memory: it cannot "
                    "start under a capped address space")
    r = trace(tmp_path, ["--marker-trace"], [NVTX_APP, "oom", "2000"])
    assert r.returncode == 5, r.stderr
    assert r.stdout.startswith("nvtx-app: 2000 domains made out of memory (")
    assert "gpuprof: out of memory" not in r.stderr
    out = one_output(tmp_path)
    rows = out.query("SELECT name, domain, kind, ended FROM markers ORDER BY range_id")
    assert [row["name"] for row in rows] == (["before"] + [f"mark {i}" for i in range(2000)]
                                             + ["after"])
    assert all(row["ended"] == 1 for row in rows if row["kind"] == "PUSH_POP")
    # a domain whose name found no memory is the default one's (unnamed)
    assert all(row["domain"] in (f"domain {i}", "") for i, row in enumerate(rows[1:-1]))
    assert rows[1]["domain"] == "domain 0"


def test_ranges_deeper_than_followed_keep_their_pairs(tmp_path):
    # 15: 300 nested ranges: the 256 followed are recorded and all ended, the 44 deeper
    # counted; every pop still pairs with its push
    r = trace(tmp_path, ["--marker-trace"], [MARKERS, "deep", "300"])
    assert r.returncode == 0, r.stderr
    assert r.stdout == "last pop: 0, one more: -1\n"
    out = one_output(tmp_path)
    rows = out.query("SELECT kind, ended FROM markers")
    assert len(rows) == 256 and all(row == {"kind": "PUSH_POP", "ended": 1} for row in rows)
    (line,) = [l for l in r.stderr.splitlines() if "nested" in l]
    assert "44 " in line, line
