"""gpuprof dump on a running PyTorch program on the GPU, started outside gpuprof: its
threads' stacks read from outside while it computes, through the CUDA driver's and
PyTorch's frames down to the C library's start (an H200 showed the main thread in
cudaDeviceSynchronize, cuCtxSynchronize and libcuda beneath Python's interpreter; the
python3 binary there has no symbol for main), and the program goes on to end with its
own status and output."""
import json
import subprocess
import sys

from conftest import GPUPROF, run

PROGRAM = r"""
import select, sys
import torch
x = torch.randn(2048, 2048, device="cuda")
print("ready", flush=True)
n = 0
while not select.select([sys.stdin], [], [], 0)[0]:
    x = torch.tanh(x @ x)
    torch.cuda.synchronize()
    n += 1
print("done", n > 0, flush=True)
sys.exit(3)
"""


def test_dump_a_pytorch_program(torch_available):
    p = subprocess.Popen([sys.executable, "-c", PROGRAM], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, text=True)
    try:
        assert p.stdout.readline() == "ready\n"
        r = run([GPUPROF, "dump", "--pid", str(p.pid), "--format", "json"], cwd="/")
        assert r.returncode == 0, r.stderr
        [process] = json.loads(r.stdout)
        [main] = [t for t in process["threads"] if t["tid"] == p.pid]
        functions = [f["function"] for f in main["frames"]]
        print(f"{len(process['threads'])} threads; main thread ({main['state']}):",
              " < ".join(functions[:12]))
        assert "__libc_start_main" in functions, functions
        assert "Py_BytesMain" in functions, functions
        assert len(process["threads"]) >= 2  # the CUDA driver's threads beside main
        out, _ = p.communicate("go\n", timeout=60)
        assert (p.returncode, out) == (3, "done True\n")
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
