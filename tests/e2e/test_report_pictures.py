"""The report's pictures, rendered by headless Chromium and read back from the page it
built (a screenshot of each kept in build/test-artifacts): the flame graph of a process's
CPU samples (each frame's total the samples the database has on that path), the flame
graph of device time by launch path (a kernel's frame its device time), the run over time
(a lane per device with the busy time the database gives, per queue, per thread, the
marker ranges at their times), a merged run of four processes (one picture each), and a
PyTorch model launching through pyopencl."""
import json
import os
from html.parser import HTMLParser

import pytest

from conftest import GPUPROF, NEEDS_CHROMIUM, TESTS, chromium, outputs, pocl_linker, run

SPLIT = os.path.join(TESTS, "split")
SITES = os.path.join(TESTS, "launch-sites")


class Pictures(HTMLParser):
    """What the rendered page shows: flame graph frames by graph, timeline lanes and
    ranges by picture, launch-site rows."""

    def __init__(self, dom):
        super().__init__()
        self.flames, self.lanes, self.ranges, self.gaps, self.pins = {}, [], [], [], []
        self.timelines, self.sites, self.scripts = 0, [], 0
        self.flame, self.section, self.row, self.cell = None, None, None, None
        self.feed(dom)

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "script":
            self.scripts += 1
        if tag == "section":
            self.section = a.get("id")
        if tag == "div" and a.get("class") == "flame":
            self.flame = a["id"]
            self.flames[self.flame] = []
        elif tag == "g" and a.get("class") == "f":
            self.flames[self.flame].append((a["data-function"], a["data-module"],
                                            int(a["data-total"])))
        elif tag == "figure" and a.get("class") == "timeline":
            self.timelines += 1
        elif tag == "g" and a.get("class") == "tlane":
            self.lanes.append((self.timelines, a["data-kind"], int(a["data-busy-ns"])))
        elif tag == "g" and a.get("class") == "range":
            self.ranges.append((self.timelines, a["data-name"], int(a["data-start-ns"]),
                                int(a["data-end-ns"])))
        elif tag == "g" and a.get("class") == "pin":
            self.pins.append((a["data-rule"], int(a["data-from-ns"]), int(a["data-to-ns"])))
        elif tag == "rect" and a.get("class") == "gap":
            self.gaps.append(int(a["data-idle-ns"]))
        elif tag == "tr" and self.section == "launch-sites":
            self.row = []
        elif tag == "td" and self.row is not None:
            self.cell = ""

    def handle_endtag(self, tag):
        if tag == "td" and self.cell is not None:
            self.row.append(self.cell)
            self.cell = None
        elif tag == "tr" and self.row is not None:
            if self.row:
                self.sites.append(self.row)
            self.row = None

    def handle_data(self, data):
        if self.cell is not None:
            self.cell += data


def render(tmp_path, inputs, name):
    page = tmp_path / f"{name}.html"
    r = run([GPUPROF, "report", "-o", str(page), *inputs], cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    text = page.read_text()
    assert "src=" not in text and "<link" not in text and "url(" not in text
    return Pictures(chromium(page, tmp_path / "profile", f"{name}.png"))


def busy_ns(out):
    """The device's busy time: kernels and copies merged where they overlap."""
    rows = sorted((r["start"], r["end"]) for r in out.query(
        "SELECT start, end FROM gpuprof_kernel UNION ALL SELECT start, end FROM "
        "gpuprof_memory_copy"))
    total, busy = 0, None
    for start, end in rows:
        if busy and start <= busy[1]:
            busy[1] = max(busy[1], end)
            continue
        total += busy[1] - busy[0] if busy else 0
        busy = [start, end]
    return total + (busy[1] - busy[0] if busy else 0)


@NEEDS_CHROMIUM
def test_cpu_flame_graph_and_ranges_of_a_sampled_program(tmp_path):
    """split's 70/30 rounds inside marker ranges, sampled: in the flame graph each of
    seventy() and thirty() is one frame whose total is the samples with it on their stack
    in the database; the run over time has a thread lane and the ranges "loop/hot" at the
    database's times."""
    r = run([GPUPROF, "sys", "--no-host-metrics", "--no-device-metrics", "-d", "out", "--",
             SPLIT, "range", "30"], cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    (out,) = [o for o in outputs(str(tmp_path / "out")) if not pocl_linker(o)]
    page = render(tmp_path, [out.path("results.db")], "report-split")
    assert page.scripts == 1  # the flame graphs' zoom and search, inline
    (frames,) = [f for name, f in page.flames.items() if name.startswith("cpu-flame")]
    total = out.query("SELECT COUNT(*) AS n FROM samples")[0]["n"]
    for function in ("seventy", "thirty"):
        on_stack = out.query(
            "WITH RECURSIVE up(sample, id) AS (SELECT s.id, s.stack_id FROM gpuprof_sample s "
            "UNION ALL SELECT up.sample, k.parent_id FROM up JOIN gpuprof_stack k ON "
            "k.stack_id = up.id WHERE up.id != 0) SELECT COUNT(DISTINCT up.sample) AS n FROM "
            "up JOIN gpuprof_stack k ON k.stack_id = up.id JOIN gpuprof_frame f ON "
            "f.frame_id = k.frame_id WHERE f.function = ?", function)[0]["n"]
        mine = [t for f, _, t in frames if f == function]
        assert mine == [on_stack], (function, mine, on_stack)
    assert 0 < on_stack < total
    ranges = out.query("SELECT m.start - p.start AS start, m.end - p.start AS end FROM "
                       "gpuprof_marker m JOIN gpuprof_process p ON p.id = m.process_id "
                       "ORDER BY m.start")
    assert len(ranges) == 30
    assert sorted((s, e) for _, name, s, e in page.ranges if name == "loop/hot") == \
        [(x["start"], x["end"]) for x in ranges]
    assert page.timelines == 1


@NEEDS_CHROMIUM
def test_device_time_flame_graph_and_lanes(tmp_path):
    """launch-sites under --launch-stacks: the device-time flame graph's kernel frames are
    the kernels' device time in the database; the device lane's busy time is the merged
    time of its kernels and copies; its queues and the launching thread have lanes."""
    r = run([GPUPROF, "trace", "--kernel-trace", "--memory-copy-trace", "--launch-stacks",
             "-r", "-d", "out", "--", SITES, "-n", "20"], cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    (out,) = [o for o in outputs(str(tmp_path / "out")) if not pocl_linker(o)]
    page = render(tmp_path, [out.path("results.db")], "report-launch-sites")
    frames = page.flames["device-flame-1"]
    for kernel in ("light", "heavy"):
        ns = out.query("SELECT SUM(k.end - k.start) AS ns FROM gpuprof_kernel k JOIN "
                       "gpuprof_string s ON s.id = k.name_id WHERE s.string = ?",
                       kernel)[0]["ns"]
        assert [t for f, m, t in frames if f == kernel and m == "[device]"] == [ns]
    devices = [busy for _, kind, busy in page.lanes if kind == "device"]
    assert devices == [busy_ns(out)]
    kinds = sorted({kind for _, kind, _ in page.lanes})
    assert kinds == ["device", "queue", "thread"]
    assert sorted(row[0] for row in page.sites) == ["heavy", "heavy", "light"]
    # the findings of the device pinned over its kernels' span, as advise found them
    advise = run([GPUPROF, "advise", "--format", "json", out.path("results.db")], cwd=tmp_path)
    [table] = json.loads(advise.stdout)
    (span,) = out.query("SELECT MIN(k.start) - p.start AS a, MAX(k.end) - p.start AS b FROM "
                        "gpuprof_kernel k JOIN gpuprof_process p ON p.id = k.process_id")
    device_rules = sorted(row[1] for row in table["rows"] if row[3])
    assert sorted(rule for rule, _, _ in page.pins) == device_rules
    assert all((a, b) == (span["a"], span["b"]) for _, a, b in page.pins), page.pins


@NEEDS_CHROMIUM
def test_four_processes_merged(tmp_path):
    """Four runs merged into one database: the run over time has one picture per process,
    each with its device's busy time."""
    dbs = []
    for i in range(4):
        r = run([GPUPROF, "trace", "--kernel-trace", "-d", f"run{i}", "--", SITES, "-n", "4"],
                cwd=tmp_path)
        assert r.returncode == 0, r.stderr
        (out,) = [o for o in outputs(str(tmp_path / f"run{i}")) if not pocl_linker(o)]
        dbs.append(out)
    merged = str(tmp_path / "all.db")
    m = run([GPUPROF, "merge", "-o", merged, *[o.path("results.db") for o in dbs]],
            cwd=tmp_path)
    assert m.returncode == 0, m.stderr
    page = render(tmp_path, [merged], "report-four-processes")
    assert page.timelines == 4
    busy = [b for picture, kind, b in page.lanes if kind == "device"]
    assert sorted(busy) == sorted(busy_ns(o) for o in dbs)


@NEEDS_CHROMIUM
def test_pytorch_model_through_pyopencl(tmp_path):
    """The PyTorch model of torch_pyopencl.py under --launch-stacks --torch-trace: the
    launch sites are its modules' forward methods, each 50 kernels and 50 copies back;
    the operators' ranges are drawn under the thread."""
    check = run(["/usr/bin/python3", "-c", "import pyopencl, torch"], cwd=tmp_path)
    if check.returncode:
        pytest.skip("pyopencl or torch is not installed (python3-pyopencl, python3-torch)")
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "torch_pyopencl.py")
    r = run([GPUPROF, "trace", "--kernel-trace", "-r", "--launch-stacks", "--torch-trace",
             "-d", "out", "--", "/usr/bin/python3", script, "50"], cwd=tmp_path, timeout=300)
    assert r.returncode == 0, r.stderr
    (out,) = [o for o in outputs(str(tmp_path / "out")) if not pocl_linker(o)]
    page = render(tmp_path, [out.path("results.db")], "report-pytorch")
    sites = {(row[0], row[3]): int(row[4]) for row in page.sites}
    copy = "[copy device to host]"
    assert sites == {("torch_pyopencl.py:Scale.forward", "scale"): 50,
                     ("torch_pyopencl.py:Shift.forward", "shift"): 50,
                     ("torch_pyopencl.py:Scale.forward", copy): 50,
                     ("torch_pyopencl.py:Shift.forward", copy): 50}, page.sites
    # --torch-trace names a module by its class, with its place in the model beside it
    # (Sequential's 0 and 1); the report shows both
    ranges = [name for _, name, _, _ in page.ranges]
    scale = "nn.Module.Sequential.forward/nn.Module.Scale.forward"
    ranged = out.query(f"SELECT COUNT(*) AS n FROM markers WHERE name = '{scale}' AND "
                       "module_path = 'Sequential.0'")[0]["n"]
    assert ranged == 50
    assert ranges.count(scale + " [Sequential.0]") == 50


class MpiPage(HTMLParser):
    """What the rendered page shows of an MPI run: each timeline figure's window and
    caption, the messages figure, its lines and its rows' rectangles, the MPI tables."""

    def __init__(self, dom):
        super().__init__()
        self.figures, self.messages, self.lines, self.rects = [], None, [], {}
        self.tables, self.caption, self.rank, self.table, self.row, self.cell = {}, None, \
            None, None, None, None
        self.feed(dom)

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "figure" and a.get("class") == "timeline":
            self.figures.append([int(a["data-window-start-ns"]), float(a["data-window-ns"]), ""])
        elif tag == "figure" and a.get("class") == "messages":
            self.messages = a
        elif tag == "figcaption":
            self.caption = ""
        elif tag == "line" and a.get("class") == "message":
            self.lines.append(a)
        elif tag == "g" and a.get("class") == "mlane":
            self.rank = int(a["data-rank"])
            self.rects[self.rank] = []
        elif tag == "rect" and self.rank is not None:
            self.rects[self.rank].append((int(a["x"]), int(a["width"])))
        elif tag == "table" and a.get("data-table"):
            self.table = a["data-table"]
            self.tables[self.table] = []
        elif tag == "tr" and self.table:
            self.row = []
        elif tag == "td" and self.row is not None:
            self.cell = ""

    def handle_endtag(self, tag):
        if tag == "figcaption" and self.caption is not None:
            if self.figures and self.messages is None:
                self.figures[-1][2] = self.caption
            self.caption = None
        elif tag == "g":
            self.rank = None
        elif tag == "td" and self.cell is not None:
            self.row.append(self.cell)
            self.cell = None
        elif tag == "tr" and self.row is not None:
            if self.row:
                self.tables[self.table].append(self.row)
            self.row = None
        elif tag == "table":
            self.table = None

    def handle_data(self, data):
        if self.caption is not None:
            self.caption += data
        if self.cell is not None:
            self.cell += data


@NEEDS_CHROMIUM
def test_an_mpi_run_merged_is_drawn_on_one_axis(tmp_path):
    """61: four ranks (bench/make-ranks: exact times, an all-reduce per step that rank 3
    reaches last, a ring exchange) merged: every rank's picture on the merged run's axis,
    titled by its rank; the messages drawn from send to receive on that axis; the MPI
    tables gpuprof summary prints, in the page."""
    from conftest import BUILD, csv_table
    ranks, steps, label, px = 4, 10, 210, 990
    r = run([os.path.join(BUILD, "bench", "make-ranks"), str(tmp_path), str(ranks),
             str(steps)], cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    dbs = []
    for k in range(ranks):
        c = run([GPUPROF, "convert", "-f", "sqlite", f"rank{k}.spool"], cwd=tmp_path)
        assert c.returncode == 0, c.stderr
        dbs.append(str(tmp_path / f"rank{k}_results.db"))
    merged = str(tmp_path / "all.db")
    assert run([GPUPROF, "merge", "-o", merged, *dbs], cwd=tmp_path).returncode == 0
    page_path = tmp_path / "mpi.html"
    r = run([GPUPROF, "report", "-o", str(page_path), merged], cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    page = MpiPage(chromium(page_path, tmp_path / "profile", "report-mpi-ranks.png"))
    import sqlite3
    with sqlite3.connect(merged) as db:
        first, last = db.execute("SELECT MIN(start), MAX(end) FROM processes").fetchone()
        ends = db.execute("SELECT sequence, rank, end FROM mpi_calls WHERE function = "
                          "'MPI_Allreduce'").fetchall()
        sends = sorted(db.execute("SELECT start FROM mpi_calls WHERE function = 'MPI_Send' "
                                  "OR function = 'MPI_Isend'").fetchall())
    # one axis: every picture from the first start to the last end, ranks in order
    assert [f[:2] for f in page.figures] == [[first, float(last - first)]] * ranks
    assert [f[2].split(",")[0] for f in page.figures] == [f"rank {k}" for k in range(ranks)]
    slice_ns = (last - first) / px

    def x(ns):
        return label + (ns - first) / slice_ns

    # each all-reduce ends at the same pixel on every rank, and there each rank's row of
    # the messages' picture is drawn (its calls, on the common axis)
    by_instance = {}
    for sequence, rank, end in ends:
        by_instance.setdefault(sequence, []).append((rank, end))
    assert len(by_instance) == steps
    for sequence, rows in by_instance.items():
        pixels = {int(x(end) - 1e-9) for rank, end in rows}
        assert len(pixels) == 1 and len(rows) == ranks, (sequence, rows)
        (p,) = pixels
        for rank, _ in rows:
            assert any(rx <= p < rx + w for rx, w in page.rects[rank]), (sequence, rank, p)
    # the messages: the ring, each from its send to the end of its receive
    assert int(page.messages["data-messages"]) == ranks * steps == len(page.lines)
    assert {(int(m["data-sender"]), int(m["data-receiver"])) for m in page.lines} == \
        {(k, (k + 1) % ranks) for k in range(ranks)}
    assert sorted(int(m["data-sent-ns"]) for m in page.lines) == [s for (s,) in sends]
    for m in page.lines:
        assert abs(float(m["x1"]) - x(int(m["data-sent-ns"]))) < 0.01, m
        assert abs(float(m["x2"]) - x(int(m["data-received-ns"]))) < 0.01, m
    # the MPI tables, as gpuprof summary gives them
    s = run([GPUPROF, "summary", "--format", "csv", "-u", "msec", merged], cwd=tmp_path)
    assert s.returncode == 0, s.stderr
    for key, title in (("mpi_ranks", "# MPI RANKS"), ("mpi_collectives", "# MPI COLLECTIVES")):
        expected = [list(row.values()) for row in csv_table(s.stdout, title)]
        assert page.tables[key] == expected, (key, page.tables[key], expected)
