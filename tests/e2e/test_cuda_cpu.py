"""The CUDA side of `gpuprof trace` that can be checked without a GPU: how the backend is
put in place, and what it does when CUPTI cannot start (the program runs on, unprofiled,
and its exit code passes through). The traces themselves are checked in tests/gpu/."""
import os
import shutil
import subprocess

import pytest

from conftest import BUILD, GPUPROF, TESTS, run, trace

CUDA_LIB = os.path.join(BUILD, "lib", "gpuprof", "libgpuprof-cuda.so")

pytestmark = pytest.mark.skipif(not os.path.exists(CUDA_LIB),
                                reason="gpuprof was built without the CUDA toolkit")


def test_backend_named_to_the_driver(tmp_path):
    r = trace(tmp_path, ["--kernel-trace"], ["sh", "-c", "echo $CUDA_INJECTION64_PATH"])
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == os.path.realpath(CUDA_LIB)


def test_backend_exports_only_the_injection_hook():
    nm = shutil.which("nm")
    if not nm:
        pytest.skip("nm is not installed")
    out = subprocess.run([nm, "-D", "--defined-only", CUDA_LIB], capture_output=True,
                         text=True, check=True).stdout
    assert [line.split()[-1] for line in out.splitlines()] == ["InitializeInjection"]


def test_another_tools_injection_is_kept(tmp_path):
    env = dict(os.environ, CUDA_INJECTION64_PATH="/opt/other-tool/libinject.so")
    r = trace(tmp_path, ["--kernel-trace"], ["sh", "-c", "echo $CUDA_INJECTION64_PATH; exit 3"],
              env=env)
    assert r.returncode == 3
    assert r.stdout.strip() == "/opt/other-tool/libinject.so"
    assert ("gpuprof: CUDA_INJECTION64_PATH already names '/opt/other-tool/libinject.so' "
            "(another CUDA tool): CUDA work is not traced") in r.stderr


def test_cupti_unavailable_program_runs_on(tmp_path):
    """No driver here: CUPTI cannot start. One line says so, the program carries on and
    its exit code passes through."""
    r = trace(tmp_path, ["--runtime-trace"], [os.path.join(TESTS, "inject-cuda"), "7"])
    assert r.returncode == 7, r.stderr
    assert r.stdout == "initialize returned 1; the program goes on\n"
    lines = [l for l in r.stderr.splitlines() if "CUPTI" in l]
    assert len(lines) == 1, r.stderr
    assert lines[0].startswith("gpuprof[") and "cannot start CUPTI" in lines[0]
    assert "this process runs without gpuprof tracing its CUDA work" in lines[0]


def test_nothing_to_trace_for_cuda_leaves_cupti_alone(tmp_path):
    """With only OpenCL API tracing asked for, the CUDA backend does not touch CUPTI."""
    r = trace(tmp_path, ["--opencl-trace"], [os.path.join(TESTS, "inject-cuda")])
    assert r.returncode == 0, r.stderr
    assert "CUPTI" not in r.stderr


def test_options_off_is_a_usage_error(tmp_path):
    r = trace(tmp_path, ["--kernel-trace=false", "--cuda-runtime-trace=false"], ["true"])
    assert r.returncode == 2
    assert r.stderr.strip() == "gpuprof: trace: every tracing option given is turned off"
