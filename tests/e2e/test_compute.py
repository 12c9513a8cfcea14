"""gpuprof compute without a GPU: the metric catalog (catalog/*.yaml) against CUPTI's
profiler host API, which lists a chip's metrics and counts passes with no GPU; the
planning that -b selects; analyze over workload directories written here with values
whose results are computed by hand; bad input. Collecting counters needs a GPU."""
import glob
import json
import os
import re

import pytest

from conftest import GPUPROF, run

CATALOG = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "catalog")
HOST_LIB = os.path.join(os.path.dirname(GPUPROF), "..", "lib", "gpuprof",
                        "libgpuprof-cupti-host.so")
ROW = re.compile(r"^    (\d+\.\d+\.\d+) +(.+?) {2,}(\S+) +(yes|no|derived) +(.*)$")


@pytest.fixture
def host_api():
    if not os.path.exists(HOST_LIB):
        pytest.skip("built without the CUDA toolkit: no CUPTI profiler host API")
    if os.environ.get("GPUPROF_SANITIZER"):
        pytest.skip("a sanitized gpuprof cannot load CUPTI's host API (CUPTI loads "
                    "libnvperf_host.so with RTLD_DEEPBIND, which the sanitizers refuse)")


def catalog_ids():
    """Every metric id of the catalog files, read here from the YAML text."""
    ids = []
    for path in sorted(glob.glob(os.path.join(CATALOG, "*.yaml"))):
        with open(path) as f:
            ids += re.findall(r"^      - id: (\d+\.\d+\.\d+)$", f.read(), re.M)
    return ids


def listing(tmp_path, *options):
    r = run([GPUPROF, "compute", "profile", "--list-available-metrics", *options], cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    rows = [ROW.match(line).groups() for line in r.stdout.splitlines() if ROW.match(line)]
    blocks = dict(re.findall(r"^(\d+) +.*\): (.*)$", r.stdout, re.M))
    total = re.search(r"^selected: (\d+) metrics, (.*)$", r.stdout, re.M).groups()
    return rows, blocks, total


def test_every_catalog_metric_is_one_gh100_has(tmp_path, host_api):
    rows, blocks, total = listing(tmp_path, "--chip", "GH100")
    ids = catalog_ids()
    assert [r[0] for r in rows] == ids and len(ids) == 62
    assert {r[3] for r in rows} == {"yes", "derived"}, [r for r in rows if r[3] == "no"]
    derived = [r[0] for r in rows if r[3] == "derived"]
    assert derived == ["2.1.10", "7.1.0", "7.1.1", "7.1.2", "7.1.3", "7.1.4", "7.2.0"]
    # the passes, from the host API: the speed-of-light set takes 9 on GH100, raw DRAM
    # byte counters one
    assert blocks["2"] == "10 CUPTI metrics, 9 passes"
    assert blocks["18"] == "4 CUPTI metrics, 1 pass"
    assert blocks["12"] == "4 CUPTI metrics, 1 pass"
    assert total == ("62", "57 CUPTI metrics, 13 passes")


def test_a_selection_plans_what_it_names(tmp_path, host_api):
    rows, blocks, total = listing(tmp_path, "--chip", "GH100", "-b", "dram", "-b", "2.1.5",
                                  "-b", "7.2")
    assert [r[0] for r in rows] == ["2.1.5", "7.2.0", "7.2.1", "7.2.2", "18.1.0", "18.1.1",
                                    "18.1.2", "18.1.3"]
    assert blocks == {"2": "1 CUPTI metrics, 1 pass", "7": "2 CUPTI metrics, 1 pass",
                      "18": "4 CUPTI metrics, 1 pass"}
    assert total == ("8", "6 CUPTI metrics, 1 pass")  # the duration counted once


def test_a_chip_without_a_metric_says_which(tmp_path, host_api):
    # the Hopper metrics (warpgroup MMA, TMA) are not Ampere's: marked with the name
    # missing, and the blocks that hold them say so
    rows, blocks, total = listing(tmp_path, "--chip", "GA100")
    missing = {r[0]: r[4] for r in rows if r[3] == "no"}
    assert missing == {
        "11.2.4": "sm__inst_executed_pipe_tensor_op_gmma.avg.pct_of_peak_sustained_elapsed  "
                  "(sm__inst_executed_pipe_tensor_op_gmma.avg.pct_of_peak_sustained_elapsed missing)",
        "11.2.5": "sm__pipe_tma_cycles_active.avg.pct_of_peak_sustained_elapsed  "
                  "(sm__pipe_tma_cycles_active.avg.pct_of_peak_sustained_elapsed missing)",
        "20.1.8": "smsp__average_warps_issue_stalled_gmma_per_issue_active.ratio  "
                  "(smsp__average_warps_issue_stalled_gmma_per_issue_active.ratio missing)"}
    assert blocks["11"].startswith("9 CUPTI metrics; GA100 has no sm__inst_executed_pipe_tensor")
    assert blocks["20"] == ("9 CUPTI metrics; GA100 has no "
                            "smsp__average_warps_issue_stalled_gmma_per_issue_active.ratio")
    assert blocks["18"] == "4 CUPTI metrics, 1 pass"


def test_sets_claimed_single_pass_take_one_pass(tmp_path, host_api):
    with open(os.path.join(CATALOG, "sets.yaml")) as f:
        text = f.read()
    claimed = re.findall(r"- name: (\S+)\n(?:    .*\n)*?    single_pass: true", text)
    assert claimed == ["launch", "dram", "shared-memory", "cache-traffic"]
    r = run([GPUPROF, "compute", "profile", "--list-sets", "--chip", "GH100"], cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    passes = dict(re.findall(r"^(\S+) +\d+ metrics, \d+ CUPTI metrics, (\d+) pass", r.stdout, re.M))
    assert set(passes) == set(re.findall(r"- name: (\S+)", text))
    assert {name: passes[name] for name in claimed} == {name: "1" for name in claimed}
    assert passes["speed-of-light"] == "9"
    # application replay: one run per group of metrics that takes one pass, never fewer
    # runs than kernel replay's passes; a metric that takes several passes alone cannot
    runs = dict(re.findall(r"^(\S+) .*\((\d+) runs? by application replay\)", r.stdout, re.M))
    assert {name: runs[name] for name in claimed} == {name: "1" for name in claimed}
    assert all(int(runs[name]) >= int(passes[name]) for name in runs)
    assert "stalls" in runs
    assert ("(no application replay: sm__throughput.avg.pct_of_peak_sustained_elapsed takes "
            "8 passes by itself on GH100)") in r.stdout
    # a set selects what its lines name
    rows, blocks, total = listing(tmp_path, "--chip", "GH100", "--set", "dram")
    assert [r[0] for r in rows] == ["2.1.5", "18.1.0", "18.1.1", "18.1.2"]
    assert total == ("4", "3 CUPTI metrics, 1 pass")


def test_bad_input_is_one_clear_line(tmp_path, host_api):
    cases = [
        (["--chip", "XY100", "--list-available-metrics"], 2,
         "--chip XY100: CUPTI knows no such chip"),
        (["-b", "99", "--chip", "GH100", "--list-available-metrics"], 2,
         "-b 99: no block, table or metric has this id or alias"),
        (["-b", "2.1.99", "--chip", "GH100", "--list-available-metrics"], 2,
         "-b 2.1.99: no block, table or metric"),
        (["--chip", "GH100"], 2, "nothing to do"),
        (["--chip", "GH100", "--", "true"], 2,
         "--chip plans listings; a collection is on this machine's GPU"),
        (["--roof-only", "--", "true"], 2,
         "--roof-only: the roofline measurement of NVIDIA GPUs is not in this version"),
        (["--roof-only", "--no-roof", "--", "true"], 2,
         "--roof-only and --no-roof cannot go together"),
        (["--replay", "ranges", "--", "true"], 2, "--replay"),
        (["--bogus"], 2, "--bogus"),
        (["--set", "dram", "-b", "2", "--chip", "GH100", "--list-available-metrics"], 2,
         "--set and -b both select metrics: give one"),
        (["--set", "nope", "--chip", "GH100", "--list-sets"], 2, "--set nope: no such set"),
    ]
    if not os.path.exists("/dev/nvidiactl"):  # no GPU: a collection is refused before it runs
        cases.append((["-b", "18", "--", "touch", "ran"], 1,
                      "no NVIDIA GPU is usable here: counters need one"))
    for options, status, message in cases:
        r = run([GPUPROF, "compute", "profile", *options], cwd=tmp_path)
        assert r.returncode == status, (options, r.stderr)
        assert message in r.stderr and r.stderr.count("\n") == 1, (options, r.stderr)
    assert not (tmp_path / "ran").exists() and not (tmp_path / "workloads").exists()
    r = run([GPUPROF, "compute", "analyse"], cwd=tmp_path)
    assert r.returncode == 2 and "unknown command 'analyse'" in r.stderr


# ---- analyze ---------------------------------------------------------------------------

SYSINFO = (
    "host_name,gpu_name,gpu_chip,sm_count,warp_size,max_warps_per_sm,max_blocks_per_sm,"
    "registers_per_sm,register_allocation_unit,shared_memory_per_sm,"
    "shared_memory_reserved_per_block,shared_memory_allocation_unit,dram_bandwidth\n"
    "node-1,NVIDIA H100 80GB HBM3,GH100,132,32,64,32,65536,256,233472,1024,128,3.35e12\n")
HEADER = ("Dispatch_ID,GPU_ID,Grid_Size,Workgroup_Size,LDS_Per_Workgroup,Scratch_Per_Workitem,"
          "Registers_Per_Thread,Kernel_Name,Start_Timestamp,End_Timestamp,"
          "dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum,"
          "sm__throughput.avg.pct_of_peak_sustained_elapsed,"
          "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed,"
          "gpc__cycles_elapsed.max\n")
VCOPY = '"vcopy(float const*, float*)"'


def workload(path, rows):
    """A workload directory: rows are (id, grid threads, block, shared, registers, kernel,
    start, end, read, write, duration, sm %, memory %, cycles), empty strings for none."""
    path.mkdir()
    (path / "sysinfo.csv").write_text(SYSINFO)
    lines = [HEADER]
    for r in rows:
        i, grid, block, shared, regs, kernel, start, end, *counters = r
        lines.append(",".join(map(str, [i, 0, grid, block, shared, 0, regs, kernel, start, end,
                                        *counters])) + "\n")
    (path / "pmc_perf.csv").write_text("".join(lines))
    return str(path)


# two vcopy dispatches (1 Mi threads of 256, 16 registers, 8 MiB moved in 2 and 4 us)
# and one fma_loop (132 blocks of 128 threads, 48 KiB of shared memory, 64 registers)
# whose throughputs were not collected
ROWS_A = [
    (1, 1048576, 256, 0, 16, VCOPY, 1000, 3000, 4194304, 4194304, 2000, 20, 90, 3000),
    (2, 1048576, 256, 0, 16, VCOPY, 5000, 9000, 4194304, 4194304, 4000, 22, 86, 6000),
    (3, 16896, 128, 49152, 64, "fma_loop", 10000, 20000, 0, 0, 10000, "", "", 15000),
]


def analyze(tmp_path, *options):
    r = run([GPUPROF, "compute", "analyze", *options, "--output-format", "json"], cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    return {t["name"]: t for t in json.loads(r.stdout)}


def rows_of(table):
    return {row[0]: dict(zip(table["columns"], row)) for row in table["rows"]}


def test_analyze_evaluates_every_expression_as_computed_by_hand(tmp_path):
    a = workload(tmp_path / "a", ROWS_A)
    tables = analyze(tmp_path, "-p", a)
    top = tables["0.1"]["rows"]
    assert top == [["fma_loop", 1, 10000, 10000, 10000, 10000, 62.5],
                   ["vcopy(float const*, float*)", 2, 6000, 3000, 2000, 4000, 37.5]]
    sol = rows_of(tables["2.1"])
    assert sol["2.1.0"]["Avg"] == 21 and sol["2.1.0"]["Min"] == 20 and sol["2.1.0"]["Max"] == 22
    assert sol["2.1.0"]["Pct_of_Peak"] == 21
    assert sol["2.1.5"]["Avg"] == pytest.approx((2000 + 4000 + 10000) / 3, rel=1e-12)
    assert sol["2.1.2"]["Avg"] is None  # not collected: N/A, never 0
    # waves: vcopy 4096 blocks over 8 blocks per SM (8 warps each, 64 a SM) on 132 SMs;
    # fma_loop 132 blocks over 4 per SM (shared memory: 233472 / (49152 + 1024))
    vcopy_waves, fma_waves = 4096 / (8 * 132), 132 / (4 * 132)
    assert sol["2.1.10"]["Avg"] == pytest.approx((2 * vcopy_waves + fma_waves) / 3, rel=1e-12)
    occupancy = rows_of(tables["7.2"])["7.2.0"]
    assert (occupancy["Min"], occupancy["Max"]) == (25, 100)  # 16 warps of 64; 64 of 64
    assert occupancy["Avg"] == pytest.approx(75, rel=1e-12)
    launch = rows_of(tables["7.1"])
    assert launch["7.1.0"]["Min"] == 132 and launch["7.1.0"]["Max"] == 4096
    dram = rows_of(tables["18.1"])
    bandwidths = [8388608 / 2000e-9, 8388608 / 4000e-9, 0]
    assert dram["18.1.2"]["Avg"] == pytest.approx(sum(bandwidths) / 3, rel=1e-12)
    assert dram["18.1.2"]["Peak"] == 3.35e12
    assert dram["18.1.2"]["Pct_of_Peak"] == pytest.approx(100 * sum(bandwidths) / 3 / 3.35e12,
                                                          rel=1e-12)
    bottleneck = {row[0]: row for row in tables["2.2"]["rows"]}
    assert bottleneck["vcopy(float const*, float*)"][1:] == [
        21, 88, pytest.approx(vcopy_waves), "memory; above 80 %: near the peak of that unit"]
    assert bottleneck["fma_loop"][4] == "N/A (needs 2.1.0 and 2.1.1)"


def test_analyze_filters_normalizes_and_explains(tmp_path):
    a = workload(tmp_path / "a", ROWS_A)
    only = analyze(tmp_path, "-p", a, "-k", "vcopy", "-b", "18.1.0")
    assert set(only) == {"18.1"}
    assert rows_of(only["18.1"])["18.1.0"]["Avg"] == 4194304
    third = analyze(tmp_path, "-p", a, "-d", "3:", "-b", "2.1.5")
    assert rows_of(third["2.1"])["2.1.5"]["Avg"] == 10000
    per_second = analyze(tmp_path, "-p", a, "-d", "1:2", "-b", "18.1.0", "-n", "per_second")
    row = rows_of(per_second["18.1"])["18.1.0"]
    assert row["Unit"] == "bytes/s"
    assert row["Avg"] == pytest.approx((4194304 / 2e-6 + 4194304 / 4e-6) / 2, rel=1e-12)
    per_cycle = analyze(tmp_path, "-p", a, "-d", "1", "-b", "18.1.0", "-n", "per_cycle")
    assert rows_of(per_cycle["18.1"])["18.1.0"]["Avg"] == pytest.approx(4194304 / 3000)
    per_warp = analyze(tmp_path, "-p", a, "-d", "1", "-b", "18.1.0", "-n", "per_warp")
    assert rows_of(per_warp["18.1"])["18.1.0"]["Avg"] == pytest.approx(4194304 / 32768)
    r = run([GPUPROF, "compute", "analyze", "-p", a, "-g", "18.1.2", "-k", "vcopy"], cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == [
        "18.1.2 Bandwidth (bytes/s) = (dram__bytes_read.sum + dram__bytes_write.sum) / "
        "(gpu__time_duration.sum / 1e9)",
        "  dram__bytes_read.sum = 4194304 (average over 2 dispatches)",
        "  dram__bytes_write.sum = 4194304 (average over 2 dispatches)",
        "  gpu__time_duration.sum = 3000 (average over 2 dispatches)",
        "  = 3145728000000 bytes/s (average over 2 dispatches)"]
    r = run([GPUPROF, "compute", "analyze", "-p", a, "--list-stats"], cwd=tmp_path)
    assert re.search(r"^vcopy\(float const\*, float\*\) +2 +1 2$", r.stdout, re.M), r.stdout
    assert re.search(r"^fma_loop +1 +3$", r.stdout, re.M), r.stdout


def test_analyze_compares_workloads_against_the_first(tmp_path):
    a = workload(tmp_path / "a", ROWS_A)
    slower = [tuple(x if i != 10 else 2 * x for i, x in enumerate(row)) for row in ROWS_A]
    b = workload(tmp_path / "b", slower)  # every duration doubled
    tables = analyze(tmp_path, "-p", a, "-p", b, "-b", "2.1.5", "-b", "18.1.2")
    assert tables["2.1"]["columns"] == ["Metric_ID", "Metric", "Unit", "W1 (baseline)", "W2",
                                        "W2 change %", "W2 diff"]
    duration = tables["2.1"]["rows"][0]
    base = (2000 + 4000 + 10000) / 3
    assert duration[3:] == [pytest.approx(base), pytest.approx(2 * base), pytest.approx(100),
                            pytest.approx(base)]
    bandwidth = tables["18.1"]["rows"][0]
    assert bandwidth[5] == pytest.approx(-50)  # half the bandwidth


def test_analyze_bad_input_is_one_clear_line(tmp_path):
    a = workload(tmp_path / "a", ROWS_A)
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "sysinfo.csv").write_text(SYSINFO)
    (broken / "pmc_perf.csv").write_text(HEADER + '1,0,1,1,0,0,0,"unclosed,1,2,3,4,5,6,7,8\n')
    short = tmp_path / "short"
    short.mkdir()
    (short / "sysinfo.csv").write_text(SYSINFO)
    (short / "pmc_perf.csv").write_text(HEADER + "1,0,1,1\n")
    cases = [
        (["-p", str(tmp_path / "nowhere")], 1, "pmc_perf.csv: No such file or directory "
                                               "(not a gpuprof compute workload?)"),
        (["-p", str(broken)], 1, "pmc_perf.csv:2: a quoted field is not closed"),
        (["-p", str(short)], 1, "pmc_perf.csv:2: 4 fields, the header has 16"),
        (["-p", a, "-b", "42"], 2, "-b 42: no block, table or metric"),
        (["-p", a, "-d", "0"], 2, "-d 0: a dispatch is a number from 1"),
        (["-p", a, "-d", "5:2"], 2, "-d 5:2: a dispatch is a number from 1"),
        (["-p", a, "-g", "9.9.9"], 2, "-g 9.9.9: no metric has this id"),
        (["-p", a, "-n", "per_hour"], 2, "per_hour"),
        ([], 2, "no workload given (-p DIR)"),
    ]
    for options, status, message in cases:
        r = run([GPUPROF, "compute", "analyze", *options], cwd=tmp_path)
        assert r.returncode == status, (options, r.stderr)
        assert message in r.stderr and r.stderr.count("\n") == 1, (options, r.stderr)
