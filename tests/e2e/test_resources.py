"""Resource faults while the program runs: its output directory removed or made
read-only, the disk full (an injected ENOSPC on the spool), the memory cap
(test_trace.py), a file-size limit: the program finishes unharmed, what was written is
whole, and the loss is reported."""
import os
import resource
import shutil
import signal
import struct
import subprocess
import tempfile
import threading

from conftest import GPUPROF, TESTS, outputs, preload, run, trace

MARKERS = os.path.join(TESTS, "markers")  # "periods": 2, 3 and 4 kernels at 1, 2 and 3 s
ENOSPC = os.path.join(TESTS, "libenospc.so")


def once_spooled(out_dir, action):
    """A thread that does action once the program's spool exists under out_dir (the
    program runs three seconds from then): not at a fixed time, which a loaded machine's
    slow start could pass before the directory is made."""
    def wait():
        import glob
        import time
        deadline = time.monotonic() + 60
        while not glob.glob(os.path.join(str(out_dir), "**", "*.spool"), recursive=True):
            if time.monotonic() > deadline:
                return
            time.sleep(0.02)
        action()
    thread = threading.Thread(target=wait)
    thread.start()
    return thread


def test_output_directory_removed_during_the_run(tmp_path):
    out_dir = tmp_path / "out"
    remover = once_spooled(out_dir, lambda: shutil.rmtree(out_dir))
    r = trace(tmp_path, ["--kernel-trace", "-d", "out"], [MARKERS, "periods"])
    remover.join()
    assert r.returncode == 0, r.stderr
    assert "was removed while the program ran: made it again" in r.stderr
    (out,) = outputs(str(out_dir))
    assert [int(k["Dispatch_Id"]) for k in out.csv("kernel_trace.csv")] == list(range(1, 10))
    assert out.query("SELECT clean_exit FROM processes") == [{"clean_exit": 1}]


def test_output_directory_made_read_only_during_the_run():
    """Files already open stay writable (Linux refuses a read-only remount while they
    are), so the spool is whole; the outputs cannot be made, which gpuprof says, keeping
    the spool for `gpuprof convert`. Root ignores permissions: run as nobody then."""
    top = tempfile.mkdtemp(prefix="gpuprof-readonly-")
    try:
        os.chmod(top, 0o777)
        user = []
        if os.geteuid() == 0:
            user = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
        out_dir = os.path.join(top, "out")
        locker = once_spooled(out_dir, lambda: [os.chmod(d, 0o555) for d, _, _ in
                                                os.walk(out_dir)])
        r = run([*user, GPUPROF, "trace", "--kernel-trace", "-d", "out", "--", MARKERS, "periods"],
                cwd=top, env={"HOME": top})  # PoCL keeps its cache under HOME
        locker.join()
        assert r.returncode == 1, r.stderr  # the program succeeded; the outputs could not be made
        assert "Permission denied" in r.stderr and "is kept; 'gpuprof convert' retries" in r.stderr
        (spool,) = [os.path.join(d, f) for d, _, files in os.walk(out_dir) for f in files]
        assert spool.endswith(".spool")
        r = run([GPUPROF, "convert", "-d", "converted", spool], cwd=top)
        assert r.returncode == 0, r.stderr
        (out,) = outputs(os.path.join(top, "converted"))
        assert [int(k["Dispatch_Id"]) for k in out.csv("kernel_trace.csv")] == list(range(1, 10))
    finally:
        for d, _, _ in os.walk(top):
            os.chmod(d, 0o755)
        shutil.rmtree(top)


def chunks(spool):
    """(end offset, kernel records) of each chunk of a spool."""
    with open(spool, "rb") as f:
        data = f.read()
    at, found = struct.unpack_from("<I", data, 12)[0], []
    while at + 16 <= len(data):
        _, size, _, _ = struct.unpack_from("<IIII", data, at)
        payload, kernels, i = data[at + 16: at + 16 + size], 0, 0
        while i + 8 <= len(payload):
            length, kind = struct.unpack_from("<IH", payload, i)
            kernels += kind == 6
            i += length
        at += 16 + size
        found.append((at, kernels))
    return found


def test_full_disk_keeps_what_was_written(tmp_path):
    # where the chunks of an unhindered run end
    r = trace(tmp_path, ["--kernel-trace", "--keep-spool", "-d", "free", "-f", "csv"],
              [MARKERS, "periods"])
    assert r.returncode == 0, r.stderr
    (free,) = outputs(str(tmp_path / "free"))
    layout = chunks(free.prefix + ".spool")
    first_kernels = next(end for end, kernels in layout if kernels)
    # the disk fills up just after the chunk of the first kernels
    env = {"LD_PRELOAD": preload(ENOSPC), "GPUPROF_TEST_SPOOL_BYTES": str(first_kernels + 40)}
    r = trace(tmp_path, ["--kernel-trace", "-d", "full", "-f", "csv"], [MARKERS, "periods"],
              env=env)
    assert r.returncode == 0, r.stderr  # the program ran to its end
    assert "No space left on device; records are being dropped" in r.stderr
    assert "could not be written to" in r.stderr and "the outputs lack them" in r.stderr
    assert "incomplete last chunk" not in r.stderr  # the torn chunk was cut off again
    (full,) = outputs(str(tmp_path / "full"))
    # the kernels written before the disk filled, and none after: how many depends on
    # when the writer thread flushed in this run (the chunks of two runs differ: on a busy
    # machine its first flush may come before the first kernel, and keep none)
    kept = [int(k["Dispatch_Id"]) for k in full.csv("kernel_trace.csv")] \
        if os.path.exists(full.path("kernel_trace.csv")) else []
    assert len(kept) <= 9 and kept == list(range(1, len(kept) + 1))


def test_no_room_at_all(tmp_path):
    """Not even the spool's first chunk fits: the program is unharmed, gpuprof says
    what happened and fails."""
    env = {"LD_PRELOAD": preload(ENOSPC), "GPUPROF_TEST_SPOOL_BYTES": "40"}
    r = trace(tmp_path, ["--kernel-trace", "-d", "out"], [MARKERS, "nest"], env=env)
    assert r.returncode == 1, r.stderr
    assert r.stdout.startswith("push outer: 0\n")
    assert "could not be written to" in r.stderr
    assert "holds no process record" in r.stderr


def test_a_file_size_limit_is_an_error_of_gpuprof_not_its_end(tmp_path):
    """Under `ulimit -f` a write of gpuprof's own fails with a clear error rather than
    SIGXFSZ ending gpuprof (its outputs half written, the program's exit status lost);
    the program keeps the disposition of the signal it was given."""
    # the program: ended by SIGXFSZ sent to itself, as it is without gpuprof
    r = trace(tmp_path, [], ["sh", "-c", "kill -XFSZ $$; echo survived"])
    assert r.returncode == 128 + signal.SIGXFSZ, r.stderr
    assert "survived" not in r.stdout
    assert "was killed by SIGXFSZ" in r.stderr
    # a database cannot be written under a 1 MiB limit (its 64 KiB pages, one at least
    # for each of its tables and indexes): gpuprof says so and fails, the spool kept
    spool = tmp_path / "4242.spool"
    made = subprocess.run([os.path.join(TESTS, "make-recording"), str(spool)],
                          input="process pid=4242\nend time=2000000\n", capture_output=True,
                          text=True)
    assert made.returncode == 0, made.stderr

    def limited():
        resource.setrlimit(resource.RLIMIT_FSIZE, (1 << 20, 1 << 20))

    r = subprocess.run([GPUPROF, "convert", "-f", "sqlite", str(spool)], cwd=tmp_path,
                       preexec_fn=limited, capture_output=True, text=True, timeout=120)
    assert r.returncode == 1, (r.returncode, r.stderr)
    assert "(the file size limit, ulimit -f, 1048576 bytes, is reached)" in r.stderr
    assert sorted(os.listdir(tmp_path)) == ["4242.spool"]
