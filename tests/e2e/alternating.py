"""alternating.py SECONDS: a loop that changes Python function every few tens of
microseconds, for the Python frames of samples (test_sampling_trust.py,
bench/python-torn.sh): a generator consumed by sum(), a list comprehension and a method
whose generator sum() consumes too, called in turn; prints the CPU seconds its thread
got."""
import sys
import time


class Box:
    def __init__(self, n):
        self.n = n

    def method(self):
        return sum(i * 3 for i in range(self.n))


def gen_sum(n):
    return sum(i * i for i in range(n))


def comprehension(n):
    return [i + 1 for i in range(n)]


def main(seconds):
    end = time.process_time() + seconds
    b = Box(500)
    while time.process_time() < end:
        gen_sum(500)
        comprehension(500)
        b.method()


main(float(sys.argv[1]) if len(sys.argv) > 1 else 3)
print(f"alternating: {time.thread_time():.3f} CPU seconds")
