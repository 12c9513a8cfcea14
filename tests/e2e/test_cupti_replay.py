"""The CUDA backend run for real without a GPU: build/tests/cupti-replay loads
libgpuprof-cuda.so as the driver does, against stand-ins for CUPTI and the driver
(tests/e2e/fake-cupti.c, fake-cuda.c), and replays what CUPTI does while a small CUDA
program runs, as its documentation and its samples' outputs show it: a runtime launch
(<<<>>>, cudaLaunchKernel, cudaLaunchKernelExC, cudaGraphLaunch, cudaMemcpy, cudaMemset)
fires runtime callbacks only and its work's records carry the runtime call's
correlation id; a driver launch (cuLaunchKernel) fires driver callbacks. Every launch
must get its stack, its marker range and its counters; PC sampling must read where the
context is current and count a range's totals once. See cupti-replay.c for the program."""
import csv
import os
import shutil

import pytest

from conftest import BUILD, GPUPROF, TESTS, csv_table, frames_of, outputs, run

CUDA_LIB = os.path.join(BUILD, "lib", "gpuprof", "libgpuprof-cuda.so")
REPLAY = os.path.join(TESTS, "cupti-replay")
FAKE = os.path.join(TESTS, "fake")

pytestmark = pytest.mark.skipif(not os.path.exists(REPLAY),
                                reason="gpuprof was built without the CUDA toolkit")

VECCOPY = "vecCopy(float const*, float*, unsigned int)"


def from_main(frames):
    return frames[frames.index("main"):] if "main" in frames else frames


def replay(tmp_path, options, scenario, library=CUDA_LIB):
    r = run([GPUPROF, "trace", *options, "--", REPLAY, library, scenario], cwd=tmp_path,
            env={"LD_LIBRARY_PATH": FAKE})
    assert r.returncode == 0, r.stderr
    (out,) = outputs(str(tmp_path))
    return r, out


def test_every_launch_gets_its_stack_through_either_api(tmp_path):
    """Each kernel, copy and fill has the stack of the function that launched it, whether
    it went through the runtime (with no driver callback, or one inside it under the same
    correlation id: taken once) or the driver; a graph's two kernels share their
    cudaGraphLaunch's; cudaLaunchHostFunc launches nothing."""
    r, out = replay(tmp_path, ["--kernel-trace", "--memory-copy-trace", "--launch-stacks"],
                    "launches")
    rows = out.query("SELECT l.correlation_id AS id, s.string AS api, l.stack_id "
                     "FROM gpuprof_launch_stack l JOIN gpuprof_string s ON s.id = l.function_id "
                     "ORDER BY l.correlation_id")
    paths = [(x["id"], x["api"], from_main(frames_of(out, x["stack_id"]))) for x in rows]
    assert paths == [
        (1, "cudaMemcpy", ["main", "copy_in", "call"]),
        (2, "__cudaLaunchKernel", ["main", "chevrons"]),
        (3, "cudaLaunchKernel", ["main", "runtime_launch", "call"]),
        (4, "cudaMemset", ["main", "fill", "call"]),
        (5, "cuLaunchKernel", ["main", "driver_launch", "call"]),
        (6, "cudaGraphLaunch", ["main", "graph_launch", "call"]),
        (8, "cudaLaunchKernelExC", ["main", "ex_launch", "call"]),
        (9, "cudaLaunchKernel", ["main", "nested_launch"]),
        (10, "cuLaunchKernel", ["main", "nested_launch", "call"])]
    # every kernel and copy is weighed under its launching function, none left out
    r = run([GPUPROF, "profile", "--kernels", "--format", "csv", out.path("results.db")],
            cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    launches = out.query("SELECT COUNT(*) AS n FROM gpuprof_kernel")[0]["n"] + \
        out.query("SELECT COUNT(*) AS n FROM gpuprof_memory_copy")[0]["n"]
    assert launches == 9
    assert "device time of 9 launches with a call stack" in r.stdout + r.stderr
    # the work names its launching thread without the API trace
    assert {k["tid"] for k in out.query("SELECT tid FROM kernels")} == {out.pid}
    assert {c["tid"] for c in out.query("SELECT tid FROM memory_copies")} == {out.pid}


def test_kernels_find_their_marker_range_without_the_api_trace(tmp_path):
    """With markers and no API trace, each launch records where and when it began, and
    its kernels go to the range open on that thread then: "step" around the one
    cudaLaunchKernel, "train" around the rest."""
    r, out = replay(tmp_path, ["--kernel-trace", "--marker-trace"], "launches")
    assert [(k["corr_id"], k["range_name"]) for k in out.query(
        "SELECT corr_id, range_name FROM kernels ORDER BY corr_id, id")] == [
        (2, "train"), (3, "step"), (5, "train"), (6, "train"), (6, "train"), (8, "train"),
        (9, "train")]
    assert out.query("SELECT COUNT(*) AS n FROM gpuprof_launch_stack") == [{"n": 0}]
    assert [row["Kernel_Name"] for row in out.csv("kernel_trace.csv")] == [
        VECCOPY, VECCOPY, "chase(unsigned int*)", "step()", "step()", VECCOPY, VECCOPY]
    renamed = tmp_path / "renamed"
    renamed.mkdir()
    r, out = replay(renamed, ["--kernel-trace", "--kernel-rename"], "launches")
    assert [k["Kernel_Name"] for k in out.csv("kernel_trace.csv")] == [
        "train", "step", "train", "train", "train", "train", "train"]


def test_backward_kernels_of_the_autograd_thread_go_to_the_backward_call(tmp_path):
    """PyTorch's autograd engine launches a backward pass's kernels from a thread of its
    own, where no range is open: they go to the torch.autograd.backward range open on the
    thread that called it; a kernel launched outside it stays in none."""
    r, out = replay(tmp_path, ["--kernel-trace", "--marker-trace"], "backward")
    rows = out.query("SELECT corr_id, range_name, tid FROM kernels ORDER BY corr_id")
    assert [(k["corr_id"], k["range_name"]) for k in rows] == [
        (11, "torch.autograd.backward"), (12, None)]
    assert rows[0]["tid"] != out.pid and rows[1]["tid"] == out.pid


def counter_replay(tmp_path, scenario, options=()):
    """A replay with counters: the backend beside the stand-in host library."""
    lib = tmp_path / "lib"
    lib.mkdir()
    for path in (CUDA_LIB, os.path.join(os.path.dirname(CUDA_LIB), "libgpuprof-recorder.so"),
                 os.path.join(FAKE, "libgpuprof-cupti-host.so")):
        shutil.copy(path, lib)
    return replay(tmp_path, ["--kernel-trace", *options], scenario,
                  library=str(lib / "libgpuprof-cuda.so"))


def counter_values(out):
    """{correlation id: [values in metric order]} of the counters recorded."""
    values = {}
    for x in out.query("SELECT correlation_id, value FROM gpuprof_counter ORDER BY id"):
        values.setdefault(x["correlation_id"], []).append(x["value"])
    return values


def test_counters_of_runtime_and_driver_launches(tmp_path):
    """The innermost launching call of each kernel is measured once, under the
    correlation id its kernel record carries: the stand-in host library evaluates metric i
    of the r-th range measured to 1000 r + i. __cudaLaunchKernel with a cuLaunchKernel
    inside it (the H200's case) is measured at the driver's call, under the runtime's id; a
    runtime function that fires no driver callback inside (cudaLaunchKernel, 3, and
    cudaLaunchKernelExC, 8) is learned so at its first call, which goes without counters
    (said as dropped), and measured itself from then on (cudaLaunchKernel 9, whose driver
    call inside, 10, is then not measured again); cuLaunchKernel alone, 5, is measured; a
    graph launch (its kernels counted without counters), a copy and a fill are not. The
    configuration is set once for the
    context (NVIDIA's callback_profiling sample), and no call is refused by the strict
    stand-in (fake-cupti-profiler.c)."""
    r, out = counter_replay(tmp_path, "counters")
    assert r.stdout.strip() == ("ranges started 3, configurations set 1, profiler calls "
                                "refused 0, GetData refused 0")
    with open(out.path("counter_collection.csv"), newline="") as f:
        rows = [(int(x["Correlation_Id"]), x["Thread_Id"], x["Counter_Name"], x["Counter_Value"])
                for x in csv.DictReader(f)]
    tid = str(out.pid)
    assert rows == [(c, tid, name, str(1000 * (i + 1) + m))
                    for i, c in enumerate((2, 5, 9))
                    for m, name in enumerate(("dram__bytes_read.sum", "smsp__inst_executed.sum"))]
    # the two first calls of runtime functions learned, and the graph's two kernels (not
    # measured: said once)
    assert out.query("SELECT reason, records FROM gpuprof_dropped") == [
        {"reason": "kernels without their counters", "records": 4}]
    assert r.stderr.count("the kernels of CUDA graph launches are not measured") == 1
    # the kernels measured came without times: each takes its launch call's window,
    # said once; the others keep CUPTI's
    kernels = out.query("SELECT corr_id, start, end FROM kernels ORDER BY corr_id, id")
    assert [k["corr_id"] for k in kernels] == [2, 3, 5, 6, 6, 8, 9]
    assert all(k["start"] < k["end"] for k in kernels)
    assert [k["end"] - k["start"] == 40000 for k in kernels] == [
        False, True, False, True, True, True, False]
    assert r.stderr.count("no device times") == 1


def test_pc_sampling_reads_with_the_context_current_and_counts_totals_once(tmp_path):
    """The writer thread has no context of its own: CUPTI answers it only once the sampled
    context is made current there. One range handed over in two buffers, each with the
    range's totals, is counted once: 1000 samples, 20 lost, 30 of other kernels."""
    r, out = replay(tmp_path, ["--kernel-trace", "--pc-sampling-beta-enabled"], "pc-sampling")
    assert "cannot read the samples" not in r.stderr
    assert out.query("SELECT samples, dropped, other_samples FROM pc_sampling") == [
        {"samples": 1000, "dropped": 20, "other_samples": 30}]
    assert [(x["pc_offset"], x["reason"], x["samples"]) for x in out.query(
        "SELECT pc_offset, reason, samples FROM pc_samples ORDER BY pc_offset")] == [
        (0x40, "long_scoreboard", 600), (0x80, "selected", 200)]


def test_selected_regions_follow_cuda_profiler_start_and_stop(tmp_path):
    """63: --selected-regions keeps what was launched between cudaProfilerStart and
    cudaProfilerStop (and the driver's cuProfilerStart/Stop: torch.cuda.profiler.start
    and stop, nsys's --capture-range=cudaProfilerApi), by the launch: "late", launched
    inside, is kept though it ran on the device after the stop; launch stacks follow the
    same window. Without --selected-regions the calls change nothing."""
    (tmp_path / "selected").mkdir()
    r, out = replay(tmp_path / "selected", ["--kernel-trace", "--memory-copy-trace",
                                            "--selected-regions", "--launch-stacks"], "capture")
    assert [(k["corr_id"], k["name"]) for k in out.query(
        "SELECT corr_id, name FROM kernels ORDER BY corr_id")] == [
        (23, "inside()"), (24, "late()"), (29, "driver()")]
    assert [c["correlation_id"] for c in out.query(
        "SELECT correlation_id FROM gpuprof_memory_copy")] == [25]
    assert [s["correlation_id"] for s in out.query(
        "SELECT correlation_id FROM gpuprof_launch_stack ORDER BY 1")] == [23, 24, 25, 29]
    (tmp_path / "all").mkdir()
    r, out = replay(tmp_path / "all", ["--kernel-trace"], "capture")
    assert [k["corr_id"] for k in out.query("SELECT corr_id FROM kernels ORDER BY corr_id")] \
        == [21, 23, 24, 27, 29, 31]


def test_counters_follow_the_capture_range(tmp_path):
    """63: --pmc measures only the kernels launched inside the capture range: three ranges
    started (inside, late, driver), none outside, and no kernel said to lack counters."""
    r, out = counter_replay(tmp_path, "capture-counters", ["--selected-regions"])
    assert r.stdout.strip() == "ranges started 3"
    assert sorted({x["correlation_id"] for x in out.query(
        "SELECT correlation_id FROM gpuprof_counter")}) == [23, 24, 29]
    assert out.query("SELECT reason, records FROM gpuprof_dropped") == []


@pytest.mark.parametrize("capture, kept", [
    ("step", [42]), ("step@torch", [44]), ("step@*", [42, 44]), ("other", [])])
def test_nvtx_capture_keeps_what_was_launched_inside_the_range(tmp_path, capture, kept):
    """63: --nvtx-capture NAME[@DOMAIN] (nsys's): collection on while a range of that
    name is open, in the default domain, the one named, or any; a kernel launched inside
    is kept though it ran after the range's end."""
    r, out = replay(tmp_path, ["--kernel-trace", "--marker-trace", "--nvtx-capture", capture],
                    "capture-nvtx")
    assert [k["corr_id"] for k in out.query("SELECT corr_id FROM kernels ORDER BY corr_id")] \
        == kept
    # the markers are recorded throughout
    assert [m["name"] for m in out.query("SELECT name FROM markers ORDER BY start")] == \
        ["step", "step"]


# 63: the counter path against the strict stand-in, which refuses (and counts) every call
# out of CUPTI's documented order or an object's lifetime; each case failed before.
FIRST, SECOND = [1000.0, 1001.0], [2000.0, 2001.0]


def test_multiplexed_groups_each_configure_their_own_metrics(tmp_path):
    """A host object's configuration only grows: each group has its own, so group 1's
    configuration holds its one metric and fits its counter data image (it held groups 0
    and 1, and was refused). The configuration is set at each change of group."""
    r, out = counter_replay(tmp_path, "counters-multiplex")
    assert r.stdout.strip() == ("ranges started 4, configurations set 4, profiler calls "
                                "refused 0")
    assert counter_values(out) == {51: FIRST, 52: [2000.0], 53: [3000.0, 3001.0],
                                   54: [4000.0]}
    assert out.query("SELECT reason FROM gpuprof_dropped") == []


def test_a_context_destroyed_and_made_again_is_measured_again(tmp_path):
    """cudaDeviceReset: the destroyed context's profiler is disabled, so a new context at
    the same address gets one of its own (it kept the dead one's); a second context gets
    its own too."""
    r, out = counter_replay(tmp_path, "counters-reset")
    assert r.stdout.strip() == ("ranges started 3, configurations set 3, profiler calls "
                                "refused 0")
    assert counter_values(out) == {61: FIRST, 62: SECOND, 63: [3000.0, 3001.0]}


def test_no_other_threads_work_falls_inside_a_measured_kernel(tmp_path):
    """Another thread's copy and graph launch wait until the measured kernel's range
    ends: its counters are its own (a copy inside pollutes them, by 500000 in the
    stand-in's values; a graph's kernels inside drop the range)."""
    r, out = counter_replay(tmp_path, "counters-threads")
    assert counter_values(out) == {71: FIRST}
    assert out.query("SELECT reason, records FROM gpuprof_dropped") == [
        {"reason": "kernels without their counters", "records": 2}]  # the graph's
    assert [k["corr_id"] for k in out.query("SELECT corr_id FROM kernels ORDER BY corr_id")] \
        == [71, 73, 73]


def test_a_launch_into_a_stream_being_captured_is_not_measured(tmp_path):
    """A launch during stream capture (CUDA graphs, torch.compile) runs nothing: no range
    is started for it, and the next kernel is measured."""
    r, out = counter_replay(tmp_path, "counters-captured")
    assert r.stdout.strip() == ("ranges started 1, configurations set 1, profiler calls "
                                "refused 0")
    assert counter_values(out) == {82: FIRST}
    assert out.query("SELECT reason FROM gpuprof_dropped") == []


def test_a_range_without_every_pass_gives_no_values(tmp_path):
    """A kernel replay that could not submit every pass (Stop's isAllPassSubmitted 0) is no
    measurement: its kernel is counted without counters, the next is measured."""
    r, out = counter_replay(tmp_path, "counters-partial")
    assert counter_values(out) == {92: SECOND}
    assert out.query("SELECT reason, records FROM gpuprof_dropped") == [
        {"reason": "kernels without their counters", "records": 1}]


def test_the_range_is_stopped_on_the_context_it_started_on(tmp_path):
    """CUPTI's context may change from a call's entry to its exit: the range is stopped
    and read on the context it was started on, not the one current at the exit."""
    r, out = counter_replay(tmp_path, "counters-exit-context")
    assert r.stdout.strip() == ("ranges started 1, configurations set 1, profiler calls "
                                "refused 0")
    assert counter_values(out) == {95: FIRST}


def test_graph_kernels_are_placed_where_their_nodes_were_captured(tmp_path):
    """63: a CUDA graph captured from a stream (and a node added), instantiated twice,
    replayed three times: each replayed kernel carries its copy's node id, which leads
    back to the node the program made (a copy's copy too): its launch site is where it
    was captured, and its marker range (its PyTorch operator) the one it was captured in,
    else the one it was replayed in."""
    (tmp_path / "stacks").mkdir()
    r, out = replay(tmp_path / "stacks", ["--kernel-trace", "--launch-stacks",
                                          "--marker-trace"], "graphs")
    assert out.query("SELECT node_id, original_id FROM gpuprof_graph_node_clone "
                     "ORDER BY node_id") == [
        {"node_id": copy, "original_id": original} for copy, original in (
            (2001, 1001), (2002, 1002), (2003, 1003), (2004, 1004), (3001, 1001),
            (3002, 1002), (3003, 1003))]
    # a capture stack for each kernel node the program made (not the copies, made inside
    # cudaGraphInstantiate, nor the copy's node)
    assert [x["correlation_id"] for x in out.query(
        "SELECT correlation_id FROM gpuprof_launch_stack WHERE domain = 4 ORDER BY 1")] == [
        1001, 1002, 1003]
    ranges = [(k["corr_id"], k["name"], k["range_name"]) for k in out.query(
        "SELECT corr_id, name, range_name FROM kernels ORDER BY corr_id, id")]
    assert ranges == [(c, name, where) for c in (115, 116, 117) for name, where in (
        ("step()", "forward"), ("other()", "forward"), ("extra()", "replay"))]
    r = run([GPUPROF, "profile", "--kernels", "--format", "folded", out.path("results.db")],
            cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    sites = sorted(line.rpartition(" ")[0].split(";") for line in r.stdout.splitlines())
    assert [from_main(s) for s in sites] == [
        ["main", "graphs", "add_node", "extra()"],
        ["main", "graphs", "capture_forward", "captured_launch", "other()"],
        ["main", "graphs", "capture_forward", "captured_launch", "step()"]]
    # the same ranges from capture points alone (no stacks)
    (tmp_path / "points").mkdir()
    r, out = replay(tmp_path / "points", ["--kernel-trace", "--marker-trace"], "graphs")
    assert [(k["corr_id"], k["name"], k["range_name"]) for k in out.query(
        "SELECT corr_id, name, range_name FROM kernels ORDER BY corr_id, id")] == ranges
    assert out.query("SELECT COUNT(*) AS n FROM gpuprof_launch_stack") == [{"n": 0}]


def test_graph_capture_sites_survive_a_merge_and_an_older_schema(tmp_path):
    """The copies' originals merge with their process; a database of schema 3.7 (no
    gpuprof_graph_node_clone) is read as one whose graph kernels stand where they were
    launched."""
    import sqlite3
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    r, out = replay(tmp_path / "a", ["--kernel-trace", "--launch-stacks"], "graphs")
    db = out.path("results.db")
    r, other = replay(tmp_path / "b", ["--kernel-trace", "--launch-stacks"], "graphs")
    old = other.path("results.db")
    with sqlite3.connect(old) as con:
        con.execute("DROP TABLE gpuprof_graph_node_clone")
        con.execute("UPDATE gpuprof_metadata SET value = '3.7.0' WHERE tag = 'schema_version'")
    merged = str(tmp_path / "merged.db")
    r = run([GPUPROF, "merge", "-o", merged, db, old], cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    with sqlite3.connect(merged) as con:
        assert con.execute("SELECT COUNT(*), COUNT(DISTINCT process_id) FROM "
                           "gpuprof_graph_node_clone").fetchone() == (7, 1)
    for path, replayed in ((db, 0), (old, 9), (merged, 9)):
        r = run([GPUPROF, "profile", "--kernels", "--format", "folded", path], cwd=tmp_path)
        assert r.returncode == 0, (path, r.stderr)
        lines = r.stdout.splitlines()
        # the older database's graph kernels stand at their cudaGraphLaunch in replay()
        assert sum(int(x.rpartition(" ")[2]) // 40000 for x in lines
                   if ";replay;" in x) == replayed, (path, lines)


def test_cuda_graph_trace_graph_makes_each_launch_one_span(tmp_path):
    """63: --cuda-graph-trace graph (nsys's): each graph launch one span, "[CUDA graph N]",
    from CUPTI's graph records, at the launch's site; the graph's kernels not kept. The
    option needs kernels traced."""
    r, out = replay(tmp_path, ["--kernel-trace", "--launch-stacks", "--cuda-graph-trace",
                               "graph"], "graphs")
    assert [(k["corr_id"], k["name"], k["graph_id"], k["graph_node_id"], k["end"] - k["start"])
            for k in out.query("SELECT * FROM kernels ORDER BY corr_id")] == [
        (c, "[CUDA graph 1]", 1, 0, 200000) for c in (115, 116, 117)]
    r = run([GPUPROF, "profile", "--kernels", "--format", "folded", out.path("results.db")],
            cwd=tmp_path)
    assert [from_main(line.rpartition(" ")[0].split(";")) for line in r.stdout.splitlines()] \
        == [["main", "graphs", "replay", "call", "[CUDA graph 1]"]]
    r = run([GPUPROF, "trace", "--memory-copy-trace", "--cuda-graph-trace", "graph", "-d",
             str(tmp_path / "refused"), "--", REPLAY, CUDA_LIB, "graphs"], cwd=tmp_path)
    assert r.returncode == 2 and "add --kernel-trace" in r.stderr, r.stderr


def test_cuda_allocations_have_their_stacks_and_make_the_memory_tables(tmp_path):
    """64: each cudaMalloc's stack is taken at its callback, under the correlation id of
    CUPTI's memory record: the peak's holders and the memory never freed by site."""
    from conftest import csv_table
    r, out = replay(tmp_path, ["--memory-allocation-trace"], "allocations")
    assert [x["correlation_id"] for x in out.query(
        "SELECT correlation_id FROM gpuprof_launch_stack ORDER BY 1")] == [141, 142, 144]
    s = run([GPUPROF, "summary", "--format", "csv", out.path("results.db")], cwd=tmp_path)
    assert s.returncode == 0, s.stderr
    mib = 1024 * 1024
    (device,) = csv_table(s.stdout, "# MEMORY (")
    assert (int(device["Allocations"]), int(device["Frees"]), int(device["Peak (bytes)"]),
            int(device["Held at end (bytes)"])) == (3, 1, 12 * mib, 5 * mib)
    assert [(x["Site"], int(x["Bytes"])) for x in csv_table(s.stdout, "# MEMORY AT THE PEAK")] \
        == [("alloc_activations", 8 * mib), ("alloc_weights", 4 * mib)]
    assert [(x["Site"], int(x["Bytes"])) for x in csv_table(s.stdout, "# MEMORY NEVER FREED")] \
        == [("alloc_weights", 4 * mib), ("alloc_leak", mib)]


def test_nccl_calls_find_the_kernels_they_launched(tmp_path):
    """--nccl-trace with --kernel-trace and no API trace: each launch records where and
    when it began, so each kernel goes to the NCCL call open on its thread then: the
    all-reduce's to it, the group's to its ncclGroupEnd, the compute kernel to none."""
    nccl = os.path.join(TESTS, "fake-nccl")
    r = run([GPUPROF, "trace", "--kernel-trace", "--nccl-trace", "--", REPLAY, CUDA_LIB, "nccl"],
            cwd=tmp_path, env={"LD_LIBRARY_PATH": f"{FAKE}:{nccl}"})
    assert r.returncode == 0, r.stderr
    (out,) = outputs(str(tmp_path))
    calls = {c["call_id"]: c["function"] for c in out.query(
        "SELECT call_id, function FROM mpi_calls")}
    tied = [(k["corr_id"], calls.get(k["call_id"], k["call_id"])) for k in out.query(
        "SELECT corr_id, call_id FROM kernels ORDER BY corr_id")]
    assert tied == [(201, "ncclAllReduce"), (202, "ncclGroupEnd"), (203, 0)]
    s = run([GPUPROF, "summary", "--format", "csv", out.path("results.db")], cwd=tmp_path)
    assert s.returncode == 0, s.stderr
    (row,) = csv_table(s.stdout, "# COMMUNICATION CALLS")
    # 1024 floats, then a group of two of 256: two operations, three calls
    assert [row[k] for k in ("Function", "Ranks", "Operations", "Calls", "Kernels", "Bytes")] \
        == ["ncclAllReduce", "4", "2", "3", "2", str(4 * (1024 + 2 * 256))]
