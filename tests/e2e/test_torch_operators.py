"""compute analyze --list-torch-operators and --torch-operator on a generated run whose
kernels and counters are known: PyTorch operator ranges (domain torch) with kernels
attributed to them, counters per kernel, and kernels outside any operator or inside a
range of another domain; read from the database and from a workload's
torch_trace/consolidated.csv alike (one written before its Module_Path column too);
matching by the seed's glob patterns, the whole, a prefix or a level of the hierarchy,
or a module path; the errors."""
import csv
import io
import os
import sqlite3

from conftest import GPUPROF, run

SCHEMA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../src/store/schema.sql")
NET = "nn.Module.Net.forward"
LINEAR = NET + "/nn.Module.Linear.forward"
RELU = NET + "/torch.nn.functional.relu"
COLUMNS = ["Operator_Name", "Context_Id", "Kernel_Name", "Counter_Name", "Counter_Value",
           "Start_Timestamp_function", "End_Timestamp_function", "Start_Timestamp_kernel",
           "End_Timestamp_kernel"]

# (range id, domain, name, start, end), then kernels (name, start, end, range, counters)
RANGES = [(1, "torch", NET, 100, 1000), (2, "torch", LINEAR, 110, 300),
          (3, "torch", RELU, 310, 400), (4, "torch", LINEAR, 410, 900),
          (5, "user", "epoch", 2000, 3000)]
# each range's module path (trace --torch-trace: fc1 and fc2 are the two Linear layers)
MODULES = {1: "Net", 2: "Net.fc1", 3: "Net", 4: "Net.fc2"}
KERNELS = [("gemm", 120, 220, 2, {"sm__inst": 10.0, "dram__bytes": 100.0}),
           ("bias", 230, 260, 2, {"sm__inst": 2.0, "dram__bytes": 8.0}),
           ("relu_k", 320, 350, 3, {"sm__inst": 1.5, "dram__bytes": 4.0}),
           ("gemm", 420, 620, 4, {"sm__inst": 30.0, "dram__bytes": 300.0}),
           ("outside", 1100, 1200, 0, {"sm__inst": 7.0}),
           ("user_k", 2100, 2200, 5, {"sm__inst": 9.0})]


def make_db(path):
    with sqlite3.connect(path) as db:
        db.executescript(open(SCHEMA).read())
        db.execute("INSERT INTO gpuprof_metadata VALUES ('schema_version', '3.5.0')")
        db.execute("INSERT INTO gpuprof_process (id, pid, start, end) VALUES (1, 42, 0, 5000)")
        strings = {}

        def sid(text):
            if text not in strings:
                strings[text] = len(strings) + 1
                db.execute("INSERT INTO gpuprof_string VALUES (?, ?)", (strings[text], text))
            return strings[text]
        for rid, domain, name, start, end in RANGES:
            parent = 1 if rid in (2, 3, 4) else 0
            module = sid(MODULES[rid]) if rid in MODULES else 0
            db.execute("INSERT INTO gpuprof_marker (process_id, tid, kind, domain_id, name_id, "
                       "range_id, parent_id, start, end, ended, module_id) VALUES (1, 42, 1, "
                       "?, ?, ?, ?, ?, ?, 1, ?)",
                       (sid(domain), sid(name), rid, parent, start, end, module))
        for corr, (name, start, end, rid, counters) in enumerate(KERNELS, 1):
            db.execute("INSERT INTO gpuprof_kernel (process_id, tid, agent_index, name_id, "
                       "correlation_id, start, end, context_id, range_id) VALUES (1, 42, 1, ?, "
                       "?, ?, ?, 7, ?)", (sid(name), corr, start, end, rid))
            for counter, value in counters.items():
                db.execute("INSERT INTO gpuprof_counter (process_id, correlation_id, "
                           "agent_index, name_id, value) VALUES (1, ?, 1, ?, ?)",
                           (corr, sid(counter), value))


def analyze(path, *options):
    return run([GPUPROF, "compute", "analyze", "-p", str(path), "--output-format", "csv",
                *options], cwd=os.path.dirname(str(path)))


def table(stdout):
    return [r for r in csv.reader(io.StringIO(stdout)) if r and not r[0].startswith("#")]


LISTED = [["Operator", "Dispatches", "Kernel time (ns)", "Counters"],
          [LINEAR, "3", "330", "2"], [RELU, "1", "30", "2"]]
LINEAR_COUNTERS = [["Operator", "Counter", "Dispatches", "Sum", "Mean", "Min", "Max"],
                   [LINEAR, "dram__bytes", "3", "408", "136", "8", "300"],
                   [LINEAR, "sm__inst", "3", "42", "14", "2", "30"]]


def consolidated(path):
    """The rows compute profile --torch-trace would write from this run."""
    out = io.StringIO()
    w = csv.writer(out, quoting=csv.QUOTE_NONNUMERIC, lineterminator="\n")
    w.writerow(COLUMNS)
    ranges = {rid: (name, start, end) for rid, domain, name, start, end in RANGES
              if domain == "torch"}
    for name, start, end, rid, counters in KERNELS:
        if rid in ranges:
            op, s, e = ranges[rid]
            for counter in sorted(counters):
                w.writerow([op, 7, name, counter, counters[counter], s, e, start, end])
    return out.getvalue()


def test_operators_from_a_database(tmp_path):
    db = tmp_path / "run.db"
    make_db(db)
    r = analyze(db, "--list-torch-operators")
    assert r.returncode == 0, r.stderr
    assert table(r.stdout) == LISTED
    r = analyze(db, "--torch-operator", "nn.Module.Linear.forward")  # a level of it
    assert r.returncode == 0, r.stderr
    assert sorted(table(r.stdout)[1:]) == LINEAR_COUNTERS[1:]
    r = analyze(db, "--torch-operator", "nn.Module.Net")  # a prefix: every operator in Net
    assert {row[0] for row in table(r.stdout)[1:]} == {LINEAR, RELU}
    # the seed's patterns: globs of the last levels (PurePosixPath.match), and all of them
    for pattern in ("*/nn.Module.Linear.forward", "*Linear.forward", "*/*Linear*"):
        r = analyze(db, "--torch-operator", pattern)
        assert r.returncode == 0, (pattern, r.stderr)
        assert sorted(table(r.stdout)[1:]) == LINEAR_COUNTERS[1:], pattern
    for pattern in ("all", "*", "**"):
        r = analyze(db, "--torch-operator", pattern)
        assert {row[0] for row in table(r.stdout)[1:]} == {LINEAR, RELU}, pattern
    for pattern in ("*/*/*", "*/nn.Module.Net.forward", "nn.Module.Linear.*/x"):
        r = analyze(db, "--torch-operator", pattern)
        assert r.returncode == 1 and "no operator of" in r.stderr, pattern
    # a module path: fc2's one gemm; Net's every operator
    r = analyze(db, "--torch-operator", "Net.fc2")
    assert sorted(table(r.stdout)[1:]) == [[LINEAR, "dram__bytes", "1", "300", "300", "300", "300"],
                                           [LINEAR, "sm__inst", "1", "30", "30", "30", "30"]]
    r = analyze(db, "--torch-operator", "Net.fc*")
    assert sorted(table(r.stdout)[1:]) == LINEAR_COUNTERS[1:]
    r = analyze(db, "--torch-operator", "Net")
    assert {row[0] for row in table(r.stdout)[1:]} == {LINEAR, RELU}


def test_operators_from_a_workloads_consolidated_csv(tmp_path):
    workload = tmp_path / "workload"
    (workload / "torch_trace").mkdir(parents=True)
    (workload / "torch_trace" / "consolidated.csv").write_text(consolidated(None))
    r = analyze(workload, "--list-torch-operators")
    assert r.returncode == 0, r.stderr
    assert table(r.stdout) == LISTED
    r = analyze(workload, "--torch-operator", RELU)
    assert table(r.stdout)[1:] == [[RELU, "dram__bytes", "1", "4", "4", "4", "4"],
                                   [RELU, "sm__inst", "1", "1.5", "1.5", "1.5", "1.5"]]


def test_operator_errors(tmp_path):
    db = tmp_path / "run.db"
    make_db(db)
    r = analyze(db, "--torch-operator", "nn.Module.Conv2d.forward")
    assert r.returncode == 1
    assert "no operator of" in r.stderr and "--list-torch-operators lists them" in r.stderr
    r = analyze(tmp_path, "--list-torch-operators")
    assert r.returncode == 1 and "has no torch_trace/consolidated.csv" in r.stderr
    r = analyze(db, "--list-torch-operators", "--torch-operator", "x")
    assert r.returncode == 2
    bad = tmp_path / "bad"
    (bad / "torch_trace").mkdir(parents=True)
    (bad / "torch_trace" / "consolidated.csv").write_text(
        consolidated(None).replace(",10.0,", ",ten,"))
    r = analyze(bad, "--list-torch-operators")
    assert r.returncode == 1 and "Counter_Value 'ten' is not a number" in r.stderr
    # 44: nothing to list is an error, as every other empty case
    empty = tmp_path / "empty"
    (empty / "torch_trace").mkdir(parents=True)
    (empty / "torch_trace" / "consolidated.csv").write_text(consolidated(None).split("\n")[0] + "\n")
    r = analyze(empty, "--list-torch-operators")
    assert r.returncode == 1 and r.stdout == ""
    assert "no kernel of" in r.stderr and "ran inside a PyTorch operator" in r.stderr
