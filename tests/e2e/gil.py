"""gil.py SECONDS: two threads for the --gil tests: the main thread spins in Python,
holding the GIL; the other hashes a large buffer in C, which releases the GIL while it
hashes (hashlib, for data larger than 2 KiB), so that it runs on the CPU without the GIL
most of the time. Prints each thread's id and CPU seconds."""
import hashlib
import sys
import threading
import time


def spin_python(until):
    n = 0
    while time.monotonic() < until:
        n += 1
    return n


def hash_in_c(until, out):
    data = b"x" * (64 << 20)
    while time.monotonic() < until:
        hashlib.sha256(data).digest()
    out.append((threading.get_native_id(), time.thread_time()))


def main(seconds):
    until = time.monotonic() + seconds
    out = []
    worker = threading.Thread(target=hash_in_c, args=(until, out))
    worker.start()
    print("gil.py: started", flush=True)
    spin_python(until)
    worker.join()
    print("gil.py: main %d %.3f, hashing %d %.3f CPU seconds" % (
        threading.get_native_id(), time.thread_time(), out[0][0], out[0][1]))


if __name__ == "__main__":
    main(float(sys.argv[1]))
