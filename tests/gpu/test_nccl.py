"""--nccl-trace on a real NCCL: PyTorch's NCCL process group (one rank: the machine has
one GPU, and NCCL refuses two ranks on one device) under gpuprof trace. PyTorch loads its
NCCL privately (RTLD_LOCAL), the case the interposer must find NCCL in; each collective
recorded with its bytes, numbered on its communicator, the program's results unchanged."""
import os
import socket
import sys

from conftest import only_process, trace

PROGRAM = r"""
import os, sys
import torch
import torch.distributed as dist
dist.init_process_group("nccl", rank=0, world_size=1, device_id=torch.device("cuda:0"))
x = torch.ones(1024, device="cuda")
for _ in range(3):
    dist.all_reduce(x)
y = torch.arange(256, dtype=torch.int32, device="cuda")
dist.broadcast(y, 0)
torch.cuda.synchronize()
print("sum", int(x.sum().item()), int(y.sum().item()))
dist.destroy_process_group()
"""


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_pytorch_nccl_collectives(tmp_path, torch_available):
    env = dict(os.environ, MASTER_ADDR="127.0.0.1", MASTER_PORT=str(free_port()))
    r = trace(tmp_path, ["--nccl-trace", "--kernel-trace"], [sys.executable, "-c", PROGRAM],
              env=env)
    assert r.returncode == 0, r.stderr
    assert "sum 1024 32640" in r.stdout  # one rank: sums of itself
    out = only_process(tmp_path)
    rows = out.query("SELECT function, communicator, communicator_size, root, bytes_sent, "
                     "bytes_received, sequence, result FROM mpi_calls "
                     "WHERE domain = 'NCCL' ORDER BY call_id")
    collectives = [r for r in rows if r["function"] in ("ncclAllReduce", "ncclBroadcast")]
    print("NCCL calls:", [r["function"] for r in rows])
    assert [(r["function"], r["bytes_sent"], r["bytes_received"], r["root"], r["result"])
            for r in collectives] == \
        [("ncclAllReduce", 4096, 4096, -1, 0)] * 3 + [("ncclBroadcast", 1024, 0, 0, 0)]
    comm = collectives[0]["communicator"]
    assert comm and comm.startswith("nccl-")
    assert [(r["communicator"], r["communicator_size"], r["sequence"]) for r in collectives] \
        == [(comm, 1, k) for k in range(1, 5)]
