"""generators.py SECONDS: Python code that keeps re-entering the interpreter, for the
call-stack sampling tests: a generator consumed by sum() (C), a coroutine run by a small
event loop of its own, and a key function called back from sorted() (C). Each part runs
SECONDS / 3 of CPU time under main(); prints the CPU seconds used."""
import sys
import time


def squares(n):
    return sum(i * i for i in range(n))


def by_generator(until):
    while time.process_time() < until:
        squares(2000)


async def step(n):
    return n * n


async def chain(n):
    total = 0
    for i in range(n):
        total += await step(i)
    return total


def by_coroutine(until):
    while time.process_time() < until:
        c = chain(500)
        try:
            c.send(None)
        except StopIteration:
            pass


def by_callback(until):
    data = list(range(2000, 0, -1))
    while time.process_time() < until:
        sorted(data, key=lambda x: -x)


def main(seconds):
    start = time.process_time()
    by_generator(start + seconds / 3)
    by_coroutine(start + 2 * seconds / 3)
    by_callback(start + seconds)
    print("generators.py: %.3f CPU seconds" % (time.process_time() - start))


main(float(sys.argv[1]) if len(sys.argv) > 1 else 3)
