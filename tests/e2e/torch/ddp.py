"""A small model trained with DistributedDataParallel on gloo, for --torch-trace's
torch.distributed records: STEPS steps, then one all_reduce of 4 floats and a barrier.
Each rank prints its rank, the steps and its gradients' bytes.

    python3 -m torch.distributed.run --nproc_per_node 2 ddp.py [STEPS]"""
import sys

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel


def main():
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 4
    dist.init_process_group("gloo")
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(),
                                torch.nn.Linear(64, 8))
    ddp = DistributedDataParallel(model)
    optimizer = torch.optim.SGD(ddp.parameters(), lr=0.01)
    for _ in range(steps):
        x, y = torch.randn(16, 32), torch.randn(16, 8)
        loss = torch.nn.functional.mse_loss(ddp(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    total = torch.ones(4)
    dist.all_reduce(total)
    dist.barrier()
    grad_bytes = sum(p.numel() * p.element_size() for p in model.parameters())
    print(f"rank {dist.get_rank()} of {dist.get_world_size()}: steps {steps}, gradient bytes "
          f"{grad_bytes}, all_reduce {total[0].item():.0f}", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
