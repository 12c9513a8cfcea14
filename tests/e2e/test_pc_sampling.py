"""PC sampling (trace --pc-sampling-*, CUDA) checked without a GPU: the buffers CUPTI's PC
Sampling API hands over are built as CUPTI fills them (tests/e2e/cuda-spool.c
--pc-sampling, whose comment gives the exact samples), translated by the CUDA backend,
and read back through the database, `gpuprof profile --gpu`, a merge and the kernel
filters; the options as rocprofv3 spells them reach the backend mapped as documented.
The sampling itself runs in tests/gpu/test_cuda.py."""
import csv
import io
import json
import os
import sqlite3

import pytest

from conftest import GPUPROF, TESTS, run, trace

CUDA_SPOOL = os.path.join(TESTS, "cuda-spool")
pytestmark = pytest.mark.skipif(not os.path.exists(CUDA_SPOOL),
                                reason="gpuprof was built without the CUDA toolkit")

VCOPY = "vecCopy(float const*, float*, unsigned int)"
CHASE = "chase(unsigned int const*, unsigned int*)"


def sampled_database(tmp_path, *convert_options):
    spool = tmp_path / "4242.spool"
    r = run([CUDA_SPOOL, str(spool), "--pc-sampling"], cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    r = run([GPUPROF, "convert", str(spool), "-f", "sqlite", *convert_options], cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "1100 PC samples taken on the devices" in r.stderr
    assert "the devices lost 40 of their 1100 PC samples" in r.stderr
    return r, tmp_path / "4242_results.db"


def tables(stdout):
    """The tables of a JSON output, shares rounded to 2 decimals (JSON has every digit)."""
    out = {t["name"]: t for t in json.loads(stdout)}
    for t in out.values():
        t["rows"] = [[round(c, 2) if isinstance(c, float) else c for c in row]
                     for row in t["rows"]]
    return out


def test_samples_in_the_database(tmp_path):
    _, db = sampled_database(tmp_path)
    con = sqlite3.connect(db)
    rows = con.execute("SELECT kernel_name, cubin_crc, pc_offset, source_file, line, reason, "
                       "not_issued, samples, corr_id FROM pc_samples ORDER BY id").fetchall()
    assert rows == [
        (VCOPY, "0000000000001234", 0x40, "/home/user/vcopy.cu", 12, "long_scoreboard", 0, 600, 0),
        (VCOPY, "0000000000001234", 0x40, "/home/user/vcopy.cu", 12, "long_scoreboard", 1, 590, 0),
        (VCOPY, "0000000000001234", 0x40, "/home/user/vcopy.cu", 12, "selected", 0, 20, 0),
        (VCOPY, "0000000000001234", 0x50, "/home/user/vcopy.cu", 12, "math_pipe_throttle", 0, 50, 0),
        (VCOPY, "0000000000001234", 0x80, "/home/user/vcopy.cu", 14, "selected", 0, 200, 0),
        (VCOPY, "0000000000001234", 0x80, "/home/user/vcopy.cu", 14, "wait", 0, 30, 0),
        (CHASE, "0000000000009999", 0x10, None, None, "long_scoreboard", 0, 100, 0)]
    assert con.execute("SELECT stall_reason FROM pc_samples WHERE id = 2").fetchone() == (
        "smsp__pcsamp_warps_issue_stalled_long_scoreboard_not_issued",)
    assert con.execute("SELECT pid, agent_id, period_log2, samples, dropped, other_samples, "
                       "buffer_full FROM pc_sampling").fetchall() == [(4242, 1, 17, 1100, 40, 60, 0)]
    assert con.execute("SELECT value FROM gpuprof_metadata WHERE tag = 'schema_version'"
                       ).fetchone() == ("3.9.0",)


def test_profile_gpu_tables(tmp_path):
    _, db = sampled_database(tmp_path)
    r = run([GPUPROF, "profile", "--gpu", "--format", "json", str(db)], cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "the devices lost 40 of 1100 PC samples" in r.stderr
    t = tables(r.stdout)
    assert list(t) == ["kernels", "stall_reasons", "source_lines", "instructions"]
    assert t["kernels"]["title"] == (
        "PC SAMPLES BY KERNEL (1000 samples; the devices took 1100, 40 of them lost and 60 in "
        "kernels not the program's; a sample every 2^17 cycles)")
    # a sample counts once: long_scoreboard's 590 not-issued samples are among its 700
    assert t["kernels"]["rows"] == [
        [VCOPY, 4, 160000, 900, 90.0, "long_scoreboard", 66.67],
        [CHASE, None, None, 100, 10.0, "long_scoreboard", 100.0]]
    assert t["stall_reasons"]["rows"] == [
        ["long_scoreboard", 700, 70.0, 590], ["selected", 220, 22.0, 0],
        ["math_pipe_throttle", 50, 5.0, 0], ["wait", 30, 3.0, 0]]
    assert t["source_lines"]["rows"] == [
        ["/home/user/vcopy.cu:12", VCOPY, 670, 67.0, "long_scoreboard", 89.55],
        ["/home/user/vcopy.cu:14", VCOPY, 230, 23.0, "selected", 86.96],
        ["(no line information)", CHASE, 100, 10.0, "long_scoreboard", 100.0]]
    assert t["instructions"]["rows"] == [
        [VCOPY, "0x40", "/home/user/vcopy.cu:12", 620, 62.0, "long_scoreboard", 96.77],
        [VCOPY, "0x80", "/home/user/vcopy.cu:14", 230, 23.0, "selected", 86.96],
        [CHASE, "0x10", "(no line information)", 100, 10.0, "long_scoreboard", 100.0],
        [VCOPY, "0x50", "/home/user/vcopy.cu:12", 50, 5.0, "math_pipe_throttle", 100.0]]

    r = run([GPUPROF, "profile", "--gpu", "--format", "folded", str(db)], cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == [
        f"{CHASE};(no line information);long_scoreboard 100",
        f"{VCOPY};/home/user/vcopy.cu:12;long_scoreboard 600",
        f"{VCOPY};/home/user/vcopy.cu:12;math_pipe_throttle 50",
        f"{VCOPY};/home/user/vcopy.cu:12;selected 20",
        f"{VCOPY};/home/user/vcopy.cu:14;selected 200",
        f"{VCOPY};/home/user/vcopy.cu:14;wait 30"]

    r = run([GPUPROF, "profile", "--gpu", "--kernel", "chase", "--format", "csv", "--limit", "1",
             str(db)], cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    first = r.stdout.split("\n\n")[0].splitlines()
    assert first[0].startswith("# PC SAMPLES BY KERNEL (100 samples;")
    assert list(csv.reader(io.StringIO("\n".join(first[1:])))) == [
        ["Kernel", "Launches", "Device ns", "Samples", "Samples %", "Top reason", "Top reason %"],
        [CHASE, "", "", "100", "100.00", "long_scoreboard", "100.00"]]

    r = run([GPUPROF, "profile", "--gpu", "--kernel", "nothing-like-it", str(db)], cwd=tmp_path)
    assert r.returncode == 0 and r.stdout == ""
    assert "no PC samples of the kernels named so" in r.stderr


def test_merge_and_kernel_filter(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    _, a = sampled_database(tmp_path / "a")
    _, b = sampled_database(tmp_path / "b", "--kernel-exclude-regex", "chase")
    con = sqlite3.connect(b)
    assert con.execute("SELECT count(*), sum(samples) FROM pc_samples").fetchone() == (6, 1490)
    # profile adds its inputs up
    r = run([GPUPROF, "profile", "--gpu", "--format", "json", str(a), str(b)], cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    t = tables(r.stdout)
    assert t["stall_reasons"]["rows"][0] == ["long_scoreboard", 1300, 68.42, 1180]
    assert t["kernels"]["rows"][0][:4] == [VCOPY, 8, 320000, 1800]
    # a merge keeps each process's samples with their strings renumbered (b as another
    # process: its pid changed)
    con.execute("UPDATE gpuprof_process SET pid = 4343")
    con.commit()
    con.close()
    r = run([GPUPROF, "merge", str(a), str(b), "-o", str(tmp_path / "all.db")], cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    merged = sqlite3.connect(tmp_path / "all.db")
    assert merged.execute("SELECT pid, kernel_name, reason, sum(samples) FROM pc_samples "
                          "WHERE NOT not_issued GROUP BY 1, 2, 3 ORDER BY 1, 2, 3").fetchall() == [
        (4242, CHASE, "long_scoreboard", 100), (4242, VCOPY, "long_scoreboard", 600),
        (4242, VCOPY, "math_pipe_throttle", 50), (4242, VCOPY, "selected", 220),
        (4242, VCOPY, "wait", 30), (4343, VCOPY, "long_scoreboard", 600),
        (4343, VCOPY, "math_pipe_throttle", 50), (4343, VCOPY, "selected", 220),
        (4343, VCOPY, "wait", 30)]
    assert merged.execute("SELECT pid, samples, dropped FROM pc_sampling ORDER BY pid"
                          ).fetchall() == [(4242, 1100, 40), (4343, 1100, 40)]
    assert merged.execute("SELECT count(*) FROM pc_samples WHERE source_file IS NOT NULL"
                          ).fetchone() == (12,)


def test_no_samples(tmp_path):
    spool = tmp_path / "4242.spool"
    assert run([CUDA_SPOOL, str(spool)], cwd=tmp_path).returncode == 0
    assert run([GPUPROF, "convert", str(spool), "-f", "sqlite"], cwd=tmp_path).returncode == 0
    r = run([GPUPROF, "profile", "--gpu", str(tmp_path / "4242_results.db")], cwd=tmp_path)
    assert r.returncode == 0 and r.stdout == ""
    assert "no PC samples (record them on a CUDA device with gpuprof trace " \
           "--pc-sampling-beta-enabled" in r.stderr
    r = run([GPUPROF, "profile", "--gpu", "--tree", str(tmp_path / "4242_results.db")],
            cwd=tmp_path)
    assert r.returncode == 2 and "--gpu shows the devices' PC samples" in r.stderr
    r = run([GPUPROF, "profile", "--kernel", "x", str(tmp_path / "4242_results.db")],
            cwd=tmp_path)
    assert r.returncode == 2 and "it goes with --gpu" in r.stderr


@pytest.mark.parametrize("options, expected", [
    (["--pc-sampling-beta-enabled"], "period=0"),
    (["--pc-sampling-beta-enabled", "--pc-sampling-method", "stochastic",
      "--pc-sampling-unit", "cycles", "--pc-sampling-interval", "131072"], "period=17"),
    (["--pc-sampling-beta-enabled", "--pc-sampling-unit", "cycles",
      "--pc-sampling-interval", "32"], "period=5"),
    (["--pc-sampling-beta-enabled", "--pc-sampling-method", "stochastic",
      "--pc-sampling-unit", "time", "--pc-sampling-interval", "1000"], "time=1000"),
    (["--preset", "pc-sampling"], "time=1000"),
    (["--kernel-trace"], ""),
])
def test_options_reach_the_backend(tmp_path, options, expected):
    r = trace(tmp_path, options, ["sh", "-c", "echo \"[$GPUPROF_PC_SAMPLING]\""])
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == f"[{expected}]"


@pytest.mark.parametrize("options, message", [
    (["--pc-sampling-unit", "cycles", "--pc-sampling-interval", "1024"],
     "PC sampling is asked for with --pc-sampling-beta-enabled"),
    (["--pc-sampling-beta-enabled", "--pc-sampling-unit", "cycles",
      "--pc-sampling-interval", "1000"],
     "--pc-sampling-interval 1000 cycles: NVIDIA's sampler takes a power of two from 32 to "
     "2147483648 cycles (512 or 1024?)"),
    (["--pc-sampling-beta-enabled", "--pc-sampling-unit", "cycles",
      "--pc-sampling-interval", "16"], "(32 at the least)"),
    (["--pc-sampling-beta-enabled", "--pc-sampling-unit", "cycles",
      "--pc-sampling-interval", "4294967296"], "(2147483648 at the most)"),
    (["--pc-sampling-beta-enabled", "--pc-sampling-unit", "instructions",
      "--pc-sampling-interval", "100"], "NVIDIA's sampler counts cycles, not instructions"),
    (["--pc-sampling-beta-enabled", "--pc-sampling-interval", "100"],
     "--pc-sampling-interval and --pc-sampling-unit go together"),
    (["--pc-sampling-beta-enabled", "--pc-sampling-unit", "time",
      "--pc-sampling-interval", "-3"], "'-3' is not a positive number"),
    (["--pc-sampling-beta-enabled", "--pmc", "dram__bytes_read.sum"],
     "--pc-sampling-beta-enabled and --pmc/--pmc-set cannot go together"),
    (["--pc-sampling-beta-enabled=false", "--pc-sampling-method", "stochastic"],
     "drop --pc-sampling-beta-enabled=false"),
])
def test_option_errors(tmp_path, options, message):
    marker = tmp_path / "ran"
    r = trace(tmp_path, options, ["touch", str(marker)])
    assert r.returncode == 2 and not marker.exists()
    assert message in r.stderr, r.stderr


def test_host_trap_is_said_once(tmp_path):
    r = trace(tmp_path, ["--pc-sampling-beta-enabled", "--pc-sampling-method", "host_trap"],
              ["sh", "-c", "echo \"[$GPUPROF_PC_SAMPLING]\""])
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "[period=0]"
    assert r.stderr.count("NVIDIA GPUs sample with their own hardware sampler") == 1


PC_CSV = (
    '"Kernel_Name","Cubin_Crc","Pc_Offset","Source_File","Line","Stall_Reason","Not_Issued",'
    '"Samples"\n'
    '"gemm(float*)","00000000000000ab",256,"/src/gemm.cu",40,"long_scoreboard",0,300\n'
    '"gemm(float*)","00000000000000ab",256,"/src/gemm.cu",40,"long_scoreboard",1,280\n'
    '"gemm(float*)","00000000000000ab",256,"/src/gemm.cu",40,"selected",0,100\n'
    '"gemm(float*)","00000000000000ab",64,"/src/gemm.cu",38,"wait",0,50\n'
    '"copy(int*)","00000000000000cd",16,"",0,"lg_throttle",0,50\n')


def compute_workload(path):
    """A compute workload directory (one dispatch of gemm) with block 21's
    pc_sampling.csv, as compute profile --pc-sampling writes it."""
    path.mkdir()
    (path / "sysinfo.csv").write_text(
        "host_name,gpu_name,gpu_chip,sm_count,warp_size\nnode,NVIDIA H100,GH100,132,32\n")
    (path / "pmc_perf.csv").write_text(
        "Dispatch_ID,GPU_ID,Grid_Size,Workgroup_Size,LDS_Per_Workgroup,Scratch_Per_Workitem,"
        "Registers_Per_Thread,Kernel_Name,Start_Timestamp,End_Timestamp,"
        "gpu__time_duration.sum\n1,0,1024,256,0,0,32,\"gemm(float*)\",1000,3000,2000\n")
    (path / "pc_sampling.csv").write_text(PC_CSV)
    return str(path)


def analyze_json(tmp_path, *options):
    r = run([GPUPROF, "compute", "analyze", *options, "--output-format", "json"], cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    return r, tables(r.stdout)


def test_compute_analyze_block_21(tmp_path):
    w = compute_workload(tmp_path / "w")
    r, t = analyze_json(tmp_path, "-p", w, "-b", "21")
    assert list(t) == ["21.1"]
    assert t["21.1"]["title"] == "21.1 PC sampling: 500 samples by instruction"
    assert t["21.1"]["rows"] == [
        ["gemm(float*)", "0x100", "/src/gemm.cu:40", 400, 80.0, "long_scoreboard", 75.0],
        ["copy(int*)", "0x10", "(no line information)", 50, 10.0, "lg_throttle", 100.0],
        ["gemm(float*)", "0x40", "/src/gemm.cu:38", 50, 10.0, "wait", 100.0]]  # ties by name
    # in the order of the code, one row, one kernel (-k), and -d said to cover every launch
    _, t = analyze_json(tmp_path, "-p", w, "-b", "21.1", "--pc-sampling-sorting-type", "offset",
                        "--pc-sampling-rows", "1", "-k", "gemm", "-d", "1")
    assert t["21.1"]["title"] == ("21.1 PC sampling: 450 samples by instruction, in the order "
                                  "of the code (of every dispatch: continuous sampling does "
                                  "not tell the dispatches of a kernel apart)")
    assert t["21.1"]["rows"] == [
        ["gemm(float*)", "0x40", "/src/gemm.cu:38", 50, 11.11, "wait", 100.0]]
    # shown after block 20 and before 22 when every block is, and not with other blocks
    _, t = analyze_json(tmp_path, "-p", w)
    names = list(t)
    assert names.index("21.1") == names.index("22.1") - 1 and names.index("20.1") < names.index("21.1")
    _, t = analyze_json(tmp_path, "-p", w, "-b", "2")
    assert "21.1" not in t

    # a workload without PC samples: said when asked for, nothing shown otherwise
    (tmp_path / "w" / "pc_sampling.csv").unlink()
    r, t = analyze_json(tmp_path, "-p", w, "-b", "21")
    assert t == {} and "has no PC samples (compute profile --pc-sampling collects them)" in r.stderr
    # a damaged file is refused with its line
    (tmp_path / "w" / "pc_sampling.csv").write_text(PC_CSV + '"x","y",1,"",0,"wait",2,1\n')
    r = run([GPUPROF, "compute", "analyze", "-p", w, "-b", "21"], cwd=tmp_path)
    assert r.returncode == 1 and "pc_sampling.csv:7: not a row of 8 fields" in r.stderr


def test_compute_analyze_reads_a_database(tmp_path):
    _, db = sampled_database(tmp_path)
    _, t = analyze_json(tmp_path, "-p", str(db), "-b", "21")
    assert t["21.1"]["rows"][0] == [VCOPY, "0x40", "/home/user/vcopy.cu:12", 620, 62.0,
                                    "long_scoreboard", 96.77]


@pytest.mark.parametrize("options, message", [
    (["--pc-sampling-interval", "100"], "add --pc-sampling or -b 21"),
    (["--pc-sampling", "--pc-sampling-interval", "1000"],
     "--pc-sampling-interval 1000: not a power of two of cycles from 32 to 2147483648"),
    (["--pc-sampling", "--pc-sampling-method", "host_trap", "--pc-sampling-interval", "0"],
     "--pc-sampling-interval 0: not a positive number of microseconds"),
    (["--bench-only", "--pc-sampling"], "--bench-only measures the GPU's ceilings alone"),
])
def test_compute_profile_option_errors(tmp_path, options, message):
    r = run([GPUPROF, "compute", "profile", *options, "--", "true"], cwd=tmp_path)
    assert r.returncode == 2 and message in r.stderr, r.stderr
