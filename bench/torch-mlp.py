"""A small training loop with Debian's CPU build of PyTorch, for the call-stack sampling
benchmarks (bench/sampling-stack.sh): an MLP trained on random data for a given time,
its work in train_step() and data_prep(). Prints the loop's steps and seconds, and the
CPU time of the whole process (its start included), every thread's.

    python3 bench/torch-mlp.py [SECONDS]"""
import resource
import sys
import time

import torch
from torch import nn


def data_prep(batch):
    x = torch.randn(batch, 256)
    y = (x[:, :10].sum(dim=1) > 0).long()
    return x, y


def train_step(model, optimizer, x, y):
    optimizer.zero_grad()
    loss = nn.functional.cross_entropy(model(x), y)
    loss.backward()
    optimizer.step()
    return loss


def main(seconds):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(256, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(),
                          nn.Linear(512, 10))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    start = time.perf_counter()
    steps = 0
    while time.perf_counter() - start < seconds:
        x, y = data_prep(64)
        train_step(model, optimizer, x, y)
        steps += 1
    usage = resource.getrusage(resource.RUSAGE_SELF)
    print(f"torch-mlp: {steps} steps in {time.perf_counter() - start:.3f} s, "
          f"process CPU {usage.ru_utime + usage.ru_stime:.3f} s")


if __name__ == "__main__":
    main(float(sys.argv[1]) if len(sys.argv) > 1 else 4.0)
