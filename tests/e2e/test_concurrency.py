"""Concurrency: many threads launching at once on several queues, a child of fork()
recording while its parent launches, a traced program that itself runs gpuprof, and two
traced programs writing to one directory at once."""
import os
import subprocess

import pytest

from conftest import GPUPROF, SAMPLES, TESTS, outputs, trace

THREADS, KERNELS, QUEUES = 32, 1000, 4


def test_32_threads_launching_1000_kernels_each(tmp_path):
    r = trace(tmp_path, ["--runtime-trace", "-f", "sqlite"],
              [os.path.join(TESTS, "threads"), str(THREADS), str(KERNELS), str(QUEUES)])
    assert r.returncode == 0, r.stderr
    (out,) = outputs(str(tmp_path))
    (totals,) = out.query(
        "SELECT COUNT(*) AS n, COUNT(DISTINCT dispatch_id) AS dispatches, "
        "COUNT(DISTINCT corr_id) AS correlations, MIN(dispatch_id) AS first, "
        "MAX(dispatch_id) AS last FROM kernels")
    n = THREADS * KERNELS
    assert totals == {"n": n, "dispatches": n, "correlations": n, "first": 1, "last": n}
    per_thread = out.query("SELECT tid, COUNT(*) AS n FROM kernels GROUP BY tid")
    assert len(per_thread) == THREADS and {row["n"] for row in per_thread} == {KERNELS}
    per_queue = out.query("SELECT queue_id, COUNT(*) AS n FROM kernels GROUP BY queue_id")
    assert sorted(row["n"] for row in per_queue) == [n // QUEUES] * QUEUES
    # each kernel's enqueue is an API call of the same thread, and nothing was lost
    (joined,) = out.query(
        "SELECT COUNT(*) AS n FROM kernels k JOIN regions r USING (corr_id) "
        "WHERE r.name = 'clEnqueueNDRangeKernel' AND r.tid = k.tid")
    assert joined == {"n": n}
    assert out.query("SELECT COUNT(*) AS n FROM gpuprof_dropped") == [{"n": 0}]


def test_forked_child_records_while_the_parent_launches(tmp_path):
    """fork() without exec: the child records 1000 ranges of its own into files of its
    own while the parent launches 1000 kernels; neither hangs, neither gets the other's
    records, the parent's unflushed records at the fork are written once."""
    if os.environ.get("GPUPROF_SANITIZER") == "thread":
        pytest.skip("ThreadSanitizer cannot follow a thread started after a multi-threaded fork")
    r = trace(tmp_path, ["--kernel-trace", "--marker-trace", "-f", "sqlite"],
              [os.path.join(TESTS, "markers"), "fork"])
    assert r.returncode == 0, r.stderr
    parent, child = sorted(outputs(str(tmp_path)),
                           key=lambda o: o.query("SELECT pid FROM processes")[0]["pid"])
    (p,) = parent.query("SELECT pid, ppid FROM processes")
    (c,) = child.query("SELECT pid, ppid FROM processes")
    assert c["ppid"] == p["pid"]
    assert parent.query("SELECT COUNT(*) AS n, COUNT(DISTINCT dispatch_id) AS d, "
                        "SUM(range_name = 'parent') AS in_range FROM kernels") == [
        {"n": 1002, "d": 1002, "in_range": 1000}]
    assert parent.query("SELECT name, COUNT(*) AS n FROM markers GROUP BY name") == [
        {"name": "parent", "n": 1000}]
    assert child.query("SELECT COUNT(*) AS n FROM kernels") == [{"n": 0}]
    assert child.query("SELECT name, COUNT(*) AS n FROM markers GROUP BY name") == [
        {"name": "child", "n": 1000}]
    assert child.query("SELECT name FROM threads") == [{"name": "child"}]


def test_a_traced_program_that_runs_gpuprof(tmp_path):
    """The inner gpuprof records its own target into its own directory; the outer one
    records nothing of it twice (the inner target reports to the inner gpuprof)."""
    vcopy = os.path.join(SAMPLES, "vcopy")
    r = trace(tmp_path, ["--kernel-trace", "-d", "outer"],
              [GPUPROF, "trace", "--kernel-trace", "-d", str(tmp_path / "inner"), "--", vcopy])
    assert r.returncode == 0, r.stderr
    inner = outputs(str(tmp_path / "inner"))
    assert len(inner) == 1 and len(inner[0].csv("kernel_trace.csv")) == 1
    assert outputs(str(tmp_path / "outer")) == []
    assert "no process used OpenCL, CUDA or MPI" in r.stderr


def test_two_traced_programs_into_one_prefix(tmp_path):
    """The same -o for two runs at once: neither overwrites the other."""
    vcopy = os.path.join(SAMPLES, "vcopy")
    command = [GPUPROF, "trace", "--kernel-trace", "-d", "out", "-o", "same", "--", vcopy,
               "-i", "4"]
    first = subprocess.Popen(command, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    second = subprocess.Popen(command, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    for p in (first, second):
        _, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
    found = outputs(str(tmp_path / "out"))
    assert len(found) == 2
    assert sorted(os.path.basename(o.prefix) for o in found)[0] == "same"
    for out in found:
        assert len(out.csv("kernel_trace.csv")) == 4
        assert out.query("SELECT COUNT(*) AS n FROM kernels") == [{"n": 4}]


def test_commands_held_back_on_in_order_and_out_of_order_queues(tmp_path):
    """The collector reads an in-order queue's commands up to the first not complete
    (those after it cannot have completed): a kernel held by a user event for 0.6 s with
    50 kernels after it on an in-order queue, the same on an out-of-order queue (whose 50
    may run before the held one), 50 more on each 0.3 s later (behind commands the
    collector found done and one it did not), and 300 more in-order queues each with a
    held kernel (more queues than the collector keeps lists for). Every kernel is
    recorded, each on its queue, none lost; the in-order queue's after its held one (when
    the out-of-order queue ran its kernels is the runtime's choice, and not asserted)."""
    r = trace(tmp_path, ["--kernel-trace", "-f", "sqlite"],
              [os.path.join(TESTS, "queue-order"), "50", "300", "300"])
    assert r.returncode == 0, r.stderr
    ooo = "ooo=1" in r.stdout
    enqueued = int(r.stdout.split("done ")[1])
    assert enqueued == 1 + 100 + (101 if ooo else 0) + 300
    (out,) = outputs(str(tmp_path))
    assert out.query("SELECT COUNT(*) AS n FROM kernels")[0]["n"] == enqueued
    assert out.query("SELECT COUNT(*) AS n FROM gpuprof_dropped")[0]["n"] == 0
    per_queue = out.query("SELECT queue_id, COUNT(*) AS n FROM kernels "
                          "GROUP BY queue_id ORDER BY queue_id")
    assert len(per_queue) == 1 + (1 if ooo else 0) + 300
    assert [q["n"] for q in per_queue[2 if ooo else 1:]] == [1] * 300
    held = {row["queue_id"]: row for row in out.query(
        "SELECT queue_id, start, end FROM kernels WHERE name = 'held'")}
    after = out.query("SELECT queue_id, MIN(start) AS first, MAX(end) AS last, COUNT(*) AS n "
                      "FROM kernels WHERE name = 'after' GROUP BY queue_id ORDER BY queue_id")
    assert [a["n"] for a in after] == [100] * (2 if ooo else 1)
    in_order = after[0]  # the first queue made: in order, its 100 after the held one
    assert in_order["first"] >= held[in_order["queue_id"]]["end"]
