"""Device memory (--memory-allocation-trace) of OpenCL programs on PoCL: each buffer,
image and SVM allocation recorded with its size, its stack and its free (when the runtime
destroys it: the last release), and gpuprof summary's MEMORY tables: the peak, when, what
held it by allocation site, what was never freed. tests/e2e/clmem.c allocates a known
pattern (its comment gives it)."""
import os
import re

import pytest

from conftest import GPUPROF, TESTS, csv_table, outputs, run, trace

CLMEM = os.path.join(TESTS, "clmem")
SOURCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "clmem.c")
MIB = 1024 * 1024


def call_line(function):
    """The line of clCreateBuffer in clmem.c's function."""
    with open(SOURCE) as f:
        lines = f.read().splitlines()
    start = next(i for i, line in enumerate(lines) if re.search(rf"\b{function}\(", line)
                 and line.startswith("__attribute__"))
    return next(i + 1 for i in range(start, len(lines)) if "clCreateBuffer(" in lines[i])


def traced(tmp_path, *arguments):
    r = trace(tmp_path, ["--memory-allocation-trace", "-f", "csv", "sqlite", "json"],
              [CLMEM, *arguments])
    assert r.returncode == 0, r.stderr
    (out,) = outputs(str(tmp_path))
    return r, out


@pytest.mark.parametrize("mode", ["", "retain"])
def test_allocations_peak_holders_and_leak(tmp_path, mode):
    r, out = traced(tmp_path, *([mode] if mode else []))
    svm = "svm used" in r.stdout
    rows = out.query("SELECT operation, bytes, correlation_id, start, end FROM "
                     "gpuprof_memory_allocation ORDER BY id")
    allocations = [x["bytes"] for x in rows if x["operation"] == 1]
    assert allocations == [2 * MIB, 4 * MIB, 8 * MIB, 4 * MIB, 16 * MIB, MIB] + [MIB] * svm
    assert sum(x["operation"] == 2 for x in rows) == len(allocations) - 1  # the leak
    # each allocation has its call's stack, though --launch-stacks was not given
    stacked = {x["correlation_id"] for x in out.query(
        "SELECT correlation_id FROM gpuprof_launch_stack")}
    assert {x["correlation_id"] for x in rows if x["operation"] == 1} <= stacked
    if mode == "retain":
        # the 16 MiB buffer, retained once more, goes at its second release, the last
        frees = [x for x in rows if x["operation"] == 2]
        assert frees[-1]["bytes"] == 16 * MIB
        assert frees[-1]["start"] > max(x["end"] for x in rows if x["operation"] == 1)
    s = run([GPUPROF, "summary", "--format", "csv", out.path("results.db")], cwd=tmp_path)
    assert s.returncode == 0, s.stderr
    (device,) = csv_table(s.stdout, "# MEMORY (")
    start = out.query("SELECT start FROM gpuprof_process")[0]["start"]
    peak_at = [x for x in rows if x["operation"] == 1 and x["bytes"] == 16 * MIB][0]["end"]
    assert (int(device["Allocations"]), int(device["Frees"]), int(device["Peak (bytes)"]),
            int(device["Held at end (bytes)"])) == (len(allocations), len(allocations) - 1,
                                                   30 * MIB, 2 * MIB)
    assert float(device["Peak at (s)"]) == pytest.approx((peak_at - start) / 1e9, abs=1e-6)
    holders = [(x["Site"], x["Where"], int(x["Allocations"]), int(x["Bytes"]), x["Pct"])
               for x in csv_table(s.stdout, "# MEMORY AT THE PEAK")]
    assert holders == [
        ("site_b", f"clmem.c:{call_line('site_b')}", 2, 24 * MIB, "80.00"),
        ("site_a", f"clmem.c:{call_line('site_a')}", 1, 4 * MIB, "13.33"),
        ("leaky", f"clmem.c:{call_line('leaky')}", 1, 2 * MIB, "6.67")]
    leaks = [(x["Site"], int(x["Allocations"]), int(x["Bytes"]))
             for x in csv_table(s.stdout, "# MEMORY NEVER FREED")]
    assert leaks == [("leaky", 1, 2 * MIB)]
    # the timeline's counter of the device's memory: one change per allocation and free,
    # up to the peak, down to the leak
    import json
    with open(out.path("results.json")) as f:
        held = [list(e["args"].values())[0] for e in json.load(f)["traceEvents"]
                if e.get("ph") == "C" and e["name"].endswith("memory allocated")]
    assert len(held) == len(rows) and max(held) == 30 * MIB and held[-1] == 2 * MIB


def test_no_allocation_recorded_without_the_option(tmp_path):
    r = trace(tmp_path, ["--kernel-trace"], [CLMEM])
    assert r.returncode == 0, r.stderr
    (out,) = outputs(str(tmp_path))
    assert out.query("SELECT COUNT(*) AS n FROM gpuprof_memory_allocation") == [{"n": 0}]
    s = run([GPUPROF, "summary", out.path("results.db")], cwd=tmp_path)
    assert s.returncode == 0 and "MEMORY (" not in s.stdout


def test_the_report_draws_memory_over_time(tmp_path):
    r, out = traced(tmp_path)
    page = str(tmp_path / "page.html")
    p = run([GPUPROF, "report", "-o", page, out.path("results.db")], cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    with open(page) as f:
        html = f.read()
    memory = html.split('<section id="memory">')[1].split("</section>")[0]
    # one step up or down per allocation and free, the peak marked with its size and time
    points = re.search(r'<polyline fill="none" stroke="#1f77b4" points="([^"]*)"', memory)
    changes = out.query("SELECT COUNT(*) AS n FROM gpuprof_memory_allocation")[0]["n"]
    assert len(points.group(1).split()) == 1 + 2 * changes
    assert re.search(r"<title>peak 31\.5 MB at [0-9.]+ s</title>", memory), memory
    # the tables of gpuprof summary, the same rows
    assert '<table data-table="memory_at_peak">' in memory
    assert memory.count("<td class=\"name\">site_b</td>") == 1
    assert '<table data-table="memory_never_freed">' in memory and "leaky" in memory
    assert '<a href="#memory">Memory</a>' in html
