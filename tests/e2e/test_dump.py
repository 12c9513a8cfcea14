"""gpuprof dump: the stacks of a running program of known shape (tests/e2e/stuck.c),
read from outside: each thread's name, what it is blocked in, and its frames in order;
the program goes on as it was, even when gpuprof is killed while it holds the threads;
the errors a user meets (no such process, another user's, another namespace)."""
import json
import os
import shutil
import signal
import subprocess
import time

import pytest

from conftest import GPUPROF, TESTS, run

STUCK = os.path.join(TESTS, "stuck")


def wait_until_waiting(pid, main_call=0, others=(202,)):
    """Until process pid's first thread waits in system call main_call (read) and, for
    each of others, another of its threads in that one (futex), as /proc says: a
    program's "ready" comes before its threads reach their waits."""
    deadline = time.monotonic() + 30
    while True:
        calls = {}
        for task in os.listdir(f"/proc/{pid}/task"):
            try:
                with open(f"/proc/{pid}/task/{task}/syscall") as f:
                    calls[int(task)] = f.read().split()[0]
            except (OSError, IndexError):
                continue
        rest = [c for tid, c in calls.items() if tid != pid]
        if calls.get(pid) == str(main_call) and \
                all(rest.count(str(c)) >= list(others).count(c) for c in others):
            return
        assert time.monotonic() < deadline, calls
        time.sleep(0.01)


@pytest.fixture
def stuck():
    """The program, started outside gpuprof, once both its threads wait."""
    p = subprocess.Popen([STUCK], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert p.stdout.readline() == "ready\n"
    wait_until_waiting(p.pid)  # into read() and the second lock
    yield p
    if p.poll() is None:
        p.kill()
        p.wait()


def finish(p):
    """Lets the program go on: it prints done and exits with its own status."""
    out, _ = p.communicate("x\n", timeout=30)
    assert (p.returncode, out) == (7, "done 3\n")


def line_of(text):
    """The line of stuck.c that holds text (a call: the line its caller's frame stands at)."""
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "stuck.c")) as f:
        return next(i + 1 for i, line in enumerate(f) if text in line)


def frames_in_order(frames, wanted):
    names = [f for f in frames if f in wanted]
    return names == wanted


def test_stacks_states_and_names(stuck):
    r = run([GPUPROF, "dump", "--pid", str(stuck.pid), "--format", "json"], cwd="/")
    assert r.returncode == 0, r.stderr
    [process] = json.loads(r.stdout)
    assert process["pid"] == stuck.pid and process["command"] == STUCK
    # the main thread is the process's first; the locker, the thread in locker_body (a
    # sanitizer's runtime may add threads of its own)
    [main] = [t for t in process["threads"] if t["tid"] == stuck.pid]
    [locker] = [t for t in process["threads"]
                if any(f["function"] == "locker_body" for f in t["frames"])]
    if os.environ.get("GPUPROF_SANITIZER") != "thread":  # its runtime renames threads
        assert (main["name"], locker["name"]) == ("main-loop", "locker")
        assert len(process["threads"]) == 2
    assert (main["state"], main["syscall"]) == ("S", "read")
    assert (locker["state"], locker["syscall"]) == ("S", "futex")
    names = [f["function"] for f in main["frames"]]
    assert frames_in_order(names, ["wait_for_input", "level2", "level1", "main"]), names
    assert [f["line"] for f in main["frames"] if f["function"] == "level1"] == \
        [line_of("int n = level2();")]
    names = [f["function"] for f in locker["frames"]]
    assert "locker_body" in names and names.index("locker_body") > 0, names
    # the text form says the same
    t = run([GPUPROF, "dump", str(stuck.pid)], cwd="/")
    assert t.returncode == 0, t.stderr
    assert f"Thread {stuck.pid} (main-loop): sleeping, in read" in t.stdout
    assert "(locker): sleeping, in futex" in t.stdout
    assert f"level2 at tests/e2e/stuck.c:{line_of('int n = wait_for_input();')} (stuck)" in t.stdout
    finish(stuck)


STUCK_PY = os.path.join(os.path.dirname(os.path.abspath(__file__)), "stuck.py")


@pytest.mark.parametrize("minor", [11, 12, 13])
def test_python_program(minor):
    """CPython's functions (3.11's, 3.12's, 3.13's) in place of its evaluation loop, a
    generator's included, in the order they call each other, beside the native frames
    around them; the thread that holds the GIL."""
    from test_sampling import python_of
    p = subprocess.Popen([python_of(minor), STUCK_PY], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, text=True)
    try:
        assert p.stdout.readline() == "ready\n"
        wait_until_waiting(p.pid)
        r = run([GPUPROF, "dump", "--format", "json", str(p.pid)], cwd="/")
        assert r.returncode == 0, r.stderr
        [process] = json.loads(r.stdout)
        [main] = [t for t in process["threads"] if t["tid"] == p.pid]
        [worker] = [t for t in process["threads"] if t["syscall"] == "futex"]
        [spinner] = [t for t in process["threads"] if t not in (main, worker)]
        assert main["syscall"] == "read"
        # the spinner holds the GIL, runs Python, and no other thread holds it
        assert [t["gil"] for t in (main, worker, spinner)] == [False, False, True]
        assert "stuck.py:spin" in [f["function"] for f in spinner["frames"]]
        python = [f["function"] for f in main["frames"] if f["function"].startswith("stuck.py:")]
        assert python == ["stuck.py:level_b", "stuck.py:level_a", "stuck.py:main",
                          "stuck.py:<module>"]
        names = [f["function"] for f in main["frames"]]
        assert names.index("stuck.py:level_b") > names.index("read")  # called by Python
        python = [f["function"] for f in worker["frames"] if ".py:" in f["function"]]
        assert python[:6] == ["threading.py:Condition.wait", "threading.py:Event.wait",
                              "stuck.py:produce", "stuck.py:consume", "stuck.py:worker_body",
                              "threading.py:Thread.run"], python
        lines = {f["function"]: f["line"] for f in main["frames"]}
        with open(STUCK_PY) as f:
            source = f.read().splitlines()
        assert "sys.stdin.readline()" in source[lines["stuck.py:level_b"] - 1]
        t = run([GPUPROF, "dump", str(p.pid)], cwd="/")
        assert f"Thread {spinner['tid']} (" in t.stdout
        assert t.stdout.count(", holds the GIL\n") == 1
        out, _ = p.communicate("x\n", timeout=30)
        assert (p.returncode, out) == (0, "done\n")
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()


def test_children_of_a_launcher(tmp_path):
    """--children: a shell's child dumped with it."""
    shell = subprocess.Popen(["/bin/sh", "-c", f"{STUCK}; exit 0"], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True)
    try:
        assert shell.stdout.readline() == "ready\n"
        with open(f"/proc/{shell.pid}/task/{shell.pid}/children") as f:
            wait_until_waiting(int(f.read().split()[0]))
        r = run([GPUPROF, "dump", "--children", "--format", "json", str(shell.pid)], cwd="/")
        assert r.returncode == 0, r.stderr
        processes = json.loads(r.stdout)
        assert [p["pid"] for p in processes][0] == shell.pid
        assert [p["command"] for p in processes[1:]] == [STUCK]
    finally:
        shell.communicate("x\n", timeout=30)


def test_a_shell_with_its_children_and_a_resumed_wait(tmp_path):
    """61: `dump --children --pid $$` from a shell dumps the shell and its children, not
    gpuprof itself (it exited 3 for gpuprof's own process); a sleep stopped and continued
    waits in restart_syscall, named so."""
    shell = subprocess.Popen(["/bin/sh", "-c", "sleep 30 >/dev/null 2>&1 & echo $!; "
                              + GPUPROF_CHILD_DUMP], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, cwd=tmp_path)
    sleeper = int(shell.stdout.readline())
    try:
        out, err = shell.communicate(timeout=60)
        assert shell.returncode == 0, err
        processes = json.loads(out)
        assert [p["pid"] for p in processes] == [shell.pid, sleeper], processes
        os.kill(sleeper, signal.SIGSTOP)
        os.kill(sleeper, signal.SIGCONT)
        for _ in range(200):  # until it is back in its wait
            with open(f"/proc/{sleeper}/syscall") as f:
                if f.read().split()[0] == "219":
                    break
            time.sleep(0.01)
        r = run([GPUPROF, "dump", "--format", "json", str(sleeper)], cwd=tmp_path)
        assert r.returncode == 0, r.stderr
        (thread,) = json.loads(r.stdout)[0]["threads"]
        assert thread["syscall"] == "restart_syscall", thread
    finally:
        os.kill(sleeper, signal.SIGKILL)


GPUPROF_CHILD_DUMP = f"{GPUPROF} dump --children --format json --pid $$"


def test_killed_while_dumping_the_program_goes_on(stuck):
    """gpuprof killed at any moment of dumping (before, while and after it holds the
    threads): the program is never left stopped, and ends as it would have."""
    for i in range(40):
        d = subprocess.Popen([GPUPROF, "dump", "--stack-size", "16777216", str(stuck.pid)],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(i * 0.0005)
        d.send_signal(signal.SIGKILL)
        d.wait()
        for tid in os.listdir(f"/proc/{stuck.pid}/task"):
            with open(f"/proc/{stuck.pid}/task/{tid}/stat") as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
            assert state not in ("t", "T"), (i, tid, state)
    finish(stuck)


def test_errors(tmp_path, stuck):
    r = run([GPUPROF, "dump", "--pid", "4194303"], cwd="/")
    assert r.returncode == 1
    assert "gpuprof: dump: no process 4194303 (it ended, or never was)" in r.stderr
    r = run([GPUPROF, "dump", "abc"], cwd="/")
    assert r.returncode == 2 and "'abc' is not a process id" in r.stderr
    r = run([GPUPROF, "dump"], cwd="/")
    assert r.returncode == 2 and "no process given" in r.stderr
    # one of two missing: the other is dumped, the exit status says some failed
    r = run([GPUPROF, "dump", str(stuck.pid), "4194303"], cwd="/")
    assert r.returncode == 3 and "(main-loop)" in r.stdout
    if os.geteuid() == 0 and shutil.which("setpriv"):
        r = run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", GPUPROF, "dump",
                 str(stuck.pid)], cwd="/")
        assert r.returncode == 1
        assert "cannot trace process" in r.stderr and "CAP_SYS_PTRACE" in r.stderr
    finish(stuck)


def test_already_traced(stuck):
    """A process a debugger traces: said so, with the debugger's pid."""
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    PTRACE_SEIZE, PTRACE_INTERRUPT, PTRACE_DETACH, WALL = 0x4206, 0x4207, 17, 0x40000000
    tids = [int(t) for t in os.listdir(f"/proc/{stuck.pid}/task")]
    try:
        # one thread traced: the other dumped, the traced one says who holds it
        assert libc.ptrace(PTRACE_SEIZE, stuck.pid, None, None) == 0, ctypes.get_errno()
        r = run([GPUPROF, "dump", str(stuck.pid)], cwd="/")
        assert r.returncode == 0, r.stderr
        assert f"(no stack: process {os.getpid()} (a debugger) traces it)" in r.stdout
        assert "locker_body" in r.stdout
        # every thread traced: the process is not dumped, and the message says why
        for tid in tids[1:]:
            assert libc.ptrace(PTRACE_SEIZE, tid, None, None) == 0, ctypes.get_errno()
        r = run([GPUPROF, "dump", str(stuck.pid)], cwd="/")
        assert r.returncode == 1
        assert (f"cannot trace process {stuck.pid}: Operation not permitted (process "
                f"{os.getpid()} already traces it: a debugger; detach it first)") in r.stderr
    finally:  # a tracee detaches from a stop only
        for tid in tids:
            if libc.ptrace(PTRACE_INTERRUPT, tid, None, None) == 0:
                os.waitpid(tid, WALL)
                libc.ptrace(PTRACE_DETACH, tid, None, None)
    finish(stuck)


def test_another_pid_namespace(tmp_path):
    if os.geteuid() != 0 or not shutil.which("unshare"):
        pytest.skip("needs root and unshare to make a PID namespace")
    inner = subprocess.Popen(["unshare", "--pid", "--fork", "--mount-proc", "sleep", "30"])
    try:
        time.sleep(0.5)
        children = subprocess.run(["pgrep", "-P", str(inner.pid)], capture_output=True,
                                  text=True).stdout.split()
        if not children:
            pytest.skip("unshare could not make a PID namespace here")
        r = run([GPUPROF, "dump", children[0]], cwd="/")
        assert r.returncode == 1
        assert "in another PID or mount namespace (a container)" in r.stderr
    finally:
        inner.kill()
        inner.wait()
