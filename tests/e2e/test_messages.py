"""Messages a new user meets (issue 44): each true and specific, naming what happened."""
import glob
import os
import time
from conftest import GPUPROF, run, trace


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
