"""gpuprof report and trace -f html: one self-contained page (its script inline, nothing
fetched), opened in headless Chromium (no console error, a screenshot kept), the sections
that have something to show with the numbers the database gives (durations and sizes as
a person reads them, the exact values in data- attributes), hostile names shown as text,
several inputs, bad input."""
import json
import os
import sqlite3
from html.parser import HTMLParser

from conftest import GPUPROF, NEEDS_CHROMIUM, SAMPLES, TESTS, chromium, run

SECTIONS = ["overview", "timeline", "findings", "kernels", "copies", "memory", "api"]


class Page(HTMLParser):
    """The page as Chromium built it: each section's table rows (cell texts), the
    findings' rules, the lanes' busy times, and every element's tag."""

    def __init__(self, dom):
        super().__init__()
        self.sections, self.rules, self.lanes, self.tags = {}, [], [], set()
        self.roofline = []  # the data- attributes of each ceiling and point
        self.section, self.row, self.cell = None, None, None
        self.feed(dom)

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.tags.add(tag)
        if tag == "g" and a.get("class") in ("ceiling", "point"):
            self.roofline.append({k: v for k, v in a.items() if k.startswith("data-")})
        if tag == "section":
            self.section = a["id"]
            self.sections[self.section] = []
        elif tag == "tr":
            self.row = []
        elif tag in ("td", "th") and self.row is not None:
            self.cell = ""
            # the exact value a cell shows in human units
            self.exact = next((a[k] for k in ("data-ns", "data-bytes", "data-value")
                               if k in a), None)
        elif tag == "div" and a.get("class") == "finding":
            self.rules.append((a["data-rule"], int(a["data-cost-ns"])))
        elif tag == "g" and a.get("class") == "lane":
            self.lanes.append(int(a["data-busy-ns"]))

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self.cell is not None:
            self.row.append(self.cell if self.exact is None else self.exact)
            self.cell = None
        elif tag == "tr" and self.row is not None:
            self.sections[self.section].append(self.row)
            self.row = None

    def handle_data(self, data):
        if self.cell is not None:
            self.cell += data

    def table(self, section):
        """{first cell: {column: cell}} of the section's (first) table: a cell in human
        units as its exact value."""
        header, *rows = self.sections[section]
        return {row[0]: dict(zip(header, row)) for row in rows}


def busy_ns(db):
    """A device's busy time: its kernels and copies merged where they overlap."""
    with sqlite3.connect(db) as c:
        rows = sorted(c.execute("SELECT start, end FROM gpuprof_kernel UNION ALL "
                                "SELECT start, end FROM gpuprof_memory_copy"))
    busy, total = None, 0
    for start, end in rows:
        if busy and start <= busy[1]:
            busy[1] = max(busy[1], end)
            continue
        if busy:
            total += busy[1] - busy[0]
        busy = [start, end]
    return total + (busy[1] - busy[0] if busy else 0)


@NEEDS_CHROMIUM
def test_trace_html_of_hostsync(tmp_path):
    out = tmp_path / "out"
    r = run([GPUPROF, "trace", "--runtime-trace", "-d", str(out), "-o", "run", "-f", "sqlite",
             "html", "--", os.path.join(SAMPLES, "hostsync")], cwd=tmp_path, timeout=300)
    assert r.returncode == 0, r.stderr
    page_path, db = out / "run_report.html", str(out / "run_results.db")
    text = page_path.read_text()
    assert "<link" not in text and "src=" not in text
    assert "@import" not in text and "url(" not in text
    page = Page(chromium(page_path, tmp_path / "profile", "report.png"))
    assert list(page.sections) == SECTIONS
    with sqlite3.connect(db) as c:
        kernels = c.execute("SELECT COUNT(*), SUM(end - start) FROM gpuprof_kernel").fetchone()
        finish = c.execute("SELECT COUNT(*), SUM(c.end - c.start) FROM gpuprof_api_call c "
                           "JOIN gpuprof_string s ON s.id = c.function_id "
                           "WHERE s.string = 'clFinish'").fetchone()
        read = c.execute("SELECT COUNT(*), SUM(bytes) FROM gpuprof_memory_copy").fetchone()
    row = page.table("kernels")["mycopy"]
    assert (int(row["Calls"]), int(row["Total"]), row["%"]) == (*kernels, "100.0")
    row = page.table("api")["clFinish"]
    assert (int(row["Calls"]), int(row["Total"])) == finish
    row = page.table("copies")["COPY MEMORY_COPY_DEVICE_TO_HOST"]
    assert (int(row["Calls"]), int(row["Bytes"])) == read
    assert page.lanes == [busy_ns(db)]
    advise = run([GPUPROF, "advise", "--format", "json", db], cwd=tmp_path)
    [table] = json.loads(advise.stdout)
    assert page.rules == [(row[1], row[4]) for row in table["rows"]]
    # a wait after each launch is a count; whether the device also idled long enough for
    # device-idle is PoCL's timing (test_advise.py gives that premise exact times)
    assert "sync-per-launch" in {rule for rule, _ in page.rules}
    # nothing recorded there: no section says so
    assert "ranges" not in page.sections and "functions" not in page.sections


@NEEDS_CHROMIUM
def test_hostile_names_are_text(tmp_path):
    out = tmp_path / "out"
    r = run([GPUPROF, "trace", "--kernel-trace", "--marker-trace", "-d", str(out), "-o", "run",
             "-f", "sqlite", "--", os.path.join(TESTS, "slowdown"), "-i", "3"], cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    db = out / "run_results.db"
    hostile = "<script>alert(1)</script>\"'&amp;<img src=x onerror=alert(2)>"
    with sqlite3.connect(db) as c:
        c.execute("UPDATE gpuprof_string SET string = ? WHERE string = 'steady'", (hostile,))
        c.execute("UPDATE gpuprof_string SET string = CAST(X'73746570ff2d2d' AS TEXT) "
                  "WHERE string = 'step'")  # "step", an invalid byte, "--"
    page_path = tmp_path / "hostile.html"
    r = run([GPUPROF, "report", "-o", str(page_path), str(db)], cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    page = Page(chromium(page_path, tmp_path / "profile", "report-hostile.png"))
    assert "script" not in page.tags and "img" not in page.tags
    assert page.table("kernels")[hostile]["Calls"] == "3"
    assert page.table("ranges")["step\ufffd--"]["Calls"] == "3"


def test_several_inputs_and_bad_input(tmp_path):
    dbs = []
    for name in ("a", "b"):
        r = run([GPUPROF, "trace", "--kernel-trace", "-d", str(tmp_path / name), "-o", "run",
                 "-f", "sqlite", "--", os.path.join(SAMPLES, "vcopy"), "-i", "4"], cwd=tmp_path)
        assert r.returncode == 0, r.stderr
        dbs.append(str(tmp_path / name / "run_results.db"))
    page_path = tmp_path / "both.html"
    r = run([GPUPROF, "report", *dbs, "-o", str(page_path)], cwd=tmp_path)
    assert r.returncode == 0 and r.stderr == f"gpuprof: report: {page_path}\n", r.stderr
    page = Page(page_path.read_text())
    assert page.table("kernels")["vecCopy"]["Calls"] == "8"
    lanes = [row[0] for row in page.sections["overview"][1:]]
    assert len(lanes) == 2 and lanes[0].startswith("1: pid ") and lanes[1].startswith("2: pid ")
    (tmp_path / "text.db").write_text("not a database")
    for args, status, message in [
            ([], 2, "report: no database or workload given"),
            ([str(tmp_path / "missing.db")], 1, "missing.db"),
            ([str(tmp_path / "text.db")], 1, "text.db"),
            ([dbs[0], "-o", str(tmp_path / "no" / "where.html")], 1, "where.html")]:
        r = run([GPUPROF, "report", *args], cwd=tmp_path)
        assert r.returncode == status and message in r.stderr, (args, r.stderr)
        assert r.stderr.count("\n") == 1, (args, r.stderr)
    assert sorted(os.listdir(tmp_path)) == ["a", "b", "both.html", "text.db"]


def test_html_alone_leaves_no_database(tmp_path):
    """-f html without sqlite: the page is made from a database built for it and removed."""
    out = tmp_path / "out"
    r = run([GPUPROF, "trace", "-d", str(out), "-o", "run", "-f", "html", "--",
             os.path.join(SAMPLES, "vcopy"), "-i", "3"], cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert os.listdir(out) == ["run_report.html"]
    assert Page((out / "run_report.html").read_text()).table("kernels")["vecCopy"]["Calls"] == "3"


@NEEDS_CHROMIUM
def test_workload_directory_adds_its_roofline(tmp_path):
    """A compute workload's directory: its database (trace/) for the run's sections, and its
    roofline, the same ceilings and points as compute analyze --roofline-plot draws."""
    from test_compute import roof_workload
    workload = tmp_path / "workload"
    roof_workload(workload)
    r = run([GPUPROF, "trace", "--kernel-trace", "-d", str(workload / "trace"), "-o",
             "node_1", "-f", "sqlite", "--", os.path.join(SAMPLES, "vcopy"), "-i", "2"],
            cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    plot = tmp_path / "plot.html"
    r = run([GPUPROF, "compute", "analyze", "-p", str(workload), "-b", "4",
             "--roofline-plot", str(plot)], cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    page_path = tmp_path / "report.html"
    r = run([GPUPROF, "report", str(workload), "-o", str(page_path)], cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    page = Page(chromium(page_path, tmp_path / "profile", "report-roofline.png"))
    alone = Page(plot.read_text())
    assert page.roofline == alone.roofline
    assert len([g for g in page.roofline if "data-label" in g]) > 0
    assert page.table("kernels")["vecCopy"]["Calls"] == "2"
    (workload / "trace" / "node_2_results.db").write_bytes(
        (workload / "trace" / "node_1_results.db").read_bytes())
    r = run([GPUPROF, "report", str(workload), "-o", str(page_path)], cwd=tmp_path)
    assert r.returncode == 1 and "several databases under trace/ and no all_results.db" \
        in r.stderr, r.stderr
