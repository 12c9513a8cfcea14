#!/bin/sh
# How often the Python frames of a CPU sample are wrong (torn), on a program that changes
# Python function every few tens of microseconds (tests/e2e/alternating.py: a
# generator in sum(), a list comprehension, a method), under gpuprof sys at 300 and
# 1000 Hz, for each interpreter given (default: Debian's python3.11). A sample of the
# program is torn when an evaluation loop is left without its Python frames, when it
# has no Python frame, when a nested function's frame (X.<locals>.Y) is not right under
# X's (the frames of two moments joined). Counts of stacks, not timings: PERFORMANCE.md
# has the figures.
#
# Usage: bench/python-torn.sh [SECONDS [PYTHON...]]   (default 3 s, /usr/bin/python3.11)
set -eu
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$(pwd)/$BUILD ;; esac
gpuprof=$BUILD/bin/gpuprof
script=$(pwd)/tests/e2e/alternating.py
seconds=${1:-3}
[ $# -gt 0 ] && shift
[ $# -gt 0 ] || set -- /usr/bin/python3.11
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

classify() { # folded stacks on stdin: "samples torn percent reasons"
	python3 -c '
import collections, sys
total = torn = 0
why = collections.Counter()
for line in sys.stdin:
    frames, _, n = line.rstrip("\n").rpartition(" ")
    n, f = int(n), frames.split(";")
    mine = "alternating.py:"
    if not any(x.startswith(mine) or x == "_PyEval_EvalFrameDefault" for x in f):
        continue
    total += n
    py = [i for i, x in enumerate(f) if x.startswith(mine)]
    names = [f[i][len(mine):] for i in py]
    reason = None
    if "_PyEval_EvalFrameDefault" in f:
        reason = "loop unnamed"
    elif not py:
        reason = "no Python frame"
    elif any(".<locals>." in x and (k == 0 or names[k - 1] != x.rsplit(".<locals>.", 1)[0])
             for k, x in enumerate(names)):
        reason = "two moments joined"
    if reason:
        torn += n
        why[reason] += n
print(total, torn, "%.2f" % (100 * torn / max(total, 1)),
      ", ".join(f"{k} {v}" for k, v in sorted(why.items())) or "-")
'
}

printf '%-28s %5s %8s %6s %7s  %s\n' interpreter Hz samples torn "torn %" why
for python in "$@"; do
	version=$("$python" -c 'import sys; print(sys.version.split()[0])')
	for hz in 300 1000; do
		rm -rf "$work/out"
		"$gpuprof" sys --sampling-freq "$hz" -d "$work/out" -- "$python" "$script" "$seconds" \
			>/dev/null 2>&1
		db=$(ls "$work"/out/*/*_results.db | head -n 1)
		"$gpuprof" profile --format folded --all-frames "$db" | classify |
			(read -r samples torn percent why
			 printf '%-28s %5s %8s %6s %7s  %s\n' "$version ($(basename "$python"))" "$hz" \
				"$samples" "$torn" "$percent" "$why")
	done
done
