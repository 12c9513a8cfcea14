"""Device memory (--memory-allocation-trace) of OpenCL programs on PoCL: each buffer,
image and SVM allocation recorded with its size, its stack and its free (when the runtime
destroys it: the last release), and gpuprof summary's MEMORY tables: the peak, when, what
held it by allocation site, what was never freed. tests/e2e/clmem.c allocates a known
pattern (its comment gives it)."""
import os
import re

import pytest

from conftest import GPUPROF, TESTS, advise_findings, csv_table, outputs, run, trace

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


def test_views_host_memory_and_queued_svm_frees(tmp_path):
    """clmem views: an image made from a buffer is the buffer's memory (not recorded), a
    CL_MEM_USE_HOST_PTR buffer is the program's host memory (recorded as such, left out of
    the device's), 70 SVM allocations freed by one clEnqueueSVMFree each get their free;
    one given to a free_func that keeps it, one to a free_func that frees it and one to a
    clEnqueueSVMFree that fails are each freed where the program frees it; a buffer
    released by the program's destructor callback of another goes in that other's
    release."""
    r = trace(tmp_path, ["--memory-allocation-trace", "-r", "-f", "sqlite", "json"],
              [CLMEM, "views"])
    assert r.returncode == 0, r.stderr
    svm = "svm used" in r.stdout
    (out,) = outputs(str(tmp_path))
    rows = out.query("SELECT a.operation, a.memory_kind, a.bytes, a.correlation_id, c.name FROM "
                     "gpuprof_memory_allocation a LEFT JOIN (SELECT k.correlation_id, "
                     "s.string AS name FROM gpuprof_api_call k JOIN gpuprof_string s ON "
                     "s.id = k.function_id) c ON c.correlation_id = a.correlation_id "
                     "ORDER BY a.id")
    made = [(x["memory_kind"], x["bytes"]) for x in rows if x["operation"] == 1]
    assert made == [(3, MIB), (1, 2 * MIB)] + [(3, 64 * 1024)] * (73 * svm) + [(3, 4096)] * 2
    frees = [x for x in rows if x["operation"] == 2]
    assert sorted((x["memory_kind"], x["bytes"]) for x in frees) == sorted(made)
    if svm:  # 70 freed at clEnqueueSVMFree, the three others at the program's clSVMFree
        by = [x["name"] for x in frees if x["bytes"] == 64 * 1024]
        assert by == ["clEnqueueSVMFree"] * 70 + ["clSVMFree"] * 3
    # a buffer's free is its last clReleaseMemObject's (the runtime's destructor callback
    # runs inside it), so that churn costs that call's time; the second 4 KiB buffer's
    # in the first's, whose callback released it
    assert [x["name"] for x in frees if x["bytes"] in (MIB, 2 * MIB, 4096)] == \
        ["clReleaseMemObject"] * 4
    assert len({x["correlation_id"] for x in frees if x["bytes"] == 4096}) == 1
    s = run([GPUPROF, "summary", "--format", "csv", out.path("results.db")], cwd=tmp_path)
    assert s.returncode == 0, s.stderr
    (device,) = csv_table(s.stdout, "# MEMORY (")
    device_made = 3 + 73 * svm
    assert (int(device["Allocations"]), int(device["Frees"]), int(device["Peak (bytes)"]),
            int(device["Held at end (bytes)"])) == \
        (device_made, device_made, MIB + 70 * 64 * 1024 * svm, 0)
    import json
    with open(out.path("results.json")) as f:
        held = [list(e["args"].values())[0] for e in json.load(f)["traceEvents"]
                if e.get("ph") == "C" and e["name"].endswith("memory allocated")]
    assert len(held) == 2 * device_made and max(held) == MIB + 70 * 64 * 1024 * svm
    assert held[-1] == 0


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


advise_rows = advise_findings


def test_advise_names_the_leak_with_its_site(tmp_path):
    r, out = traced(tmp_path)
    found = advise_rows(tmp_path, out.path("results.db"))
    # a 30 MiB peak on a CPU device of gigabytes: no pressure, so no peak finding
    assert "memory-leak" in found and "memory-churn" not in found, found
    assert "memory-peak-site" not in found
    leak = found["memory-leak"]
    # 2 MiB never freed of a 30 MiB peak
    assert leak["Cost_ns"] == 0 and leak["Cost_pct_of"] == "the device's memory peak"
    assert leak["Cost_pct"] == pytest.approx(100 * 2 / 30, abs=0.01)
    assert leak["Finding"].endswith(f"still held {2 * MIB} bytes in 1 allocations when the "
                                    "recording ended, never freed (6.7 % of its peak)")
    assert f"allocated by leaky at clmem.c:{call_line('leaky')}: 1 allocations, {2 * MIB} " \
        "bytes" in leak["Evidence"]


def test_a_peak_near_the_devices_capacity_names_its_site(tmp_path):
    """Buffers of 8, 16 and 16 MiB, live together, then freed: a 40 MiB peak is 62.5 %
    of a 64 MiB device (a finding), 31.3 % of a 128 MiB one (none)."""
    from conftest import recording
    for memory, fires in ((64, True), (128, False)):
        lines = ["process pid=4242 start=0 command=app",
                 f'agent id=1 type=gpu name="Small GPU" memory={memory * MIB}']
        for i, size in enumerate((8, 16, 16)):
            start = 1_000_000 * (i + 1)
            lines += [f"api name=cudaMalloc domain=cuda start={start} end={start + 1000}",
                      f"allocation address={(i + 1) << 28} bytes={size * MIB} "
                      f"start={start + 1000} end={start + 1000}"]
        for i in range(3):
            lines.append(f"allocation op=free address={(i + 1) << 28} bytes=0 "
                         f"start={9_000_000 + i} end={9_000_000 + i}")
        found = advise_rows(tmp_path, recording(tmp_path / str(memory), lines + [
            "end time=10000000"]))
        assert set(found) == ({"memory-peak-site"} if fires else set()), found
        if fires:
            peak = found["memory-peak-site"]
            assert peak["Cost_pct"] == 100.0 and peak["Cost_ns"] == 0
            assert peak["Finding"] == (
                f"At its peak of {40 * MIB} bytes (62.5 % of its memory), 0.003001 s after the "
                f"process started, GPU 1 (Small GPU) held {40 * MIB} bytes of it (100.0 %) "
                "from one site: [no call stack]")


def churn_recording(tmp_path, name, iterations, calls=True):
    """A 2 MiB buffer made first and never freed; then `iterations` times, one per ms, a
    4 KiB buffer made (its call 20 us) and freed 110 us later (its call 30 us), each
    record a moment as CUPTI's are; with calls, the API calls recorded around them
    (without, the records name no call)."""
    from conftest import recording
    us = 1000
    lines = ["process pid=4242 command=app", 'agent id=1 type=gpu name="Test GPU"',
             "queue id=1 agent=1",
             "api name=cudaMalloc domain=cuda start=100000 end=120000",
             f"allocation address=36864 bytes={2 * MIB} start=120000 end=120000"]
    t = 1_000_000
    for _ in range(iterations):
        if calls:
            lines.append(f"api name=cudaMalloc domain=cuda start={t} end={t + 20 * us}")
        lines.append(f"allocation address=4096 bytes=4096 start={t + 20 * us} "
                     f"end={t + 20 * us}" + ("" if calls else " corr=0"))
        if calls:
            lines.append(f"api name=cudaFree domain=cuda start={t + 100 * us} "
                         f"end={t + 130 * us}")
        lines.append(f"allocation op=free address=4096 bytes=4096 start={t + 130 * us} "
                     f"end={t + 130 * us}" + ("" if calls else " corr=0"))
        t += 1000 * us
    return recording(tmp_path / name, lines + [f"end time={t}"])


def test_memory_churn_costs_its_calls_and_starts_at_100(tmp_path):
    found = advise_rows(tmp_path, churn_recording(tmp_path, "churn", 150))
    assert set(found) == {"memory-churn", "memory-leak"}, found
    churn = found["memory-churn"]
    assert churn["Cost_ns"] == 150 * (20 + 30) * 1000
    assert churn["Finding"] == (
        "150 allocations on GPU 1 (Test GPU) were freed within 1 ms of being made; the calls "
        "that made and freed them took 7.500 ms")
    assert churn["Evidence"].startswith(f"made by [no call stack]: 150 allocations, {150 * 4096} "
                                        "bytes")
    peak = 2 * MIB + 4096
    assert found["memory-leak"]["Cost_pct"] == pytest.approx(100 * 2 * MIB / peak, abs=0.01)
    # 99 churned: below the threshold; without the API trace the calls' time is unknown
    assert set(advise_rows(tmp_path, churn_recording(tmp_path, "99", 99))) == {"memory-leak"}
    untimed = advise_rows(tmp_path, churn_recording(tmp_path, "untimed", 150, calls=False))
    assert untimed["memory-churn"]["Cost_ns"] == 0
    assert untimed["memory-churn"]["Finding"].endswith(
        "their calls' time was not recorded (trace the API: -r)")


def test_the_peak_by_the_range_open_at_each_allocation(tmp_path):
    """8 MiB allocated inside aten::linear; 4 MiB inside aten::matmul after its inner
    aten::empty closed (the enclosing range, found up the parents); 2 MiB outside any
    range of its thread while another thread's range is open: the 14 MiB peak by range."""
    from conftest import recording
    lines = ["process pid=4242 start=0 command=app", 'agent id=1 type=gpu name="GPU"',
             "thread tid=7 name=other",
             'push id=1 tid=4242 start=1000000 text="aten::linear"',
             f"allocation address=4096 bytes={8 * MIB} start=1500000 end=1500000",
             "pop id=1 tid=4242 end=2000000",
             'push id=2 tid=4242 start=3000000 text="aten::matmul"',
             'push id=3 tid=4242 start=3200000 text="aten::empty" parent=2',
             "pop id=3 tid=4242 end=3400000",
             f"allocation address=8192 bytes={4 * MIB} start=3500000 end=3500000",
             "pop id=2 tid=4242 end=4000000",
             'push id=4 tid=7 start=4500000 text="aten::add"',
             f"allocation address=12288 bytes={2 * MIB} start=5000000 end=5000000",
             "pop id=4 tid=7 end=6000000"]
    lines += [f"allocation op=free address={a} bytes=0 start=9000000 end=9000000"
              for a in (4096, 8192, 12288)]
    db = recording(tmp_path / "ranges", lines + ["end time=10000000"])
    s = run([GPUPROF, "summary", "--format", "csv", db], cwd=tmp_path)
    assert s.returncode == 0, s.stderr
    rows = [(x["Range"], int(x["Allocations"]), int(x["Bytes"]), x["Pct"])
            for x in csv_table(s.stdout, "# MEMORY AT THE PEAK BY RANGE")]
    assert rows == [("aten::linear", 1, 8 * MIB, "57.14"), ("aten::matmul", 1, 4 * MIB, "28.57"),
                    ("[no range]", 1, 2 * MIB, "14.29")]
    # no range at all: no such table
    plain = [x for x in lines if not x.startswith(("push", "pop"))]
    db = recording(tmp_path / "plain", plain + ["end time=10000000"])
    s = run([GPUPROF, "summary", "--format", "csv", db], cwd=tmp_path)
    assert csv_table(s.stdout, "# MEMORY AT THE PEAK BY RANGE") == []
    assert len(csv_table(s.stdout, "# MEMORY AT THE PEAK (")) == 1


def test_the_peak_by_range_of_many_ranges(tmp_path):
    """300 ranges of distinct names, each holding one allocation of 4096 + i bytes at the
    peak: each its own row, the largest first (the sites' tables grow past their first
    size)."""
    from conftest import recording
    lines = ["process pid=4242 start=0 command=app", 'agent id=1 type=gpu name="GPU"']
    t = 1_000_000
    for i in range(1, 301):
        lines += [f'push id={i} tid=4242 start={t} text="op{i}"',
                  f"allocation address={i * 8192} bytes={4096 + i} start={t + 10} end={t + 10}",
                  f"pop id={i} tid=4242 end={t + 100}"]
        t += 1000
    db = recording(tmp_path / "many", lines + [f"end time={t + 1000}"])
    s = run([GPUPROF, "summary", "--format", "csv", db], cwd=tmp_path)
    assert s.returncode == 0, s.stderr
    rows = [(x["Range"], int(x["Allocations"]), int(x["Bytes"]))
            for x in csv_table(s.stdout, "# MEMORY AT THE PEAK BY RANGE")]
    assert rows == [(f"op{i}", 1, 4096 + i) for i in range(300, 0, -1)]
