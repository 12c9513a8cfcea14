"""gpuprof diff. Premises of time (a kernel twice as slow, runs that vary) come from
recordings with exact times (make-recording): the statistics against a hand computation,
groups of runs from one distribution not significant, a kernel 2x slower in every run of
B significant, one run a side held to its floor. Real runs on PoCL: the rows' own
arithmetic, new and vanished kernels, formats, bad input."""
import csv
import io
import json
import math
import os
import random
import sqlite3

import pytest
from conftest import GPUPROF, TESTS, recording, run

US = 1000


def program(directory, kernels, ranges=(), pid=4242):
    """A run of one program: `kernels` maps a name to its dispatch durations (ns), which run
    one after another on one queue, 10 us apart; `ranges` likewise for marker ranges on
    the main thread. Returns its database."""
    lines = [f"process pid={pid} command=app", "agent id=1 name=\"Test GPU\"", "queue id=1 agent=1"]
    t = 2_000_000
    for name, durations in kernels.items():
        for d in durations:
            lines.append(f"api name=clEnqueueNDRangeKernel start={t} end={t + 1000}")
            lines.append(f"kernel name={name} start={t + 2000} end={t + 2000 + d}")
            t += 2000 + d + 10 * US
    for i, (name, durations) in enumerate(ranges):
        for j, d in enumerate(durations):
            marker = 1000 * (i + 1) + j + 1
            lines += [f"push id={marker} start={t} text={name}", f"pop id={marker} end={t + d}"]
            t += d + US
    lines.append(f"end time={t}")
    return recording(directory, lines, pid)


def diff(tmp_path, *args):
    r = run([GPUPROF, "diff", "--format", "json", *args], cwd=tmp_path)
    if r.returncode not in (0, 3):
        return r, None, None
    [table] = json.loads(r.stdout)
    rows = {(row[0], row[1]): dict(zip(table["columns"], row)) for row in table["rows"]}
    return r, rows, table["title"]


def t_two_sided_p(t, df):
    """The two-sided tail of Student's t with an even number of degrees of freedom, from
    its closed form (Abramowitz and Stegun 26.7.3): 1 - sin(x) (1 + cos^2(x) / 2 +
    1 * 3 / (2 * 4) cos^4(x) + ...), x = atan(t / sqrt(df))."""
    x = math.atan(abs(t) / math.sqrt(df))
    term, total = 1.0, 1.0
    for k in range(1, df // 2):
        term *= (2 * k - 1) / (2 * k) * math.cos(x) ** 2
        total += term
    return 1 - math.sin(x) * total


def test_repeated_runs_against_a_hand_computation(tmp_path):
    # A: three runs whose kernel "k" averages 100, 110 and 90 us (two dispatches each, the
    # run's mean +- 5 us); B: 104, 114, 94 us. "other" the same in every run.
    a = [program(tmp_path / f"a{i}", {"k": [m * US - 5 * US, m * US + 5 * US], "other": [50 * US]})
         for i, m in enumerate((100, 110, 90))]
    b = [program(tmp_path / f"b{i}", {"k": [m * US - 5 * US, m * US + 5 * US], "other": [50 * US]})
         for i, m in enumerate((104, 114, 94))]
    r, rows, title = diff(tmp_path, *a, "--", *b, "--noise", "1", "--statistic", "mean")
    assert r.returncode == 0, r.stderr
    assert title.startswith("B (3 runs) against A (3 runs, the baseline), compared by each "
                            "run's mean duration: significance from the variation between runs")
    k = rows[("kernel", "k")]
    assert (k["A_Runs"], k["A_Calls"], k["A_Total_ns"], k["A_Mean_ns"], k["A_Compared_ns"]) == (
        3, 2, 200 * US, 100 * US, 100 * US)
    assert (k["B_Runs"], k["B_Calls"], k["B_Total_ns"], k["B_Mean_ns"], k["B_Compared_ns"]) == (
        3, 2, 208 * US, 104 * US, 104 * US)
    assert k["Change_pct"] == pytest.approx(4.0, rel=1e-12)
    assert k["Diff_ns"] == 4 * US
    # Welch on the runs' means: both sides' variance 100 us^2, so t = 4 / sqrt(2 * 100 / 3)
    # with (v + v)^2 / (2 v^2 / 2) = 4 degrees of freedom
    t = 4 / math.sqrt(2 * 100 / 3)
    assert k["P_Value"] == pytest.approx(t_two_sided_p(t, 4), rel=1e-9)
    assert (k["Significant"], k["Status"]) == ("no", "same")
    other = rows[("kernel", "other")]
    assert (other["P_Value"], other["Significant"], other["Change_pct"]) == (1, "no", 0)
    # by default each run's low decile: m - 5 + 0.1 * 10 us (interpolated between the two
    # dispatches), so the same differences and the same p, of a smaller value
    r, rows, title = diff(tmp_path, *a, "--", *b, "--noise", "1")
    assert "compared by each run's p10 duration" in title
    k = rows[("kernel", "k")]
    assert (k["A_Mean_ns"], k["A_Compared_ns"], k["B_Compared_ns"]) == (100 * US, 96 * US, 100 * US)
    assert k["Change_pct"] == pytest.approx(100 * 4 / 96, rel=1e-12)
    assert k["P_Value"] == pytest.approx(t_two_sided_p(t, 4), rel=1e-9)

    # B made 50 % slower in every run: t = 50 / sqrt(200 / 3), significant at 0.01
    slow = [program(tmp_path / f"s{i}", {"k": [m * US - 5 * US, m * US + 5 * US], "other": [50 * US]})
            for i, m in enumerate((150, 160, 140))]
    r, rows, _ = diff(tmp_path, "--threshold", "10", *a, "--", *slow)
    assert r.returncode == 3
    k = rows[("kernel", "k")]
    assert k["P_Value"] == pytest.approx(t_two_sided_p(50 / math.sqrt(200 / 3), 4), rel=1e-9)
    assert k["P_Value"] < 0.01 and (k["Significant"], k["Status"]) == ("yes", "slower")
    assert r.stderr == "gpuprof: diff: 1 kernel or range significantly slower by more than 10 %\n"

    # one run of B against A's three: a prediction from A's runs, t = 60 / (10 sqrt(4/3)),
    # 2 degrees of freedom
    r, rows, _ = diff(tmp_path, *a, "--", slow[1])
    k = rows[("kernel", "k")]
    assert k["P_Value"] == pytest.approx(t_two_sided_p(60 / (10 * math.sqrt(4 / 3)), 2), rel=1e-9)
    assert (k["A_Runs"], k["B_Runs"], k["B_Mean_ns"]) == (3, 1, 160 * US)


def test_groups_from_one_distribution_and_a_kernel_twice_as_slow(tmp_path):
    """Ten runs a side of a program whose three kernels' run means move by some 10 %
    from run to run (and the dispatches within a run by 20 %): none significant; each run
    of B with "gemm" 2x slower: gemm alone, slower, and --threshold fails."""
    rng = random.Random(29)

    def draw(directory, slower=1.0):
        kernels = {}
        for name, mean in (("gemm", 400), ("softmax", 60), ("copy", 25)):
            run_mean = mean * US * rng.gauss(1, 0.1) * (slower if name == "gemm" else 1)
            kernels[name] = [int(run_mean * rng.gauss(1, 0.2)) for _ in range(20)]
        return program(directory, kernels)

    a = [draw(tmp_path / f"a{i}") for i in range(10)]
    b = [draw(tmp_path / f"b{i}") for i in range(10)]
    r, rows, _ = diff(tmp_path, "--threshold", "10", *a, "--", *b)
    assert r.returncode == 0, (r.stderr, rows)
    assert all(row["Significant"] == "no" and row["Status"] == "same" for row in rows.values()), rows
    assert all(row["A_Runs"] == 10 and row["B_Runs"] == 10 for row in rows.values())

    slow = [draw(tmp_path / f"slow{i}", slower=2.0) for i in range(3)]
    r, rows, _ = diff(tmp_path, "--threshold", "10", *a[:3], "--", *slow)
    assert r.returncode == 3, rows
    assert {k: row["Status"] for k, row in rows.items() if row["Significant"] == "yes"} == {
        ("kernel", "gemm"): "slower"}
    assert r.stderr == "gpuprof: diff: 1 kernel or range significantly slower by more than 10 %\n"


def test_one_run_a_side_is_held_to_its_floor(tmp_path):
    """One run a side: a 20 % change with no variance inside the runs (p = 0) is under the
    floor of 50 %, and the title says why; 2x slower is over it; --noise lowers it."""
    a = program(tmp_path / "a", {"k": [100 * US] * 50, "j": [30 * US] * 50},
                [("step", [500 * US] * 10)])
    b = program(tmp_path / "b", {"k": [120 * US] * 50, "j": [60 * US] * 50},
                [("step", [500 * US] * 10)])
    r, rows, title = diff(tmp_path, "--threshold", "10", a, b)
    assert title.startswith("B against A (the baseline), one run each, compared by the mean "
                            "duration: run-to-run noise is unknown, so no change under 50 % "
                            "is called significant")
    assert r.returncode == 3
    k, j, step = rows[("kernel", "k")], rows[("kernel", "j")], rows[("range", "step")]
    assert (k["P_Value"], k["Change_pct"], k["Significant"], k["Status"]) == (0, 20, "no", "same")
    assert (j["P_Value"], j["Change_pct"], j["Significant"], j["Status"]) == (0, 100, "yes", "slower")
    assert (step["P_Value"], step["Change_pct"], step["Status"]) == (1, 0, "same")
    assert (k["A_Runs"], k["A_Calls"], k["A_Total_ns"]) == (1, 50, 5000 * US)
    assert list(rows) == [("kernel", "j"), ("kernel", "k"), ("range", "step")]  # by total change
    r, rows, _ = diff(tmp_path, "--noise", "15", a, b)
    assert r.returncode == 0 and rows[("kernel", "k")]["Status"] == "slower"
    # the same with '--' around one run each
    r, rows2, _ = diff(tmp_path, a, "--", b, "--noise", "15")
    assert rows2 == rows


def test_one_run_a_side_tests_its_batches(tmp_path):
    """One run a side: each run's 20 dispatches in 10 batches of two consecutive ones; the
    batches' means are 100 us + d in A and 120 us + d in B (d from -20 to 20 us, their
    variance 1500 / 9 us^2), so Welch's t is 20 / sqrt(2 * 1500 / 9 / 10) with 18
    degrees of freedom; a change of 20 %: significant above a floor of 10 %, not at the
    default 50 %."""
    d = [-20, -15, -10, -5, 0, 0, 5, 10, 15, 20]
    a = program(tmp_path / "a", {"k": [v for x in d for v in ((99 + x) * US, (101 + x) * US)]})
    b = program(tmp_path / "b", {"k": [v for x in d for v in ((119 + x) * US, (121 + x) * US)]})
    t = 20 / math.sqrt(2 * 1500 / 9 / 10)
    for noise, significant in (("10", "yes"), ("50", "no")):
        r, rows, _ = diff(tmp_path, a, b, "--noise", noise)
        k = rows[("kernel", "k")]
        assert k["P_Value"] == pytest.approx(t_two_sided_p(t, 18), rel=1e-9)
        assert k["P_Value"] < 0.01 and k["Change_pct"] == pytest.approx(20, rel=1e-12)
        assert k["Significant"] == significant
    # by another statistic: the batches' minimums (99 + d and 119 + d): the same t
    r, rows, title = diff(tmp_path, a, b, "--statistic", "min")
    assert "compared by the min duration" in title
    k = rows[("kernel", "k")]
    assert (k["A_Compared_ns"], k["B_Compared_ns"]) == (79 * US, 99 * US)
    assert k["P_Value"] == pytest.approx(t_two_sided_p(t, 18), rel=1e-9)


def test_runs_of_different_programs(tmp_path):
    a = program(tmp_path / "a", {"k": [100 * US]})
    b = program(tmp_path / "b", {"other": [100 * US]})
    r, _, _ = diff(tmp_path, a, b)
    assert r.returncode == 1 and r.stdout == ""
    assert r.stderr == ("gpuprof: diff: A and B share no kernel or range name: they are not "
                        "runs of the same program\n")
    empty = program(tmp_path / "empty", {})
    r, _, _ = diff(tmp_path, empty, empty)
    assert r.returncode == 1 and "neither A nor B has a kernel or a marker range" in r.stderr


def record(tmp_path, name, *args):
    out = tmp_path / name
    r = run([GPUPROF, "trace", "--kernel-trace", "--marker-trace", "-d", str(out), "-o", "run",
             "-f", "sqlite", "--", os.path.join(TESTS, "slowdown"), *args], cwd=tmp_path,
            timeout=300)
    assert r.returncode == 0, r.stderr
    return str(out / "run_results.db")


def durations(db, name, table="gpuprof_kernel"):
    with sqlite3.connect(db) as c:
        return [d for (d,) in c.execute(f"SELECT k.end - k.start FROM {table} k JOIN "
                                        "gpuprof_string s ON s.id = k.name_id "
                                        "WHERE s.string = ?", (name,))]


def test_real_runs_the_rows_arithmetic(tmp_path):
    """Two real runs on PoCL, one with a kernel of twice the work: what is exact there (the
    names, the calls, the totals and means, the change, the verdict from p and the
    floor); how fast PoCL ran them is not asserted (bench/diff-noise.sh measures that)."""
    a, slow = record(tmp_path, "a"), record(tmp_path, "slow", "--slower", "2")
    r, rows, _ = diff(tmp_path, a, slow)
    assert r.returncode == 0, r.stderr
    assert set(rows) == {("kernel", "steady"), ("kernel", "varied"), ("range", "step")}
    for (kind, name), row in rows.items():
        table = "gpuprof_kernel" if kind == "kernel" else "gpuprof_marker"
        da, db = durations(a, name, table), durations(slow, name, table)
        assert (row["A_Runs"], row["A_Calls"], row["A_Total_ns"]) == (1, len(da), sum(da))
        assert (row["B_Runs"], row["B_Calls"], row["B_Total_ns"]) == (1, len(db), sum(db))
        assert row["A_Mean_ns"] == pytest.approx(sum(da) / len(da), rel=1e-12)
        assert row["A_Compared_ns"] == row["A_Mean_ns"]  # one run a side: the mean
        change = 100 * (sum(db) / len(db) - sum(da) / len(da)) / (sum(da) / len(da))
        assert row["Change_pct"] == pytest.approx(change, rel=1e-9)
        significant = row["P_Value"] < 0.01 and abs(change) > 50
        assert row["Significant"] == ("yes" if significant else "no"), row
        assert row["Status"] == ("same" if not significant else
                                 "slower" if change > 0 else "faster"), row
    assert rows[("kernel", "varied")]["A_Calls"] == 60
    # text and csv: the same rows
    r = run([GPUPROF, "diff", "--format", "csv", a, slow], cwd=tmp_path)
    lines = [line for line in r.stdout.splitlines() if line and not line.startswith("#")]
    table = list(csv.DictReader(io.StringIO("\n".join(lines))))
    assert {(t["Kind"], t["Name"]): t["Status"] for t in table} == {
        k: row["Status"] for k, row in rows.items()}
    r = run([GPUPROF, "diff", a, slow], cwd=tmp_path)
    assert r.returncode == 0 and "varied" in r.stdout and "run-to-run noise is unknown" in r.stdout


def test_new_and_vanished(tmp_path):
    a = record(tmp_path, "a", "-i", "5")
    b = tmp_path / "b.db"
    b.write_bytes(open(a, "rb").read())
    with sqlite3.connect(b) as c:  # B: "steady" renamed "other"
        c.execute("UPDATE gpuprof_string SET string = 'other' WHERE string = 'steady'")
    r, rows, _ = diff(tmp_path, a, str(b), "--threshold", "10")
    assert r.returncode == 0, r.stderr
    assert rows[("kernel", "steady")]["Status"] == "vanished"
    assert (rows[("kernel", "steady")]["B_Calls"], rows[("kernel", "steady")]["B_Runs"]) == (None, 0)
    assert rows[("kernel", "other")]["Status"] == "new"
    assert rows[("kernel", "other")]["A_Calls"] is None
    assert rows[("kernel", "varied")]["Status"] == "same"
    assert rows[("kernel", "varied")]["P_Value"] == 1  # the same durations


def test_bad_input(tmp_path):
    a = program(tmp_path / "a", {"k": [100 * US, 110 * US]})
    for args, status, message in [
            ([a], 2, "diff: two databases are compared, 1 given"),
            ([a, a, a], 2, "diff: two databases are compared, 3 given (with repeated runs, '--'"),
            ([a, "--"], 2, "diff: no database of B after '--'"),
            (["--", a], 2, "diff: no database given"),
            ([a, str(tmp_path / "missing.db")], 1, "missing.db"),
            ([a, "--", a, str(tmp_path / "missing.db")], 1, "missing.db"),
            ([a, a, "--threshold", "ten"], 2, "--threshold ten: a number"),
            ([a, "--", a, "--bogus"], 2, "--bogus"),
            ([a, a, "--statistic", "p50"], 2, "p50"),
            ([a, a, "--alpha", "2"], 2, "--alpha 2: a number from"),
            ([a, a, "--format", "xml"], 2, "xml")]:
        r = run([GPUPROF, "diff", *args], cwd=tmp_path)
        assert r.returncode == status and message in r.stderr, (args, r.stderr)
        assert r.stderr.count("\n") == 1 and r.stdout == "", (args, r.stderr)
