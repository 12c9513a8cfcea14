"""`make install` into a scratch prefix, and the installed gpuprof at work: it must find
its own libraries there (OpenCL, NVTX, markers, presets), not the build tree's."""
import os
import shutil
import subprocess

import pytest
from conftest import BUILD, SAMPLES, TESTS, outputs, run

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


@pytest.fixture(scope="module")
def prefix(tmp_path_factory):
    where = tmp_path_factory.mktemp("prefix")
    r = subprocess.run(["make", "-s", "-C", ROOT, f"BUILD={BUILD}", f"PREFIX={where}", "install"],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    return where


def installed_trace(prefix, tmp_path, options, command):
    # the build tree out of reach: a copy of the program, and no path into build/
    return run([str(prefix / "bin" / "gpuprof"), "trace", *options, "--", *command], cwd=tmp_path)


def test_installed_files(prefix):
    lib = prefix / "lib" / "gpuprof"
    for name in ("libgpuprof-recorder.so", "libgpuprof-opencl.so", "opencl/libOpenCL.so.1",
                 "markers/libroctx64.so.4"):
        assert (lib / name).exists(), name
    assert (prefix / "lib" / "libgpuprof-markers.so.1").exists()
    assert (prefix / "include" / "gpuprof" / "markers.h").exists()
    assert (prefix / "share" / "man" / "man1" / "gpuprof-trace.1").exists()
    assert list((prefix / "share" / "gpuprof" / "presets").glob("*.yaml"))
    assert (prefix / "share" / "man" / "man1" / "gpuprof-compute.1").exists()
    assert len(list((prefix / "share" / "gpuprof" / "catalog").glob("*.yaml"))) == \
        len(os.listdir(os.path.join(ROOT, "catalog")))
    if os.path.exists(os.path.join(TESTS, "nvtx-app")):  # built with the CUDA toolkit
        assert (lib / "libgpuprof-nvtx.so").exists()
        assert (lib / "libgpuprof-cupti-host.so").exists()


def test_installed_compute_finds_its_catalog_and_host_api(prefix, tmp_path):
    if not os.path.exists(os.path.join(TESTS, "nvtx-app")):
        pytest.skip("built without the CUDA toolkit: no CUPTI profiler host API")
    if os.environ.get("GPUPROF_SANITIZER"):
        pytest.skip("a sanitized gpuprof cannot load CUPTI's host API (RTLD_DEEPBIND)")
    r = run([str(prefix / "bin" / "gpuprof"), "compute", "profile", "--list-available-metrics",
             "--chip", "GH100", "-b", "dram"], cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[-1] == "selected: 4 metrics, 4 CUPTI metrics, 1 pass"


def test_installed_gpuprof_injects_its_installed_libraries(prefix, tmp_path):
    r = installed_trace(prefix, tmp_path, ["--kernel-trace", "--marker-trace"],
                        ["sh", "-c", 'echo "$LD_PRELOAD"; echo "$LD_LIBRARY_PATH"; '
                                     'echo "${NVTX_INJECTION64_PATH:-none}"'])
    assert r.returncode == 0, r.stderr
    preload, library_path, nvtx = r.stdout.splitlines()
    lib = str(prefix / "lib" / "gpuprof")
    ours = [p for p in preload.split(":")  # a sanitized build's runtime comes first
            if not os.path.basename(p).startswith(("libasan", "libtsan", "libubsan"))]
    assert ours == [lib + "/libgpuprof-recorder.so", lib + "/libgpuprof-opencl.so"]
    assert library_path.split(":")[:2] == [lib + "/markers", lib + "/opencl"]
    if os.path.exists(os.path.join(TESTS, "nvtx-app")):
        assert nvtx == lib + "/libgpuprof-nvtx.so"
    assert BUILD not in r.stdout


def test_installed_gpuprof_records_opencl(prefix, tmp_path):
    program = tmp_path / "vcopy"
    shutil.copy(os.path.join(SAMPLES, "vcopy"), program)
    (tmp_path / "out").mkdir()
    r = installed_trace(prefix, tmp_path / "out", ["--kernel-trace"], [str(program), "-i", "7"])
    assert r.returncode == 0, r.stderr
    assert BUILD not in r.stderr
    found = outputs(tmp_path / "out")
    assert len(found) == 1
    assert len(found[0].csv("kernel_trace.csv")) == 7


@pytest.mark.skipif(not os.path.exists(os.path.join(TESTS, "nvtx-app")),
                    reason="built without the CUDA toolkit (its header-only nvtx3 API)")
def test_installed_gpuprof_records_nvtx(prefix, tmp_path):
    r = installed_trace(prefix, tmp_path, ["--marker-trace"], [os.path.join(TESTS, "nvtx-app")])
    assert r.returncode == 0, r.stderr
    found = outputs(tmp_path)
    assert len(found) == 1
    assert len(found[0].csv("marker_api_trace.csv")) == 6
