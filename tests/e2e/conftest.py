"""Helpers for the end-to-end tests: run gpuprof on real OpenCL programs (PoCL on a
machine without a GPU) and read what it wrote."""
import csv
import glob
import json
import os
import shutil
import socket
import sqlite3
import subprocess

import pytest

BUILD = os.path.abspath(os.environ.get("BUILD", os.path.join(os.path.dirname(__file__), "../../build")))
GPUPROF = os.path.join(BUILD, "bin", "gpuprof")
SAMPLES = os.path.join(BUILD, "samples")
TESTS = os.path.join(BUILD, "tests")
HOST = socket.gethostname()

if os.environ.get("HAVE_OPENCL", "yes") != "yes":  # a build without OpenCL: nothing to run
    collect_ignore_glob = ["test_*.py"]
else:  # a build missing is said, not taken for no tests
    for needed in (GPUPROF, os.path.join(SAMPLES, "vcopy"), os.path.join(TESTS, "launcher")):
        if not os.path.exists(needed):
            raise pytest.UsageError(f"{needed} is missing: build first ('make', or set BUILD to "
                                    f"the build to test; HAVE_OPENCL=no for a build without "
                                    f"OpenCL)")


def run(args, cwd, env=None, timeout=120):
    """Runs a command and returns the CompletedProcess with text output."""
    full_env = dict(os.environ)
    full_env.update(env or {})
    return subprocess.run(args, cwd=cwd, env=full_env, capture_output=True, text=True,
                          timeout=timeout)


def preload(library):
    """LD_PRELOAD naming `library` for gpuprof and the program it runs. gpuprof built
    with a sanitizer (make check-asan) is linked with its runtime, which must come first."""
    linked = subprocess.run(["ldd", GPUPROF], capture_output=True, text=True).stdout
    for line in linked.splitlines():
        name, _, path = line.strip().partition(" => ")
        if name.startswith(("libasan.so", "libtsan.so")):
            return path.split()[0] + ":" + library
    return library


def csv_table(text, title):
    """The rows (dicts) of the table of `gpuprof ... --format csv` output whose title line
    begins with title ("# MPI RANKS"); [] when it has none."""
    for block in text.strip().split("\n\n"):
        head, _, rows = block.partition("\n")
        if head.startswith(title):
            return list(csv.DictReader(rows.splitlines()))
    return []


def merged_collectives(tmp_path, ranks):
    """The ranks' databases out/rank<k>_results.db merged into all.db: the rows (dicts) of
    gpuprof summary's MPI COLLECTIVES table of it."""
    merged = str(tmp_path / "all.db")
    m = run([GPUPROF, "merge", "-o", merged, *[str(tmp_path / "out" / f"rank{k}_results.db")
                                               for k in range(ranks)]], cwd=tmp_path)
    assert m.returncode == 0, m.stderr
    s = run([GPUPROF, "summary", "--format", "csv", merged], cwd=tmp_path)
    assert s.returncode == 0, s.stderr
    return csv_table(s.stdout, "# MPI COLLECTIVES")


def trace(tmp_path, options, command, env=None):
    """gpuprof trace OPTIONS -- COMMAND in tmp_path; returns the CompletedProcess."""
    return run([GPUPROF, "trace", *options, "--", *command], cwd=tmp_path, env=env)


class Outputs:
    """The outputs of one recorded process: <dir>/<prefix>_*."""

    def __init__(self, prefix):
        self.prefix = prefix
        base = os.path.basename(prefix)
        self.pid = int(base) if base.isdigit() else None

    def path(self, name):
        return f"{self.prefix}_{name}"

    def exists(self, name):
        return os.path.exists(self.path(name))

    def csv(self, name):
        with open(self.path(name), newline="") as f:
            return list(csv.DictReader(f))

    def csv_header(self, name):
        with open(self.path(name), newline="") as f:
            return next(csv.reader(f))

    def db(self):
        con = sqlite3.connect(self.path("results.db"))
        con.row_factory = sqlite3.Row
        return con

    def query(self, sql, *args):
        with self.db() as con:
            return [dict(r) for r in con.execute(sql, args)]


def frames_of(out, stack_id):
    """The functions of a stack of the database (gpuprof_stack), from the root down."""
    rows = out.query("WITH RECURSIVE up(id, depth) AS (SELECT ?, 0 UNION ALL "
                     "SELECT k.parent_id, depth + 1 FROM gpuprof_stack k JOIN up "
                     "ON k.stack_id = up.id WHERE up.id != 0) "
                     "SELECT f.function FROM up JOIN gpuprof_stack k ON k.stack_id = up.id "
                     "JOIN gpuprof_frame f ON f.frame_id = k.frame_id ORDER BY depth DESC",
                     stack_id)
    return [r["function"] for r in rows]


def pocl_linker(out):
    """Whether a recorded process is PoCL's linker: on a cold kernel cache PoCL links each
    kernel it compiles by running ld in a child process, which gpuprof records like any
    child of the program; the tests count the program's own processes."""
    if not out.exists("results.db"):
        return False
    (row,) = out.query("SELECT COUNT(*) AS n, SUM(command LIKE '/usr/bin/ld %' AND "
                       "command LIKE '%/tempfile_%') AS linker FROM processes")
    return row["n"] == 1 and row["linker"] == 1


def outputs(directory):
    """Every recorded process under directory, by its database or its agent_info.csv
    (PoCL's linker left out)."""
    prefixes = set()
    for suffix in ("_results.db", "_agent_info.csv"):
        for path in glob.glob(os.path.join(directory, "**", "*" + suffix), recursive=True):
            prefixes.add(path[: -len(suffix)])
    return [o for o in (Outputs(p) for p in sorted(prefixes)) if not pocl_linker(o)]


@pytest.fixture
def vcopy():
    return os.path.join(SAMPLES, "vcopy")


@pytest.fixture
def busy():
    return os.path.join(SAMPLES, "busy")


@pytest.fixture
def launcher():
    return os.path.join(TESTS, "launcher")


CHROMIUM = shutil.which("chromium")
NEEDS_CHROMIUM = pytest.mark.skipif(not CHROMIUM, reason="Debian's chromium is not installed "
                                    "(scripts/install-deps.sh installs it)")


def chromium(html, profile, screenshot=None):
    """Opens a file in headless Chromium: returns the DOM it built, after checking that it
    rendered without a console error; with screenshot (a name), also keeps a picture of it
    in build/test-artifacts."""
    chrome = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
              "--disable-background-networking", f"--user-data-dir={profile}"]
    dom = subprocess.run(chrome + ["--enable-logging=stderr", "--v=0", "--dump-dom",
                                   html.as_uri()], capture_output=True, text=True, timeout=120)
    assert dom.returncode == 0, dom.stderr
    assert "CONSOLE" not in dom.stderr and "Uncaught" not in dom.stderr, dom.stderr
    if screenshot:
        artifacts = os.path.join(BUILD, "test-artifacts")
        os.makedirs(artifacts, exist_ok=True)
        shot = os.path.join(artifacts, screenshot)
        if os.path.exists(shot):
            os.unlink(shot)
        r = subprocess.run(chrome + ["--window-size=1000,720", f"--screenshot={shot}",
                                     html.as_uri()], capture_output=True, text=True, timeout=120)
        assert r.returncode == 0 and os.path.getsize(shot) > 10000, r.stderr
    return dom.stdout


def advise_findings(cwd, db):
    """gpuprof advise's findings of a database, by rule: each a dict of the JSON table's
    columns."""
    r = run([GPUPROF, "advise", "--format", "json", db], cwd=cwd)
    assert r.returncode == 0, r.stderr
    [table] = json.loads(r.stdout)
    assert table["name"] == "findings"
    return {row["Rule"]: row for row in (dict(zip(table["columns"], x)) for x in table["rows"])}


def recording(directory, lines, pid=4242):
    """The database of a process described line by line (tests/e2e/make-recording.c), with
    the exact times the lines give, through gpuprof convert: for tests whose premise is a
    duration. Returns the database's path."""
    directory.mkdir(parents=True, exist_ok=True)
    spool = directory / f"{pid}.spool"
    made = subprocess.run([os.path.join(TESTS, "make-recording"), str(spool)],
                          input="\n".join(lines) + "\n", capture_output=True, text=True)
    assert made.returncode == 0, made.stderr
    r = run([GPUPROF, "convert", "-f", "sqlite", str(spool)], cwd=directory)
    assert r.returncode == 0, r.stderr
    return str(directory / f"{pid}_results.db")
