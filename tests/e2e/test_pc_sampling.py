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
                       ).fetchone() == ("3.5.0",)


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
      "--pc-sampling-interval", "16"], "(32 or 64?)"),
    (["--pc-sampling-beta-enabled", "--pc-sampling-unit", "cycles",
      "--pc-sampling-interval", "4294967296"], "(2147483648 or 2147483648?)"),
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
