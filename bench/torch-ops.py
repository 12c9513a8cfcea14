"""The calls of a small torch module, for the cost of trace --torch-trace's operator
ranges (bench/torch-ops.sh): nn.Linear(4, 4) on one row, CALLS times after a warm-up,
each call one range (its forward; F.linear is torch's own builtin, not wrapped).
Prints the calls and their seconds.

    python3 bench/torch-ops.py [CALLS]"""
import sys
import time

import torch
from torch import nn


def main(calls):
    layer = nn.Linear(4, 4)
    x = torch.ones(1, 4)
    with torch.no_grad():
        for _ in range(1000):
            layer(x)
        start = time.perf_counter()
        for _ in range(calls):
            layer(x)
        seconds = time.perf_counter() - start
    print(f"torch-ops: {calls} calls in {seconds:.6f} s")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 200000)
