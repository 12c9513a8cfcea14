"""Hardware counters on a real GPU: `gpuprof trace --pmc` (CUPTI's range profiler, kernel
replay) against what the kernels do, exactly where the work is known exactly."""
import csv
import os

from conftest import GPU_TESTS, only_process, trace

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
