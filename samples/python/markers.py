"""Marker ranges from Python through ctypes, with no package to install.

    gpuprof trace --marker-trace -- python3 samples/python/markers.py

`gpuprof trace` makes libgpuprof-markers findable by name; outside it the library is
found where `make install` put it, and without it the script runs unannotated."""
import ctypes
import time

try:
    markers = ctypes.CDLL("libgpuprof-markers.so.1")
    markers.gpuprof_range_push.argtypes = [ctypes.c_char_p]
    markers.gpuprof_range_push.restype = ctypes.c_int
    markers.gpuprof_range_pop.restype = ctypes.c_int
    markers.gpuprof_mark.argtypes = [ctypes.c_char_p]
    markers.gpuprof_name_thread.argtypes = [ctypes.c_char_p]
except OSError:
    markers = None


class Range:
    """with Range("name"): ... records a range around the block."""

    def __init__(self, name):
        self.name = name.encode()

    def __enter__(self):
        if markers:
            markers.gpuprof_range_push(self.name)

    def __exit__(self, *exc):
        if markers:
            markers.gpuprof_range_pop()


def main():
    if markers:
        markers.gpuprof_name_thread(b"python main")
    for epoch in range(2):
        with Range(f"epoch {epoch}"):
            for step in range(3):
                with Range("step"):
                    time.sleep(0.001)
            if markers:
                markers.gpuprof_mark(f"epoch {epoch} done".encode())


if __name__ == "__main__":
    main()
