"""A Python program to dump while it waits (gpuprof dump): its main thread in
sys.stdin.readline() under level_b <- level_a <- main; a worker thread waiting on an
event inside a generator (produce, driven by consume). It prints "ready" once both
wait, and "done" once a line comes in."""
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


def level_b():
    print("ready", flush=True)
    return sys.stdin.readline()


def level_a():
    return level_b()


def main():
    worker = threading.Thread(target=worker_body, daemon=True)
    worker.start()
    ready.wait()
    level_a()
    print("done", flush=True)


main()
