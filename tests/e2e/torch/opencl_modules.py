"""torch modules whose forward launches OpenCL kernels (pyopencl, on PoCL), for trace
--torch-trace's kernel attribution: a Pipe of a Scale and a Shift module, each running
its kernel, called STEPS times; then one more scale kernel outside any operator."""
import sys

import numpy as np
import pyopencl as cl
import torch
from torch import nn

context = cl.create_some_context(interactive=False)
queue = cl.CommandQueue(context)
program = cl.Program(context, """
__kernel void scale(__global float *x) { x[get_global_id(0)] *= 2.0f; }
__kernel void shift(__global float *x) { x[get_global_id(0)] += 1.0f; }
""").build()
data = np.ones(64, dtype=np.float32)
buffer = cl.Buffer(context, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR, hostbuf=data)


class Scale(nn.Module):
    def forward(self, x):
        program.scale(queue, (64,), None, buffer)
        queue.finish()
        return x


class Shift(nn.Module):
    def forward(self, x):
        program.shift(queue, (64,), None, buffer)
        queue.finish()
        return x


class Pipe(nn.Module):
    def __init__(self):
        super().__init__()
        self.first = Scale()
        self.second = Shift()

    def forward(self, x):
        return self.second(self.first(x))


pipe = Pipe()
for _ in range(int(sys.argv[1])):
    pipe(torch.zeros(1))
program.scale(queue, (64,), None, buffer)
queue.finish()
cl.enqueue_copy(queue, data, buffer)
print(data[0])
