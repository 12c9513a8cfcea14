"""split.py: a Python program whose CPU time splits 70/30 between two Python functions,
for the call-stack sampling tests. `python3 split.py ROUNDS` runs ROUNDS rounds of
seventy() then thirty(), both calling work(); prints the CPU seconds of its thread (what
is sampled: gpuprof's own threads, costly under a sanitizer, are not), and of those the
user seconds (samples are of user time; the system time a sanitizer's runtime adds
depends on the kernel).
`python3 split.py map ROUNDS` spends its time in mapped(), which the C function map()
calls back from via_map(): Python, C, then Python again on one stack."""
import resource
import sys
import time


def work(n):
    total = 0.0
    for i in range(n):
        total += i * 0.5
    return total


def seventy():
    return work(700000)


def thirty():
    return work(300000)


def mapped(i):
    total = 0.0
    for k in range(2000):
        total += i * k * 0.5
    return total


def via_map(rounds):
    for _ in range(rounds):
        sum(map(mapped, range(50)))


def main(rounds):
    start = time.monotonic()
    for _ in range(rounds):
        seventy()
        thirty()
    print("split.py: %.3f CPU seconds, loop %.6f s, %.3f user seconds" % (
        time.thread_time(), time.monotonic() - start,
        resource.getrusage(resource.RUSAGE_THREAD).ru_utime))


if __name__ == "__main__":
    if sys.argv[1:2] == ["map"]:
        via_map(int(sys.argv[2]))
        print("split.py: %.3f CPU seconds" % time.thread_time())
    else:
        main(int(sys.argv[1]) if len(sys.argv) > 1 else 100)
