"""A Python program to dump while it waits (gpuprof dump): its main thread in
sys.stdin.readline() under level_b <- level_a <- main; a worker thread waiting on an
event inside a generator (produce, driven by consume); a spinner running Python, which
holds the GIL (nobody else asks for it: the others wait in system calls). It prints
"ready" once the others wait, and "done" once a line comes in."""
import sys
import threading

ready = threading.Event()
never = threading.Event()


def produce():
    ready.set()
    never.wait()
    yield 1


def consume(items):
    return sum(items)


def worker_body():
    consume(produce())


def spin():
    n = 0
    while True:
        n += 1


def level_b():
    print("ready", flush=True)
    return sys.stdin.readline()


def level_a():
    return level_b()


def main():
    worker = threading.Thread(target=worker_body, daemon=True)
    worker.start()
    ready.wait()
    threading.Thread(target=spin, daemon=True).start()
    level_a()
    print("done", flush=True)


main()
