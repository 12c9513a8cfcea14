"""torch.distributed under --torch-trace, on Debian's CPU PyTorch with gloo: two ranks
train a small DistributedDataParallel model (tests/e2e/torch/ddp.py); each step's
gradient all-reduce is an operator inside the backward pass and a communication record
with the gradients' bytes, numbered alike on both ranks; merged, the ranks' collectives
are analysed as MPI's are.

The ranks are started as torch.distributed.run starts them (RANK, WORLD_SIZE,
MASTER_ADDR, MASTER_PORT): Debian 12's torchrun (torch 1.13 on Python 3.11) fails on its
own before starting any ("'NoneType' object has no attribute 'get'" in its redirects)."""
import csv
import os
import socket
import sqlite3
import subprocess

import pytest

from conftest import GPUPROF, merged_collectives
from test_torch_trace import PYTHON, has_torch

DDP = os.path.join(os.path.dirname(os.path.abspath(__file__)), "torch", "ddp.py")
STEPS, RANKS = 3, 2
GRADIENT_BYTES = (32 * 64 + 64 + 64 * 8 + 8) * 4  # the model's parameters, float32

pytestmark = [
    pytest.mark.skipif(not has_torch(), reason="python3-torch is not installed"),
    # its report is of PyTorch's own threads: c10d::ProcessGroupGloo::AsyncWork's condition
    # variable destroyed by the main thread while gloo's worker broadcasts on it
    pytest.mark.skipif(os.environ.get("GPUPROF_SANITIZER") == "thread",
                       reason="ThreadSanitizer reports a data race inside PyTorch's gloo "
                              "process group (libtorch_cpu), which ends the program"),
]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_ddp_all_reduces_per_step(tmp_path):
    port = str(free_port())
    ranks = []
    for rank in range(RANKS):
        env = dict(os.environ, RANK=str(rank), WORLD_SIZE=str(RANKS), LOCAL_RANK=str(rank),
                   MASTER_ADDR="127.0.0.1", MASTER_PORT=port)
        ranks.append(subprocess.Popen(
            [GPUPROF, "trace", "--torch-trace", "-d", "out", "-o", "rank%rank%", "--",
             PYTHON, DDP, str(STEPS)], cwd=tmp_path, env=env, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True))
    for rank, p in enumerate(ranks):
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0, out + err
        assert (f"rank {rank} of {RANKS}: steps {STEPS}, gradient bytes {GRADIENT_BYTES}, "
                f"all_reduce {RANKS}") in out

    for rank in range(RANKS):
        db = str(tmp_path / "out" / f"rank{rank}_results.db")
        with sqlite3.connect(db) as con:
            calls = con.execute(
                "SELECT domain, function, communicator, communicator_size, sequence, "
                "bytes_sent, bytes_received, start, end FROM mpi_calls ORDER BY sequence"
            ).fetchall()
            backward = con.execute(
                "SELECT start, end FROM markers WHERE name = 'torch.autograd.backward' "
                "ORDER BY start").fetchall()
            in_backward = con.execute(
                "SELECT COUNT(*) FROM markers WHERE name = "
                "'torch.autograd.backward/torch.distributed.all_reduce'").fetchone()[0]
        assert [c[:5] for c in calls] == \
            [("TORCH_DISTRIBUTED", "torch.distributed.all_reduce", "WORLD", RANKS, s)
             for s in range(1, STEPS + 2)] + \
            [("TORCH_DISTRIBUTED", "torch.distributed.barrier", "WORLD", RANKS, STEPS + 2)]
        assert len(backward) == STEPS and in_backward == STEPS
        # each step's backward pass all-reduced exactly the gradients' bytes
        for start, end in backward:
            inside = [c for c in calls if c[1] == "torch.distributed.all_reduce"
                      and start <= c[7] <= end]
            assert sum(c[5] for c in inside) == GRADIENT_BYTES
            assert sum(c[6] for c in inside) == GRADIENT_BYTES
        explicit = calls[STEPS]
        assert (explicit[5], explicit[6]) == (16, 16)  # torch.ones(4)
        with open(tmp_path / "out" / f"rank{rank}_torch_distributed_api_trace.csv") as f:
            rows = list(csv.DictReader(f))
        assert [r["Function"] for r in rows] == [c[1] for c in sorted(calls, key=lambda c: c[7])]
        assert {r["Domain"] for r in rows} == {"TORCH_DISTRIBUTED_API"}

    rows = {(r["Function"], r["Communicator"]): r for r in merged_collectives(tmp_path, RANKS)}
    assert rows[("torch.distributed.all_reduce", "WORLD")]["Instances"] == str(STEPS + 1)
    assert rows[("torch.distributed.all_reduce", "WORLD")]["Ranks"] == str(RANKS)
    assert rows[("torch.distributed.barrier", "WORLD")]["Instances"] == "1"
