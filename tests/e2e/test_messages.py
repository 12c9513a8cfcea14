"""Messages a new user meets (issue 44): each true and specific, naming what happened."""
import csv
import glob
import io
import os
import sqlite3
import time
from conftest import GPUPROF, TESTS, run, trace


def test_a_second_process_under_the_same_name_is_said_and_not_called_an_earlier_run(tmp_path, vcopy):
    # two processes of one run, -o without %pid%: the second is named <name>_<pid>, said
    # once; its files are not "an earlier run's"
    r = trace(tmp_path, ["--kernel-trace", "-o", "run"], ["sh", "-c", f"{vcopy} & {vcopy}; wait"])
    assert r.returncode == 0, r.stderr
    assert "not written by this run" not in r.stderr, r.stderr
    notes = [l for l in r.stderr.splitlines() if "another process of the run" in l]
    assert len(notes) == 1, r.stderr
    pid = notes[0].split("(pid ")[1].split(")")[0]
    assert notes[0].endswith(f"its outputs are named '{tmp_path}/run_{pid}_*'")
    assert os.path.exists(tmp_path / f"run_{pid}_kernel_trace.csv")
    assert os.path.exists(tmp_path / "run_kernel_trace.csv")


def test_unfinished_outputs_of_a_stopped_run_are_removed_by_the_next_conversion(tmp_path, vcopy):
    for name in ("run_results.pftrace.partial", "run_results.json.partial"):
        (tmp_path / name).write_bytes(b"\0" * 4096)
    old = time.time() - 60
    os.utime(tmp_path / "run_results.pftrace.partial", (old, old))
    os.utime(tmp_path / "run_results.json.partial", (old, old))
    r = trace(tmp_path, ["--kernel-trace", "-o", "run"], [vcopy])
    assert r.returncode == 0, r.stderr
    assert not glob.glob(str(tmp_path / "*.partial"))
    assert (f"gpuprof: removed 2 unfinished outputs ('*.partial') that an earlier, stopped "
            f"gpuprof left in '{tmp_path}'") in r.stderr
    assert "not written by this run" not in r.stderr


def test_a_program_that_cannot_start_is_said_first_and_alone(tmp_path):
    # 44: not "no tracing option given: tracing kernels" first
    for command, status, reason in ((["./nosuch"], 127, "No such file or directory"),
                                    (["nosuch-anywhere"], 127, "No such file or directory")):
        r = run([GPUPROF, "trace", "--", *command], cwd=tmp_path)
        assert r.returncode == status, r.stderr
        assert r.stderr == f"gpuprof: trace: cannot run '{command[0]}': {reason}\n"
        assert os.listdir(tmp_path) == []
    (tmp_path / "plain").write_text("not a program\n")
    r = run([GPUPROF, "sys", "--", "./plain"], cwd=tmp_path)
    assert r.returncode == 126
    assert r.stderr == "gpuprof: sys: cannot run './plain': Permission denied\n"


def test_a_process_lasts_its_life_and_says_what_was_recorded(tmp_path, vcopy):
    # 44: under trace recording begins at the first OpenCL call; the process's duration
    # is still its life (from when it began), the recorded part beside it
    r = trace(tmp_path, ["--kernel-trace", "-o", "run"],
              ["sh", "-c", f"sleep 0.3; exec {vcopy}"])
    assert r.returncode == 0, r.stderr
    with sqlite3.connect(tmp_path / "run_results.db") as db:
        start, end, recording, realtime = db.execute(
            "SELECT start, end, recording_start, realtime_start FROM processes").fetchone()
    # began before the 0.3 s sleep (the kernel's clock tick, 10 ms, is its resolution)
    assert recording - start >= 0.29e9, (start, recording)
    assert start < recording < end
    r = run([GPUPROF, "summary", "--format", "csv", "-u", "msec", str(tmp_path / "run_results.db")],
            cwd=tmp_path)
    text = r.stdout.split("# PROCESSES AND RANKS\n")[1].split("\n\n")[0]
    (row,) = csv.DictReader(io.StringIO(text))
    assert float(row["Duration (msec)"]) == round((end - start) / 1e6, 3)
    assert float(row["Recorded (msec)"]) == round((end - recording) / 1e6, 3)


def test_a_work_group_size_the_runtime_chose_is_not_written_as_0(tmp_path):
    # 44: no local size given, the runtime chose one and does not say which: empty
    # (unknown), never 0
    r = trace(tmp_path, ["--kernel-trace", "-o", "run"], [os.path.join(TESTS, "chosen-size")])
    assert r.returncode == 0, r.stderr
    with open(tmp_path / "run_kernel_trace.csv") as f:
        rows = {row["Kernel_Name"]: row for row in csv.DictReader(f)}
    sizes = {name: tuple(row[f"Workgroup_Size_{d}"] for d in "XYZ") for name, row in rows.items()}
    assert sizes == {"free_size": ("", "", ""), "given_size": ("8", "1", "1")}
