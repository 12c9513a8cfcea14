"""The calls of a small torch module, for the cost of trace --torch-trace's operator
ranges (bench/torch-ops.sh): nn.Linear(4, 4) on one row, CALLS times after a warm-up,
each call one range (its forward; F.linear is torch's own builtin, not wrapped). With
"backward", each call is a forward with gradients and its backward: three ranges (the
forward, torch.autograd.backward, the Linear's backward) and the hooks on the autograd
node. Prints the calls and their seconds.

    python3 bench/torch-ops.py [CALLS [backward]]"""
import sys
import time

import torch
from torch import nn


def main(calls, backward):
    layer = nn.Linear(4, 4)
    x = torch.ones(1, 4)
    if backward:
        for _ in range(1000):
            layer(x).sum().backward()
        start = time.perf_counter()
        for _ in range(calls):
            layer(x).sum().backward()
        seconds = time.perf_counter() - start
        print(f"torch-ops: {calls} calls in {seconds:.6f} s")
        return
    with torch.no_grad():
        for _ in range(1000):
            layer(x)
        start = time.perf_counter()
        for _ in range(calls):
            layer(x)
        seconds = time.perf_counter() - start
    print(f"torch-ops: {calls} calls in {seconds:.6f} s")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 200000,
         len(sys.argv) > 2 and sys.argv[2] == "backward")
