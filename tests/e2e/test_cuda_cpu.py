"""The CUDA side of `gpuprof trace` that can be checked without a GPU: how the backend is
put in place, and what it does when CUPTI cannot start (the program runs on, unprofiled,
and its exit code passes through). The traces themselves are checked in tests/gpu/."""
import csv
import json
import os
import shutil
import sqlite3
import subprocess

import pytest

from conftest import BUILD, GPUPROF, TESTS, outputs, run, trace
from pftrace import Trace

CUDA_LIB = os.path.join(BUILD, "lib", "gpuprof", "libgpuprof-cuda.so")

pytestmark = pytest.mark.skipif(not os.path.exists(CUDA_LIB),
                                reason="gpuprof was built without the CUDA toolkit")


def test_backend_named_to_the_driver(tmp_path):
    r = trace(tmp_path, ["--kernel-trace"], ["sh", "-c", "echo $CUDA_INJECTION64_PATH"])
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == os.path.realpath(CUDA_LIB)


def test_backend_exports_only_the_injection_hook():
    nm = shutil.which("nm")
    if not nm:
        pytest.skip("nm is not installed")
    out = subprocess.run([nm, "-D", "--defined-only", CUDA_LIB], capture_output=True,
                         text=True, check=True).stdout
    assert [line.split()[-1] for line in out.splitlines()] == ["InitializeInjection"]


def test_another_tools_injection_is_kept(tmp_path):
    env = dict(os.environ, CUDA_INJECTION64_PATH="/opt/other-tool/libinject.so")
    r = trace(tmp_path, ["--kernel-trace"], ["sh", "-c", "echo $CUDA_INJECTION64_PATH; exit 3"],
              env=env)
    assert r.returncode == 3
    assert r.stdout.strip() == "/opt/other-tool/libinject.so"
    assert ("gpuprof: CUDA_INJECTION64_PATH already names '/opt/other-tool/libinject.so' "
            "(another CUDA tool): CUDA work is not traced") in r.stderr


def test_cupti_unavailable_program_runs_on(tmp_path):
    """No driver here: CUPTI cannot start. One line says so, the program carries on and
    its exit code passes through."""
    r = trace(tmp_path, ["--runtime-trace"], [os.path.join(TESTS, "inject-cuda"), "7"])
    assert r.returncode == 7, r.stderr
    assert r.stdout == "initialize returned 1; the program goes on\n"
    lines = [l for l in r.stderr.splitlines() if "CUPTI" in l]
    assert len(lines) == 1, r.stderr
    assert lines[0].startswith("gpuprof[") and "cannot start CUPTI" in lines[0]
    assert "this process runs without gpuprof tracing its CUDA work" in lines[0]


def test_nothing_to_trace_for_cuda_leaves_cupti_alone(tmp_path):
    """With only OpenCL API tracing asked for, the CUDA backend does not touch CUPTI."""
    r = trace(tmp_path, ["--opencl-trace"], [os.path.join(TESTS, "inject-cuda")])
    assert r.returncode == 0, r.stderr
    assert "CUPTI" not in r.stderr


def test_options_off_is_a_usage_error(tmp_path):
    r = trace(tmp_path, ["--kernel-trace=false", "--cuda-runtime-trace=false"], ["true"])
    assert r.returncode == 2
    assert r.stderr.strip() == "gpuprof: trace: every tracing option given is turned off"


def test_cupti_records_to_outputs(tmp_path):
    """CUPTI records built as CUPTI fills them (build/tests/cuda-spool), translated by the
    backend and written to a spool, become the documented outputs: exact rows, the
    launching thread and function taken from the API call, the database agreeing."""
    spool = tmp_path / "4242.spool"
    r = run([os.path.join(TESTS, "cuda-spool"), str(spool)], cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    r = run([GPUPROF, "convert", "--stats", str(spool)], cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "4 kernels, 2 memory copies, 9 API calls, 2 allocations and frees, 3 markers" in r.stderr
    assert "reported 0.009 ms of its own overhead (1 records" in r.stderr
    out = outputs(tmp_path)[0]

    kernels = out.csv("kernel_trace.csv")
    assert [(k["Thread_Id"], k["Correlation_Id"], k["Dispatch_Id"]) for k in kernels] == [
        ("777", "4", "1"), ("777", "5", "2"), ("777", "6", "3"), ("778", "7", "4")]
    k = kernels[0]
    assert k["Kernel_Name"] == "vecCopy(float const*, float*, unsigned int)"
    assert (k["Stream_Id"], k["Context_Id"], k["VGPR_Count"]) == ("13", "1", "16")
    assert (k["LDS_Block_Size"], k["Static_LDS_Size"], k["Dynamic_LDS_Size"]) == ("1024", "0", "1024")
    assert (k["Grid_Size_X"], k["Workgroup_Size_X"]) == ("1048576", "256")
    assert (k["Start_Timestamp"], k["End_Timestamp"]) == ("1000803000", "1000843000")

    # kernels in the ranges open on their launching thread when cudaLaunchKernel began
    assert [(k["corr_id"], k["range_name"]) for k in out.query(
        "SELECT corr_id, range_name FROM kernels ORDER BY corr_id")] == [
        (4, "train"), (5, "step"), (6, "train"), (7, None)]

    renamed = tmp_path / "renamed"
    r = run([GPUPROF, "convert", "--kernel-rename", "-f", "csv", "-d", str(renamed), str(spool)],
            cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert [k["Kernel_Name"] for k in outputs(renamed)[0].csv("kernel_trace.csv")] == [
        "train", "step", "train", "vecCopy(float const*, float*, unsigned int)"]

    copies = out.csv("memory_copy_trace.csv")
    assert [(c["Direction"], c["Operation"], c["Function"], c["Thread_Id"], c["Bytes"],
             c["Source_Memory_Kind"], c["Destination_Memory_Kind"]) for c in copies] == [
        ("MEMORY_COPY_HOST_TO_DEVICE", "COPY", "cudaMemcpy", "777", "4194304", "PAGEABLE", "DEVICE"),
        ("MEMORY_COPY_NONE", "FILL", "cudaMemset", "777", "4194304", "DEVICE", "DEVICE")]

    allocations = out.csv("memory_allocation_trace.csv")
    assert [(a["Operation"], a["Agent_Id"], a["Allocation_Size"], a["Address"], a["Thread_Id"])
            for a in allocations] == [
        ("MEMORY_ALLOCATION_ALLOCATE", "Agent 1", "4194304", "0x00007f0000200000", "777"),
        ("MEMORY_ALLOCATION_FREE", "Agent 1", "4194304", "0x00007f0000200000", "777")]

    runtime = out.csv("cuda_api_trace.csv")
    assert [c["Function"] for c in runtime] == [
        "cudaMalloc", "cudaMemcpy", "cudaMemset", "cudaLaunchKernel", "cudaLaunchKernel",
        "cudaLaunchKernel", "cudaStreamSynchronize", "cudaFree"]
    assert {c["Domain"] for c in runtime} == {"CUDA_API"}
    driver = out.csv("cuda_driver_api_trace.csv")
    assert [(c["Domain"], c["Function"], c["Thread_Id"]) for c in driver] == [
        ("CUDA_DRIVER_API", "cuLaunchKernel", "778")]

    gpu = [a for a in out.csv("agent_info.csv") if a["Agent_Type"] == "GPU"]
    assert len(gpu) == 1
    assert (gpu[0]["Name"], gpu[0]["Cu_Count"], gpu[0]["Wave_Front_Size"],
            gpu[0]["Compute_Capability"], gpu[0]["Gfx_Target_Version"], gpu[0]["Uuid"]) == (
        "NVIDIA H200", "132", "32", "9.0", "90000", "00112233-4455-6670-8192-a3b4c5d6e0f1")

    stats = {row["Name"]: row for row in out.csv("cuda_api_stats.csv")}
    assert stats["cudaLaunchKernel"]["Calls"] == "3"
    assert sorted((s["Name"], s["Calls"]) for s in out.csv("memory_allocation_stats.csv")) == [
        ("MEMORY_ALLOCATION_ALLOCATE", "1"), ("MEMORY_ALLOCATION_FREE", "1")]

    assert out.query("SELECT type, tid, stream_id, duration FROM synchronizations") == [
        {"type": "STREAM_SYNCHRONIZE", "tid": 777, "stream_id": 13, "duration": 158000}]
    assert out.query("SELECT kind, tid, duration FROM overheads") == [
        {"kind": "INSTRUMENTATION", "tid": 777, "duration": 9000}]
    assert out.query("SELECT tid FROM threads ORDER BY tid") == [{"tid": 777}, {"tid": 778}]
    assert out.query("SELECT category, count(*) AS n FROM regions GROUP BY category "
                     "ORDER BY category") == [{"category": "CUDA_API", "n": 8},
                                              {"category": "CUDA_DRIVER_API", "n": 1}]

    # the database gives byte-identical files
    again = tmp_path / "again"
    again.mkdir()
    r = run([GPUPROF, "convert", "-f", "csv", "--stats", "-d", str(again), out.path("results.db")],
            cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    for name in os.listdir(tmp_path):
        if name.endswith(".csv"):
            assert (again / name).read_bytes() == (tmp_path / name).read_bytes(), name


def counter_rows(path):
    with open(path, newline="") as f:
        return [(r["Correlation_Id"], r["Dispatch_Id"], r["Thread_Id"], r["Counter_Name"],
                 r["Counter_Value"]) for r in csv.DictReader(f)]


EXPECTED_COUNTERS = [
    ("4", "1", "777", "dram__bytes_read.sum", "4194304"),
    ("4", "1", "777", "smsp__inst_executed.sum", "1000"),
    ("5", "2", "777", "dram__bytes_read.sum", "4194305"),
    ("5", "2", "777", "smsp__inst_executed.sum", "2000"),
    ("6", "3", "777", "dram__bytes_read.sum", "4194306"),
    ("6", "3", "777", "smsp__inst_executed.sum", "3000"),
    ("7", "4", "778", "dram__bytes_read.sum", ""),
    ("7", "4", "778", "smsp__inst_executed.sum", "0.5"),
]


def test_counters_reach_the_csv_the_database_and_a_merge(tmp_path):
    """Counter values the backend read (cuda-spool --counters) become rocprofv3's
    counter_collection.csv, one row per kernel and counter, a value the profiler did not
    give an empty cell (never 0); the database's counters view has the same rows, the
    csv written from the database is the same file, a kernel filter takes the counters of
    the kernels it drops with them, and a merge keeps them with their kernels."""
    spool = tmp_path / "4242.spool"
    r = run([os.path.join(TESTS, "cuda-spool"), str(spool), "--counters"], cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    r = run([GPUPROF, "convert", str(spool)], cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    out = outputs(tmp_path)[0]
    header = open(tmp_path / "4242_counter_collection.csv").readline().strip()
    assert header == ('"Correlation_Id","Dispatch_Id","Agent_Id","Queue_Id","Process_Id",'
                      '"Thread_Id","Grid_Size","Kernel_Id","Kernel_Name","Workgroup_Size",'
                      '"LDS_Block_Size","Scratch_Size","VGPR_Count","Accum_VGPR_Count",'
                      '"SGPR_Count","Counter_Name","Counter_Value","Start_Timestamp",'
                      '"End_Timestamp"')
    assert counter_rows(tmp_path / "4242_counter_collection.csv") == EXPECTED_COUNTERS
    first = out.csv("counter_collection.csv")[0]
    assert (first["Agent_Id"], first["Grid_Size"], first["Workgroup_Size"], first["Kernel_Name"],
            first["Start_Timestamp"], first["End_Timestamp"]) == (
        "Agent 1", "1048576", "256", "vecCopy(float const*, float*, unsigned int)",
        "1000803000", "1000843000")

    rows = out.query("SELECT corr_id, dispatch_id, name, value FROM counters ORDER BY id")
    assert [(r["corr_id"], r["dispatch_id"], r["name"], r["value"]) for r in rows] == [
        (int(c), int(d), n, float(v) if v else None) for c, d, _, n, v in EXPECTED_COUNTERS]

    db = tmp_path / "4242_results.db"
    r = run([GPUPROF, "convert", "-f", "csv", "-d", str(tmp_path / "fromdb"), str(db)],
            cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "fromdb" / "4242_counter_collection.csv").read_bytes() == (
        tmp_path / "4242_counter_collection.csv").read_bytes()

    r = run([GPUPROF, "convert", "-f", "csv", "--kernel-iteration-range", "2", "-d",
             str(tmp_path / "filtered"), str(spool)], cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert counter_rows(tmp_path / "filtered" / "4242_counter_collection.csv") == \
        EXPECTED_COUNTERS[2:4]

    # a database of schema 3.1 (no counter table) of another process, merged with it
    old = tmp_path / "old.db"
    shutil.copy(db, old)
    with sqlite3.connect(old) as c:
        c.executescript("DROP VIEW counters; DROP TABLE gpuprof_counter; "
                        "UPDATE gpuprof_process SET pid = 4243; UPDATE gpuprof_metadata "
                        "SET value = '3.1.0' WHERE tag = 'schema_version'")
    r = run([GPUPROF, "merge", str(db), str(old), "-o", str(tmp_path / "all.db")], cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    with sqlite3.connect(tmp_path / "all.db") as c:
        assert c.execute("SELECT pid, COUNT(*) FROM kernels GROUP BY pid").fetchall() == [
            (4242, 4), (4243, 4)]
        assert c.execute("SELECT pid, dispatch_id, name, value FROM counters ORDER BY id"
                         ).fetchall() == [(4242, int(d), n, float(v) if v else None)
                                          for _, d, _, n, v in EXPECTED_COUNTERS]


def test_pmc_without_a_gpu_is_one_clear_line(tmp_path):
    """--pmc is checked against the GPU's chip before the program runs: without a CUDA
    device it is refused in one line and the program does not run."""
    marker = tmp_path / "ran"
    r = trace(tmp_path, ["--pmc", "dram__bytes_read.sum"], ["touch", str(marker)])
    assert r.returncode == 2
    assert not marker.exists()
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("gpuprof: trace: --pmc: "), r.stderr
    if not os.environ.get("GPUPROF_SANITIZER"):
        assert lines[0] == ("gpuprof: trace: --pmc: counters are read from NVIDIA GPUs through "
                            "CUPTI, and no CUDA device is usable here (no driver, no GPU, or "
                            "one hidden by CUDA_VISIBLE_DEVICES)")
    # the whole catalog's metrics are taken as one list (compute profile passes them so)
    many = ",".join(f"metric{i}.sum" for i in range(100))
    r = trace(tmp_path, ["--pmc", many], ["touch", str(marker)])
    assert r.returncode == 2 and r.stderr.strip() == lines[0] and not marker.exists()
    # metric sets of gpuprof compute: an unknown one named; a known one checked as --pmc
    r = trace(tmp_path, ["--pmc-set", "dram,nope"], ["touch", str(marker)])
    assert (r.returncode, r.stderr) == (2, "gpuprof: trace: --pmc-set: no metric set is called "
                                           "'nope' (gpuprof compute profile --list-sets lists "
                                           "them)\n")
    # the message names the option given: --pmc-set, or the preset that holds it
    r = trace(tmp_path, ["--pmc-set", "dram"], ["touch", str(marker)])
    assert r.returncode == 2 and not marker.exists()
    assert r.stderr.strip() == lines[0].replace("--pmc:", "--pmc-set:", 1)
    r = trace(tmp_path, ["--preset", "compute-bound"], ["touch", str(marker)])
    assert r.returncode == 2 and not marker.exists()
    assert r.stderr.strip() == lines[0].replace(
        "--pmc:", "the counters of --preset compute-bound (pmc_set: compute-bound):", 1)
    r = trace(tmp_path, ["--pmc", "dram__bytes_read.sum", "--kernel-trace=false"], ["true"])
    assert (r.returncode, r.stderr.strip()) == (2, "gpuprof: trace: --pmc reads the counters "
                                                   "of kernels: it cannot go with "
                                                   "--kernel-trace=false")
    r = trace(tmp_path, ["--pmc-multiplex", "kernel"], ["touch", str(marker)])
    assert (r.returncode, r.stderr.strip()) == (2, "gpuprof: trace: --pmc-multiplex spreads the "
                                                   "metrics of --pmc or --pmc-set over "
                                                   "dispatches: give them")
    r = trace(tmp_path, ["--pmc", "dram__bytes_read.sum", "--pmc-multiplex", "kernel"],
              ["touch", str(marker)])
    assert r.returncode == 2 and r.stderr.strip() == lines[0] and not marker.exists()


def test_analyze_reads_the_counters_of_a_database(tmp_path):
    """`gpuprof compute analyze -p DB` evaluates the catalog over the counters that
    `trace --pmc` recorded: the average, minimum and maximum of the dispatches that have
    a value (a kernel without one is left out, never counted as 0), occupancy from the
    kernel records and the compute capability's limits (9.0: 8 blocks of 8 warps)."""
    spool = tmp_path / "4242.spool"
    assert run([os.path.join(TESTS, "cuda-spool"), str(spool), "--counters"],
               cwd=tmp_path).returncode == 0
    assert run([GPUPROF, "convert", "-f", "sqlite", str(spool)], cwd=tmp_path).returncode == 0
    r = run([GPUPROF, "compute", "analyze", "-p", "4242_results.db", "-b", "7.2.0",
             "-b", "10.1.0", "-b", "18.1.0", "--output-format", "csv"], cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    rows = {row[0]: row[2:5] for row in csv.reader(
        line for line in r.stdout.splitlines() if line and not line.startswith("#"))}
    assert rows["7.2.0"] == ["100", "100", "100"]
    assert rows["10.1.0"] == ["1500.125", "0.5", "3000"]
    assert rows["18.1.0"] == ["4194305", "4194304", "4194306"]
    r = run([GPUPROF, "compute", "analyze", "-p", "4242_results.db", "--list-stats"],
            cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[-1].split() == [
        "vecCopy(float", "const*,", "float*,", "unsigned", "int)", "4", "1", "2", "3", "4"]
    def system_info(env):
        r = run([GPUPROF, "compute", "analyze", "-p", "4242_results.db", "-b", "1",
                 "--output-format", "csv"], cwd=tmp_path, env=env)
        assert r.returncode == 0, r.stderr
        return {row[0]: row[1] for row in csv.reader(
            line for line in r.stdout.splitlines() if line and not line.startswith("#"))}

    # the memory bus width and clock come from NVML, for the GPU of the database's UUID:
    # unknown where no NVML has it; from the test double's GPU 1, of that UUID: 5120 bits
    # (GPU 0 has 4096) and 2619 MHz
    facts = system_info({"GPUPROF_NVML_LIBRARY": str(tmp_path / "missing.so")})
    assert (facts["memory_bus_bits"], facts["memory_clock_hz"]) == ("", "")
    facts = system_info({"GPUPROF_NVML_LIBRARY": os.path.join(TESTS, "libnvml-double.so")})
    assert (facts["memory_bus_bits"], facts["memory_clock_hz"]) == ("5120", "2619000000")
    assert (facts["gpu_name"], facts["sm_count"], facts["compute_capability"],
            facts["max_warps_per_sm"], facts["dram_bandwidth"]) == (
        "NVIDIA H200", "132", "9.0", "64", "4800000000000")
    assert (facts["driver_version"], facts["cuda_version"]) == ("580.65.06", "13.0")
    # theoretical peaks: 132 SMs at 1980 MHz, per SM and clock 64 FP64, 128 FP32 and 256
    # FP16 multiply-adds (2 FLOP each), 4096 dense FP16 tensor FLOP
    assert {k: float(v) for k, v in facts.items() if k.startswith("peak_")} == {
        "peak_fp64_flops": 2 * 64 * 132 * 1.98e9, "peak_fp32_flops": 2 * 128 * 132 * 1.98e9,
        "peak_fp16_flops": 2 * 256 * 132 * 1.98e9,
        "peak_tensor_fp16_flops": 4096 * 132 * 1.98e9}


def test_merge_joins_the_counters_of_replays(tmp_path):
    """`gpuprof merge A --replay B`: B, another run of the program made for other
    counters, gives only its counters, each onto A's kernel of the same name and device
    launched as many times before (correlation ids and times differ between runs); a
    metric A already has keeps A's value; a replay that launched a kernel a different
    number of times is named in one warning and its extra dispatches are left out."""
    spool = tmp_path / "4242.spool"
    assert run([os.path.join(TESTS, "cuda-spool"), str(spool), "--counters"],
               cwd=tmp_path).returncode == 0
    assert run([GPUPROF, "convert", "-f", "sqlite", str(spool)], cwd=tmp_path).returncode == 0
    db = tmp_path / "4242_results.db"
    replay = tmp_path / "replay.db"
    shutil.copy(db, replay)
    with sqlite3.connect(replay) as c:
        c.executescript(
            "UPDATE gpuprof_string SET string = 'lts__t_bytes.sum' "
            "WHERE string = 'dram__bytes_read.sum'; "
            "UPDATE gpuprof_counter SET value = value * 10, correlation_id = correlation_id + 100; "
            "UPDATE gpuprof_kernel SET correlation_id = correlation_id + 100, "
            "start = start + 5000000, end = end + 5000000; "
            "UPDATE gpuprof_process SET pid = 5151")
    r = run([GPUPROF, "merge", str(db), "--replay", str(replay), "-o", str(tmp_path / "all.db")],
            cwd=tmp_path)
    assert (r.returncode, r.stderr) == (0, "gpuprof: merged 1 database into " +
                                        str(tmp_path / "all.db") +
                                        " with the counters of 1 replay\n")
    expected = [(int(c), n, float(v) if v else None) for c, _, _, n, v in EXPECTED_COUNTERS]
    joined = [(c, "lts__t_bytes.sum", v * 10 if v is not None else None)
              for c, n, v in expected if n == "dram__bytes_read.sum"]
    with sqlite3.connect(tmp_path / "all.db") as c:
        assert c.execute("SELECT pid, COUNT(*) FROM kernels GROUP BY pid").fetchall() == [
            (4242, 4)]
        got = c.execute("SELECT corr_id, name, value FROM counters "
                        "ORDER BY corr_id, name").fetchall()
        assert got == sorted(expected + joined, key=lambda t: (t[0], t[1]))
        assert c.execute("SELECT value FROM gpuprof_metadata WHERE tag = 'replay.1.counters'"
                         ).fetchone() == ("4",)

    # the replay launched the kernel 3 times, not 4: three joined, one warning
    with sqlite3.connect(replay) as c:
        c.execute("DELETE FROM gpuprof_kernel WHERE id = 4")
    r = run([GPUPROF, "merge", str(db), "--replay", str(replay), "-o", str(tmp_path / "all.db")],
            cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stderr.splitlines()[0] == (
        f"gpuprof: merge: replay '{replay}' launched vecCopy(float const*, float*, unsigned "
        "int) 3 times, the first run 4: its counters were joined by launch order, the "
        "dispatches beyond the shorter run have none")
    with sqlite3.connect(tmp_path / "all.db") as c:
        assert c.execute("SELECT corr_id, value FROM counters WHERE name = 'lts__t_bytes.sum' "
                         "ORDER BY corr_id").fetchall() == [(c, v) for c, _, v in joined[:3]]

    # a replay without counters is said to be so; a replay that is not a database fails
    r = run([GPUPROF, "merge", str(db), "--replay", str(db), "-o", str(tmp_path / "self.db")],
            cwd=tmp_path)
    assert r.returncode == 0 and "nothing joined" not in r.stderr
    (tmp_path / "junk.db").write_text("not a database\n")
    r = run([GPUPROF, "merge", str(db), "--replay", str(tmp_path / "junk.db"), "-o",
             str(tmp_path / "bad.db")], cwd=tmp_path)
    assert r.returncode != 0 and not (tmp_path / "bad.db").exists()
    assert r.stderr.count("\n") == 1 and "junk.db" in r.stderr, r.stderr


def test_counters_in_the_timelines(tmp_path):
    """The JSON and Perfetto timelines carry each kernel's counters in its slice's
    arguments (JSON: args.pmc, null for a value the profiler did not give; Perfetto: a
    double annotation named by the metric, none for such a value), never 0 in its place."""
    spool = tmp_path / "4242.spool"
    assert run([os.path.join(TESTS, "cuda-spool"), str(spool), "--counters"],
               cwd=tmp_path).returncode == 0
    r = run([GPUPROF, "convert", "-f", "json", "pftrace", "sqlite", str(spool)], cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    # the database gives the same timelines
    r = run([GPUPROF, "convert", "-f", "json", "pftrace", "-d", str(tmp_path / "fromdb"),
             str(tmp_path / "4242_results.db")], cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    for name in ["4242_results.json", "4242_results.pftrace"]:
        assert (tmp_path / "fromdb" / name).read_bytes() == (tmp_path / name).read_bytes()
    expected = {}
    for _, dispatch, _, name, value in EXPECTED_COUNTERS:
        expected.setdefault(int(dispatch), {})[name] = float(value) if value else None
    with open(tmp_path / "4242_results.json") as f:
        kernels = [e for e in json.load(f)["traceEvents"] if e.get("cat") == "KERNEL_DISPATCH"]
    assert {k["args"]["dispatch_id"]: k["args"]["pmc"] for k in kernels} == expected
    trace = Trace(str(tmp_path / "4242_results.pftrace"))
    slices = [s for s in trace.slices if s["category"] == "KERNEL_DISPATCH"]
    assert {s["args"]["dispatch_id"]: {k: v for k, v in s["args"].items() if "__" in k}
            for s in slices} == {
        d: {n: v for n, v in values.items() if v is not None} for d, values in expected.items()}
