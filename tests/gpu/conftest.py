"""Fixtures of the GPU tests: the end-to-end tests' helpers (tests/e2e/conftest.py), and
the CUDA programs."""
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
