"""What real programs do that once broke the trace or lost its data (issue 13): OpenCL
found privately or on the program's own handle, every kind of enqueued command, the
standard streams closed, exec(), _exit() and exit handlers. Each test failed before its
fix."""
import os
import re
import subprocess

import pytest

from conftest import BUILD, TESTS, outputs, run, trace

LAUNCHER = os.path.join(TESTS, "launcher")


def only_process(tmp_path):
    found = outputs(tmp_path)
    assert len(found) == 1, [o.prefix for o in found]
    return found[0]


def kernel_count(out):
    return out.query("SELECT COUNT(*) AS n FROM kernels")[0]["n"]


@pytest.mark.parametrize("program", ["private-opencl", "own-handle"])
def test_opencl_found_however_the_program_looks(tmp_path, program):
    # 1: libOpenCL loaded by a dlopen(RTLD_LOCAL)ed library of the program's own (as
    # Python loads pyopencl); 2: dlopen("libOpenCL.so") and dlsym() on that handle
    r = trace(tmp_path, ["--kernel-trace", "--opencl-trace"], [os.path.join(TESTS, program), "7"])
    assert r.returncode == 0, r.stderr
    assert r.stdout == "clwork: 7 kernels\n"
    out = only_process(tmp_path)
    assert kernel_count(out) == 7
    calls = out.query("SELECT name, COUNT(*) AS n FROM regions GROUP BY name")
    counts = {c["name"]: c["n"] for c in calls}
    assert counts["clEnqueueNDRangeKernel"] == 7
    assert counts["clSetKernelArg"] == 2
    assert counts["clEnqueueReadBuffer"] == 1
    assert sum(counts.values()) == 7 + 2 + 1 + 16  # 16 calls of set-up and release


def test_pyopencl_program(tmp_path):
    python = "/usr/bin/python3"
    probe = subprocess.run([python, "-c", "import pyopencl, numpy"], capture_output=True)
    if probe.returncode != 0:
        pytest.skip("Debian's python3-pyopencl is not installed")
    script = os.path.join(os.path.dirname(__file__), "pyopencl_kernels.py")
    r = trace(tmp_path, ["--kernel-trace"], [python, script, "12"], env={"PYOPENCL_CTX": "0"})
    assert r.returncode == 0, r.stderr
    assert "pyopencl: 12 kernels, x[0] = 4096" in r.stdout
    out = only_process(tmp_path)
    assert kernel_count(out) == 12


def test_library_is_named_and_versioned_like_the_loader():
    # every symbol the system's ICD loader exports, in the same version node
    def exported(path):
        listing = subprocess.run(["nm", "-D", "--defined-only", path], capture_output=True,
                                 text=True, check=True).stdout
        return {line.split()[-1] for line in listing.splitlines()
                if line.split()[-1].startswith("cl")}
    loader = subprocess.run(["/sbin/ldconfig", "-p"], capture_output=True, text=True).stdout
    found = re.search(r"libOpenCL\.so\.1 \(libc6,x86-64\) => (\S+)", loader)
    if not found:
        pytest.skip("no system OpenCL loader in the linker cache")
    ours = exported(os.path.join(BUILD, "lib", "gpuprof", "libgpuprof-opencl.so"))
    theirs = exported(found.group(1))
    assert theirs <= ours, sorted(theirs - ours)
    soname = subprocess.run(["objdump", "-p", os.path.join(BUILD, "lib", "gpuprof",
                                                           "libgpuprof-opencl.so")],
                            capture_output=True, text=True).stdout
    assert re.search(r"SONAME\s+libOpenCL\.so\.1", soname)


def test_every_enqueued_command_is_device_activity(tmp_path):
    program = os.path.join(TESTS, "commands")
    plain = run([program], cwd=tmp_path)
    assert plain.returncode == 0, plain.stderr
    r = trace(tmp_path, ["--runtime-trace"], [program])
    assert r.returncode == 0, r.stderr
    # the application sees the references it made on its events, not gpuprof's
    assert r.stdout == plain.stdout
    native = "native=1" in r.stdout
    svm = "svm=1" in r.stdout
    out = only_process(tmp_path)
    rows = out.query("SELECT name, operation, direction, COUNT(*) AS n, SUM(size) AS bytes "
                     "FROM memory_copies GROUP BY 1, 2, 3")
    got = {(x["name"], x["operation"], x["direction"]): (x["n"], x["bytes"]) for x in rows}
    h2d, d2h, d2d, none = ("MEMORY_COPY_HOST_TO_DEVICE", "MEMORY_COPY_DEVICE_TO_HOST",
                           "MEMORY_COPY_DEVICE_TO_DEVICE", "MEMORY_COPY_NONE")
    maps = 1100
    expected = {
        ("clEnqueueWriteBuffer", "COPY", h2d): (2, 1024 + 64),
        ("clEnqueueMapBuffer", "MAP", d2h): (1 + maps, 2048 + maps * 64),
        # a map for writing moves data back at its unmap; read-only maps do not
        ("clEnqueueUnmapMemObject", "UNMAP", h2d): (1, 2048),
        ("clEnqueueUnmapMemObject", "UNMAP", none): (maps + 1, maps * 64 + 1024),
        ("clEnqueueMigrateMemObjects", "MIGRATE", d2h): (1, 4096),
        ("clEnqueueMigrateMemObjects", "MIGRATE", h2d): (1, 4096),
        ("clEnqueueWriteImage", "COPY", h2d): (1, 1024),
        ("clEnqueueReadImage", "COPY", d2h): (1, 1024),
        ("clEnqueueCopyImage", "COPY", d2d): (1, 1024),
        ("clEnqueueFillImage", "FILL", none): (1, 1024),
        ("clEnqueueCopyImageToBuffer", "COPY", d2d): (1, 1024),
        ("clEnqueueCopyBufferToImage", "COPY", d2d): (1, 1024),
        ("clEnqueueMapImage", "MAP", d2h): (1, 1024),
        ("clEnqueueMarker", "MARKER", none): (1, 0),
        ("clEnqueueBarrier", "BARRIER", none): (1, 0),
        ("clEnqueueMarkerWithWaitList", "MARKER", none): (1, 0),
        ("clEnqueueBarrierWithWaitList", "BARRIER", none): (1, 0),
    }
    if svm:
        expected.update({
            ("clEnqueueSVMMap", "MAP", d2h): (1, 4096),
            ("clEnqueueSVMUnmap", "UNMAP", h2d): (1, 4096),
            ("clEnqueueSVMMemcpy", "COPY", "MEMORY_COPY_UNKNOWN"): (1, 4096),
            ("clEnqueueSVMMemFill", "FILL", none): (1, 4096),
            ("clEnqueueSVMFree", "FREE", none): (1, 0),
        })
    assert got == expected
    kernels = out.query("SELECT name, lds_size, dynamic_lds_size FROM kernels ORDER BY start")
    # the __local argument's size of each launch, not the first launch's
    expected_kernels = [("stage", 64, 64), ("stage", 4096, 4096)]
    if native:
        expected_kernels.append(("clEnqueueNativeKernel", 0, 0))
    assert [(k["name"], k["lds_size"], k["dynamic_lds_size"]) for k in kernels] == expected_kernels
    calls = {c["name"]: c["n"] for c in out.query(
        "SELECT name, COUNT(*) AS n FROM regions GROUP BY name")}
    # every API call, the info queries, retains and releases included
    for name, n in [("clGetDeviceInfo", 2), ("clGetEventInfo", 1), ("clReleaseEvent", 3),
                    ("clReleaseMemObject", 4), ("clCreateUserEvent", 1),
                    ("clSetUserEventStatus", 1), ("clCompileProgram", 1), ("clLinkProgram", 1),
                    ("clCreateSubBuffer", 1), ("clCreateBufferWithProperties", 1),
                    ("clCreateImage", 2), ("clEnqueueMapBuffer", 1 + maps),
                    ("clReleaseProgram", 2)]:
        assert calls.get(name) == n, (name, calls.get(name))
    dropped = out.query("SELECT * FROM gpuprof_dropped")
    assert dropped == []


def test_standard_streams_closed(tmp_path):
    # 6: the recorder's descriptors never take 0-2, so the program's output stays out
    r = trace(tmp_path, ["--kernel-trace"],
              ["sh", "-c", f"exec 1>&- 0<&-; exec {LAUNCHER} 5 exit:0"])
    assert r.returncode == 0, r.stderr
    assert kernel_count(only_process(tmp_path)) == 5


def test_exec_keeps_every_image(tmp_path):
    # 9: each image flushes before exec and gets a spool of its own: <pid>, <pid>-2, ...
    r = trace(tmp_path, ["--kernel-trace"], [LAUNCHER, "3", "exec-self:3"])
    assert r.returncode == 0, r.stderr
    found = sorted(outputs(tmp_path), key=lambda o: o.prefix)
    assert len(found) == 4, [o.prefix for o in found]
    base = found[0].prefix
    assert [o.prefix for o in found] == [base, base + "-2", base + "-3", base + "-4"]
    assert [kernel_count(o) for o in found] == [3, 3, 3, 3]


def test_children_ending_with_underscore_exit(tmp_path):
    # 10: _exit (Python's os._exit, DataLoader workers) flushes as exit does
    children = 20
    r = trace(tmp_path, ["--kernel-trace"],
              ["sh", "-c", f"for i in $(seq {children}); do {LAUNCHER} 10 now-_exit:0 & done; wait"])
    assert r.returncode == 0, r.stderr
    found = outputs(tmp_path)
    assert len(found) == children
    assert sum(kernel_count(o) for o in found) == 10 * children


@pytest.mark.parametrize("directory", [None, "out", "./deep/er"])
def test_program_that_changes_directory(tmp_path, directory):
    # 7: output paths are made absolute before the program starts
    options = ["--kernel-trace"] + (["-d", directory] if directory else [])
    r = trace(tmp_path, options, [LAUNCHER, "4", "chdir"])
    assert r.returncode == 0, r.stderr
    out = only_process(tmp_path / directory if directory else tmp_path)
    assert kernel_count(out) == 4


def test_newline_in_the_output_path(tmp_path):
    # 8: the list of recorded processes holds any path, a newline in it included
    r = trace(tmp_path, ["--kernel-trace", "-d", "two\nlines", "-o", "run\n%pid%"],
              [LAUNCHER, "5", "exit:0"])
    assert r.returncode == 0, r.stderr
    out = only_process(tmp_path / "two\nlines")
    assert os.path.basename(out.prefix).startswith("run\n")
    assert kernel_count(out) == 5


def test_absolute_output_name(tmp_path):
    # 7: an absolute -o is written where it points, not under the current directory
    target = tmp_path / "elsewhere" / "run"
    work = tmp_path / "work"
    work.mkdir()
    r = trace(work, ["--kernel-trace", "-o", str(target)], [LAUNCHER, "3", "exit:0"])
    assert r.returncode == 0, r.stderr
    assert os.path.exists(str(target) + "_results.db"), r.stderr
    assert os.listdir(work) == []
