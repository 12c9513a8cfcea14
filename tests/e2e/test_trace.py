"""gpuprof trace on real OpenCL programs: exact kernels, copies and API calls, the
database and the CSV files in agreement, timestamps, children, exit statuses."""
import glob
import os
import signal
import sys
import time

import pytest

from conftest import HOST, GPUPROF, TESTS, outputs, run, trace

KERNEL_HEADER = ["Kind", "Agent_Id", "Queue_Id", "Stream_Id", "Thread_Id", "Dispatch_Id",
                 "Kernel_Id", "Kernel_Name", "Correlation_Id", "Start_Timestamp",
                 "End_Timestamp", "LDS_Block_Size", "Scratch_Size", "VGPR_Count",
                 "Accum_VGPR_Count", "SGPR_Count", "Workgroup_Size_X", "Workgroup_Size_Y",
                 "Workgroup_Size_Z", "Grid_Size_X", "Grid_Size_Y", "Grid_Size_Z"]
COPY_HEADER = ["Kind", "Direction", "Stream_Id", "Source_Agent_Id", "Destination_Agent_Id",
               "Correlation_Id", "Start_Timestamp", "End_Timestamp"]
API_HEADER = ["Domain", "Function", "Process_Id", "Thread_Id", "Correlation_Id",
              "Start_Timestamp", "End_Timestamp"]
STATS_HEADER = ["Name", "Calls", "TotalDurationNs", "AverageNs", "Percentage", "MinNs",
                "MaxNs", "StdDev"]


def only_process(tmp_path):
    found = outputs(tmp_path)
    assert len(found) == 1, [o.prefix for o in found]
    return found[0]


def test_vcopy_kernels_exact(tmp_path, vcopy):
    r = trace(tmp_path, ["--kernel-trace"], [vcopy, "-n", "4096", "-b", "64", "-i", "20"])
    assert r.returncode == 0, r.stderr
    out = only_process(tmp_path)
    assert out.prefix == os.path.join(str(tmp_path), HOST, str(out.pid))
    rows = out.csv("kernel_trace.csv")
    # rocprofv3's columns first, gpuprof's additions after them
    assert out.csv_header("kernel_trace.csv") == KERNEL_HEADER + [
        "Static_LDS_Size", "Dynamic_LDS_Size", "Context_Id", "Graph_Id", "Graph_Node_Id"]
    assert len(rows) == 20
    for row in rows:
        assert row["Kind"] == "KERNEL_DISPATCH"
        assert row["Kernel_Name"] == "vecCopy"
        assert (row["Grid_Size_X"], row["Grid_Size_Y"], row["Grid_Size_Z"]) == ("4096", "1", "1")
        assert (row["Workgroup_Size_X"], row["Workgroup_Size_Y"], row["Workgroup_Size_Z"]) == ("64", "1", "1")
        assert int(row["Start_Timestamp"]) <= int(row["End_Timestamp"])
    assert sorted(int(r["Dispatch_Id"]) for r in rows) == list(range(1, 21))
    # only kernels were asked for
    assert not out.exists("memory_copy_trace.csv")
    assert not out.exists("opencl_api_trace.csv")
    assert out.query("SELECT COUNT(*) AS n FROM regions")[0]["n"] == 0


def test_vcopy_copies_exact(tmp_path, vcopy):
    r = trace(tmp_path, ["--memory-copy-trace"], [vcopy, "-n", "1000", "-b", "100", "-i", "2"])
    assert r.returncode == 0, r.stderr
    out = only_process(tmp_path)
    assert out.csv_header("memory_copy_trace.csv")[:8] == COPY_HEADER
    rows = out.csv("memory_copy_trace.csv")
    assert [(r["Direction"], r["Bytes"], r["Source_Agent_Id"], r["Destination_Agent_Id"],
             r["Function"]) for r in rows] == [
        ("MEMORY_COPY_HOST_TO_DEVICE", "4000", "Agent 0", "Agent 1", "clEnqueueWriteBuffer"),
        ("MEMORY_COPY_DEVICE_TO_HOST", "4000", "Agent 1", "Agent 0", "clEnqueueReadBuffer"),
    ]
    assert not out.exists("kernel_trace.csv")


def test_busy_every_direction_two_queues_two_threads(tmp_path, busy):
    r = trace(tmp_path, ["--sys-trace"], [busy, "-n", "4096", "-i", "3"])
    assert r.returncode == 0, r.stderr
    out = only_process(tmp_path)
    kernels = out.query("SELECT name, COUNT(*) AS n, COUNT(DISTINCT tid) AS threads, "
                        "COUNT(DISTINCT queue_id) AS queues FROM kernels GROUP BY name ORDER BY name")
    assert kernels == [{"name": n, "n": 6, "threads": 2, "queues": 2} for n in ("add", "scale", "square")]
    # square is launched without a local size: the runtime chose it, and does not say
    # which (NULL, not 0; the table keeps 0)
    assert {r["workgroup_x"] for r in out.query("SELECT workgroup_x FROM kernels WHERE name='square'")} == {None}
    copies = out.query("SELECT operation, direction, size, COUNT(*) AS n FROM memory_copies "
                       "GROUP BY operation, direction, size ORDER BY operation, direction")
    b = str(4096 * 4)
    assert [(c["operation"], c["direction"], c["size"], c["n"]) for c in copies] == [
        ("COPY", "MEMORY_COPY_DEVICE_TO_DEVICE", int(b), 6),
        ("COPY", "MEMORY_COPY_DEVICE_TO_HOST", int(b), 6),
        ("COPY", "MEMORY_COPY_HOST_TO_DEVICE", int(b), 6),
        ("FILL", "MEMORY_COPY_NONE", int(b), 6),
        ("MAP", "MEMORY_COPY_DEVICE_TO_HOST", int(b), 2),
        ("UNMAP", "MEMORY_COPY_NONE", int(b), 2),  # mapped for reading: nothing goes back
    ]
    queues = out.query("SELECT COUNT(*) AS n FROM gpuprof_queue")[0]["n"]
    assert queues == 2


def test_database_and_csv_agree_row_for_row(tmp_path, busy):
    r = trace(tmp_path, ["--sys-trace"], [busy, "-n", "1024", "-i", "2"])
    assert r.returncode == 0, r.stderr
    out = only_process(tmp_path)
    db_kernels = out.query("SELECT * FROM kernels ORDER BY start, id")
    csv_kernels = out.csv("kernel_trace.csv")
    assert len(db_kernels) == len(csv_kernels) == 12
    for d, c in zip(db_kernels, csv_kernels):
        assert (c["Kernel_Name"], int(c["Dispatch_Id"]), int(c["Correlation_Id"]),
                int(c["Start_Timestamp"]), int(c["End_Timestamp"]), int(c["Thread_Id"]),
                int(c["Queue_Id"]), c["Agent_Id"], int(c["Grid_Size_X"]),
                int(c["Workgroup_Size_X"]) if c["Workgroup_Size_X"] else None) == (
            d["name"], d["dispatch_id"], d["corr_id"], d["start"], d["end"], d["tid"],
            d["queue_id"], f"Agent {d['agent_id']}", d["grid_x"], d["workgroup_x"])
    db_copies = out.query("SELECT * FROM memory_copies ORDER BY start, id")
    csv_copies = out.csv("memory_copy_trace.csv")
    assert len(db_copies) == len(csv_copies) == 2 * (4 * 2 + 2)
    for d, c in zip(db_copies, csv_copies):
        assert (c["Direction"], int(c["Bytes"]), int(c["Correlation_Id"]), int(c["Start_Timestamp"]),
                int(c["End_Timestamp"]), c["Operation"]) == (
            d["direction"], d["size"], d["corr_id"], d["start"], d["end"], d["operation"])
    db_api = out.query("SELECT * FROM regions ORDER BY start, id")
    csv_api = out.csv("opencl_api_trace.csv")
    assert out.csv_header("opencl_api_trace.csv") == API_HEADER
    assert len(db_api) == len(csv_api) > 0
    for d, c in zip(db_api, csv_api):
        assert (c["Domain"], c["Function"], int(c["Process_Id"]), int(c["Thread_Id"]),
                int(c["Correlation_Id"]), int(c["Start_Timestamp"]), int(c["End_Timestamp"])) == (
            "OPENCL_API", d["name"], out.pid, d["tid"], d["corr_id"], d["start"], d["end"])
    agents = out.csv("agent_info.csv")
    assert [(a["Node_Id"], a["Agent_Type"]) for a in agents] == [("0", "CPU"), ("1", "CPU")]


def test_device_work_starts_after_its_api_call(tmp_path, busy):
    r = trace(tmp_path, ["--runtime-trace"], [busy, "-n", "4096", "-i", "3"])
    assert r.returncode == 0, r.stderr
    out = only_process(tmp_path)
    for view, expected in (("kernels", 18), ("memory_copies", 28)):
        rows = out.query(f"SELECT w.start AS ws, w.end AS we, r.start AS rs, r.name AS fn "
                         f"FROM {view} w JOIN regions r ON r.corr_id = w.corr_id")
        assert len(rows) == expected  # every piece of device work has its API call
        for row in rows:
            assert row["ws"] >= row["rs"], row
            assert row["ws"] <= row["we"]
    launches = out.query("SELECT DISTINCT r.name FROM kernels k JOIN regions r ON r.corr_id = k.corr_id")
    assert launches == [{"name": "clEnqueueNDRangeKernel"}]
    corr = out.query("SELECT COUNT(*) AS n, COUNT(DISTINCT corr_id) AS d FROM regions")[0]
    assert corr["n"] == corr["d"]


def test_stdout_and_stderr_pass_through(tmp_path, launcher):
    r = trace(tmp_path, ["--kernel-trace"], [launcher, "3", "exit:0"])
    assert r.returncode == 0
    assert r.stdout == "launcher: 3 kernels done\n"


# how the target ends, its status, and whether that is a normal exit (a final flush):
# _exit() has one too, as the preloaded recorder flushes there
ENDINGS = [
    ("exit:0", 0, 1), ("exit:7", 7, 1), ("_exit:5", 5, 1), ("thread-exit:6", 6, 1),
    ("sigterm", 3, 1), ("oom", 4, 1),
    ("kill", 128 + signal.SIGKILL, 0), ("segv", 128 + signal.SIGSEGV, 0),
    ("bus", 128 + signal.SIGBUS, 0), ("abort", 128 + signal.SIGABRT, 0),
]


@pytest.mark.parametrize("ending,status,normal", ENDINGS)
def test_exit_status_and_data_survive(tmp_path, launcher, ending, status, normal):
    if ending == "oom" and os.environ.get("GPUPROF_SANITIZER"):
        pytest.skip("a sanitizer's runtime maps terabytes of shadow memory: it cannot "
                    "start under a capped address space")
    r = trace(tmp_path, ["--kernel-trace"], [launcher, "12", ending])
    assert r.returncode == status, r.stderr
    assert r.stdout.startswith("launcher: 12 kernels done\n")
    if ending == "sigterm":  # the program's own handler ran, and it exited its own way
        assert r.stdout.endswith("launcher: SIGTERM handled\n")
    if ending == "oom":
        assert "launcher: out of memory after" in r.stdout
    out = only_process(tmp_path)
    rows = out.csv("kernel_trace.csv")
    assert len(rows) == 12
    assert {row["Kernel_Name"] for row in rows} == {"tick"}
    clean = out.query("SELECT clean_exit FROM processes")[0]["clean_exit"]
    assert clean == normal
    if not clean:
        assert "did not exit normally" in r.stderr
    assert not os.path.exists(out.prefix + ".spool")  # converted, then removed


def test_uncaught_cpp_exception(tmp_path):
    r = trace(tmp_path, ["--kernel-trace"], [os.path.join(TESTS, "throw"), "9"])
    assert r.returncode == 128 + signal.SIGABRT, r.stderr
    assert r.stdout == "throw: 9 kernels done\n"
    assert "nobody catches this" in r.stderr  # the runtime's message passes through
    out = only_process(tmp_path)
    assert [k["Kernel_Name"] for k in out.csv("kernel_trace.csv")] == ["thrown"] * 9
    assert out.query("SELECT clean_exit FROM processes") == [{"clean_exit": 0}]


def test_python_exception(tmp_path):
    script = tmp_path / "fails.py"
    script.write_text(
        "import ctypes\n"
        "markers = ctypes.CDLL('libgpuprof-markers.so.1')\n"
        "markers.gpuprof_mark(b'before the error')\n"
        "raise ValueError('the script fails')\n")
    r = trace(tmp_path, ["--marker-trace"], [sys.executable, str(script)])
    assert r.returncode == 1, r.stderr
    assert "ValueError: the script fails" in r.stderr  # the traceback passes through
    out = only_process(tmp_path)
    assert [m["Function"] for m in out.csv("marker_api_trace.csv")] == ["before the error"]
    assert out.query("SELECT clean_exit FROM processes") == [{"clean_exit": 1}]


def wait_for_spooled_kernels(tmp_path, count):
    """Until the one spool under tmp_path holds count kernels (its writer flushes every
    100 ms, later on a loaded machine): read from a copy, converted aside."""
    import shutil
    deadline = time.monotonic() + 30
    while True:
        spools = glob.glob(str(tmp_path / "**" / "*.spool"), recursive=True)
        probe = tmp_path.parent / (tmp_path.name + "-probe")
        shutil.rmtree(probe, ignore_errors=True)
        probe.mkdir()
        if len(spools) == 1:
            shutil.copy(spools[0], probe / "p.spool")
            r = run([GPUPROF, "convert", "-f", "csv", "p.spool"], cwd=probe)
            found = glob.glob(str(probe / "**" / "*kernel_trace.csv"), recursive=True)
            if r.returncode == 0 and found and \
                    sum(1 for _ in open(found[0])) - 1 >= count:
                shutil.rmtree(probe)
                return
        assert time.monotonic() < deadline, "the kernels never reached the spool"
        time.sleep(0.05)


def test_killed_from_outside(tmp_path, launcher):
    """A target that holds until gpuprof's own SIGTERM reaches it (forwarded)."""
    import subprocess
    p = subprocess.Popen([GPUPROF, "trace", "--kernel-trace", "--", launcher, "5", "hold"],
                         cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert p.stdout.readline() == "launcher: 5 kernels done\n"
    wait_for_spooled_kernels(tmp_path, 5)  # SIGTERM ends the program before a flush
    p.send_signal(signal.SIGTERM)
    _, err = p.communicate(timeout=60)
    assert p.returncode == 128 + signal.SIGTERM, err
    assert len(only_process(tmp_path).csv("kernel_trace.csv")) == 5


def test_children_traced_into_their_own_files(tmp_path, launcher, vcopy):
    r = trace(tmp_path, ["--kernel-trace"], [launcher, "2", "fork-exec:" + vcopy])
    assert r.returncode == 0, r.stderr
    found = outputs(tmp_path)
    assert len(found) == 2
    by_name = {}
    for out in found:
        names = [row["Kernel_Name"] for row in out.csv("kernel_trace.csv")]
        by_name[names[0]] = (out, len(names), set(names))
    assert by_name["tick"][1:] == (2, {"tick"})
    assert by_name["vecCopy"][1:] == (3, {"vecCopy"})
    parent, child = by_name["tick"][0], by_name["vecCopy"][0]
    assert child.query("SELECT ppid FROM processes")[0]["ppid"] == parent.pid


def test_concurrent_processes_through_a_shell(tmp_path, vcopy):
    script = f"{vcopy} -n 512 -b 64 -i 3 & {vcopy} -n 1024 -b 32 -i 5 & wait"
    r = trace(tmp_path, ["--kernel-trace", "-f", "csv"], ["sh", "-c", script])
    assert r.returncode == 0, r.stderr
    found = outputs(tmp_path)
    assert len(found) == 2  # the shell made no OpenCL call: no files of its own
    sizes = sorted((len(rows), rows[0]["Grid_Size_X"], rows[0]["Workgroup_Size_X"])
                   for rows in (o.csv("kernel_trace.csv") for o in found))
    assert sizes == [(3, "512", "64"), (5, "1024", "32")]


def test_fork_without_exec(tmp_path, launcher):
    """The child inherits the parent's unflushed records but must not write them; it
    records nothing of its own (OpenCL cannot be used after fork), so it has no files."""
    r = trace(tmp_path, ["--kernel-trace"], [launcher, "4", "fork-run"])
    assert r.returncode == 0, r.stderr
    out = only_process(tmp_path)
    ids = [int(r["Dispatch_Id"]) for r in out.csv("kernel_trace.csv")]
    assert sorted(ids) == [1, 2, 3, 4, 5]


def test_many_kernel_objects_keep_their_names(tmp_path, launcher):
    """Programs that create and release kernel objects as they go: every launch is
    named, far beyond the number of objects alive at once."""
    r = trace(tmp_path, ["--kernel-trace", "-f", "sqlite"], [launcher, "2", "churn:5000"])
    assert r.returncode == 0, r.stderr
    out = only_process(tmp_path)
    assert out.query("SELECT name, COUNT(*) AS n FROM kernels GROUP BY name") == [{"name": "tick", "n": 5002}]
    assert out.query("SELECT COUNT(*) AS n FROM gpuprof_dropped")[0]["n"] == 0


def test_transparency_under_trace(tmp_path):
    r = trace(tmp_path, ["--sys-trace"], [os.path.join(TESTS, "transparency")])
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.count("ok:") == 6


def test_stats_match_the_trace(tmp_path, busy):
    r = trace(tmp_path, ["--sys-trace", "--stats"], [busy, "-n", "2048", "-i", "2"])
    assert r.returncode == 0, r.stderr
    out = only_process(tmp_path)
    for stats_name in ("kernel_stats.csv", "memory_copy_stats.csv", "opencl_api_stats.csv",
                       "domain_stats.csv"):
        assert out.csv_header(stats_name) == STATS_HEADER
    durations = {}
    for row in out.csv("kernel_trace.csv"):
        durations.setdefault(row["Kernel_Name"], []).append(
            int(row["End_Timestamp"]) - int(row["Start_Timestamp"]))
    total = sum(sum(d) for d in durations.values())
    stats = out.csv("kernel_stats.csv")
    assert [s["Name"] for s in stats] == sorted(durations, key=lambda n: -sum(durations[n]))
    for s in stats:
        d = durations[s["Name"]]
        mean = sum(d) / len(d)
        assert int(s["Calls"]) == len(d)
        assert int(s["TotalDurationNs"]) == sum(d)
        assert int(s["MinNs"]) == min(d) and int(s["MaxNs"]) == max(d)
        assert abs(float(s["AverageNs"]) - mean) < 1e-3
        assert abs(float(s["Percentage"]) - 100.0 * sum(d) / total) <= 0.006
        std = (sum((x - mean) ** 2 for x in d) / len(d)) ** 0.5
        assert abs(float(s["StdDev"]) - std) < 1e-3 * max(1.0, std)
    domains = {r["Name"]: int(r["Calls"]) for r in out.csv("domain_stats.csv")}
    api_calls = len(out.csv("opencl_api_trace.csv"))
    # busy's buffers (--sys-trace follows allocations): 4 made by each of its 2 threads,
    # each released by the program; a free is recorded when PoCL destroys the object,
    # which for one a command still held (the mapped buffer's unmap) may come after the
    # program's end, so not every free need be seen; each seen frees a buffer made
    allocations = out.csv("memory_allocation_trace.csv")
    made = [a["Address"] for a in allocations if a["Operation"] == "MEMORY_ALLOCATION_ALLOCATE"]
    freed = [a["Address"] for a in allocations if a["Operation"] == "MEMORY_ALLOCATION_FREE"]
    assert len(made) == 8 and len(made) + len(freed) == len(allocations)
    assert len(freed) <= len(made) and all(made.count(f) >= freed.count(f) for f in freed)
    assert domains == {"KERNEL_DISPATCH": 12, "MEMORY_COPY": 20, "OPENCL_API": api_calls,
                       "MEMORY_ALLOCATION": len(allocations)}


def test_summary_on_stderr(tmp_path, vcopy):
    r = trace(tmp_path, ["--kernel-trace", "--summary", "-u", "usec"], [vcopy, "-n", "256", "-b", "64", "-i", "4"])
    assert r.returncode == 0, r.stderr
    assert "GPUPROF KERNEL_DISPATCH SUMMARY" in r.stderr and "times in usec" in r.stderr
    line = [l for l in r.stderr.splitlines() if l.startswith("| vecCopy")]
    assert len(line) == 1 and line[0].split("|")[3].strip() == "4"


def test_output_formats(tmp_path, vcopy):
    r = trace(tmp_path / "a", ["-f", "csv"], [vcopy, "-n", "64", "-b", "64"]) if (tmp_path / "a").mkdir() is None else None
    assert r.returncode == 0, r.stderr
    files = sorted(os.listdir(tmp_path / "a" / HOST))
    assert all(f.endswith(".csv") for f in files) and files
    (tmp_path / "b").mkdir()
    r = trace(tmp_path / "b", ["-f", "sqlite"], [vcopy, "-n", "64", "-b", "64"])
    assert r.returncode == 0, r.stderr
    files = os.listdir(tmp_path / "b" / HOST)
    assert len(files) == 1 and files[0].endswith("_results.db")


def test_output_placeholders(tmp_path, vcopy):
    env = {"OMPI_COMM_WORLD_RANK": "3", "OMPI_COMM_WORLD_SIZE": "4", "RUN_TAG": "alpha"}
    r = trace(tmp_path, ["-d", "out/%env{RUN_TAG}%", "-o", "rank%rank%of%size%_%pid%", "-f", "csv"],
              [vcopy, "-n", "64", "-b", "64"], env=env)
    assert r.returncode == 0, r.stderr
    files = os.listdir(tmp_path / "out" / "alpha")
    pids = {f.split("_")[1] for f in files}
    assert len(pids) == 1
    pid = pids.pop()
    assert sorted(files) == sorted(f"rank3of4_{pid}_{n}.csv" for n in ("agent_info", "kernel_trace"))


def test_truncate_kernels_keeps_plain_names(tmp_path, vcopy):
    r = trace(tmp_path, ["-T", "-f", "csv"], [vcopy, "-n", "64", "-b", "64", "-i", "2"])
    assert r.returncode == 0, r.stderr
    assert [row["Kernel_Name"] for row in only_process(tmp_path).csv("kernel_trace.csv")] == ["vecCopy"] * 2


def test_memory_cap_drops_and_counts(tmp_path, launcher):
    """A cap of one buffer: the application's thread takes it with its first API call,
    so gpuprof's collector gets none and every kernel record is dropped and counted."""
    r = trace(tmp_path, ["--runtime-trace", "--memory-allocation-trace=false", "--buffer-size",
                         "4096", "--buffer-limit", "4096"],
              [launcher, "3000", "exit:0"])
    assert r.returncode == 0, r.stderr
    out = only_process(tmp_path)
    assert out.query("SELECT COUNT(*) AS n FROM kernels")[0]["n"] == 0
    dropped = {row["reason"]: row["records"] for row in out.query("SELECT * FROM gpuprof_dropped")}
    assert dropped["memory cap reached"] == 3000
    assert "dropped while recording" in r.stderr
    # the advice that fits the reason (issue 13, item 16): the cap, not the buffer size
    assert "3000 records were dropped while recording: the memory cap was reached; " \
        "--buffer-limit raises it" in r.stderr
    assert out.query("SELECT value FROM gpuprof_metadata WHERE tag = 'dropped_records'")[0]["value"] == \
        str(sum(dropped.values()))


def test_small_buffer_loses_nothing(tmp_path, launcher):
    """More kernels complete between two flushes than the buffer holds: the writer drains
    and collects again instead of dropping."""
    r = trace(tmp_path, ["--kernel-trace", "--buffer-size", "16K", "-f", "sqlite"],
              [launcher, "20000", "exit:0"])
    assert r.returncode == 0, r.stderr
    out = only_process(tmp_path)
    assert out.query("SELECT COUNT(*) AS n FROM kernels")[0]["n"] == 20000
    assert out.query("SELECT COUNT(*) AS n FROM gpuprof_dropped")[0]["n"] == 0


def test_gpuprof_killed_takes_the_program_with_it(tmp_path, launcher):
    """gpuprof killed by SIGKILL (a scheduler's time limit): the program gets SIGTERM, as
    from a gpuprof that could forward it, and its spool stays for `gpuprof convert`."""
    import subprocess
    p = subprocess.Popen([GPUPROF, "trace", "--kernel-trace", "--", launcher, "5", "hold"],
                         cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert p.stdout.readline() == "launcher: 5 kernels done\n"
    with open(f"/proc/{p.pid}/task/{p.pid}/children") as f:
        (program,) = [int(pid) for pid in f.read().split()]
    wait_for_spooled_kernels(tmp_path, 5)  # past the flush of the 5 kernels
    p.kill()
    p.communicate(timeout=60)
    for _ in range(500):
        try:
            with open(f"/proc/{program}/stat") as f:
                if f.read().split(") ")[1].startswith("Z"):
                    break
        except FileNotFoundError:
            break
        time.sleep(0.01)
    else:
        os.kill(program, signal.SIGKILL)
        raise AssertionError("the program outlived gpuprof")
    spools = glob.glob(str(tmp_path / "**" / "*.spool"), recursive=True)
    assert len(spools) == 1
    r = run([GPUPROF, "convert", spools[0]], cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert len(only_process(tmp_path).csv("kernel_trace.csv")) == 5


def interrupt_while_writing(tmp_path, launcher, signals):
    """Runs a program of 100,000 kernels and sends gpuprof `signals` SIGINTs once it is
    writing the outputs; returns (exit status, stderr)."""
    import subprocess
    # the second interrupt ends gpuprof at once, its database thread still running: by
    # design, so ThreadSanitizer is told not to call that thread leaked
    env = dict(os.environ, TSAN_OPTIONS=os.environ.get("TSAN_OPTIONS", "") + ":report_thread_leaks=0")
    p = subprocess.Popen([GPUPROF, "trace", "--kernel-trace", "--", launcher, "100000", "exit:0"],
                         cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                         text=True, env=env)
    err = []
    for line in p.stderr:  # the recording's description: post-processing has begun
        err.append(line)
        if " 100000 kernels" in line:
            break
    p.send_signal(signal.SIGINT)
    if signals == 2:
        for line in p.stderr:
            err.append(line)
            if "interrupt again" in line:
                break
        p.send_signal(signal.SIGINT)
    _, rest = p.communicate(timeout=120)
    return p.returncode, "".join(err) + rest


def test_one_interrupt_while_writing_outputs_lets_them_finish(tmp_path, launcher):
    status, err = interrupt_while_writing(tmp_path, launcher, 1)
    assert status == 0, err
    assert "the program has ended; writing its outputs" in err
    assert len(only_process(tmp_path).csv("kernel_trace.csv")) == 100000
    assert not glob.glob(str(tmp_path / "**" / "*.partial"), recursive=True)


def test_second_interrupt_stops_and_keeps_the_spool(tmp_path, launcher):
    status, err = interrupt_while_writing(tmp_path, launcher, 2)
    assert status == 128 + signal.SIGINT, err
    assert "stopped: the spools not yet converted are kept" in err
    # the outputs it was writing are removed, not left half written beside the spool
    assert not glob.glob(str(tmp_path / "**" / "*.partial"), recursive=True)
    spools = glob.glob(str(tmp_path / "**" / "*.spool"), recursive=True)
    assert len(spools) == 1
    r = run([GPUPROF, "convert", spools[0]], cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert len(only_process(tmp_path).csv("kernel_trace.csv")) == 100000


def test_files_of_an_earlier_run_are_named(tmp_path, vcopy):
    # 17: an old kernel_stats.csv beside a new trace is pointed out, not taken for new
    r = trace(tmp_path, ["--kernel-trace", "--stats", "-o", "run"], [vcopy])
    assert r.returncode == 0, r.stderr
    assert "not written by this run" not in r.stderr
    r = trace(tmp_path, ["--kernel-trace", "-o", "run"], [vcopy])
    assert r.returncode == 0, r.stderr
    (line,) = [l for l in r.stderr.splitlines() if "not written by this run" in l]
    assert line.startswith(f"gpuprof: 2 files in '{tmp_path}' named like these outputs")
    assert "'run_kernel_stats.csv'" in line and "'run_domain_stats.csv'" in line
    r = trace(tmp_path, ["--kernel-trace", "--stats", "-o", "run"], [vcopy])
    assert r.returncode == 0 and "not written by this run" not in r.stderr, r.stderr


def test_convert_in_place_never_names_its_input_as_an_earlier_runs(tmp_path, vcopy):
    # 61: `convert DIR/X_results.db -f json` beside the database: the input is what the
    # outputs are made from, never a stale file to remove; a stray older file still is
    r = trace(tmp_path, ["--kernel-trace", "-f", "sqlite", "-o", "run"], [vcopy])
    assert r.returncode == 0, r.stderr
    r = run([GPUPROF, "convert", "run_results.db", "-f", "json"], cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "not written by this run" not in r.stderr, r.stderr
    assert (tmp_path / "run_results.json").exists()
    r = run([GPUPROF, "convert", str(tmp_path / "run_results.db"), "-f", "sqlite,csv,json"],
            cwd=tmp_path)
    assert r.returncode == 0 and "not written by this run" not in r.stderr, r.stderr
    (tmp_path / "run_old.txt").write_text("")
    os.utime(tmp_path / "run_old.txt", (1, 1))
    r = run([GPUPROF, "convert", "run_results.db", "-f", "json"], cwd=tmp_path)
    (line,) = [l for l in r.stderr.splitlines() if "not written by this run" in l]
    assert "'run_old.txt'" in line and "results.db" not in line, line


def traced_program_that_stays(tmp_path, ignored):
    """gpuprof trace of a Python program that prints "ready" and loops, with a handler
    that does nothing for each signal in ignored (handlers and a loop: a sanitizer's
    runtime in the program runs a handler of its own even for an ignored signal, which
    cuts a sleep short); returns the process once the program is ready."""
    import subprocess
    program = "import signal, time\n" + "".join(
        f"signal.signal(signal.{name}, lambda *a: None)\n" for name in ignored) + \
        "print('ready', flush=True)\nwhile True: time.sleep(1)\n"
    p = subprocess.Popen([GPUPROF, "trace", "--kernel-trace", "--", sys.executable, "-c",
                          program], cwd=tmp_path, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    assert p.stdout.readline() == "ready\n"
    return p


def interrupt(p, expected):
    """Sends p SIGINT and checks the line gpuprof says. A pause first: two SIGINTs close
    together are one (a standard signal is not queued; ThreadSanitizer's runtime delays
    handlers enough for it)."""
    time.sleep(0.3)
    p.send_signal(signal.SIGINT)
    line = p.stderr.readline()
    assert line.startswith("gpuprof: " + expected), line


def rest_of_stderr(p):
    """Waits for p and reads the rest of its stderr through the reader readline() used
    (communicate() would read past what it already took from the pipe)."""
    p.wait(timeout=60)
    return p.stderr.read()


def test_interrupts_escalate_to_sigterm_then_sigkill(tmp_path):
    # 44: a program that ignores SIGINT and SIGTERM: the first interrupt is passed on,
    # the second sends SIGTERM, the third SIGKILL, each said; the signal is named
    p = traced_program_that_stays(tmp_path, ["SIGINT", "SIGTERM"])
    interrupt(p, "interrupt: passed to the program (Ctrl-C again sends it SIGTERM)")
    interrupt(p, "second interrupt: sending the program SIGTERM (Ctrl-C again sends SIGKILL)")
    interrupt(p, "third interrupt: sending the program SIGKILL")
    err = rest_of_stderr(p)
    assert p.returncode == 128 + signal.SIGKILL, err
    assert "gpuprof: the program (pid " in err and "was killed by SIGKILL (Killed)" in err


def test_a_program_that_ends_at_sigterm_ends_at_the_second_interrupt(tmp_path):
    p = traced_program_that_stays(tmp_path, ["SIGINT"])
    interrupt(p, "interrupt: passed to the program")
    interrupt(p, "second interrupt: sending the program SIGTERM")
    err = rest_of_stderr(p)
    assert p.returncode == 128 + signal.SIGTERM, err
    assert "was killed by SIGTERM (Terminated)" in err and "third interrupt" not in err
