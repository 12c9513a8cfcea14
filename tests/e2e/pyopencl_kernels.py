"""A pyopencl program (Python loads OpenCL privately, through pyopencl's extension
module): KERNELS launches of one kernel and a read back. Usage: pyopencl_kernels.py N"""
import sys

import numpy as np
import pyopencl as cl

kernels = int(sys.argv[1])
context = cl.create_some_context(interactive=False)
queue = cl.CommandQueue(context)
program = cl.Program(context, "__kernel void twice(__global float *x)"
                              "{ x[get_global_id(0)] *= 2; }").build()
host = np.ones(1024, dtype=np.float32)
buffer = cl.Buffer(context, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR, hostbuf=host)
twice = program.twice
for _ in range(kernels):
    twice(queue, host.shape, None, buffer)
cl.enqueue_copy(queue, host, buffer)
queue.finish()
print(f"pyopencl: {kernels} kernels, x[0] = {host[0]:.0f}")
