"""Fixtures of the GPU tests: the end-to-end tests' helpers (tests/e2e/conftest.py), and
the CUDA programs. With GPU_SUMMARY naming a file, each test's outcome is appended to it
as it ends (tests/gpu/run-all.sh puts it in its summary): one line, PASS, FAIL or SKIP,
the test, its seconds, and what it printed (the figures it measured against a peer) or
why it failed or was skipped."""
import importlib.util
import os
import sys

import pytest

_spec = importlib.util.spec_from_file_location(
    "e2e_helpers", os.path.join(os.path.dirname(__file__), "..", "e2e", "conftest.py"))
e2e = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(e2e)

BUILD, GPUPROF, HOST = e2e.BUILD, e2e.GPUPROF, e2e.HOST
run, trace, outputs = e2e.run, e2e.trace, e2e.outputs
CUDA_SAMPLES = os.path.join(BUILD, "samples", "cuda")
GPU_TESTS = os.path.join(BUILD, "tests", "gpu")
TRAIN = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "samples",
                                     "python", "train.py"))


def _no_gpu():
    """Why the GPU tests cannot run here (tests/gpu/run.sh's checks), or None."""
    if not os.path.exists(os.path.join(BUILD, "lib", "gpuprof", "libgpuprof-cuda.so")):
        return "gpuprof was built without the CUDA toolkit"
    probe = run([os.path.join(CUDA_SAMPLES, "vcopy"), "-n", "1", "-i", "0"], cwd="/")
    if probe.returncode != 0:
        lines = (probe.stderr or probe.stdout).strip().splitlines()
        return "no usable CUDA device: " + (lines[-1] if lines else f"exit {probe.returncode}")
    return None


def pytest_collection_modifyitems(config, items):
    """Run straight through pytest on a machine without a GPU, every test is skipped
    with the reason (tests/gpu/run.sh says it once and exits 77)."""
    reason = _no_gpu() if items else None
    if reason:
        for item in items:
            item.add_marker(pytest.mark.skip(reason=reason))


def only_process(directory):
    found = outputs(directory)
    assert len(found) == 1, [o.prefix for o in found]
    return found[0]


@pytest.fixture
def cuda_sample():
    def path(name):
        p = os.path.join(CUDA_SAMPLES, name)
        assert os.access(p, os.X_OK), f"{p} is not built"
        return p
    return path


@pytest.fixture
def torch_available():
    r = run([sys.executable, "-c", "import torch; assert torch.cuda.is_available()"], cwd="/")
    if r.returncode != 0:
        pytest.skip("PyTorch with CUDA is not installed")


def _one_line(text, limit=400):
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[:limit - 3] + "..."


def pytest_runtest_logreport(report):
    path = os.environ.get("GPU_SUMMARY")
    if not path or (report.when != "call" and not (report.failed or report.skipped)):
        return
    if report.skipped:
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else report.longrepr
        line = f"SKIP  {report.nodeid}: {_one_line(reason)}"
    elif report.failed:
        message = getattr(report.longrepr, "reprcrash", None)
        line = (f"FAIL  {report.nodeid} ({report.duration:.1f} s"
                f"{', in ' + report.when if report.when != 'call' else ''}): "
                f"{_one_line(message.message if message else report.longrepr)}")
    else:
        figures = _one_line("; ".join(l for l in report.capstdout.splitlines() if l.strip()))
        line = f"PASS  {report.nodeid} ({report.duration:.1f} s){': ' + figures if figures else ''}"
    with open(path, "a") as f:
        f.write(line + "\n")
