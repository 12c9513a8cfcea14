"""gpuprof diff: two runs of one program differ in nothing significant; a run whose one
kernel does twice the work shows that kernel (and the marker range around it) slower,
significant, and fails --threshold; new and vanished kernels; formats; bad input."""
import csv
import io
import json
import os
import sqlite3

import pytest
from conftest import GPUPROF, TESTS, run


def record(tmp_path, name, *args):
    out = tmp_path / name
    r = run([GPUPROF, "trace", "--kernel-trace", "--marker-trace", "-d", str(out), "-o", "run",
             "-f", "sqlite", "--", os.path.join(TESTS, "slowdown"), *args], cwd=tmp_path,
            timeout=300)
    assert r.returncode == 0, r.stderr
    return str(out / "run_results.db")


# PoCL runs the kernels on this machine's CPU, shared with the program's own thread and,
# on a small VM, with whatever else runs: a kernel's mean moves by more than the default
# noise floor (5 %) between runs, and by more again under a sanitizer (the recording
# library takes CPU time from the device's threads). The slower kernel's change, 100 %,
# stands well above either floor.
NOISE = ["--noise", "30" if os.environ.get("GPUPROF_SANITIZER") else "15"]


def diff(tmp_path, *args):
    r = run([GPUPROF, "diff", "--format", "json", *NOISE, *args], cwd=tmp_path)
    [table] = json.loads(r.stdout)
    return r, {(row[0], row[1]): dict(zip(table["columns"], row)) for row in table["rows"]}


def durations(db, name, table="gpuprof_kernel"):
    with sqlite3.connect(db) as c:
        return [d for (d,) in c.execute(f"SELECT k.end - k.start FROM {table} k JOIN "
                                        "gpuprof_string s ON s.id = k.name_id "
                                        "WHERE s.string = ?", (name,))]


def mean(values):
    return sum(values) / len(values)


def test_same_program_twice_and_one_kernel_slower(tmp_path):
    a, b = record(tmp_path, "a"), record(tmp_path, "b")
    r, rows = diff(tmp_path, a, b, "--threshold", "10")
    assert r.returncode == 0, (r.stderr, rows)
    assert set(rows) == {("kernel", "steady"), ("kernel", "varied"), ("range", "step")}
    assert [k for k, row in rows.items() if row["Significant"] != "no"] == [], rows
    assert all(row["Status"] == "same" for row in rows.values())
    # the figures are the rows' own
    steady_a, steady_b = durations(a, "steady"), durations(b, "steady")
    row = rows[("kernel", "steady")]
    assert (row["A_Calls"], row["A_Total_ns"], row["B_Calls"], row["B_Total_ns"]) == (
        60, sum(steady_a), 60, sum(steady_b))
    assert row["Change_pct"] == pytest.approx(
        100 * (sum(steady_b) / 60 - sum(steady_a) / 60) / (sum(steady_a) / 60), rel=1e-9)

    slow = record(tmp_path, "slow", "--slower", "2")
    r, rows = diff(tmp_path, a, slow, "--threshold", "10")
    assert r.returncode == 3, r.stderr
    significant = {k: row["Status"] for k, row in rows.items() if row["Significant"] == "yes"}
    # the kernel made slower, significant; the other kernel not. The range around them
    # holds host time too (clFinish's wake-ups, an occasional long step, more of it on a
    # loaded machine or under a sanitizer), so its change in % varies: its figures are
    # the rows' own, and it grew by most of what the slower kernel added to each step
    # (significant where its steps vary little).
    assert significant.pop(("kernel", "varied")) == "slower"
    assert ("kernel", "steady") not in significant
    step_a, step_slow = durations(a, "step", "gpuprof_marker"), durations(slow, "step",
                                                                          "gpuprof_marker")
    assert rows[("range", "step")]["Change_pct"] == pytest.approx(
        100 * (mean(step_slow) - mean(step_a)) / mean(step_a), rel=1e-9)
    added = mean(durations(slow, "varied")) - mean(durations(a, "varied"))
    assert mean(step_slow) - mean(step_a) > 0.5 * added, (step_a, step_slow, added)
    assert r.stderr == (f"gpuprof: diff: {1 + len(significant)} kernel"
                        f"{'s or ranges' if significant else ' or range'} significantly "
                        "slower by more than 10 %\n")
    assert 70 < rows[("kernel", "varied")]["Change_pct"] < 130  # twice the work, on a shared CPU
    assert rows[("kernel", "varied")]["P_Value"] < 1e-6
    assert list(rows)[0] == ("kernel", "varied") or list(rows)[0] == ("range", "step")
    r, _ = diff(tmp_path, a, slow)  # without --threshold: the comparison only
    assert r.returncode == 0

    # text and csv: the same rows (with the same noise floor)
    r = run([GPUPROF, "diff", "--format", "csv", *NOISE, a, slow], cwd=tmp_path)
    lines = [line for line in r.stdout.splitlines() if line and not line.startswith("#")]
    table = list(csv.DictReader(io.StringIO("\n".join(lines))))
    assert {(t["Kind"], t["Name"]): t["Status"] for t in table} == {
        (k[0], k[1]): row["Status"] for k, row in rows.items()}
    r = run([GPUPROF, "diff", *NOISE, a, slow], cwd=tmp_path)
    assert r.returncode == 0 and "varied" in r.stdout and "slower" in r.stdout


def test_new_and_vanished(tmp_path):
    a = record(tmp_path, "a", "-i", "5")
    b = tmp_path / "b.db"
    b.write_bytes(open(a, "rb").read())
    with sqlite3.connect(b) as c:  # B: "steady" renamed "other"
        c.execute("UPDATE gpuprof_string SET string = 'other' WHERE string = 'steady'")
    r, rows = diff(tmp_path, a, str(b), "--threshold", "10")
    assert r.returncode == 0, r.stderr
    assert rows[("kernel", "steady")]["Status"] == "vanished"
    assert rows[("kernel", "steady")]["B_Calls"] is None
    assert rows[("kernel", "other")]["Status"] == "new"
    assert rows[("kernel", "other")]["A_Calls"] is None
    assert rows[("kernel", "varied")]["Status"] == "same"
    assert rows[("kernel", "varied")]["P_Value"] == 1  # the same durations


def test_bad_input(tmp_path):
    a = record(tmp_path, "a", "-i", "2")
    for args, status, message in [
            ([a], 2, "diff: two databases are compared, 1 given"),
            ([a, a, a], 2, "diff: two databases are compared, 3 given"),
            ([a, str(tmp_path / "missing.db")], 1, "missing.db"),
            ([a, a, "--threshold", "ten"], 2, "--threshold ten: a number"),
            ([a, a, "--alpha", "2"], 2, "--alpha 2: a number from"),
            ([a, a, "--format", "xml"], 2, "xml")]:
        r = run([GPUPROF, "diff", *args], cwd=tmp_path)
        assert r.returncode == status and message in r.stderr, (args, r.stderr)
        assert r.stderr.count("\n") == 1 and r.stdout == "", (args, r.stderr)
