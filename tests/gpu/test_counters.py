"""Hardware counters on a real GPU: `gpuprof trace --pmc` (CUPTI's range profiler, kernel
replay) against what the kernels do, exactly where the work is known exactly."""
import csv
import os
import shutil
import subprocess
import sys

import pytest
from conftest import GPU_TESTS, GPUPROF, only_process, run, trace

DRAM = ["dram__bytes_read.sum", "dram__bytes_write.sum"]
FFMA = "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum"


def counters(out):
    rows = {}
    for r in out.csv("counter_collection.csv"):
        rows.setdefault(int(r["Dispatch_Id"]), {})[r["Counter_Name"]] = float(r["Counter_Value"])
    return rows


def test_vcopy_dram_bytes(tmp_path, cuda_sample):
    """vecCopy reads N floats and writes N: 2 x N x 4 bytes of DRAM traffic, within 2 %.
    The buffers (1 GiB each) are twenty times the L2, so what the L2 holds from before
    the kernel is under the tolerance."""
    n = 1 << 28
    r = trace(tmp_path, ["--pmc", ",".join(DRAM)],
              [cuda_sample("vcopy"), "-n", str(n), "-i", "1"])
    assert r.returncode == 0, r.stderr
    assert "2 metrics" in r.stderr
    rows = counters(only_process(tmp_path))
    assert list(rows) == [1]
    total = rows[1][DRAM[0]] + rows[1][DRAM[1]]
    assert abs(total - 2 * n * 4) <= 0.02 * 2 * n * 4, rows


def test_fma_loop_flops_exact(tmp_path):
    """fmaLoop runs THREADS x FMAS FFMA instructions: counted exactly."""
    threads, fmas = 1 << 20, 1000
    r = trace(tmp_path, ["--pmc", FFMA],
              [os.path.join(GPU_TESTS, "fma"), "-t", str(threads), "-k", str(fmas)])
    assert r.returncode == 0, r.stderr
    rows = counters(only_process(tmp_path))
    assert rows == {1: {FFMA: float(threads * fmas)}}


def test_every_kernel_of_two_streams_has_its_counters(tmp_path, cuda_sample):
    rounds = 4
    r = trace(tmp_path, ["--pmc", "sm__cycles_elapsed.max,smsp__inst_executed.sum",
                         "--memory-copy-trace"],
              [cuda_sample("streams"), "-r", str(rounds), "-m", "8", "-t", "1000"])
    assert r.returncode == 0, r.stderr
    out = only_process(tmp_path)
    kernels = out.csv("kernel_trace.csv")
    rows = counters(out)
    assert len(kernels) == rounds
    assert sorted(rows) == sorted(int(k["Dispatch_Id"]) for k in kernels)
    assert all(set(v) == {"sm__cycles_elapsed.max", "smsp__inst_executed.sum"} and
               v["smsp__inst_executed.sum"] > 0 for v in rows.values())


def test_kernel_filter_cuts_collection(tmp_path, cuda_sample):
    """Only the dispatches the iteration range keeps are measured (and replayed)."""
    r = trace(tmp_path, ["--pmc", "smsp__inst_executed.sum", "--kernel-iteration-range",
                         "[2-3]"], [cuda_sample("vcopy"), "-i", "5"])
    assert r.returncode == 0, r.stderr
    out = only_process(tmp_path)
    assert sorted(counters(out)) == [2, 3]
    assert [int(k["Dispatch_Id"]) for k in out.csv("kernel_trace.csv")] == [2, 3]


def workload_rows(directory):
    with open(os.path.join(directory, "pmc_perf.csv"), newline="") as f:
        return list(csv.DictReader(f))


def test_compute_profile_writes_a_workload(tmp_path, cuda_sample):
    """compute profile -b 18 runs vcopy once and writes the workload directory: a row per
    dispatch with the DRAM counters, the facts of the GPU, and refuses to write over it
    without --overwrite."""
    workload = tmp_path / "w"
    command = [GPUPROF, "compute", "profile", "-n", "vcopy", "-b", "18",
               "--output-directory", str(workload), "--",
               cuda_sample("vcopy"), "-n", str(1 << 26), "-i", "3"]
    r = run(command, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    rows = workload_rows(workload)
    assert [int(row["Dispatch_ID"]) for row in rows] == [1, 2, 3]
    assert all(float(row["dram__bytes_read.sum"]) > 0 for row in rows)
    assert (workload / "sysinfo.csv").exists() and (workload / "log.txt").exists()
    assert "metrics:" in (workload / "profiling_config.yaml").read_text()
    r = run([GPUPROF, "compute", "analyze", "-p", str(workload), "-b", "18.1.0",
             "--output-format", "csv"], cwd=tmp_path)
    assert r.returncode == 0 and '"18.1.0"' in r.stdout, r.stderr
    again = run(command, cwd=tmp_path)
    assert again.returncode == 2 and "--overwrite" in again.stderr
    assert run(command[:3] + ["--overwrite"] + command[3:], cwd=tmp_path).returncode == 0


def test_application_replay_joins_the_runs(tmp_path, cuda_sample):
    """--replay application runs vcopy once per single-pass group of the L1, L2 and DRAM
    byte counters (the catalog's 16.1.0, 17.1.0, 18.1.0 and 18.1.1) and joins each run's
    counters onto the first run's dispatches: every dispatch has every metric, and the
    DRAM bytes are within 2 % of 2 x N x 4 as with kernel replay."""
    n = 1 << 28
    workload = tmp_path / "w"
    r = run([GPUPROF, "compute", "profile", "-n", "vcopy", "--replay", "application",
             "-b", "16.1.0", "-b", "17.1.0", "-b", "18.1.0", "-b", "18.1.1",
             "--output-directory", str(workload), "--",
             cuda_sample("vcopy"), "-n", str(n), "-i", "2"], cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    config = (workload / "profiling_config.yaml").read_text()
    runs = int(config.split("\nruns: ")[1].split("\n")[0])
    assert "replay: application" in config and runs >= 1
    assert sorted(os.listdir(workload / "trace")) == sorted(
        ["all_results.db"] + [f"pass_{i}" for i in range(1, runs + 1)])
    rows = workload_rows(workload)
    assert [int(row["Dispatch_ID"]) for row in rows] == [1, 2]
    for row in rows:
        total = float(row["dram__bytes_read.sum"]) + float(row["dram__bytes_write.sum"])
        assert abs(total - 2 * n * 4) <= 0.02 * 2 * n * 4, row
        assert float(row["lts__t_bytes.sum"]) > 0 and float(row["l1tex__t_bytes.sum"]) > 0


def test_iteration_multiplexing_spreads_the_groups(tmp_path, cuda_sample):
    """--iteration-multiplexing kernel: the same counters as the application replay test,
    in G single-pass groups, one per dispatch of vcopy in turn, with no replay: dispatch i
    has exactly the metrics of group (i - 1) mod G, and analyze gives the DRAM bytes of
    each dispatch within 2 % of 2 x N x 4 (each completed with the kernel's mean)."""
    n = 1 << 28
    workload = tmp_path / "w"
    r = run([GPUPROF, "compute", "profile", "-n", "vcopy", "--iteration-multiplexing",
             "kernel", "-b", "16.1.0", "-b", "17.1.0", "-b", "18.1.0", "-b", "18.1.1",
             "--output-directory", str(workload), "--",
             cuda_sample("vcopy"), "-n", str(n), "-i", "6"], cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    config = (workload / "profiling_config.yaml").read_text()
    groups = int(config.split("\nmultiplex_groups: ")[1].split("\n")[0])
    assert "iteration_multiplexing: kernel" in config and "replay: none" in config
    assert 1 <= groups <= 6
    rows = workload_rows(workload)
    assert [int(row["Dispatch_ID"]) for row in rows] == list(range(1, 7))
    metrics = ["l1tex__t_bytes.sum", "lts__t_bytes.sum", "dram__bytes_read.sum",
               "dram__bytes_write.sum"]
    measured = [frozenset(m for m in metrics if rows[i][m]) for i in range(6)]
    assert all(measured[i] == measured[i % groups] for i in range(6)), measured
    assert frozenset().union(*measured) == frozenset(metrics)
    r = run([GPUPROF, "compute", "analyze", "-p", str(workload), "-b", "18.1.0", "-b", "18.1.1",
             "--output-format", "csv"], cwd=tmp_path)
    assert r.returncode == 0 and r.stderr == "", r.stderr
    values = {row[0]: float(row[2]) for row in csv.reader(
        line for line in r.stdout.splitlines() if line and not line.startswith("#"))
        if row[0] in ("18.1.0", "18.1.1")}
    total = values["18.1.0"] + values["18.1.1"]
    assert abs(total - 2 * n * 4) <= 0.02 * 2 * n * 4, values


def test_memory_bound_preset(tmp_path, cuda_sample):
    """--preset memory-bound collects the memory-bound set's counters for every dispatch,
    the DRAM bytes of vcopy within 2 % as with --pmc."""
    n = 1 << 28
    r = trace(tmp_path, ["--preset", "memory-bound"],
              [cuda_sample("vcopy"), "-n", str(n), "-i", "2"])
    assert r.returncode == 0, r.stderr
    rows = counters(only_process(tmp_path))
    assert sorted(rows) == [1, 2]
    for values in rows.values():
        total = values[DRAM[0]] + values[DRAM[1]]
        assert abs(total - 2 * n * 4) <= 0.02 * 2 * n * 4, values
        assert values["lts__t_sector_hit_rate.pct"] >= 0


CATALOG = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "catalog")


def catalog_names(block_file, table):
    """The CUPTI metric names of one table of the catalog, in its order (the expressions of
    blocks 2.1 and 20.1 are each one metric name, or derived)."""
    import re
    with open(os.path.join(CATALOG, block_file)) as f:
        text = f.read()
    return [e for i, e in re.findall(r"^      - id: (\S+)\n        name: .*\n        expr: (.*)$",
                                     text, re.M)
            if i.startswith(table + ".") and re.fullmatch(r"[a-z0-9_]+__[a-z0-9_.]+", e)]


SOL = catalog_names("02-speed-of-light.yaml", "2.1")
STALLS = catalog_names("20-warp-state.yaml", "20.1")


def against_ncu(tmp_path, metrics, command):
    """The metrics of the first kernel of command through gpuprof trace --pmc and through
    ncu --metrics, printed side by side; returns (ours, theirs)."""
    tmp_path.mkdir(exist_ok=True)
    r = trace(tmp_path, ["--pmc", ",".join(metrics)], command)
    assert r.returncode == 0, r.stderr
    ours = counters(only_process(tmp_path))[1]
    # ncu left at the clocks the program has (it locks them to base by default), as
    # gpuprof leaves them: cycle counts and stall cycles depend on the clock
    n = subprocess.run(["ncu", "--clock-control", "none", "--metrics", ",".join(metrics),
                        "--launch-count", "1", "--csv", "--print-units", "base", *command],
                       capture_output=True, text=True, timeout=600)
    assert n.returncode == 0, n.stderr
    lines = [line for line in n.stdout.splitlines() if line.startswith('"')]
    theirs = {row["Metric Name"]: float(row["Metric Value"].replace(",", ""))
              for row in csv.DictReader(lines)}
    for metric in metrics:
        print(f"{metric}: gpuprof {ours[metric]:.4g}, ncu {theirs[metric]:.4g}")
    return ours, theirs


def within(ours, theirs, metrics, share, floor):
    for metric in metrics:
        assert abs(ours[metric] - theirs[metric]) <= share * max(theirs[metric], floor), (
            metric, ours[metric], theirs[metric])


@pytest.mark.skipif(not shutil.which("ncu"), reason="Nsight Compute (ncu) is not installed")
def test_speed_of_light_matches_ncu(tmp_path, cuda_sample):
    """Every speed-of-light metric of vecCopy (table 2.1) within 5 % of what ncu reports
    for the same kernel (ncu flushes caches per pass and gpuprof does not, so both are
    measured on a large copy that caches do not hold; the duration and the clock
    frequencies, which vary from run to run, are printed and not compared)."""
    vcopy = [cuda_sample("vcopy"), "-n", str(1 << 27), "-i", "1"]
    timeless = [m for m in SOL if not m.startswith(("gpu__time_duration", "gpc__cycles_elapsed.avg",
                                                    "dram__cycles_elapsed"))]
    ours, theirs = against_ncu(tmp_path, SOL, vcopy)
    within(ours, theirs, timeless, 0.05, 1.0)


@pytest.mark.skipif(not shutil.which("ncu"), reason="Nsight Compute (ncu) is not installed")
@pytest.mark.skipif(not shutil.which("ncu"), reason="Nsight Compute (ncu) is not installed")
def test_warp_stalls_match_ncu(tmp_path, cuda_sample):
    """Every stall reason of table 20.1 for a memory-bound kernel (vecCopy: long
    scoreboard) and an arithmetic one (the FMA loop: wait, math pipe) within 5 % of ncu,
    a ratio under 1 cycle per instruction within 0.05 cycles."""
    ours, theirs = against_ncu(tmp_path / "vcopy", STALLS,
                               [cuda_sample("vcopy"), "-n", str(1 << 27), "-i", "1"])
    within(ours, theirs, STALLS, 0.05, 1.0)
    assert ours[STALLS[1]] == max(ours[m] for m in STALLS[1:])  # long scoreboard leads
    ours, theirs = against_ncu(tmp_path / "fma", STALLS,
                               [os.path.join(GPU_TESTS, "fma"), "-t", str(1 << 20), "-k", "1000"])
    within(ours, theirs, STALLS, 0.05, 1.0)


def test_full_set_collects_every_block(tmp_path, cuda_sample):
    """--set full: the passes said before the program runs are the host API's, every
    block of the catalog is analyzed, and the values known exactly are exact: vecCopy's
    DRAM bytes within 2 % of what it moves."""
    n = 1 << 26
    r = run([GPUPROF, "compute", "profile", "--set", "full", "--no-roof", "-n", "v",
             "--output-directory", str(tmp_path / "w"), "--", cuda_sample("vcopy"), "-n", str(n),
             "-i", "1"], cwd=tmp_path, timeout=900)
    assert r.returncode == 0, r.stderr
    assert "27 passes" in r.stderr.splitlines()[0], r.stderr
    a = run([GPUPROF, "compute", "analyze", "-p", str(tmp_path / "w"), "--output-format", "json"],
            cwd=tmp_path)
    assert a.returncode == 0, a.stderr
    import json
    tables = {t["name"]: t for t in json.loads(a.stdout)}
    blocks = {name.split(".")[0] for name in tables}
    assert blocks == {"0", "1", "2", "3", "4", "7", "10", "11", "12", "16", "17", "18", "20", "22"}
    dram = {row[0]: row for row in tables["18.1"]["rows"]}
    moved = dram["18.1.0"][2] + dram["18.1.1"][2]
    assert abs(moved - 2 * n * 4) <= 0.02 * 2 * n * 4, dram


def test_compute_profile_block_21_pc_sampling(tmp_path):
    """compute profile -b 21 runs the program once more under PC sampling: the workload's
    pc_sampling.csv holds the pointer-chasing line of tests/gpu/pc-chase.cu as its hottest
    instruction's source, which analyze's table 21.1 shows first, stalled on memory."""
    source = os.path.join(os.path.dirname(__file__), "pc-chase.cu")
    line = next(i for i, text in enumerate(open(source), 1) if "/* CHASE */" in text)
    workload = tmp_path / "w"
    r = run([GPUPROF, "compute", "profile", "-n", "chase", "-b", "21", "--no-roof",
             "--pc-sampling-interval", "4096", "--output-directory", str(workload), "--",
             os.path.join(GPU_TESTS, "pc-chase")], cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    with open(workload / "pc_sampling.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert rows and all(row["Kernel_Name"].startswith("chase(") for row in rows)
    assert "pc_sampling_interval: 4096" in (workload / "profiling_config.yaml").read_text()
    r = run([GPUPROF, "compute", "analyze", "-p", str(workload), "-b", "21",
             "--output-format", "csv"], cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    first = list(csv.reader(r.stdout.splitlines()[2:3]))[0]
    assert first[2].endswith(f"pc-chase.cu:{line}") and first[5] == "long_scoreboard", first


def test_compute_profile_torch_operator_mapping(tmp_path, torch_available):
    """compute profile --torch-trace on PyTorch training steps (samples/python/train.py):
    the profile says the share of dispatches inside an operator, every kernel of
    consolidated.csv names one of the model's operators, and analyze --torch-operator
    sums the counters of the Linear layers' kernels."""
    train = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "samples",
                                         "python", "train.py"))
    workload = tmp_path / "w"
    r = run([GPUPROF, "compute", "--experimental", "profile", "-n", "train", "-b", "2",
             "--no-roof", "--torch-trace", "--output-directory", str(workload), "--",
             sys.executable, train, "--steps", "3", "--warmup", "1"], cwd=tmp_path,
            timeout=900)
    assert r.returncode == 0, r.stderr
    inside, total = (int(x) for x in
                     r.stderr.split(" dispatches ran inside a PyTorch operator")[0]
                     .rsplit("\n", 1)[-1].split("compute profile: ")[1].split(" of "))
    print(f"dispatches inside an operator: {inside} of {total}")
    assert total > 0 and inside > 0
    with open(workload / "torch_trace" / "consolidated.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert rows and all(row["Operator_Name"].split("/")[-1].startswith(
        ("nn.Module.", "torch.nn.functional.", "torch.autograd.backward", "torch.optim."))
        for row in rows)
    linear = "nn.Module.Net.classifier.1.forward"  # train.py's first Linear layer
    assert any(linear in row["Operator_Name"] for row in rows)
    r = run([GPUPROF, "compute", "analyze", "-p", str(workload), "--torch-operator",
             linear, "--output-format", "csv"], cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    table = list(csv.reader(r.stdout.splitlines()[1:]))
    assert table[0] == ["Operator", "Counter", "Dispatches", "Sum", "Mean", "Min", "Max"]
    assert all(linear in row[0] and int(row[2]) > 0 for row in table[1:])
