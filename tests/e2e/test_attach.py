"""gpuprof sys --pid: a process started outside gpuprof (tests/e2e/attached.c, and the
Python program tests/e2e/stuck.py), sampled from outside for a while into sys's outputs.
Premises are the CPU time the programs measure themselves (their per-function split, a
thread's and a child's CPU seconds) and the process's CPU time in /proc: the samples'
shares within 5 points of the program's own, their counts within 10 % of the rate times
that CPU time. The process goes on as it was when gpuprof ends, SIGKILL included."""
import glob
import json
import os
import re
import shutil
import signal
import subprocess
import time

import pytest

from conftest import GPUPROF, TESTS, outputs, preload, run
from test_sampling import assert_rate, assert_split

ATTACHED = os.path.join(TESTS, "attached")
SPLIT = os.path.join(TESTS, "split")
STUCK_PY = os.path.join(os.path.dirname(os.path.abspath(__file__)), "stuck.py")
RATE = 300
NO_METRICS = ["--no-host-metrics", "--no-device-metrics"]


@pytest.fixture
def attached():
    p = subprocess.Popen([ATTACHED], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert p.stdout.readline() == "ready\n"
    yield p
    if p.poll() is None:
        p.kill()
        p.wait()


def command(p, line):
    """Sends a command to attached.c and returns the line it answers."""
    p.stdin.write(line + "\n")
    p.stdin.flush()
    return p.stdout.readline()


def finish(p):
    out, _ = p.communicate("quit\n", timeout=30)
    assert p.returncode == 5
    words = out.split()
    assert words[0] == "seventy" and words[2] == "thirty", out
    return float(words[1]), float(words[3])


def sampled(stderr):
    """The samples and the CPU seconds gpuprof says the process used while sampled (its
    /proc CPU time at the start and the end of sampling, in clock ticks)."""
    m = re.search(r": (\d+) call-stack samples \(one per 1/(\d+) s of CPU time in user "
                  r"space\) in its ([0-9.]+) s of CPU time meanwhile", stderr)
    assert m, stderr
    return int(m.group(1)), int(m.group(2)), float(m.group(3))


def folded(out):
    with open(out.path("stacks.folded")) as f:
        return [(line.rsplit(" ", 1)[0].split(";"), int(line.rsplit(" ", 1)[1])) for line in f]


def samples_in(stacks, function):
    return sum(n for frames, n in stacks if function in frames)


def start_sys(tmp_path, pid, *options):
    """gpuprof sys --pid, running; returns it once it said it samples."""
    s = subprocess.Popen([GPUPROF, "sys", "--pid", str(pid), "-d", "out", *options],
                         cwd=tmp_path, stderr=subprocess.PIPE, text=True)
    line = s.stderr.readline()
    assert "sys: sampling process" in line, line + s.stderr.read()
    return s


def test_shares_and_rate_against_the_programs_own_measure(tmp_path, attached):
    """2 s of the worker thread at 1,000 samples a second: seventy() and thirty() in the
    samples within 5 points of the CPU time the program measured in each; the samples
    within 10 % of the rate times the process's CPU time while sampled (what gpuprof says
    it read in /proc, and checks here against the samples in the outputs). The process
    goes on and ends its own way."""
    r = run([GPUPROF, "sys", "--pid", str(attached.pid), "--duration", "2", "-d", "out",
             "--sampling-freq", "1000", *NO_METRICS], cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "stopped sampling process" in r.stderr and "it goes on as it was" in r.stderr
    said, rate, seconds = sampled(r.stderr)
    (out,) = outputs(str(tmp_path / "out"))
    assert out.pid == attached.pid
    stacks = folded(out)
    total = sum(n for _, n in stacks)
    seventy, thirty = samples_in(stacks, "seventy"), samples_in(stacks, "thirty")
    measured_seventy, measured_thirty = finish(attached)
    share = seventy / (seventy + thirty)
    measured = measured_seventy / (measured_seventy + measured_thirty)
    print(f"seventy {share:.3f} of the samples, {measured:.3f} of the CPU time measured; "
          f"{total} samples for {seconds:.2f} s of CPU time")
    assert (said, rate) == (total, 1000)
    assert_split(seventy, thirty, measured)
    assert abs(total - rate * seconds) <= 0.1 * rate * seconds, (total, seconds)
    # the thread's name, as the program set it
    names = {row["tid"]: row["name"] for row in out.query("SELECT tid, name FROM threads")}
    assert "worker" in names.values(), names
    # nearly all of the worker's samples in the two; the process's other threads (a
    # sanitizer runtime's own, which takes a share of the CPU that depends on the
    # machine: 12 % of the samples under ThreadSanitizer on one) are not the worker's
    (worker,) = [tid for tid, name in names.items() if name == "worker"]
    of_worker = out.query(f"SELECT COUNT(*) AS n FROM samples WHERE tid = {worker}")[0]["n"]
    assert seventy + thirty >= 0.9 * of_worker, (seventy, thirty, of_worker)


def test_wall_clock_sampling_from_outside(tmp_path, attached):
    """61: --sampling-realtime with --pid samples the threads that wait, as inside a
    process gpuprof started: the main thread, blocked in read() on its stdin for the whole
    time sampled, gets 300 samples a second of it (within 10 %), each ending in the
    call it waits in; the spinning worker is sampled on its CPU time as before."""
    r = run([GPUPROF, "sys", "--pid", str(attached.pid), "--duration", "1", "-d", "out",
             "--sampling-realtime", *NO_METRICS], cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "and of each thread's waiting" in r.stderr, r.stderr
    seconds = float(re.search(r"after ([0-9.]+) s", r.stderr).group(1))
    (out,) = outputs(str(tmp_path / "out"))
    rows = out.query("SELECT tid, COUNT(*) AS n FROM samples GROUP BY tid")
    main = {x["tid"]: x["n"] for x in rows}.get(attached.pid, 0)
    assert abs(main - RATE * seconds) <= 0.1 * RATE * seconds, (main, seconds, rows)
    stacks = folded(out)
    waits = sum(n for frames, n in stacks if frames[-1] == "[off-CPU: read]")
    assert waits >= 0.9 * main, stacks
    assert samples_in(stacks, "seventy") + samples_in(stacks, "thirty") > 0
    # a process started meanwhile that only waits (a sleep) is found and sampled too
    (tmp_path / "later").mkdir()
    s = start_sys(tmp_path / "later", attached.pid, "--sampling-realtime", *NO_METRICS)
    assert command(attached, "exec /bin/sleep 0.6") == "exec 0\n"
    s.send_signal(signal.SIGINT)
    _, err = s.communicate(timeout=60)
    assert s.returncode == 0, err
    found = {o.pid: o for o in outputs(str(tmp_path / "later" / "out"))}
    slept = [o for pid, o in found.items() if pid != attached.pid]
    assert len(slept) == 1, sorted(found)  # the child, whatever image it was first seen in
    in_sleep = sum(n for frames, n in folded(slept[0])
                   if frames[-1] == "[off-CPU: clock_nanosleep]")
    assert in_sleep >= 0.5 * RATE * 0.6, folded(slept[0])
    finish(attached)


# every option of gpuprof sys, as --pid meets it: applied, or refused with its reason
# (exit 2, the option named); a new option must be added to one side
PID_APPLIES = {
    "--sample": [], "--sampling-freq": ["500"], "--sampling-stack-size": ["8K"],
    "--sampling-realtime": [], "--gil": [], "--host-metrics": [], "--device-metrics": [],
    "--sampling-interval": ["20"], "--output-directory": ["out2"], "--output-file": ["x"],
    "--output-format": ["json"], "--stats": [], "--summary": [], "--summary-units": ["msec"],
    "--keep-spool": [], "--duration": ["0.1"], "--plugin": ["perfetto"], "--trace": [],
    "--profile": [], "--include": ["all"],
}
PID_REFUSED = {
    "--kernel-trace": [], "--memory-copy-trace": [], "--memory-allocation-trace": [],
    "--opencl-trace": [], "--cuda-runtime-trace": [], "--cuda-driver-trace": [],
    "--marker-trace": [], "--torch-trace": [], "--mpi-trace": [], "--nccl-trace": [],
    "--rccl-trace": [], "--runtime-trace": [], "--sys-trace": [], "--launch-stacks": [],
    "--launch-stack-size": ["8K"], "--pmc": ["sm__cycles_elapsed.avg"],
    "--pmc-set": ["roofline"], "--pmc-multiplex": ["kernel"], "--hip-trace": [],
    "--hsa-trace": [],
    "--roctx-trace": [], "--pc-sampling-beta-enabled": [],
    "--pc-sampling-method": ["stochastic"], "--pc-sampling-unit": ["cycles"],
    "--pc-sampling-interval": ["10"], "--selected-regions": [],
    "--collection-period": ["0:1:1"], "--collection-period-unit": ["msec"],
    "--kernel-include-regex": ["a"], "--kernel-exclude-regex": ["a"],
    "--kernel-iteration-range": ["[1]"], "--nvtx-domain-include": ["a"],
    "--nvtx-domain-exclude": ["a"], "--nvtx-capture": ["step"], "--cuda-graph-trace": ["graph"],
    "--truncate-kernels": [],
    "--mangled-kernels": [],
    "--kernel-rename": [], "--buffer-size": ["1M"], "--buffer-limit": ["64M"],
    "--input": ["jobs.yaml"], "--config": ["c.yaml"], "--preset": ["perfetto"],
}
PID_OTHER = {"--pid", "--help", "--version"}  # what --pid is; what prints and exits


def test_every_sys_option_applies_under_pid_or_is_refused(tmp_path, attached):
    """61: `sys --pid` with each option sys has: it runs (exit 0) or says why the option
    cannot apply (exit 2, naming it); none is accepted and left undone."""
    h = run([GPUPROF, "sys", "--help"], cwd=tmp_path)
    listed = set(re.findall(r"^\s+(?:-\w, )?(--[a-z0-9-]+)", h.stdout, re.M))
    assert listed == set(PID_APPLIES) | set(PID_REFUSED) | PID_OTHER, \
        listed ^ (set(PID_APPLIES) | set(PID_REFUSED) | PID_OTHER)
    (tmp_path / "jobs.yaml").write_text("jobs:\n  - kernel-trace: true\n")
    (tmp_path / "c.yaml").write_text("stats: true\n")
    for option, values in PID_REFUSED.items():
        r = run([GPUPROF, "sys", "--pid", str(attached.pid), "--duration", "0.1",
                 *NO_METRICS, option, *values], cwd=tmp_path)
        assert r.returncode == 2 and option in r.stderr, (option, r.returncode, r.stderr)
    for option, values in PID_APPLIES.items():
        extra = [] if option == "--duration" else ["--duration", "0.1"]
        r = run([GPUPROF, "sys", "--pid", str(attached.pid), *extra, "-d", "out",
                 option, *values], cwd=tmp_path)
        assert r.returncode == 0, (option, r.stderr)
        assert "stopped sampling process" in r.stderr, (option, r.stderr)
    finish(attached)


def test_the_reports_series_span_the_time_sampled(tmp_path, attached):
    """61: the report draws a process's metric series along the window they were sampled
    in (here 1 s of a process that ran 1 s before), not along its whole life."""
    time.sleep(1)
    r = run([GPUPROF, "sys", "--pid", str(attached.pid), "--duration", "1", "-d", "out",
             "--no-sample", "--no-device-metrics", "-f", "sqlite", "html"], cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    (page,) = glob.glob(str(tmp_path / "out" / "**" / "*_report.html"), recursive=True)
    html = open(page).read()
    rows = re.findall(r'<td class="name">([^<]*)</td>.*?<polyline [^>]*points="([^"]*)"', html)
    xs = [[int(p.split(",")[0]) for p in points.split()] for name, points in rows
          if name == f"process {attached.pid} RSS"]
    assert len(xs) == 1 and len(xs[0]) >= 10, rows
    # from the first reading to within a reading or two of the window's end (240 px)
    assert xs[0][0] <= 5 and xs[0][-1] >= 216, xs
    finish(attached)


def test_threads_and_processes_started_meanwhile(tmp_path, attached):
    """A thread started while attached and a child process forked meanwhile: each has
    its samples (0.3 s of CPU time each, within 10 % of the rate), the child in its own
    outputs, named as the process."""
    s = start_sys(tmp_path, attached.pid, *NO_METRICS)
    late = command(attached, "thread").split()
    forked = command(attached, "fork").split()
    assert late[0] == "late" and forked[:2] == ["child", "3"]
    s.send_signal(signal.SIGINT)
    _, err = s.communicate(timeout=60)
    assert s.returncode == 0, err
    assert "(interrupted)" in err
    found = {o.pid: o for o in outputs(str(tmp_path / "out"))}
    assert attached.pid in found and len(found) == 2, sorted(found)
    (child_pid,) = [pid for pid in found if pid != attached.pid]
    parent, child = folded(found[attached.pid]), folded(found[child_pid])
    # counted by thread and process (a sanitizer's runtime can stop some stacks' unwinding
    # short of the function)
    [late_thread] = found[attached.pid].query(
        "SELECT COUNT(*) AS n FROM samples s JOIN threads t ON t.tid = s.tid AND "
        "t.name = 'late'")
    # each against its CPU time, as the program measured it
    assert_rate(late_thread["n"], float(late[1]), RATE)
    child_samples = found[child_pid].query("SELECT COUNT(*) AS n FROM samples")[0]["n"]
    assert_rate(child_samples, float(forked[2]), RATE)
    assert samples_in(child, "child_spin") >= 0.8 * child_samples
    assert samples_in(parent, "child_spin") == 0 and samples_in(child, "late_worker") == 0
    finish(attached)


def test_a_process_that_execs_meanwhile(tmp_path):
    """A child that executes another program while sampled (split fork: 0.3 s in its
    main, and a child of its own for 0.3 s): its samples are named from the program it
    became (module split), not from the one it was, from the exec on. (A sanitized build's
    split needs its sanitizer's runtime preloaded, which gpuprof trace would do: the
    program is given it here.)"""
    env = dict(os.environ)
    if os.environ.get("GPUPROF_SANITIZER"):
        env["LD_PRELOAD"] = preload("").rstrip(":")
    attached = subprocess.Popen([ATTACHED], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                text=True, env=env)
    assert attached.stdout.readline() == "ready\n"
    s = start_sys(tmp_path, attached.pid, *NO_METRICS)
    assert command(attached, f"exec {SPLIT} fork").startswith("split: child exited 3;")
    assert attached.stdout.readline() == "exec 3\n"
    s.send_signal(signal.SIGINT)
    _, err = s.communicate(timeout=60)
    assert s.returncode == 0, err
    found = {o.pid: o for o in outputs(str(tmp_path / "out"))}
    # attached, split (its child, which executed it) and split's child, by their parents
    # and their samples, which are split's main's; under a sanitizer, processes its
    # runtime starts beside them (LeakSanitizer's tracer in each at its exit), each a child
    # of one of ours that runs none of split's main
    processes = {pid: out.query("SELECT ppid FROM processes")[0]["ppid"]
                 for pid, out in found.items()}
    totals, samples = {}, {}
    for pid, out in found.items():
        if pid == attached.pid:
            continue
        p = run([GPUPROF, "profile", "--format", "json", "--limit", "0", out.path("results.db")],
                cwd=tmp_path)
        assert p.returncode == 0, p.stderr
        # (a sanitizer's helper process may have no sample: no table, said on stderr)
        (table,) = json.loads(p.stdout) if p.stdout.strip() else ({"rows": []},)
        totals[pid] = {(row[0], row[1]): row[4] for row in table["rows"]}
        samples[pid] = out.query("SELECT COUNT(*) AS n FROM samples")[0]["n"]
    ran_split = {pid for pid in totals if totals[pid].get(("main", "split"), 0) > 0}
    helpers = set(totals) - ran_split
    assert not helpers or os.environ.get("GPUPROF_SANITIZER"), (processes, totals)
    assert all(processes[pid] in ran_split | {attached.pid} for pid in helpers), processes
    (split,) = [pid for pid in ran_split if processes[pid] == attached.pid]
    (child,) = [pid for pid in ran_split if processes[pid] == split]
    assert ran_split == {split, child}, processes
    for pid in (split, child):
        # nothing named from the image it was; its samples under split's main but for
        # the new image's start before main (the loader's, a sanitizer's runtime's);
        # each spins 0.3 s of its CPU time, part of it in the kernel (split reads its CPU
        # clock as it spins: not sampled in user space), so the count is bounded below
        assert not [k for k in totals[pid] if k[1] == "attached"], (pid, totals[pid])
        assert totals[pid].get(("main", "split"), 0) >= 0.9 * samples[pid], (pid, totals[pid])
        assert samples[pid] >= 0.5 * RATE * 0.3, (pid, samples[pid])
    finish(attached)


@pytest.mark.parametrize("minor", [11, 12, 13])
def test_python_functions(tmp_path, minor):
    """A Python program (3.11, 3.12, 3.13: a thread spinning in Python, a generator
    waiting, the main thread in a blocking read): the spinner's Python function in its
    samples, within 10 % of the rate of the process's CPU time while sampled; the program
    goes on."""
    from test_sampling import python_of
    p = subprocess.Popen([python_of(minor), STUCK_PY], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, text=True)
    try:
        assert p.stdout.readline() == "ready\n"
        r = run([GPUPROF, "sys", "--pid", str(p.pid), "--duration", "1.5", "-d", "out",
                 *NO_METRICS], cwd=tmp_path)
        assert r.returncode == 0, r.stderr
        said, rate, seconds = sampled(r.stderr)
        (out,) = outputs(str(tmp_path / "out"))
        stacks = folded(out)
        total = sum(n for _, n in stacks)
        spin = samples_in(stacks, "stuck.py:spin")
        print(f"{spin} of {total} samples in stuck.py:spin, {seconds:.2f} s of CPU")
        assert said == total
        assert spin >= 0.9 * total
        assert abs(total - rate * seconds) <= 0.1 * rate * seconds
        out_text, _ = p.communicate("x\n", timeout=30)
        assert (p.returncode, out_text) == (0, "done\n")
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()


def test_gil_from_outside(tmp_path):
    """62: --gil with --pid: the samples of the thread that holds the GIL kept, those of the
    thread hashing in C without it left out and counted; the program goes on."""
    from test_sampling import python_of
    from test_sampling_python import GIL_PY, gil_threads, thread_samples
    p = subprocess.Popen([python_of(12), GIL_PY, "4"], stdout=subprocess.PIPE, text=True)
    try:
        assert p.stdout.readline() == "gil.py: started\n"
        r = run([GPUPROF, "sys", "--pid", str(p.pid), "--gil", "--duration", "1.5", "-d", "out",
                 *NO_METRICS], cwd=tmp_path)
        assert r.returncode == 0, r.stderr
        kept = int(re.search(r": (\d+) call-stack samples", r.stderr).group(1))
        left_out = re.search(r"; (\d+) more, of threads that did not hold the GIL, left out "
                             r"\(--gil\)", r.stderr)
        assert left_out, r.stderr
        rest, _ = p.communicate(timeout=30)
        assert p.returncode == 0
        (spinner, _), (hasher, _) = gil_threads(rest)
        (out,) = outputs(str(tmp_path / "out"))
        assert thread_samples(out, spinner) + thread_samples(out, hasher) == kept
        # 1.5 s sampled: the hashing thread's samples left out but those of a tick's lag
        # (each thread has a tenth of a CPU at least, on a machine kept busy)
        share = 1.0 if os.environ.get("GPUPROF_SANITIZER") else 0.25  # (see test_sampling_python)
        assert thread_samples(out, hasher) <= share * int(left_out.group(1))
        assert int(left_out.group(1)) >= 0.1 * RATE * 1.5, r.stderr
        assert thread_samples(out, spinner) >= 0.1 * RATE * 1.5, r.stderr
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()


def test_killed_while_attached_the_program_goes_on(tmp_path, attached):
    """gpuprof killed with SIGKILL while sampling: the program keeps running and ends with
    its own status and output; what was flushed before (every 100 ms) converts."""
    s = start_sys(tmp_path, attached.pid, *NO_METRICS)
    time.sleep(0.5)
    s.send_signal(signal.SIGKILL)
    s.wait()
    assert command(attached, "thread").startswith("late ")
    seventy, thirty = finish(attached)
    assert seventy > 0 and thirty > 0
    spools = [os.path.join(d, f) for d, _, files in os.walk(tmp_path / "out") for f in files
              if f.endswith(".spool")]
    assert len(spools) == 1
    c = run([GPUPROF, "convert", spools[0]], cwd=tmp_path)
    assert c.returncode == 0, c.stderr
    (out,) = outputs(str(tmp_path / "out"))
    assert out.query("SELECT COUNT(*) AS n FROM samples")[0]["n"] > 0


def test_the_process_ends_first(tmp_path, attached):
    """Without --duration, sampling ends when the process does: said, outputs written,
    the process's own exit status and output untouched."""
    s = start_sys(tmp_path, attached.pid, *NO_METRICS)
    time.sleep(0.3)
    finish(attached)
    _, err = s.communicate(timeout=60)
    assert s.returncode == 0, err
    assert "(the process ended)" in err and "goes on as it was" not in err
    (out,) = outputs(str(tmp_path / "out"))
    assert out.query("SELECT COUNT(*) AS n FROM samples")[0]["n"] > 0


def test_metrics_of_the_process(tmp_path, attached):
    """The metrics of the process attached to, sampled by gpuprof's metrics thread with
    no call stacks: its CPU series."""
    r = run([GPUPROF, "sys", "--pid", str(attached.pid), "--duration", "1", "-d", "out",
             "--no-sample", "--no-device-metrics", "--sampling-interval", "100"], cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "metrics only" in r.stderr
    (out,) = outputs(str(tmp_path / "out"))
    rows = out.query("SELECT value FROM metrics WHERE source = 'PROCESS' AND pid = ? AND "
                     "name = 'CPU' ORDER BY time", attached.pid)
    # a reading every 100 ms for 1 s, the first of which has no rate yet
    assert len(rows) >= 5, rows
    # the worker spins on one CPU: up to 100 % of one (less on a loaded machine, none in
    # a reading where it did not run: a VM whose host runs other work stops for longer)
    assert all(0 <= row["value"] <= 100 * os.cpu_count() + 10 for row in rows), rows
    assert max(row["value"] for row in rows) >= 10, rows
    finish(attached)


def test_errors(tmp_path, attached):
    cases = [
        (["sys", "--pid", "4194303"], 1, "gpuprof: sys: no process 4194303 (it ended, or never was)"),
        (["sys", "--pid", "abc"], 2, "--pid: 'abc' is not a process id"),
        (["sys", "--duration", "2", "--", "true"], 2, "--duration is how long --pid samples"),
        (["sys", "--pid", str(attached.pid), "--duration", "0"], 2,
         "--duration: '0' is not a number of seconds above 0"),
        (["sys", "--pid", str(attached.pid), "--", "true"], 2,
         "no command is run with it ('true' given)"),
        (["sys", "--pid", str(attached.pid), "--kernel-trace"], 2,
         "--kernel-trace records from inside a program started under gpuprof"),
        (["trace", "--pid", str(attached.pid)], 2,
         "trace: --pid: a running process's GPU API calls cannot be traced"),
        # rocprof-compute's --attach-pid: counters need the program started under CUPTI
        (["compute", "profile", "--attach-pid", str(attached.pid)], 2,
         f"gpuprof sys --pid {attached.pid} samples the call stacks and metrics"),
    ]
    for args, code, message in cases:
        r = run([GPUPROF, *args], cwd=tmp_path)
        assert r.returncode == code, (args, r.stderr)
        if message:
            assert message in r.stderr, (args, r.stderr)
    if os.geteuid() == 0 and shutil.which("setpriv"):
        r = run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", GPUPROF, "sys",
                 "--pid", str(attached.pid), "--duration", "1", "-d", "/tmp"], cwd="/")
        assert r.returncode == 1
        assert f"cannot sample process {attached.pid}" in r.stderr
        assert "another user's process" in r.stderr or "perf_event_paranoid" in r.stderr
    finish(attached)
