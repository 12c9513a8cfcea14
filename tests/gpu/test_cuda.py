"""gpuprof trace on real CUDA programs and PyTorch, with exact expectations. Run by
tests/gpu/run.sh, which skips them (exit 77) on a machine without a usable GPU."""
import json
import os
import signal
import subprocess
import sys
import time

import pytest
from conftest import BUILD, GPUPROF, GPU_TESTS, TRAIN, only_process, outputs, run, trace

N, BLOCK, ITERATIONS = 1048576, 256, 20


def ints(rows, column):
    return [int(r[column]) for r in rows]


def test_vcopy_kernels_sizes_and_copies(tmp_path, cuda_sample):
    r = trace(tmp_path, ["--kernel-trace", "--memory-copy-trace"],
              [cuda_sample("vcopy"), "-n", str(N), "-b", str(BLOCK), "-i", str(ITERATIONS)])
    assert r.returncode == 0, r.stderr
    out = only_process(tmp_path)
    kernels = out.csv("kernel_trace.csv")
    assert len(kernels) == ITERATIONS
    assert {k["Kernel_Name"] for k in kernels} == {"vecCopy(float const*, float*, unsigned int)"}
    assert ints(kernels, "Workgroup_Size_X") == [BLOCK] * ITERATIONS
    assert ints(kernels, "Grid_Size_X") == [N] * ITERATIONS          # work-items
    assert ints(kernels, "Grid_Size_Y") == ints(kernels, "Grid_Size_Z") == [1] * ITERATIONS
    assert all(int(k["VGPR_Count"]) > 0 for k in kernels)             # registers per thread
    assert ints(kernels, "Dispatch_Id") == list(range(1, ITERATIONS + 1))
    assert all(int(k["End_Timestamp"]) > int(k["Start_Timestamp"]) for k in kernels)
    assert all(int(k["Thread_Id"]) == 0 for k in kernels)  # no API trace: thread unknown

    copies = out.csv("memory_copy_trace.csv")
    assert [(c["Direction"], int(c["Bytes"])) for c in copies] == [
        ("MEMORY_COPY_HOST_TO_DEVICE", 4 * N), ("MEMORY_COPY_DEVICE_TO_HOST", 4 * N)]
    assert [(c["Source_Memory_Kind"], c["Destination_Memory_Kind"]) for c in copies] == [
        ("PAGEABLE", "DEVICE"), ("DEVICE", "PAGEABLE")]
    gpu = kernels[0]["Agent_Id"]
    assert [(c["Source_Agent_Id"], c["Destination_Agent_Id"]) for c in copies] == [
        ("Agent 0", gpu), (gpu, "Agent 0")]

    agents = {f"Agent {a['Node_Id']}": a for a in out.csv("agent_info.csv")}
    device = agents[gpu]
    assert device["Agent_Type"] == "GPU" and device["Vendor_Name"] == "NVIDIA"
    assert int(device["Cu_Count"]) > 0 and int(device["Wave_Front_Size"]) == 32
    assert device["Compute_Capability"] and len(device["Uuid"]) == 36
    assert int(device["Global_Memory_Size"]) > 1 << 30


def test_truncated_and_mangled_names(tmp_path, cuda_sample):
    (tmp_path / "t").mkdir()
    r = trace(tmp_path / "t", ["--kernel-trace", "-T"], [cuda_sample("vcopy"), "-i", "3"])
    assert r.returncode == 0, r.stderr
    assert {k["Kernel_Name"] for k in only_process(tmp_path / "t").csv("kernel_trace.csv")} == {"vecCopy"}
    (tmp_path / "m").mkdir()
    r = trace(tmp_path / "m", ["--kernel-trace", "-M"], [cuda_sample("vcopy"), "-i", "3"])
    assert r.returncode == 0, r.stderr
    assert {k["Kernel_Name"] for k in only_process(tmp_path / "m").csv("kernel_trace.csv")} == {
        "_Z7vecCopyPKfPfj"}


def test_every_kernel_starts_after_its_launch(tmp_path, cuda_sample):
    r = trace(tmp_path, ["--runtime-trace"], [cuda_sample("vcopy"), "-i", str(ITERATIONS)])
    assert r.returncode == 0, r.stderr
    out = only_process(tmp_path)
    calls = {int(c["Correlation_Id"]): c for c in out.csv("cuda_api_trace.csv")}
    kernels = out.csv("kernel_trace.csv")
    assert len(kernels) == ITERATIONS
    for k in kernels:
        launch = calls[int(k["Correlation_Id"])]
        assert launch["Function"] == "cudaLaunchKernel"
        assert int(k["Start_Timestamp"]) >= int(launch["Start_Timestamp"])
        assert int(k["Thread_Id"]) == int(launch["Thread_Id"])  # inherited from the launch
    copies = out.csv("memory_copy_trace.csv")
    assert [c["Function"] for c in copies] == ["cudaMemcpy", "cudaMemcpy"]
    for c in copies:
        assert int(c["Start_Timestamp"]) >= int(calls[int(c["Correlation_Id"])]["Start_Timestamp"])
    allocations = out.csv("memory_allocation_trace.csv")
    mine = [(a["Operation"], int(a["Allocation_Size"])) for a in allocations
            if int(a["Allocation_Size"]) == 4 * 1048576]
    assert sorted(mine) == [("MEMORY_ALLOCATION_ALLOCATE", 4 * 1048576)] * 2 + \
        [("MEMORY_ALLOCATION_FREE", 4 * 1048576)] * 2
    # the database holds the same rows
    assert out.query("SELECT count(*) AS n FROM kernels")[0]["n"] == ITERATIONS


def test_two_streams_copy_overlaps_kernel(tmp_path, cuda_sample):
    r = trace(tmp_path, ["--kernel-trace", "--memory-copy-trace"],
              [cuda_sample("streams"), "-r", "4", "-m", "64", "-t", "20000"])
    assert r.returncode == 0, r.stderr
    out = only_process(tmp_path)
    kernels = out.csv("kernel_trace.csv")
    copies = out.csv("memory_copy_trace.csv")
    assert len(kernels) == 4 and len(copies) == 8
    assert all(int(c["Bytes"]) == 64 << 20 for c in copies)
    overlapping = [(k, c) for k in kernels for c in copies
                   if k["Stream_Id"] != c["Stream_Id"]
                   and int(c["Start_Timestamp"]) < int(k["End_Timestamp"])
                   and int(k["Start_Timestamp"]) < int(c["End_Timestamp"])]
    assert overlapping, "no copy overlapped a kernel on another stream"


def test_graph_kernels_carry_graph_ids(tmp_path, cuda_sample):
    r = trace(tmp_path, ["--kernel-trace", "--memory-copy-trace"], [cuda_sample("graph"), "-l", "5"])
    assert r.returncode == 0, r.stderr
    out = only_process(tmp_path)
    kernels = out.csv("kernel_trace.csv")
    assert len(kernels) == 15
    assert sorted(k["Kernel_Name"].split("(")[0] for k in kernels) == ["add"] * 10 + ["scale"] * 5
    assert all(int(k["Graph_Id"]) != 0 for k in kernels)
    fills = [c for c in out.csv("memory_copy_trace.csv") if c["Operation"] == "FILL"]
    assert len(fills) == 5


def test_graph_kernels_stand_where_they_were_captured(tmp_path, cuda_sample):
    """63: each replayed kernel at its capture site (capture(), inside the launch into the
    capturing stream), not at replay(); --cuda-graph-trace graph: one span per launch;
    --pmc: the graph's kernels counted without counters, said once."""
    (tmp_path / "node").mkdir()
    r = trace(tmp_path / "node", ["--kernel-trace", "--launch-stacks"],
              [cuda_sample("graph"), "-l", "5"])
    assert r.returncode == 0, r.stderr
    out = only_process(tmp_path / "node")
    assert out.query("SELECT COUNT(*) AS n FROM gpuprof_graph_node_clone")[0]["n"] >= 3
    p = run([GPUPROF, "profile", "--kernels", "--format", "folded", out.path("results.db")])
    assert p.returncode == 0, p.stderr
    weights = {}
    for line in p.stdout.splitlines():
        frames, _, ns = line.rpartition(" ")
        where = "capture" if ";capture;" in frames else "replay" if ";replay;" in frames else frames
        weights[where] = weights.get(where, 0) + int(ns)
    kernels_ns = out.query("SELECT SUM(end - start) AS ns FROM kernels")[0]["ns"]
    assert weights == {"capture": kernels_ns}, (weights, kernels_ns)
    (tmp_path / "graph").mkdir()
    r = trace(tmp_path / "graph", ["--kernel-trace", "--cuda-graph-trace", "graph"],
              [cuda_sample("graph"), "-l", "5"])
    assert r.returncode == 0, r.stderr
    spans = only_process(tmp_path / "graph").csv("kernel_trace.csv")
    assert len(spans) == 5 and all(k["Kernel_Name"].startswith("[CUDA graph ") for k in spans)
    (tmp_path / "pmc").mkdir()
    r = trace(tmp_path / "pmc", ["--kernel-trace", "--pmc", "sm__cycles_elapsed.avg"],
              [cuda_sample("graph"), "-l", "5"])
    assert r.returncode == 0, r.stderr
    assert r.stderr.count("the kernels of CUDA graph launches are not measured") == 1
    out = only_process(tmp_path / "pmc")
    assert out.query("SELECT records FROM gpuprof_dropped WHERE reason = "
                     "'kernels without their counters'") == [{"records": 15}]


def test_host_synchronisation_example(tmp_path, cuda_sample):
    counts = {}
    for mode in ("each", "fixed"):
        (tmp_path / mode).mkdir()
        args = [cuda_sample("hostsync"), "-i", "10"] + (["--fixed"] if mode == "fixed" else [])
        r = trace(tmp_path / mode, ["--runtime-trace"], args)
        assert r.returncode == 0, r.stderr
        out = only_process(tmp_path / mode)
        assert len(out.csv("kernel_trace.csv")) == 10
        calls = out.csv("cuda_api_trace.csv")
        counts[mode] = sum(c["Function"] == "cudaDeviceSynchronize" for c in calls)
    assert counts == {"each": 12, "fixed": 2}


def test_another_tool_holding_cupti(tmp_path):
    r = trace(tmp_path, ["--kernel-trace"], [os.path.join(GPU_TESTS, "cupti-holder")])
    assert r.returncode == 5, r.stderr
    assert "cupti-holder: subscribe ok" in r.stdout
    lines = [l for l in r.stderr.splitlines() if "CUPTI is already in use" in l]
    assert len(lines) == 1, r.stderr
    assert "this process runs without gpuprof tracing its CUDA work" in lines[0]


def pytorch_kernels(directory, steps, warmup=2):
    directory.mkdir()
    r = trace(directory, ["--kernel-trace"],
              [sys.executable, TRAIN, "--steps", str(steps), "--warmup", str(warmup)])
    assert r.returncode == 0, r.stderr
    return len(only_process(directory).csv("kernel_trace.csv"))


def test_pytorch_kernel_counts(tmp_path, torch_available):
    first = pytorch_kernels(tmp_path / "a", 10)
    second = pytorch_kernels(tmp_path / "b", 10)
    assert first == second > 0
    # the kernels of the 10 timed steps alone: a run with none subtracted
    baseline = pytorch_kernels(tmp_path / "c", 0)
    r = run([sys.executable, TRAIN, "--steps", "10", "--warmup", "2", "--torch-profiler"],
            cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    reported = int(r.stdout.split("torch.profiler kernels: ")[1].split()[0])
    assert first - baseline == reported


def test_pytorch_child_process_has_its_own_files(tmp_path, torch_available):
    r = trace(tmp_path, ["--kernel-trace"],
              [sys.executable, TRAIN, "--steps", "3", "--child-steps", "3"])
    assert r.returncode == 0, r.stderr
    found = [o for o in outputs(tmp_path) if o.exists("kernel_trace.csv")]
    assert len(found) == 2, [o.prefix for o in found]
    pids = {o.pid for o in found}
    assert len(pids) == 2
    counts = sorted(len(o.csv("kernel_trace.csv")) for o in found)
    assert counts[0] > 0


def test_pytorch_nvtx_ranges_and_kernel_rename(tmp_path, torch_available):
    """torch.cuda.nvtx ranges are recorded as markers, and --kernel-rename names "step"
    exactly the kernels launched on the thread that pushed a "step" range while it was
    open. NVTX push/pop ranges belong to their thread: the backward pass's kernels,
    launched by autograd's own thread, stay outside them. Every kernel has its launching
    call, runtime or driver API."""
    steps = 5  # --sys-trace: cuBLAS and cuDNN launch their kernels through the driver API
    r = trace(tmp_path, ["--sys-trace", "--kernel-rename"],
              [sys.executable, TRAIN, "--steps", str(steps), "--warmup", "2", "--nvtx"])
    assert r.returncode == 0, r.stderr
    out = only_process(tmp_path)
    markers = out.csv("marker_api_trace.csv")
    names = [m["Function"] for m in markers]
    assert names.count("train") == 1 and names.count("step") == steps
    ranges = [(int(m["Thread_Id"]), int(m["Start_Timestamp"]), int(m["End_Timestamp"]))
              for m in markers if m["Function"] == "step"]
    calls = out.csv("cuda_api_trace.csv") + out.csv("cuda_driver_api_trace.csv")
    launches = {int(c["Correlation_Id"]): c for c in calls
                if c["Function"].startswith(("cudaLaunch", "cuLaunch"))}
    expected, others_in_steps = set(), 0
    for k in out.csv("kernel_trace.csv"):
        call = launches[int(k["Correlation_Id"])]
        thread, at = int(call["Thread_Id"]), int(call["Start_Timestamp"])
        inside = [t for t, start, end in ranges if start <= at <= end]
        if thread in inside:
            expected.add(int(k["Dispatch_Id"]))
        elif inside:
            others_in_steps += 1
    renamed = {int(k["Dispatch_Id"]) for k in out.csv("kernel_trace.csv")
               if k["Kernel_Name"] == "step"}
    assert renamed == expected and len(renamed) >= steps
    assert others_in_steps > 0  # autograd's thread launched kernels during the steps
    assert out.query("SELECT COUNT(*) AS n FROM kernels WHERE range_name = 'step'") == [
        {"n": len(renamed)}]


def test_pytorch_dataloader_workers(tmp_path, torch_available):
    """DataLoader workers are forked children of a CUDA process that do no CUDA work:
    the run succeeds, only the main process has kernels and copies, and as many kernels
    and host-to-device copies as with no worker processes."""
    steps, warmup, seen = 5, 2, {}
    for workers in (0, 2):
        directory = tmp_path / f"workers{workers}"
        directory.mkdir()
        r = trace(directory, ["--kernel-trace", "--memory-copy-trace"],
                  [sys.executable, TRAIN, "--steps", str(steps), "--warmup", str(warmup),
                   "--loader-workers", str(workers)])
        assert r.returncode == 0, r.stderr
        with_work = [o for o in outputs(directory)
                     if o.exists("kernel_trace.csv") or o.exists("memory_copy_trace.csv")]
        assert len(with_work) == 1, [o.prefix for o in with_work]
        main = with_work[0]
        copies = main.csv("memory_copy_trace.csv")
        h2d = [c for c in copies if c["Direction"] == "MEMORY_COPY_HOST_TO_DEVICE"]
        assert len(h2d) >= 2 * (steps + warmup)  # images and labels of every step, and more
        seen[workers] = (len(main.csv("kernel_trace.csv")), len(h2d))
    assert seen[0] == seen[2] and seen[0][0] > 0


def test_agent_info_matches_nvidia_smi(tmp_path, cuda_sample):
    smi = run(["nvidia-smi", "--query-gpu=name,uuid,pci.bus_id,memory.total",
               "--format=csv,noheader,nounits", "-i", "0"], cwd=tmp_path)
    assert smi.returncode == 0, smi.stderr
    name, uuid, bus_id, memory_mib = [f.strip() for f in smi.stdout.splitlines()[0].split(",")]
    r = trace(tmp_path, ["--kernel-trace"], [cuda_sample("vcopy"), "-d", "0"])
    assert r.returncode == 0, r.stderr
    out = only_process(tmp_path)
    gpus = [a for a in out.csv("agent_info.csv") if a["Agent_Type"] == "GPU"]
    device = next(a for a in gpus if f"Agent {a['Node_Id']}" == out.csv("kernel_trace.csv")[0]["Agent_Id"])
    assert device["Name"] == name
    assert device["Uuid"].lower() == uuid.lower().removeprefix("gpu-")
    domain, bus, rest = bus_id.split(":")
    slot, function = rest.split(".")
    assert int(device["Domain"]) == int(domain, 16)
    assert int(device["Location_Id"]) == int(bus, 16) << 8 | int(slot, 16) << 3 | int(function, 16)
    # CUDA's total memory leaves out what the driver reserves: within 3% of nvidia-smi's
    total = int(memory_mib) << 20
    assert 0.97 * total <= int(device["Global_Memory_Size"]) <= total


def test_agent_info_multiprocessors(tmp_path, cuda_sample, torch_available):
    r = trace(tmp_path, ["--kernel-trace"], [cuda_sample("vcopy"), "-d", "0"])
    assert r.returncode == 0, r.stderr
    sms = run([sys.executable, "-c", "import torch; "
               "print(torch.cuda.get_device_properties(0).multi_processor_count)"], cwd=tmp_path)
    assert sms.returncode == 0, sms.stderr
    gpus = [a for a in only_process(tmp_path).csv("agent_info.csv") if a["Agent_Type"] == "GPU"]
    assert [int(a["Cu_Count"]) for a in gpus][:1] == [int(sms.stdout)]


def test_records_kept_when_the_program_resets_its_device(tmp_path, cuda_sample):
    """cudaDeviceReset() at the end destroys the context while its last records are still
    in CUPTI's buffers: none is lost."""
    r = trace(tmp_path, ["--kernel-trace", "--memory-copy-trace"],
              [cuda_sample("vcopy"), "-i", str(ITERATIONS), "-r"])
    assert r.returncode == 0, r.stderr
    out = only_process(tmp_path)
    assert len(out.csv("kernel_trace.csv")) == ITERATIONS
    assert len(out.csv("memory_copy_trace.csv")) == 2


FLUSH_PERIOD_NS = 100_000_000  # inject/cuda/cuda.c: CUPTI's buffers are asked for this often


def test_sigkill_loses_at_most_the_last_flush_period(tmp_path):
    """A program killed mid-run keeps every kernel that ended more than a flush period
    (plus the writer's turn) before the kill."""
    empty = os.path.join(BUILD, "bench", "gpu", "empty")
    gpuprof = subprocess.Popen([GPUPROF, "trace", "--kernel-trace", "--", empty, "-n", "50000000"],
                               cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True)
    try:
        child = None
        for _ in range(100):
            time.sleep(0.05)
            with open(f"/proc/{gpuprof.pid}/task/{gpuprof.pid}/children") as f:
                pids = f.read().split()
            if pids:
                child = int(pids[0])
                break
        assert child, "the program did not start"
        time.sleep(3)
        killed_at = time.monotonic_ns()  # the trace clock is CLOCK_MONOTONIC
        os.kill(child, signal.SIGKILL)
        _, stderr = gpuprof.communicate(timeout=60)
    finally:
        if gpuprof.poll() is None:
            gpuprof.kill()
    assert gpuprof.returncode == 128 + signal.SIGKILL, stderr
    kernels = only_process(tmp_path).csv("kernel_trace.csv")
    assert len(kernels) > 1000
    last_end = max(int(k["End_Timestamp"]) for k in kernels)
    assert killed_at - 2 * FLUSH_PERIOD_NS <= last_end <= killed_at


def test_torch_profiler_inside_a_traced_program(tmp_path, torch_available):
    """torch.profiler started inside a program that gpuprof traces cannot have CUPTI
    (one subscriber per process): it says so itself and sees no kernels, while gpuprof
    records every one, as many as in a run without torch.profiler."""
    alone = pytorch_kernels(tmp_path / "alone", 10)
    (tmp_path / "both").mkdir()
    r = trace(tmp_path / "both", ["--kernel-trace"],
              [sys.executable, TRAIN, "--steps", "10", "--warmup", "2", "--torch-profiler"])
    assert r.returncode == 0, r.stderr
    assert "torch.profiler kernels: 0" in r.stdout
    assert "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED" in r.stderr
    assert len(only_process(tmp_path / "both").csv("kernel_trace.csv")) == alone > 0


def test_sys_device_metrics_match_nvidia_smi(tmp_path):
    """gpuprof sys reads the real NVML while 50 large SGEMMs run: every GPU nvidia-smi
    lists has its series, the readings lie within what nvidia-smi says of the GPU, and
    the GPU is seen busy."""
    smi = run(["nvidia-smi", "--query-gpu=index,memory.total,clocks.max.sm,power.limit",
               "--format=csv,noheader,nounits"], cwd=tmp_path)
    assert smi.returncode == 0, smi.stderr
    gpus = [[f.strip() for f in line.split(",")] for line in smi.stdout.splitlines()]
    matmul = os.path.join(BUILD, "bench", "gpu", "matmul")
    r = run([GPUPROF, "sys", "--sampling-interval", "20", "--", matmul, "-i", "50"], cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "GPU metrics are not sampled" not in r.stderr
    out = only_process(tmp_path)
    rows = out.query("SELECT device, name, unit, MIN(value) AS low, MAX(value) AS high, "
                     "COUNT(*) AS n FROM metrics WHERE source = 'GPU' GROUP BY device, name")
    got = {(x["device"], x["name"]): x for x in rows}
    assert sorted({x["device"] for x in rows}) == [int(g[0]) for g in gpus]
    index, memory_mib, max_sm, power_limit = gpus[0]
    assert 10 < got[(0, "power")]["high"] <= 1.1 * float(power_limit)
    assert 0 < got[(0, "SM clock")]["high"] <= int(max_sm)
    assert 0 < got[(0, "memory used")]["high"] <= int(memory_mib) << 20
    assert 0 < got[(0, "memory used %")]["high"] <= 100
    assert 10 < got[(0, "temperature")]["high"] < 100
    assert got[(0, "utilization")]["high"] >= 90  # the SGEMMs keep it busy
    assert got[(0, "energy")]["low"] == 0 and got[(0, "energy")]["high"] > 0
    assert got[(0, "power")]["n"] >= 20
    assert os.path.exists(tmp_path / "gpu_info_power_profiler_output.csv")


def test_sys_samples_a_cuda_program(tmp_path):
    """Call-stack sampling of a CUDA program: its host threads' stacks, unwound after the
    run, reach main; the CUDA driver's frames are named from its symbols or by offset."""
    matmul = os.path.join(BUILD, "bench", "gpu", "matmul")
    r = run([GPUPROF, "sys", "--no-device-metrics", "--", matmul, "-i", "20"], cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "call stacks are not sampled" not in r.stderr
    out = only_process(tmp_path)
    total = out.query("SELECT COUNT(*) AS n FROM samples")[0]["n"]
    assert total > 50
    with open(out.path("stacks.folded")) as f:
        counts = [(line.rpartition(" ")[0], int(line.rpartition(" ")[2])) for line in f]
    assert sum(c for _, c in counts) == total
    assert sum(c for frames, c in counts if ";main;" in frames) >= 0.5 * total


def test_sys_names_python_functions(tmp_path):
    """This machine's CPython (3.12 and later: its perf map, which gpuprof turns on) names
    the Python functions of the samples: the 70/30 split of split.py in Python names."""
    split = os.path.join(os.path.dirname(__file__), "..", "e2e", "split.py")
    r = run([GPUPROF, "sys", "--no-device-metrics", "--no-host-metrics", "--", sys.executable,
             os.path.abspath(split), "40"], cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    out = only_process(tmp_path)
    with open(out.path("stacks.folded")) as f:
        counts = [(line.rpartition(" ")[0], int(line.rpartition(" ")[2])) for line in f]
    total = sum(c for _, c in counts)
    seventy = sum(c for frames, c in counts if "split.py:seventy" in frames)
    thirty = sum(c for frames, c in counts if "split.py:thirty" in frames)
    assert seventy + thirty >= 0.8 * total, counts[:20]
    assert 0.65 <= seventy / (seventy + thirty) <= 0.75, (seventy, thirty)
    assert not os.path.exists("/tmp/perf-%d.map" % out.pid)  # gpuprof's map goes with it



def test_launch_stacks_on_cuda(tmp_path, cuda_sample):
    """--launch-stacks on CUDA: every kernel and copy of vcopy, launched through the
    runtime (<<<>>>, cudaMemcpy: no driver callback fires for them), has the call stack
    of its launch, from main down to the API function, and profile --kernels gives main
    the device time the kernels and copies took."""
    r = trace(tmp_path, ["--kernel-trace", "--memory-copy-trace", "--launch-stacks"],
              [cuda_sample("vcopy"), "-n", str(N), "-b", str(BLOCK), "-i", str(ITERATIONS)])
    assert r.returncode == 0, r.stderr
    out = only_process(tmp_path)
    (row,) = out.query(
        "SELECT (SELECT COUNT(*) FROM gpuprof_kernel) AS kernels, "
        "(SELECT COUNT(*) FROM gpuprof_memory_copy) AS copies, "
        "(SELECT COUNT(*) FROM gpuprof_launch_stack l JOIN gpuprof_kernel k "
        " ON k.correlation_id = l.correlation_id) AS kernel_stacks, "
        "(SELECT COUNT(*) FROM gpuprof_launch_stack l JOIN gpuprof_memory_copy c "
        " ON c.correlation_id = l.correlation_id) AS copy_stacks, "
        "(SELECT SUM(end - start) FROM gpuprof_kernel) + "
        "(SELECT SUM(end - start) FROM gpuprof_memory_copy) AS ns")
    assert (row["kernels"], row["copies"]) == (ITERATIONS, 2)
    assert (row["kernel_stacks"], row["copy_stacks"]) == (ITERATIONS, 2)
    p = run([GPUPROF, "profile", "--kernels", "--format", "folded", out.path("results.db")],
            cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    lines = [line.rsplit(" ", 1) for line in p.stdout.splitlines()]
    assert all("main" in stack.split(";") for stack, _ in lines), p.stdout
    assert all(stack.split(";")[-2].lstrip("_").startswith(("cudaLaunch", "cudaMemcpy"))
               for stack, _ in lines), p.stdout
    assert sum(int(ns) for _, ns in lines) == row["ns"]


def range_counts(out):
    return {r["range_name"]: r["n"] for r in out.query(
        "SELECT range_name, COUNT(*) AS n FROM kernels GROUP BY range_name")}


def kernels_within(ranges, name):
    """The kernels of the ranges that name is a level of: --torch-trace names a range by
    its path (nn.Module.Net.forward/nn.Module.Net.features.0.forward/
    torch.nn.functional.conv2d), the innermost holding the kernels."""
    return sum(n for k, n in ranges.items() if k and name in k.split("/"))


def module_paths(kind):
    """The paths (named_modules()) of the modules of a class in train.py's model, as
    --torch-trace names their ranges: nn.Module.Net.features.0.forward."""
    sys.path.insert(0, os.path.dirname(TRAIN))
    try:
        import train
    finally:
        sys.path.pop(0)
    return [name for name, m in train.Net().named_modules() if type(m).__name__ == kind]


def test_torch_operators_without_the_api_trace(tmp_path, torch_available):
    """--torch-trace on CUDA needs no API trace: each launch records where it began, and
    its kernels go to the same operators as they do from the runtime API's records (-r),
    kernel for kernel; the forward pass's go to the model's modules (every convolution
    and linear layer, by its path in the model, through the functional call it makes),
    the backward pass's, launched by
    autograd's own thread, to each module's backward range opened there, and the rest
    (the loss's) to torch.autograd.backward."""
    counts = {}
    for name, options in (("points", []), ("calls", ["-r"])):
        (tmp_path / name).mkdir()
        r = trace(tmp_path / name, ["--torch-trace", "--kernel-trace", *options],
                  [sys.executable, TRAIN, "--steps", "3", "--warmup", "1"])
        assert r.returncode == 0, r.stderr
        counts[name] = range_counts(only_process(tmp_path / name))
    assert counts["points"] == counts["calls"]
    ranges = counts["points"]
    print(f"kernels by operator: {sum(n for k, n in ranges.items() if k)} of "
          f"{sum(ranges.values())} in an operator")
    for kind in ("Conv2d", "Linear"):
        for path in module_paths(kind):
            for pass_ in ("forward", "backward"):
                name = f"nn.Module.Net.{path}.{pass_}"
                assert kernels_within(ranges, name) > 0, (name, ranges)
    assert ranges.get("torch.autograd.backward", 0) > 0, ranges


def test_pc_sampling_finds_the_stalled_line(tmp_path):
    """PC sampling (CUPTI's PC Sampling API) on a kernel whose time goes to one line of
    dependent loads (tests/gpu/pc-chase.cu, built with -lineinfo): that line holds most
    samples, with a memory-dependency (long scoreboard) stall as its top reason."""
    source = os.path.join(os.path.dirname(__file__), "pc-chase.cu")
    line = next(i for i, text in enumerate(open(source), 1) if "/* CHASE */" in text)
    r = trace(tmp_path, ["--kernel-trace", "--pc-sampling-beta-enabled", "--pc-sampling-method",
                         "stochastic", "--pc-sampling-unit", "cycles",
                         "--pc-sampling-interval", "4096"],
              [os.path.join(GPU_TESTS, "pc-chase")])
    assert r.returncode == 0, r.stderr
    out = only_process(tmp_path)
    (totals,) = out.query("SELECT period_log2, samples, dropped FROM pc_sampling")
    assert totals["period_log2"] == 12 and totals["samples"] > 1000, dict(totals)
    p = run([GPUPROF, "profile", "--gpu", "--format", "json", out.path("results.db")],
            cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    tables = {t["name"]: t for t in json.loads(p.stdout)}
    kernels = tables["kernels"]["rows"]
    assert kernels[0][0].startswith("chase(") and kernels[0][1] == 1, kernels
    top = tables["source_lines"]["rows"][0]
    assert top[0].endswith(f"pc-chase.cu:{line}"), tables["source_lines"]["rows"][:3]
    assert top[3] > 50 and top[4] == "long_scoreboard", top


def test_pytorch_launches_attributed_to_python(tmp_path, torch_available):
    """--launch-stacks on PyTorch: the kernels the training step launches from Python
    have train_step on their stack, the model's forward kernels beneath Net.forward and
    the optimizer's beneath its step; every kernel has a launch stack. PyTorch's launches
    through cuDNN and cuBLAS are deeper than the default copy (an H200 showed every
    forward kernel's stack cut below train_step with 7,936 bytes): 64K copies them."""
    r = trace(tmp_path, ["--kernel-trace", "--launch-stacks", "--launch-stack-size", "64K"],
              [sys.executable, TRAIN, "--steps", "5", "--warmup", "1"])
    assert r.returncode == 0, r.stderr
    out = only_process(tmp_path)
    (row,) = out.query("SELECT (SELECT COUNT(*) FROM gpuprof_kernel) AS kernels, "
                       "(SELECT COUNT(*) FROM gpuprof_kernel k JOIN gpuprof_launch_stack l "
                       " ON l.correlation_id = k.correlation_id) AS stacked")
    assert row["kernels"] > 0 and row["stacked"] == row["kernels"], dict(row)
    p = run([GPUPROF, "profile", "--kernels", "--format", "folded", out.path("results.db")],
            cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    # Python frames are named file.py:function (3.11: read by the sampler; 3.12 and
    # later: from the interpreter's perf map, which --launch-stacks asks for)
    stacks = [line.rsplit(" ", 1)[0].split(";") for line in p.stdout.splitlines()]

    def below_step(s):
        at = next(i for i, f in enumerate(s) if f.endswith(":train_step"))
        return s[at + 1:]
    in_step = [s for s in stacks if any(f.endswith(":train_step") for f in s)]
    assert in_step, p.stdout[:2000]
    assert any(any(f.endswith("forward") for f in below_step(s)) for s in in_step)
    assert any(any(f.endswith(".step") for f in below_step(s)) for s in in_step)
