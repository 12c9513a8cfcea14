"""A PyTorch model whose modules launch OpenCL kernels through pyopencl (on PoCL), as a
user who moves a layer to a device would: Scale.forward multiplies by a kernel, Shift
.forward adds by another, STEPS steps of both. Usage: torch_pyopencl.py STEPS"""
import sys

import numpy as np
import pyopencl as cl
import torch

context = cl.create_some_context(interactive=False)
queue = cl.CommandQueue(context)
program = cl.Program(context, """
__kernel void scale(__global float *x, float k) { x[get_global_id(0)] *= k; }
__kernel void shift(__global float *x, float k) { x[get_global_id(0)] += k; }
""").build()


class Scale(torch.nn.Module):
    """x * k, by a kernel on the tensor's data."""

    def __init__(self, k):
        super().__init__()
        self.k = np.float32(k)

    def forward(self, x):
        host = x.detach().numpy().copy()
        buffer = cl.Buffer(context, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR,
                           hostbuf=host)
        program.scale(queue, host.shape, None, buffer, self.k)
        cl.enqueue_copy(queue, host, buffer)
        return torch.from_numpy(host)


class Shift(torch.nn.Module):
    """x + k, by a kernel on the tensor's data."""

    def __init__(self, k):
        super().__init__()
        self.k = np.float32(k)

    def forward(self, x):
        host = x.detach().numpy().copy()
        buffer = cl.Buffer(context, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR,
                           hostbuf=host)
        program.shift(queue, host.shape, None, buffer, self.k)
        cl.enqueue_copy(queue, host, buffer)
        return torch.from_numpy(host)


model = torch.nn.Sequential(Scale(2.0), Shift(1.0))
x = torch.ones(256)
for _ in range(int(sys.argv[1])):
    y = model(x)
queue.finish()
print(f"torch_pyopencl: {sys.argv[1]} steps, y[0] = {y[0].item():.0f}")
