"""gpuprof summary, query and merge on databases of real OpenCL runs: summary figures
equal to those computed here from the CSV files, queries over several databases, and
merged databases that keep every row and every process."""
import collections
import csv
import io
import json
import math
import os
import shutil
import sqlite3
import subprocess

import pytest

from conftest import GPUPROF, SAMPLES, outputs, run, trace
from pftrace import Trace


def traced(tmp, name, command):
    r = trace(tmp, ["-r", "-f", "csv", "sqlite", "-d", name, "-o", "run"], command)
    assert r.returncode == 0, r.stderr
    found = outputs(os.path.join(tmp, name))
    assert len(found) == 1
    return found[0]


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("runs")
    busy = traced(tmp, "busy", [os.path.join(SAMPLES, "busy"), "-n", "4096", "-i", "3"])
    vcopy = traced(tmp, "vcopy", [os.path.join(SAMPLES, "vcopy"), "-i", "5"])
    return tmp, busy, vcopy


def gpuprof(tmp, *args):
    return run([GPUPROF, *args], cwd=tmp)


def tables(stdout):
    return {t["name"]: [dict(zip(t["columns"], row)) for row in t["rows"]]
            for t in json.loads(stdout)}


def stats(durations):
    n = len(durations)
    mean = sum(durations) / n
    return {"Calls": n, "Total (nsec)": sum(durations), "Average (nsec)": mean,
            "Min (nsec)": min(durations), "Max (nsec)": max(durations),
            "StdDev (nsec)": math.sqrt(sum((d - mean) ** 2 for d in durations) / n)}


def check_stats(rows, groups):
    total = sum(sum(d) for d in groups.values())
    assert sorted(r["Name"] for r in rows) == sorted(groups)
    for row in rows:
        want = stats(groups[row["Name"]])
        for key, value in want.items():
            assert row[key] == pytest.approx(value, rel=1e-9, abs=1e-6), (row["Name"], key)
        assert row["Percentage"] == pytest.approx(100 * want["Total (nsec)"] / total, abs=1e-9)


def test_summary_equals_the_csv(runs):
    tmp, busy, _ = runs
    r = gpuprof(tmp, "summary", busy.path("results.db"), "--format", "json")
    assert r.returncode == 0, r.stderr
    t = tables(r.stdout)
    kernels = busy.csv("kernel_trace.csv")
    copies = busy.csv("memory_copy_trace.csv")
    api = busy.csv("opencl_api_trace.csv")
    dur = lambda row: int(row["End_Timestamp"]) - int(row["Start_Timestamp"])

    groups = collections.defaultdict(list)
    for row in kernels:
        groups[row["Kernel_Name"]].append(dur(row))
    check_stats(t["kernels"], groups)
    groups = collections.defaultdict(list)
    for row in copies:
        op = row["Operation"]
        groups[row["Direction"] if op == "COPY" else "MEMORY_" + op].append(dur(row))
    check_stats(t["memory_copies"], groups)
    groups = collections.defaultdict(list)
    for row in api:
        groups[row["Function"]].append(dur(row))
    check_stats(t["OPENCL_API"], groups)

    # the device: busy while a kernel or copy runs, idle gaps between
    intervals = sorted((int(r["Start_Timestamp"]), int(r["End_Timestamp"])) for r in kernels)
    intervals += [(int(r["Start_Timestamp"]), int(r["End_Timestamp"])) for r in copies]
    intervals.sort()
    busy_ns = gaps = idle = longest = 0
    start, end = intervals[0]
    for s, e in intervals[1:]:
        if s > end:
            busy_ns += end - start
            gaps += 1
            idle += s - end
            longest = max(longest, s - end)
            start, end = s, e
        else:
            end = max(end, e)
    busy_ns += end - start
    process = busy.query("SELECT start, end FROM processes")[0]
    [device] = t["devices"]
    assert device["Pid"] == busy.query("SELECT pid FROM processes")[0]["pid"]
    assert device["Busy (nsec)"] == busy_ns
    assert device["Idle gaps"] == gaps
    assert device["Idle (nsec)"] == idle
    assert device["Longest gap (nsec)"] == longest
    assert device["Busy %"] == pytest.approx(100 * busy_ns / (process["end"] - process["start"]))

    [row] = t["processes"]
    assert (row["Kernels"], row["Copies"], row["API calls"]) == (len(kernels), len(copies), len(api))
    assert row["Bytes copied"] == sum(int(r["Bytes"]) for r in copies)
    assert row["Kernel time (nsec)"] == sum(dur(r) for r in kernels)
    assert row["Rank"] is None


def test_summary_formats(runs):
    tmp, busy, _ = runs
    db = busy.path("results.db")
    text = gpuprof(tmp, "summary", db, "-u", "msec")
    assert text.returncode == 0, text.stderr
    assert "KERNEL_DISPATCH\nName " in text.stdout and "Total (msec)" in text.stdout
    md = gpuprof(tmp, "summary", db, "--format", "md").stdout
    assert "### KERNEL_DISPATCH\n\n| Name | Calls |" in md
    sections = gpuprof(tmp, "summary", db, "--format", "csv").stdout.split("\n\n")
    kernels = [s for s in sections if s.startswith("# KERNEL_DISPATCH\n")]
    rows = list(csv.DictReader(io.StringIO(kernels[0].split("\n", 1)[1])))
    assert sum(int(r["Calls"]) for r in rows) == len(busy.csv("kernel_trace.csv"))
    bad = gpuprof(tmp, "summary", db, "--format", "xml")
    assert bad.returncode == 2 and "xml" in bad.stderr


def test_query_several_databases(runs):
    tmp, busy, vcopy = runs
    r = gpuprof(tmp, "query", busy.path("results.db"), vcopy.path("results.db"), "--sql",
                "SELECT db, COUNT(*) AS n FROM kernels GROUP BY db ORDER BY db", "--format", "csv")
    assert r.returncode == 0, r.stderr
    assert r.stdout == '"db","n"\n0,18\n1,5\n'
    r = gpuprof(tmp, "query", vcopy.path("results.db"), "--sql",
                "SELECT name, grid_x FROM kernels LIMIT 1; SELECT COUNT(*) AS calls FROM regions",
                "--format", "json")
    assert r.returncode == 0, r.stderr
    t = json.loads(r.stdout)
    assert t[0]["rows"] == [["vecCopy", 1048576]]
    assert t[1]["rows"] == [[len(vcopy.csv("opencl_api_trace.csv"))]]
    r = gpuprof(tmp, "query", vcopy.path("results.db"), "--sql", "SELECT 1 AS a, 'x|y' AS b",
                "--format", "md")
    assert r.stdout == "| a | b |\n| --- | --- |\n| 1 | x\\|y |\n"
    r = gpuprof(tmp, "query", vcopy.path("results.db"), "--sql", "SELECT 2 AS two, NULL AS missing, 'a' AS t")
    assert r.stdout == "two  missing  t\n  2           a\n"


def test_query_joins_a_database_of_an_older_schema(runs):
    """A 3.8 database's kernels view has no call_id (3.9's): the union gives its rows
    NULL there, in the columns of the newer."""
    import shutil
    import sqlite3
    tmp, busy, vcopy = runs
    old = str(tmp / "old.db")
    shutil.copy(vcopy.path("results.db"), old)
    with sqlite3.connect(old) as c:
        (sql,) = c.execute("SELECT sql FROM sqlite_master WHERE name = 'kernels'").fetchone()
        assert ", k.call_id" in sql
        c.execute("DROP VIEW kernels")
        c.execute(sql.replace(", k.call_id", ""))
    r = gpuprof(tmp, "query", busy.path("results.db"), old, "--sql",
                "SELECT db, COUNT(*) AS n, COUNT(call_id) AS tied FROM kernels GROUP BY db "
                "ORDER BY db", "--format", "csv")
    assert r.returncode == 0, r.stderr
    assert r.stdout == '"db","n","tied"\n0,18,18\n1,5,0\n'


def test_query_is_read_only_and_reports_errors(runs):
    tmp, busy, vcopy = runs
    before = busy.query("SELECT COUNT(*) AS n FROM gpuprof_kernel")[0]["n"]
    for dbs in ([busy.path("results.db")], [vcopy.path("results.db"), busy.path("results.db")]):
        r = gpuprof(tmp, "query", *dbs, "--sql", "DELETE FROM gpuprof_kernel; "
                    "DELETE FROM db1.gpuprof_kernel" if len(dbs) > 1 else "DELETE FROM gpuprof_kernel")
        assert r.returncode == 1
        assert "would write: query only reads" in r.stderr
    assert busy.query("SELECT COUNT(*) AS n FROM gpuprof_kernel")[0]["n"] == before
    # 14: VACUUM INTO would write a copy anywhere, read-only connection or not
    r = gpuprof(tmp, "query", busy.path("results.db"), "--sql", "VACUUM INTO 'copy.db'")
    assert r.returncode == 1 and "would write" in r.stderr
    assert not os.path.exists(tmp / "copy.db")
    r = gpuprof(tmp, "query", busy.path("results.db"), "--sql", "SELECT * FROM nowhere")
    assert (r.returncode, r.stderr) == (1, "gpuprof: query: no such table: nowhere\n")
    r = gpuprof(tmp, "query", busy.path("results.db"))
    assert r.returncode == 2 and "--sql is required" in r.stderr
    r = gpuprof(tmp, "query", str(tmp / "missing.db"), "--sql", "SELECT 1")
    assert r.returncode == 1 and "missing.db" in r.stderr


def test_merge_keeps_every_row_and_process(runs, tmp_path):
    tmp, busy, vcopy = runs
    merged = str(tmp_path / "merged.db")
    r = gpuprof(tmp, "merge", busy.path("results.db"), vcopy.path("results.db"), "-o", merged)
    assert r.returncode == 0, r.stderr
    con = sqlite3.connect(merged)
    pids = [busy.query("SELECT pid FROM processes")[0]["pid"], vcopy.query("SELECT pid FROM processes")[0]["pid"]]
    assert [p for (p,) in con.execute("SELECT pid FROM processes ORDER BY id")] == pids
    for view in ("kernels", "memory_copies", "regions", "agents"):
        counts = dict(con.execute(f"SELECT pid, COUNT(*) FROM {view} GROUP BY pid"))
        assert counts == {pids[0]: busy.query(f"SELECT COUNT(*) AS n FROM {view}")[0]["n"],
                          pids[1]: vcopy.query(f"SELECT COUNT(*) AS n FROM {view}")[0]["n"]}, view
    # names still resolve, times are unchanged (one host), rows are in start order
    assert sorted(con.execute("SELECT DISTINCT name FROM kernels")) == [("add",), ("scale",), ("square",), ("vecCopy",)]
    original = [tuple(r.values()) for r in vcopy.query("SELECT name, start, end FROM kernels ORDER BY start")]
    assert list(con.execute("SELECT name, start, end FROM kernels WHERE pid = ? ORDER BY start", (pids[1],))) == original
    starts = [s for (s,) in con.execute("SELECT start FROM gpuprof_api_call ORDER BY id")]
    assert starts == sorted(starts)
    shifts = dict(con.execute("SELECT tag, value FROM gpuprof_metadata WHERE tag LIKE 'process.%'"))
    assert shifts == {"process.1.time_shift": "0", "process.2.time_shift": "0"}
    con.close()
    # the merged database converts and summarises as one
    r = gpuprof(tmp_path, "convert", "-f", "pftrace", "-d", str(tmp_path), merged)
    assert r.returncode == 0, r.stderr
    pf = Trace(str(tmp_path / "merged_results.pftrace"))
    assert sorted(t["pid"] for t in pf.tracks_of("process").values()) == sorted(pids)
    r = gpuprof(tmp_path, "summary", merged, "--format", "json")
    assert [row["Pid"] for row in tables(r.stdout)["processes"]] == pids


def test_merge_places_other_hosts_by_real_time(runs, tmp_path):
    tmp, busy, vcopy = runs
    other = str(tmp_path / "other.db")
    shutil.copy(vcopy.path("results.db"), other)
    con = sqlite3.connect(other)
    con.execute("UPDATE gpuprof_process SET hostname = 'node2', realtime_start = realtime_start + 7000")
    con.commit()
    con.close()
    first = busy.query("SELECT start, realtime_start FROM processes")[0]
    second = vcopy.query("SELECT start, realtime_start FROM processes")[0]
    shift = (second["realtime_start"] + 7000 - second["start"]) - (first["realtime_start"] - first["start"])
    merged = str(tmp_path / "merged.db")
    r = gpuprof(tmp, "merge", busy.path("results.db"), other, "-o", merged)
    assert r.returncode == 0, r.stderr
    con = sqlite3.connect(merged)
    moved = list(con.execute("SELECT start, end FROM kernels WHERE pid = ? ORDER BY start",
                             (vcopy.query("SELECT pid FROM processes")[0]["pid"],)))
    assert moved == [(r["start"] + shift, r["end"] + shift)
                     for r in vcopy.query("SELECT start, end FROM kernels ORDER BY start")]
    assert dict(con.execute("SELECT hostname, COUNT(*) FROM processes GROUP BY hostname"))["node2"] == 1
    assert con.execute("SELECT value FROM gpuprof_metadata WHERE tag = 'process.2.time_shift'").fetchone() == (str(shift),)


def test_merge_errors(runs, tmp_path):
    tmp, busy, _ = runs
    r = gpuprof(tmp, "merge", busy.path("results.db"), "-o", busy.path("results.db"))
    assert r.returncode == 1 and "is also an input" in r.stderr
    junk = tmp_path / "junk.db"
    junk.write_text("not a database")
    r = gpuprof(tmp, "merge", busy.path("results.db"), str(junk), "-o", str(tmp_path / "m.db"))
    assert r.returncode == 1 and "junk.db" in r.stderr
    assert not os.path.exists(tmp_path / "m.db") and not os.path.exists(tmp_path / "m.db.partial")
    r = gpuprof(tmp, "merge", busy.path("results.db"))
    assert r.returncode == 2 and "-o is required" in r.stderr


def test_a_recording_is_counted_once(runs, tmp_path):
    # 13: the same database twice, or a merged one with one of its sources
    tmp, busy, vcopy = runs
    a, b = busy.path("results.db"), vcopy.path("results.db")
    kernels = {db: sqlite3.connect(db).execute("SELECT COUNT(*) FROM kernels").fetchone()[0]
               for db in (a, b)}
    twice = str(tmp_path / "twice.db")
    r = gpuprof(tmp, "merge", a, a, "-o", twice)
    assert r.returncode == 0, r.stderr
    assert (f"gpuprof: merge: '{a}': its recording was already merged from an earlier input: "
            f"the input is left out") in r.stderr
    assert f"gpuprof: merged 1 database into {twice} (1 more left out" in r.stderr
    con = sqlite3.connect(twice)
    assert con.execute("SELECT COUNT(*) FROM processes").fetchone()[0] == 1
    assert con.execute("SELECT COUNT(*) FROM kernels").fetchone()[0] == kernels[a]
    con.close()
    both = str(tmp_path / "both.db")
    assert gpuprof(tmp, "merge", a, b, "-o", both).returncode == 0
    again = str(tmp_path / "again.db")
    r = gpuprof(tmp, "merge", both, b, a, "-o", again)
    assert r.returncode == 0, r.stderr
    # 44: each input left out whole is said so, and the count merged is the true one
    assert r.stderr.count("recording was already merged from an earlier input: the input "
                          "is left out") == 2, r.stderr
    assert f"gpuprof: merged 1 database into {again} (2 more left out: their recordings " \
        "were all merged already)" in r.stderr
    con = sqlite3.connect(again)
    assert con.execute("SELECT COUNT(*) FROM kernels").fetchone()[0] == kernels[a] + kernels[b]
    con.close()

    def summary_kernels(*dbs):
        r = gpuprof(tmp, "summary", *dbs, "--format", "json")
        return r, sum(row["Calls"] for row in tables(r.stdout)["kernels"]) if r.returncode == 0 else None
    r, calls = summary_kernels(a, a)
    assert calls == kernels[a]
    assert f"gpuprof: summary: '{a}' holds only recordings of an earlier input" in r.stderr
    r, calls = summary_kernels(both, b)
    assert calls == kernels[a] + kernels[b] and "left out" in r.stderr
    r, _ = summary_kernels(b, both)
    assert r.returncode == 1
    assert f"'{both}' shares 1 of its 2 recordings with an earlier input" in r.stderr


@pytest.mark.skipif(bool(os.environ.get("GPUPROF_SANITIZER")),
                    reason="a sanitizer's runtime needs more address space than the cap")
@pytest.mark.parametrize("blob", [200_000_000, 40_000_000])  # SQLite's memory; gpuprof's
def test_out_of_memory_is_an_error_not_a_crash(runs, blob):
    # 14: a result bigger than the memory gpuprof may use ends with a message, exit 1
    import resource
    tmp, busy, _ = runs

    def capped():
        resource.setrlimit(resource.RLIMIT_AS, (256 << 20, 256 << 20))
    r = subprocess.run([GPUPROF, "query", busy.path("results.db"), "--sql",
                        f"SELECT hex(zeroblob({blob})) AS big"],
                       cwd=tmp, capture_output=True, text=True, preexec_fn=capped)
    assert r.returncode == 1, r.stderr
    assert "out of memory" in r.stderr
