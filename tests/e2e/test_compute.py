"""gpuprof compute without a GPU: the metric catalog (catalog/*.yaml) against CUPTI's
profiler host API, which lists a chip's metrics and counts passes with no GPU; the
planning that -b selects; analyze over workload directories written here with values
whose results are computed by hand; bad input. Collecting counters needs a GPU."""
import glob
import html
import json
import os
import re
import shutil

import pytest

from conftest import GPUPROF, NEEDS_CHROMIUM, chromium, run

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
    assert [r[0] for r in rows] == ids and len(ids) == 228
    assert {r[3] for r in rows} == {"yes", "derived"}, [r for r in rows if r[3] == "no"]
    derived = [r[0] for r in rows if r[3] == "derived"]
    assert derived == ["2.1.10", "7.1.0", "7.1.1", "7.1.2", "7.1.3", "7.1.4", "7.2.0",
                       "7.3.0", "7.3.1", "7.3.2", "7.3.3", "7.3.4"]
    # the passes, from the host API: the speed-of-light set takes 9 on GH100, raw DRAM
    # byte counters one
    assert blocks == {
        "2": "46 CUPTI metrics, 9 passes", "3": "27 CUPTI metrics, 10 passes",
        "4": "30 CUPTI metrics, 7 passes", "7": "2 CUPTI metrics, 1 pass",
        "10": "29 CUPTI metrics, 3 passes", "11": "28 CUPTI metrics, 10 passes",
        "12": "4 CUPTI metrics, 1 pass", "16": "11 CUPTI metrics, 4 passes",
        "17": "17 CUPTI metrics, 4 passes", "18": "4 CUPTI metrics, 1 pass",
        "20": "20 CUPTI metrics, 7 passes", "22": "6 CUPTI metrics, 1 pass"}
    assert total == ("228", "190 CUPTI metrics, 27 passes")
    # any case of a chip's name is the chip
    assert listing(tmp_path, "--chip", "gh100") == (rows, blocks, total)


def test_the_catalog_holds_nsight_computes_full_set(tmp_path):
    """The sections of Nsight Compute's full set, each where the catalog keeps it: the
    speed-of-light breakdowns, the memory workload, local memory, occupancy limiters,
    instruction classes, executed-instruction pipe utilization, hit rates by operation,
    L2 eviction policies, its 19 stall reasons, the scheduler statistics; and the set
    `full` that selects them all."""
    expressions = {}
    for path in sorted(glob.glob(os.path.join(CATALOG, "[0-9]*.yaml"))):
        with open(path) as f:
            expressions.update(re.findall(r"^      - id: (\S+)\n        name: .*\n"
                                          r"        expr: (.*)$", f.read(), re.M))
    every = " ".join(expressions.values())
    stalls = re.findall(r"smsp__average_warps_issue_stalled_(\w+)_per_issue_active", every)
    assert sorted(stalls) == sorted([
        "long_scoreboard", "short_scoreboard", "barrier", "lg_throttle", "math_pipe_throttle",
        "wait", "not_selected", "gmma", "mio_throttle", "tex_throttle", "membar",
        "no_instruction", "branch_resolving", "dispatch_stall", "drain", "imc_miss", "misc",
        "sleeping", "selected"])
    for name in ["smsp__warps_eligible.avg.per_cycle_active",
                 "smsp__issue_inst0.avg.pct_of_peak_sustained_active",
                 "gpu__compute_memory_access_throughput", "gpu__compute_memory_request_throughput",
                 "sm__memory_throughput", "l1tex__t_bytes_pipe_lsu_mem_local_op_ld.sum",
                 "lts__t_sector_op_read_hit_rate.pct", "lts__t_sectors_srcunit_tex_evict_first.sum",
                 "lts__t_sectors_aperture_peer_op_read.sum", "launch.occupancy_limit_registers",
                 "sm__inst_executed_pipe_lsu.avg.pct_of_peak_sustained_active",
                 "smsp__sass_thread_inst_executed_op_integer_pred_on.sum",
                 "l1tex__lsu_writeback_active_mem_lgds.sum", "lts__lts2xbar_cycles_active.sum"]:
        assert name in every, name
    assert len([i for i in expressions if i.startswith("2.3.")]) == 16
    assert len([i for i in expressions if i.startswith("2.4.")]) == 20
    # 4.1.9, the shared-memory rate, is 4.2.12's bytes over the duration
    assert expressions["4.1.9"] == expressions["4.2.12"] + " / launch.duration"
    with open(os.path.join(CATALOG, "sets.yaml")) as f:
        sets = f.read()
    full = re.search(r"- name: full\n.*\n    select: \[(.*)\]", sets).group(1).split(", ")
    blocks = sorted({i.split(".")[0] for i in expressions}, key=int)
    assert full == blocks


def test_a_selection_plans_what_it_names(tmp_path, host_api):
    rows, blocks, total = listing(tmp_path, "--chip", "GH100", "-b", "dram", "-b", "2.1.5",
                                  "-b", "7.2")
    assert [r[0] for r in rows] == ["2.1.5", "7.2.0", "7.2.1", "7.2.2", "18.1.0", "18.1.1",
                                    "18.1.2", "18.1.3"]
    assert blocks == {"2": "1 CUPTI metrics, 1 pass", "7": "2 CUPTI metrics, 1 pass",
                      "18": "4 CUPTI metrics, 1 pass"}
    assert total == ("8", "6 CUPTI metrics, 1 pass")  # the duration counted once
    # analyze's own tables collect what they are made of: the bottleneck (2.2) reads the
    # two throughputs and the waves, the roofline (4.3) block 4's counts
    rows, blocks, total = listing(tmp_path, "--chip", "GH100", "-b", "2.2")
    assert [r[0] for r in rows] == ["2.1.0", "2.1.1", "2.1.10"]
    rows, blocks, total = listing(tmp_path, "--chip", "GH100", "-b", "4.3")
    assert {r[0].rsplit(".", 1)[0] for r in rows} == {"4.2"}


def test_a_chip_without_a_metric_says_which(tmp_path, host_api):
    # the Hopper metrics (warpgroup MMA, TMA, FP8, the tensor-core work on FP16 inputs,
    # distributed shared memory) are not Ampere's: marked with the name missing, and the
    # blocks that hold them say so
    rows, blocks, total = listing(tmp_path, "--chip", "GA100")
    missing = {r[0]: r[4] for r in rows if r[3] == "no"}
    assert sorted(missing) == ["10.3.3", "10.4.4", "11.2.4", "11.2.5", "11.3.10", "11.3.12",
                               "11.3.4", "2.3.11", "20.1.8", "4.1.3", "4.2.13", "4.2.15",
                               "4.2.3", "4.2.6"]
    fp8 = "sm__ops_path_tensor_src_fp8_sparsity_off.sum"
    assert missing.pop("4.1.3") == missing.pop("4.2.3").replace(
        "sm__ops_path_tensor_src_fp16.sum ", "sm__ops_path_tensor_src_fp16.sum / launch.duration ", 1)
    assert missing.pop("4.2.6").endswith(f"({fp8} missing)")
    for expression in missing.values():  # each names the first name GA100 lacks
        name = re.search(r"\((\S+) missing\)$", expression).group(1)
        assert name in expression.rsplit("  (", 1)[0], expression
    assert missing["11.2.4"] == (
        "sm__inst_executed_pipe_tensor_op_gmma.avg.pct_of_peak_sustained_elapsed  "
        "(sm__inst_executed_pipe_tensor_op_gmma.avg.pct_of_peak_sustained_elapsed missing)")
    assert blocks["11"].startswith("28 CUPTI metrics; GA100 has no sm__inst_executed_pipe_tensor")
    assert blocks["20"] == ("20 CUPTI metrics; GA100 has no "
                            "smsp__average_warps_issue_stalled_gmma_per_issue_active.ratio")
    assert blocks["18"] == "4 CUPTI metrics, 1 pass"


def test_sets_claimed_single_pass_take_one_pass(tmp_path, host_api):
    with open(os.path.join(CATALOG, "sets.yaml")) as f:
        text = f.read()
    claimed = re.findall(r"- name: (\S+)\n(?:    .*\n)*?    single_pass: true", text)
    assert claimed == ["launch", "pipe-utilization", "memory-throughput", "dram",
                       "shared-memory", "cache-traffic"]
    r = run([GPUPROF, "compute", "profile", "--list-sets", "--chip", "GH100"], cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    passes = dict(re.findall(r"^(\S+) +\d+ metrics, \d+ CUPTI metrics, (\d+) pass", r.stdout, re.M))
    assert set(passes) == set(re.findall(r"- name: (\S+)", text))
    assert {name: passes[name] for name in claimed} == {name: "1" for name in claimed}
    assert passes["speed-of-light"] == "9"
    assert passes["full"] == "27"  # every block of the catalog, as --list-available-metrics
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
    # rocprof-compute's sets, by their names: each stands for one here, said once
    assert re.search(r"^pipe-utilization .* \(for rocprof-compute's compute_thruput_util\)$",
                     r.stdout, re.M), r.stdout
    rows, blocks, total = listing(tmp_path, "--chip", "GH100", "--set", "compute_thruput_util")
    assert [r[0] for r in rows] == ["2.1.5", "11.3.1", "11.3.2", "11.3.3", "11.3.6"]
    assert total == ("5", "5 CUPTI metrics, 1 pass")


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
        (["--roof-only", "-b", "2", "--", "true"], 2,
         "--roof-only collects block 4: it takes no -b or --set"),
        (["--roof-only", "--set", "dram", "--", "true"], 2,
         "--roof-only collects block 4: it takes no -b or --set"),
        (["--roof-only", "--no-roof", "--", "true"], 2,
         "--roof-only and --no-roof cannot go together"),
        (["--bench-only", "--", "true"], 2,
         "--bench-only measures the GPU's ceilings alone: it takes no COMMAND"),
        (["--bench-only", "-b", "2"], 2, "--bench-only measures the GPU's ceilings alone"),
        (["--bench-only", "--no-roof"], 2, "--bench-only measures the GPU's ceilings alone"),
        (["--bench-only", "--roof-only"], 2, "--bench-only measures the GPU's ceilings alone"),
        (["--bench-only", "--chip", "GH100"], 2,
         "--chip plans listings; a collection is on this machine's GPU"),
        (["--replay", "ranges", "--", "true"], 2, "--replay"),
        (["--iteration-multiplexing", "kernel", "--replay", "application", "--", "true"], 2,
         "--iteration-multiplexing replays nothing: it cannot go with --replay application"),
        (["--iteration-multiplexing", "sometimes", "--", "true"], 2,
         "--iteration-multiplexing"),
        (["--bogus"], 2, "--bogus"),
        (["--set", "dram", "-b", "2", "--chip", "GH100", "--list-available-metrics"], 2,
         "--set and -b both select metrics: give one"),
        (["--set", "nope", "--chip", "GH100", "--list-sets"], 2, "--set nope: no such set"),
    ]
    if not os.path.exists("/dev/nvidiactl"):  # no GPU: a collection is refused before it runs
        cases.append((["-b", "18", "--", "touch", "ran"], 1,
                      "no NVIDIA GPU is usable here: counters need one"))
        cases.append((["--bench-only"], 1, "no NVIDIA GPU is usable here"))
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
    # each dispatch's inputs beside its own value, and the mean of those values (a mean of
    # ratios: 8 MiB in 2 us and in 4 us average 3.1 TB/s, not the 2.8 TB/s of the means)
    assert r.stdout.splitlines() == [
        "18.1.2 Bandwidth (bytes/s) = (dram__bytes_read.sum + dram__bytes_write.sum) / "
        "(launch.duration / 1e9)",
        "  peak = device.dram_bandwidth",
        "  dispatch 1 (vcopy(float const*, float*)): dram__bytes_read.sum = 4194304, "
        "dram__bytes_write.sum = 4194304, launch.duration = 2000 (gpu__time_duration.sum) "
        "-> 4194304000000 bytes/s",
        "  dispatch 2 (vcopy(float const*, float*)): dram__bytes_read.sum = 4194304, "
        "dram__bytes_write.sum = 4194304, launch.duration = 4000 (gpu__time_duration.sum) "
        "-> 2097152000000 bytes/s",
        "  = 3145728000000 bytes/s: the mean of the 2 dispatches' values (Avg of the tables)"]
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


def test_memory_chart_follows_the_traffic_level_by_level(tmp_path):
    """Block 3: each hop of a kernel's memory traffic, from counters written here."""
    path = tmp_path / "chart"
    path.mkdir()
    (path / "sysinfo.csv").write_text(SYSINFO)
    counters = {"smsp__inst_executed_op_global_ld.sum": 32768,
                "smsp__inst_executed_op_global_st.sum": 32768,
                "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum": 32768,
                "l1tex__t_sector_hit_rate.pct": 0,
                "lts__t_sectors_srcunit_tex_op_read.sum": 131072,
                "lts__t_sectors_srcunit_tex_op_write.sum": 131072,
                "lts__t_sector_hit_rate.pct": 12.5,
                "dram__bytes_read.sum": 4194304,
                "dram__bytes_write.sum": 0,
                "lts__t_sectors_aperture_sysmem_op_read.sum": 10,
                "lts__t_sectors_aperture_peer_op_read.sum": 3,
                "gpu__compute_memory_access_throughput.avg.pct_of_peak_sustained_elapsed": 40,
                "l1tex__t_bytes_pipe_lsu_mem_local_op_ld.sum": 2048}
    (path / "pmc_perf.csv").write_text(
        HEADER.split(",dram__")[0] + "," + ",".join(counters) + "\n" +
        f"1,0,1048576,256,0,0,16,{VCOPY},0,2000," + ",".join(map(str, counters.values())) +
        "\n")
    tables = analyze(tmp_path, "-p", str(path), "-b", "3")
    assert set(tables) == {"3.1", "3.2", "3.3", "3.4", "3.5"}
    chart = {k: v for t in tables.values() for k, v in rows_of(t).items()}
    average = {k: v["Avg"] for k, v in chart.items()}
    assert average == {
        "3.1.0": 32768, "3.1.1": 32768, "3.1.2": None, "3.1.3": None, "3.1.4": None,
        "3.1.5": None, "3.1.6": 32768, "3.1.7": None,
        "3.2.0": 0, "3.2.1": 131072, "3.2.2": 131072, "3.2.3": (131072 + 131072) * 32,
        "3.3.0": 12.5, "3.3.1": None, "3.3.2": 4194304, "3.3.3": 0, "3.3.4": 320,
        "3.3.5": None, "3.3.6": 96, "3.3.7": None,
        # the memory workload: 4 MiB in 2 us; the busiest memory unit; local memory
        "3.4.0": 4194304 / 2000e-9, "3.4.1": 40, "3.4.2": None, "3.4.3": None,
        "3.5.0": 2048, "3.5.1": None, "3.5.2": None, "3.5.3": None}


# iteration multiplexing in two groups: the DRAM bytes, then the duration. vcopy four
# times in turn (1 Mi threads), once more at 2 Mi threads (bytes only); fma_loop once
MULTIPLEXED = [
    (1, 1048576, 256, 0, 16, VCOPY, 1000, 3000, 4194304, 4194304, "", "", "", ""),
    (2, 1048576, 256, 0, 16, VCOPY, 5000, 9000, "", "", 2000, "", "", ""),
    (3, 1048576, 256, 0, 16, VCOPY, 10000, 12000, 8388608, 8388608, "", "", "", ""),
    (4, 1048576, 256, 0, 16, VCOPY, 13000, 17000, "", "", 4000, "", "", ""),
    (5, 2097152, 256, 0, 16, VCOPY, 18000, 20000, 4194304, 4194304, "", "", "", ""),
    (6, 16896, 128, 49152, 64, "fma_loop", 21000, 31000, 0, 0, "", "", "", ""),
]


def multiplexed(path, mode, groups=2):
    w = workload(path, MULTIPLEXED)
    (path / "profiling_config.yaml").write_text(
        f'name: "m"\nreplay: none\niteration_multiplexing: {mode}\n'
        f"multiplex_groups: {groups}\nselection: \"18\"\n")
    return w


def test_analyze_completes_multiplexed_dispatches_with_their_kernels_means(tmp_path):
    """Under iteration multiplexing a counter a dispatch did not collect is its kernel's
    mean over the dispatches that did; a kernel dispatched fewer times than there are
    groups gets no metrics and is named in one warning."""
    w = multiplexed(tmp_path / "by-name", "kernel")
    r = run([GPUPROF, "compute", "analyze", "-p", w, "-b", "18.1", "--output-format", "json"],
            cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stderr == (f"gpuprof: compute analyze: {w}: 1 kernel dispatched fewer "
                        "times than the 2 groups of metrics get no metrics: fma_loop "
                        "(measured 1 time)\n")
    dram = rows_of({t["name"]: t for t in json.loads(r.stdout)}["18.1"])
    # vcopy by name: 5 dispatches, bytes read measured on 1, 3, 5, the duration on 2, 4
    read = (4194304 + 8388608 + 4194304) / 3
    duration = (2000 + 4000) / 2
    reads = [4194304, read, 8388608, read, 4194304]
    durations = [duration, 2000, duration, 4000, duration]
    assert dram["18.1.0"]["Avg"] == pytest.approx(sum(reads) / 5, rel=1e-12)
    assert (dram["18.1.0"]["Min"], dram["18.1.0"]["Max"]) == (4194304, 8388608)
    bandwidths = [2 * b / (d * 1e-9) for b, d in zip(reads, durations)]
    assert dram["18.1.2"]["Avg"] == pytest.approx(sum(bandwidths) / 5, rel=1e-12)

    w = multiplexed(tmp_path / "by-launch", "kernel_launch_params")
    r = run([GPUPROF, "compute", "analyze", "-p", w, "-b", "18.1", "--output-format", "json"],
            cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stderr == (f"gpuprof: compute analyze: {w}: 2 kernels dispatched fewer "
                        "times than the 2 groups of metrics get no metrics: vcopy(float "
                        "const*, float*) (measured 1 time with 2097152 threads in blocks of "
                        "256); fma_loop (measured 1 time with 16896 threads in blocks of 128)\n")
    dram = rows_of({t["name"]: t for t in json.loads(r.stdout)}["18.1"])
    # vcopy at 1 Mi threads alone: 4 dispatches
    read = (4194304 + 8388608) / 2
    reads = [4194304, read, 8388608, read]
    durations = [duration, 2000, duration, 4000]
    assert dram["18.1.0"]["Avg"] == pytest.approx(sum(reads) / 4, rel=1e-12)
    bandwidths = [2 * b / (d * 1e-9) for b, d in zip(reads, durations)]
    assert dram["18.1.2"]["Avg"] == pytest.approx(sum(bandwidths) / 4, rel=1e-12)

    # the same rows without multiplexing: a dispatch without the GPU's own duration
    # (gpu__time_duration.sum) takes the trace's (End - Start) as its time base, and the
    # dispatches without bytes have no bandwidth
    plain = workload(tmp_path / "plain", MULTIPLEXED)
    dram = rows_of(analyze(tmp_path, "-p", plain, "-b", "18.1")["18.1"])
    bandwidths = [8388608 / 2000e-9, 16777216 / 2000e-9, 8388608 / 2000e-9, 0]
    assert dram["18.1.2"]["Avg"] == pytest.approx(sum(bandwidths) / 4, rel=1e-12)
    assert dram["18.1.0"]["Avg"] == pytest.approx((4194304 + 8388608 + 4194304 + 0) / 4)

    for text, message in [("iteration_multiplexing: sometimes\nmultiplex_groups: 2\n",
                           "iteration_multiplexing is kernel, kernel_launch_params or none, "
                           "not 'sometimes'"),
                          ("iteration_multiplexing: kernel\nmultiplex_groups: 0\n",
                           "multiplex_groups is a count, not '0'"),
                          ("iteration_multiplexing: kernel\n",
                           "iteration_multiplexing without multiplex_groups")]:
        (tmp_path / "plain" / "profiling_config.yaml").write_text(text)
        r = run([GPUPROF, "compute", "analyze", "-p", plain], cwd=tmp_path)
        assert r.returncode == 1 and message in r.stderr, r.stderr
        assert r.stderr.count("\n") == 1, r.stderr


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
        (["-p", a, "-R", "FP7"], 2, "-R FP7: not a data type"),
        (["-p", a, "-m", "L3"], 2, "-m L3: not a memory level"),
        (["-p", a, "--sort", "time"], 2, "time"),
        (["-p", a, "--roofline-plot", str(tmp_path / "no" / "plot.html")], 1,
         "--roofline-plot: cannot create"),
        ([], 2, "no workload given (-p DIR)"),
    ]
    for options, status, message in cases:
        r = run([GPUPROF, "compute", "analyze", *options], cwd=tmp_path)
        assert r.returncode == status, (options, r.stderr)
        assert message in r.stderr and r.stderr.count("\n") == 1, (options, r.stderr)


# ---- the roofline (block 4) ---------------------------------------------------------------

ROOF_HEADER = ("Dispatch_ID,GPU_ID,Grid_Size,Workgroup_Size,LDS_Per_Workgroup,"
               "Scratch_Per_Workitem,Registers_Per_Thread,Kernel_Name,Start_Timestamp,"
               "End_Timestamp,smsp__sass_thread_inst_executed_op_fadd_pred_on.sum,"
               "smsp__sass_thread_inst_executed_op_fmul_pred_on.sum,"
               "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum,"
               "sm__ops_path_tensor_src_tf32_dst_fp32.sum,dram__bytes_read.sum,"
               "dram__bytes_write.sum,lts__t_bytes.sum,l1tex__t_bytes.sum\n")
# (id, kernel, start, end, fadd, fmul, ffma, tf32 tensor ops, dram read, dram write, L2
# bytes, L1 bytes): two dispatches of a streaming kernel, an FP32 GEMM on the FMA units, a
# TF32 GEMM on the tensor cores
ROOF_ROWS = [
    (1, "stream", 0, 2000, 0, 0, 1e6, 0, 4e6, 4e6, 8e6, 8e6),
    (2, "stream", 3000, 9000, 0, 0, 1e6, 0, 4e6, 4e6, 8e6, 8e6),
    (3, "gemm", 10000, 20000, 1e7, 0, 1e8, 0, 1e6, 1e6, 1e7, 1e8),
    (4, "tc", 21000, 26000, 0, 0, 0, 1e9, 5e6, 5e6, 2e7, 2e7),
]
# the measured ceilings: GB/s and GFLOP/s; no LDS figure
ROOFLINE = {"HBMBw": 3000, "L2Bw": 10000, "L1Bw": 30000, "FP32Flops": 60000,
            "MFMAF32Flops": 400000}


def roof_workload(path, ceilings=ROOFLINE, rows=ROOF_ROWS):
    path.mkdir()
    (path / "sysinfo.csv").write_text(SYSINFO)
    lines = [ROOF_HEADER]
    for i, kernel, start, end, *counters in rows:
        lines.append(",".join(map(str, [i, 0, 1024, 256, 0, 0, 32, kernel, start, end,
                                        *counters])) + "\n")
    (path / "pmc_perf.csv").write_text("".join(lines))
    if ceilings:
        names = list(ceilings)
        header = ["device", "device_name", "backend", "experiments"] + [
            n + p for n in names for p in ("", "Low", "High")]
        row = ["0", "NVIDIA H100", "cuda", "100"] + [
            str(v * f) for n in names for v in [ceilings[n]] for f in (1, 0.99, 1.01)]
        (path / "roofline.csv").write_text(",".join(header) + "\n" + ",".join(row) + "\n")
    return str(path)


def test_roofline_places_each_kernel_as_computed_by_hand(tmp_path):
    a = roof_workload(tmp_path / "a")
    tables = analyze(tmp_path, "-p", a, "-b", "4")
    assert set(tables) == {"4.1", "4.2", "4.3"}
    table = tables["4.3"]
    assert table["columns"] == ["Kernel", "Dispatches", "Level", "Intensity (FLOP/byte)",
                                "Rate (GFLOP/s)", "Ceiling (GFLOP/s)", "Pct_of_Ceiling", "Bound"]
    got = {(row[0], row[2]): row for row in table["rows"]}
    # the kernels by total time (gemm 10 us, stream 8 us, tc 5 us), each at HBM, L2, L1, LDS
    assert [(row[0], row[2]) for row in table["rows"]] == [
        (k, level) for k in ("gemm", "stream", "tc") for level in ("HBM", "L2", "L1", "LDS")]

    def expect(kernel, level, dispatches, intensity, rate, ceiling, bound):
        row = got[(kernel, level)]
        assert row[1] == dispatches
        assert row[3] == pytest.approx(intensity, rel=1e-12), row
        assert row[4] == pytest.approx(rate, rel=1e-12), row
        assert row[5] == pytest.approx(ceiling, rel=1e-12), row
        assert row[6] == pytest.approx(100 * rate / ceiling, rel=1e-12), row
        assert row[7] == bound, row

    # stream: 2 x 2e6 FLOP over 2 x 8e6 bytes in 8 us: 0.25 FLOP/byte, 500 GFLOP/s; below
    # every knee (HBM 60000/3000 = 20, L2 6, L1 2)
    expect("stream", "HBM", 2, 0.25, 500, 0.25 * 3000, "memory (HBMBw)")
    expect("stream", "L2", 2, 0.25, 500, 0.25 * 10000, "memory (L2Bw)")
    expect("stream", "L1", 2, 0.25, 500, 0.25 * 30000, "memory (L1Bw)")
    # gemm: 1e7 + 2e8 FLOP in 10 us (21000 GFLOP/s), at 2e6, 1e7 and 1e8 bytes: above
    # every knee, 35 % of the FP32 ceiling
    expect("gemm", "HBM", 1, 105, 21000, 60000, "compute (FP32Flops)")
    expect("gemm", "L2", 1, 21, 21000, 60000, "compute (FP32Flops)")
    expect("gemm", "L1", 1, 2.1, 21000, 60000, "compute (FP32Flops)")
    # tc: tensor work, so against the TF32 tensor ceiling (knee at HBM 400000/3000 =
    # 133.3): 1e9 FLOP over 1e7 bytes in 5 us
    expect("tc", "HBM", 1, 100, 200000, 300000, "memory (HBMBw)")
    expect("tc", "L2", 1, 50, 200000, 400000, "compute (MFMAF32Flops)")
    # no shared-memory counter collected: nothing placed, and why
    assert got[("gemm", "LDS")][3:] == [None, None, None, None,
                                        "N/A (no dispatch has both FP32 work and LDS bytes: "
                                        "collect block 4)"]
    # the rates of table 4.1, per dispatch, against the measured ceilings
    rates = rows_of(tables["4.1"])
    fp32 = [2e6 / 2000, 2e6 / 6000, 2.1e8 / 10000, 0]
    assert rates["4.1.1"]["Avg"] == pytest.approx(sum(fp32) / 4, rel=1e-12)
    assert rates["4.1.1"]["Peak"] == 60000
    assert rates["4.1.6"]["Peak"] == 3000 and rates["4.1.6"]["Avg"] == pytest.approx(
        (8e6 / 2000 + 8e6 / 6000 + 2e6 / 10000 + 1e7 / 5000) / 4, rel=1e-12)
    assert rates["4.1.0"]["Avg"] is None and rates["4.1.0"]["Peak"] is None
    work = rows_of(tables["4.2"])
    assert work["4.2.1"]["Avg"] == pytest.approx((2e6 + 2e6 + 2.1e8 + 0) / 4, rel=1e-12)

    # per dispatch, the longest first, two of them; one level; another data type
    tables = analyze(tmp_path, "-p", a, "-b", "4", "--sort", "dispatches", "--max-stat-num",
                     "2", "-m", "HBM")
    rows = tables["4.3"]["rows"]
    assert tables["4.3"]["columns"][1] == "Dispatch_ID"
    assert [(row[0], row[1], row[2]) for row in rows] == [("gemm", 3, "HBM"), ("stream", 2, "HBM")]
    assert rows[1][3] == pytest.approx(0.25) and rows[1][4] == pytest.approx(2e6 / 6000)
    tables = analyze(tmp_path, "-p", a, "-b", "4", "-R", "FP64", "-m", "L2")
    assert [row[7] for row in tables["4.3"]["rows"]] == [
        "N/A (no dispatch has both FP64 work and L2 bytes: collect block 4)"] * 3


def test_roofline_without_ceilings_gives_the_points_and_says_why(tmp_path):
    a = roof_workload(tmp_path / "a", ceilings=None)
    row = {(r[0], r[2]): r for r in analyze(tmp_path, "-p", a, "-b", "4")["4.3"]["rows"]}
    assert row[("stream", "HBM")][3:] == [pytest.approx(0.25), pytest.approx(500), None, None,
                                          "N/A (no roofline.csv in the workload)"]
    # a ceiling not measured (rocprof-compute writes 0 for those)
    b = roof_workload(tmp_path / "b", ceilings=dict(ROOFLINE, L2Bw=0))
    row = {(r[0], r[2]): r for r in analyze(tmp_path, "-p", b, "-b", "4")["4.3"]["rows"]}
    assert row[("gemm", "L2")][7] == "N/A (L2Bw or FP32Flops not measured)"
    assert row[("gemm", "HBM")][7] == "compute (FP32Flops)"
    plot = tmp_path / "plot.html"
    r = run([GPUPROF, "compute", "analyze", "-p", a, "--roofline-plot", str(plot)], cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    text = plot.read_text()
    assert 'class="ceiling"' not in text and "has no roofline.csv" in text
    assert text.count('class="point"') == 9  # 3 kernels at HBM, L2 and L1


@NEEDS_CHROMIUM
def test_roofline_plot_shows_every_ceiling_and_point_in_chromium(tmp_path):
    """The plot of analyze --roofline-plot, opened in headless Chromium: the ceilings of
    the levels and the data type asked, one point per kernel and level with the values of
    table 4.3, hostile kernel names shown as text; a screenshot kept."""
    rows = ROOF_ROWS[:3] + [(4, '"<script>alert(1)</script> & ""tc"""', *ROOF_ROWS[3][2:])]
    a = roof_workload(tmp_path / "a", rows=rows)
    plot = tmp_path / "roofline.html"
    tables = analyze(tmp_path, "-p", a, "-b", "4", "-m", "HBM", "L2", "--roofline-plot",
                     str(plot))
    text = plot.read_text()
    assert "<script" not in text and "https://" not in text
    dom = chromium(plot, tmp_path / "profile", screenshot="compute-roofline.png")
    ceilings = dict(re.findall(r'<g class="ceiling" data-name="(\w+)" data-value="([^"]+)"', dom))
    assert {n: float(v) for n, v in ceilings.items()} == {
        "HBMBw": 3000, "L2Bw": 10000, "FP32Flops": 60000, "MFMAF32Flops": 400000}
    points = re.findall(r'<g class="point" data-label="([^"]*)" data-level="(\w+)" '
                        r'data-flops="([^"]+)" data-intensity="([^"]+)"', dom)
    expected = {(html.unescape(row[0]), row[2]): (row[4], row[3]) for row in tables["4.3"]["rows"]}
    assert len(points) == len(expected) == 6
    for label, level, flops, intensity in points:
        rate, ai = expected[(html.unescape(label), level)]
        assert float(flops) == pytest.approx(rate, rel=1e-5)
        assert float(intensity) == pytest.approx(ai, rel=1e-5)
    assert "<script" not in dom and '&lt;script&gt;alert(1)&lt;/script&gt; &amp; "tc"' in dom


# ---- analyze, tried as a user would ------------------------------------------------------

def analyze_fails(tmp_path, *options):
    r = run([GPUPROF, "compute", "analyze", *options], cwd=tmp_path)
    assert r.returncode != 0 and r.stderr.count("\n") == 1, (options, r.stderr)
    return r.returncode, r.stderr


def test_analyze_selects_its_own_tables_by_their_ids(tmp_path):
    """The tables analyze makes itself are selected as they are printed: 0.1 (or 0) the
    top kernels, 1.1 (1) the system, 2.2 the bottleneck, 4.3 the roofline; a block's
    number or alias brings its own table with it, a table of the catalog does not."""
    a = workload(tmp_path / "a", ROWS_A)
    assert set(analyze(tmp_path, "-p", a, "-b", "2.2")) == {"2.2"}
    assert set(analyze(tmp_path, "-p", a, "-b", "4.3")) == {"4.3"}
    assert set(analyze(tmp_path, "-p", a, "-b", "0")) == {"0.1"}
    assert set(analyze(tmp_path, "-p", a, "-b", "1.1")) == {"1.1"}
    assert set(analyze(tmp_path, "-p", a, "-b", "2.1")) == {"2.1"}
    assert set(analyze(tmp_path, "-p", a, "-b", "sol")) == {"2.1", "2.2", "2.3", "2.4"}
    bottleneck = analyze(tmp_path, "-p", a, "-b", "2.2")["2.2"]["rows"]
    assert [row[0] for row in bottleneck] == ["fma_loop", "vcopy(float const*, float*)"]
    assert analyze_fails(tmp_path, "-p", a, "-b", "2.9")[0] == 2


def test_analyze_refuses_what_no_kernel_wrote(tmp_path):
    """Rows a profiler cannot have written are refused with their line: an end before
    its start, a negative duration or count, a dispatch id twice, no rows at all."""
    def variant(name, rows, header=HEADER):
        path = tmp_path / name
        path.mkdir()
        (path / "sysinfo.csv").write_text(SYSINFO)
        (path / "pmc_perf.csv").write_text(header + "".join(
            ",".join(map(str, [i, 0, grid, block, shared, 0, regs, kernel, start, end, *c]))
            + "\n" for i, grid, block, shared, regs, kernel, start, end, *c in rows))
        return str(path)
    backwards = [ROWS_A[0], (2, 1048576, 256, 0, 16, VCOPY, 9000, 5000, 4194304, 4194304,
                             4000, 22, 86, 6000)]
    negative = [ROWS_A[0], (2, 1048576, 256, 0, 16, VCOPY, 5000, 9000, 4194304, 4194304,
                            -4000, 22, 86, 6000)]
    twice = [ROWS_A[0], ROWS_A[1], (1,) + ROWS_A[2][1:]]
    cases = [
        (variant("backwards", backwards), "backwards/pmc_perf.csv:3: End_Timestamp 5000 is "
                                          "before Start_Timestamp 9000"),
        (variant("negative", negative), "negative/pmc_perf.csv:3: gpu__time_duration.sum: -4000 "
                                        "is negative"),
        (variant("twice", twice), "twice/pmc_perf.csv:4: Dispatch_ID 1 again (line 2 has it: a "
                                  "dispatch has one row)"),
        (variant("empty", []), "empty/pmc_perf.csv: no dispatches (a header and no rows)"),
    ]
    for path, message in cases:
        status, stderr = analyze_fails(tmp_path, "-p", path)
        assert status == 1 and message in stderr, stderr
    # a byte order mark (a spreadsheet's CSV) is not part of the first column's name
    plain = workload(tmp_path / "plain", ROWS_A)
    bom = workload(tmp_path / "bom", ROWS_A)
    for name in ["sysinfo.csv", "pmc_perf.csv"]:
        text = (tmp_path / "bom" / name).read_bytes()
        (tmp_path / "bom" / name).write_bytes(b"\xef\xbb\xbf" + text)
    rows = {name: t["rows"] for name, t in analyze(tmp_path, "-p", plain).items()}
    assert {name: t["rows"] for name, t in analyze(tmp_path, "-p", bom).items()} == rows


def test_analyze_filters_that_keep_nothing_say_so(tmp_path):
    a = workload(tmp_path / "a", ROWS_A)
    for options, message in [
            (["-k", "nothing"], "-k nothing: no dispatch of " + a + " is kept"),
            (["-d", "7", "-d", "9:"], "-d 7 -d 9:: no dispatch of " + a + " is kept"),
            (["-k", "vcopy", "-d", "3"], "-k vcopy -d 3: no dispatch of " + a + " is kept")]:
        for extra in [[], ["--list-stats"], ["-g", "18.1.2"]]:
            status, stderr = analyze_fails(tmp_path, "-p", a, *options, *extra)
            assert status == 1 and message in stderr and "--list-stats lists" in stderr, stderr


def test_analyze_has_one_time_base(tmp_path):
    """Every rate divides by one duration: the GPU's own (gpu__time_duration.sum) where it
    was collected, else the trace's End - Start; the DRAM bandwidth of block 4 and of
    block 18 are then the same number, and the top kernels' times are those durations."""
    path = tmp_path / "w"
    path.mkdir()
    (path / "sysinfo.csv").write_text(SYSINFO)
    names = ["dram__bytes_read.sum", "dram__bytes_write.sum", "gpu__time_duration.sum",
             "lts__t_bytes.sum"]
    (path / "pmc_perf.csv").write_text(
        HEADER.split(",dram__")[0] + "," + ",".join(names) + "\n" +
        # the trace saw 2.5 us (launch overhead included), the GPU 2 us
        f"1,0,1048576,256,0,0,16,{VCOPY},1000,3500,4194304,4194304,2000,8388608\n"
        # no GPU duration collected: 4 us from the trace
        f"2,0,1048576,256,0,0,16,{VCOPY},5000,9000,4194304,4194304,,8388608\n")
    tables = analyze(tmp_path, "-p", str(path))
    per_dispatch = [8388608 / 2000e-9, 8388608 / 4000e-9]
    dram = rows_of(tables["18.1"])["18.1.2"]
    assert dram["Avg"] == pytest.approx(sum(per_dispatch) / 2, rel=1e-12)
    assert rows_of(tables["4.1"])["4.1.6"]["Avg"] * 1e9 == pytest.approx(dram["Avg"], rel=1e-12)
    assert rows_of(tables["17.1"])["17.1.4"]["Avg"] == pytest.approx(dram["Avg"], rel=1e-12)
    assert rows_of(tables["4.1"])["4.1.7"]["Avg"] * 1e9 == pytest.approx(dram["Avg"], rel=1e-12)
    assert tables["0.1"]["rows"] == [["vcopy(float const*, float*)", 2, 6000, 3000, 2000, 4000,
                                      100]]
    per_second = rows_of(analyze(tmp_path, "-p", str(path), "-b", "18.1.0", "-n",
                                 "per_second")["18.1"])["18.1.0"]
    assert per_second["Avg"] == pytest.approx((4194304 / 2e-6 + 4194304 / 4e-6) / 2, rel=1e-12)


def test_analyze_prints_large_values_with_a_prefix(tmp_path):
    """For people (text, Markdown) a row of large values takes an SI prefix; CSV and
    JSON keep every digit."""
    a = workload(tmp_path / "a", ROWS_A)
    r = run([GPUPROF, "compute", "analyze", "-p", a, "-b", "18.1", "-k", "vcopy"], cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    rows = {line.split()[0]: line.split() for line in r.stdout.splitlines()[2:] if line.strip()}
    # 8 MiB in 2 and 4 us: 4.19 and 2.10 TB/s, their mean 3.15; the peak 3.35 TB/s
    assert rows["18.1.2"][1:] == ["Bandwidth", "3.15", "2.10", "4.19", "TB/s", "3.35", "93.90"]
    assert rows["18.1.0"][1:] == ["Bytes", "read", "4.19", "4.19", "4.19", "MB"]
    md = run([GPUPROF, "compute", "analyze", "-p", a, "-b", "18.1.2", "-k", "vcopy",
              "--output-format", "md"], cwd=tmp_path).stdout
    assert "| 3.15 |" in md and "| TB/s |" in md
    csv = run([GPUPROF, "compute", "analyze", "-p", a, "-b", "18.1.2", "-k", "vcopy",
               "--output-format", "csv"], cwd=tmp_path).stdout
    assert "3145728000000" in csv and "bytes/s" in csv


def test_analyze_derives_the_occupancy_limiters(tmp_path):
    """Block 7.3: the blocks an SM holds by each limit, by the CUDA occupancy rules on
    sysinfo.csv's GH100 facts (64 warps, 32 blocks, 64 Ki registers in units of 256, 228
    KiB of shared memory in units of 128 with 1 KiB reserved per block)."""
    a = workload(tmp_path / "a", ROWS_A)
    vcopy = rows_of(analyze(tmp_path, "-p", a, "-b", "7.3", "-k", "vcopy")["7.3"])
    fma = rows_of(analyze(tmp_path, "-p", a, "-b", "7.3", "-k", "fma_loop")["7.3"])
    # vcopy: 8 warps a block, 16 registers (512 a warp), no shared memory but the 1 KiB
    assert [vcopy[f"7.3.{i}"]["Avg"] for i in range(5)] == [8, 16, 228, 32, 8]
    # fma_loop: 4 warps, 64 registers (2048 a warp), 48 KiB + 1 KiB of shared memory
    assert [fma[f"7.3.{i}"]["Avg"] for i in range(5)] == [16, 8, 4, 32, 4]


def test_fp8_sparse_work_counts_half_against_the_dense_ceiling(tmp_path):
    """A structured-sparse FP8 operation runs at twice the dense rate: set against the
    one (dense) FP8 ceiling it counts half, so a kernel of sparse work at the sparse peak
    reads 100 % and not 200 %; dense and sparse halves of equal counts read 75 %."""
    path = tmp_path / "fp8"
    path.mkdir()
    (path / "sysinfo.csv").write_text(SYSINFO)
    names = ["sm__ops_path_tensor_src_fp8_sparsity_off.sum",
             "sm__ops_path_tensor_src_fp8_sparsity_on.sum", "dram__bytes_read.sum",
             "dram__bytes_write.sum", "gpu__time_duration.sum"]
    (path / "pmc_perf.csv").write_text(
        HEADER.split(",dram__")[0] + "," + ",".join(names) + "\n" +
        "1,0,1024,256,0,0,32,mixed,0,1000,1e9,1e9,5e5,5e5,1000\n"
        "2,0,1024,256,0,0,32,sparse,2000,3000,0,4e9,5e5,5e5,1000\n")
    (path / "roofline.csv").write_text("device,device_name,backend,experiments,HBMBw,MFMAF8Flops\n"
                                       "0,NVIDIA H100,cuda,100,3000,2000000\n")
    tables = analyze(tmp_path, "-p", str(path), "-b", "4", "-R", "FP8", "-m", "HBM")
    work = rows_of(tables["4.2"])
    assert (work["4.2.6"]["Min"], work["4.2.6"]["Max"]) == (1.5e9, 2e9)
    assert (work["4.2.13"]["Min"], work["4.2.13"]["Max"]) == (None, None)  # not all collected
    roof = {row[0]: dict(zip(tables["4.3"]["columns"], row)) for row in tables["4.3"]["rows"]}
    assert roof["mixed"]["Pct_of_Ceiling"] == pytest.approx(75)
    assert roof["sparse"]["Pct_of_Ceiling"] == pytest.approx(100)
    assert roof["sparse"]["Bound"] == "compute (MFMAF8Flops)"


def test_metrics_refused_only_together_are_named_as_such(tmp_path, host_api):
    """CUPTI accepts each of PCIe's and an SM's counters alone but not the two in one
    collection: a catalog that held both says so, rather than "has no" with no name. (The
    catalog itself holds no such pair: PCIe traffic is counted at L2, see block 3.)"""
    root = tmp_path / "install"
    (root / "bin").mkdir(parents=True)
    shutil.copy(GPUPROF, root / "bin" / "gpuprof")  # gpuprof finds its files beside itself
    (root / "lib").symlink_to(os.path.join(os.path.dirname(GPUPROF), "..", "lib"))
    catalog = root / "share" / "gpuprof" / "catalog"
    catalog.mkdir(parents=True)
    (catalog / "sets.yaml").write_text("sets: []\n")
    (catalog / "05-pair.yaml").write_text(
        "block: 5\ntitle: A pair\ntables:\n  - id: 5.1\n    title: Pair\n    metrics:\n"
        "      - id: 5.1.0\n        name: Warps\n        expr: smsp__warps_active.avg.per_cycle_active\n"
        "        unit: warps\n        description: warps\n"
        "      - id: 5.1.1\n        name: PCIe\n        expr: pcie__read_bytes.sum\n"
        "        unit: bytes\n        description: bytes\n")
    r = run([str(root / "bin" / "gpuprof"), "compute", "profile", "--list-available-metrics",
             "--chip", "GH100"], cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert re.findall(r"^5 .*$", r.stdout, re.M) == [
        "5   A pair: 2 CUPTI metrics; CUPTI cannot plan them together on GH100, though it "
        "accepts each alone (select fewer with -b)"]
    for metric in ["5.1.0", "5.1.1"]:
        r = run([str(root / "bin" / "gpuprof"), "compute", "profile", "--list-available-metrics",
                 "--chip", "GH100", "-b", metric], cwd=tmp_path)
        assert re.search(r"^selected: 1 metrics, 1 CUPTI metrics, 1 pass$", r.stdout, re.M), r.stdout


@NEEDS_CHROMIUM
def test_roofline_plot_keeps_every_point_and_label_in_sight(tmp_path):
    """Points beyond 0.01-1000 FLOP/byte widen the axis rather than sit on its edge; each
    ceiling's 95 % interval is a band; labels of points at one place do not cover each
    other; an L1 ceiling measured below L2's is named as a measurement to repeat."""
    rows = [(1, "dense_gemm_with_a_long_name", 0, 1000, 0, 0, 5e9, 0, 5e5, 5e5, 1e6, 1e6),
            (2, "sparse_scatter", 2000, 4000, 0, 0, 1e3, 0, 5e8, 5e8, 1e9, 1e9)]
    rows += [(3 + i, f"twin_{i}", 5000 + 1000 * i, 5500 + 1000 * i, 0, 0, 1e6, 0, 4e6, 4e6,
              8e6, 8e6) for i in range(3)]  # three kernels at one point
    ceilings = dict(ROOFLINE, L1Bw=8000)  # below L2's 10000
    a = roof_workload(tmp_path / "a", ceilings=ceilings, rows=rows)
    plot = tmp_path / "roofline.html"
    tables = analyze(tmp_path, "-p", a, "-b", "4.3", "-m", "HBM", "L1", "--roofline-plot",
                     str(plot))
    dom = chromium(plot, tmp_path / "profile", screenshot="compute-roofline-edges.png")
    ticks = [float(t) for t in re.findall(r'<text x="[^"]+" y="\d+" text-anchor="middle">'
                                          r'([0-9.e+-]+)</text>', dom)]
    # intensities 2e10 / 1e6 = 10000 and 2e3 / 1e9 = 2e-6: the axis spans 1e-6 to 1e4
    assert (min(ticks), max(ticks)) == (1e-6, 1e4), ticks
    xs = {label: float(x) for label, x in re.findall(
        r'<g class="point" data-label="([^"]+)" data-level="HBM"[^>]*>\n<circle cx="([^"]+)"', dom)}
    assert 90 <= xs["sparse_scatter"] < xs["twin_0"] < xs["dense_gemm_with_a_long_name"] <= 770
    bands = re.findall(r'<g class="ceiling" data-name="(\w+)"[^>]*>\n<polygon class="band"', dom)
    assert sorted(bands) == ["FP32Flops", "HBMBw", "L1Bw", "MFMAF32Flops"]
    labels = [(float(x), float(y), len(html.unescape(t))) for x, y, t in re.findall(
        r'<text class="label" x="([^"]+)" y="([^"]+)" font-size="11">([^<]*)</text>', dom)]
    assert len(labels) == 5
    for i, (x, y, n) in enumerate(labels):  # 6.5 px a character, 13 px a line
        for u, v, m in labels[:i]:
            assert not (x < u + 6.5 * m and u < x + 6.5 * n and abs(y - v) < 12.9), labels
    assert ('The L1Bw ceiling (8000 GB/s) was measured below the L2Bw ceiling (10000 GB/s)'
            in dom)
    assert len(tables["4.3"]["rows"]) == 10
