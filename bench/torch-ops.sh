#!/bin/sh
# The cost of trace --torch-trace's operator ranges: a PyTorch training loop
# (bench/torch-mlp.py: an MLP of three linear layers, Debian's CPU python3-torch) run
# for SECONDS untraced, under `gpuprof trace --marker-trace` (the recorder, no operator
# hooks) and under `gpuprof trace --torch-trace` (every module forward, functional call
# and backward a range: ten a step), in ROUNDS rotating rounds. Prints each one's steps
# a second (median of the rounds) and the cost of one range: the time a step gained
# under --torch-trace over --marker-trace, divided by the ranges of a step.
#
# Usage: bench/torch-ops.sh [SECONDS [ROUNDS]]   (default 3 and 5)
set -eu
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
case $BUILD in /*) gpuprof=$BUILD/bin/gpuprof ;; *) gpuprof=$(pwd)/$BUILD/bin/gpuprof ;; esac
seconds=${1:-3}
rounds=${2:-5}
python=/usr/bin/python3
script=$(pwd)/bench/torch-mlp.py
"$python" -c 'import torch' 2>/dev/null || { echo "torch-ops: python3-torch is missing" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# one run's steps and seconds (torch-mlp.py prints "torch-mlp: N steps in S s, ...")
run() {
	"$@" 2>"$work/err" | awk '$1 == "torch-mlp:" { print $2, $5 }'
}
for r in $(seq "$rounds"); do
	run "$python" "$script" "$seconds" >> "$work/plain"
	run "$gpuprof" trace --marker-trace -f csv -d "$work/m$r" -- "$python" "$script" "$seconds" \
		>> "$work/marker"
	run "$gpuprof" trace --torch-trace -f csv -d "$work/t$r" -- "$python" "$script" "$seconds" \
		>> "$work/torch"
done
# the ranges of a step, from the first --torch-trace run
ranges=$(cat "$work"/t1/*/*_marker_api_trace.csv | tail -n +2 | wc -l)
first_steps=$(head -1 "$work/torch" | cut -d' ' -f1)
median() { awk '{ print $1 / $2 }' "$1" | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
plain=$(median "$work/plain"); marker=$(median "$work/marker"); torch=$(median "$work/torch")
echo "steps a second, median of $rounds rounds of ${seconds} s ($(nproc) CPUs):"
printf '  untraced                  %.1f\n' "$plain"
printf '  trace --marker-trace      %.1f\n' "$marker"
printf '  trace --torch-trace       %.1f\n' "$torch"
awk -v m="$marker" -v t="$torch" -v r="$ranges" -v n="$first_steps" 'BEGIN {
	per_step = r / n; printf "  ranges a step             %.1f\n", per_step
	printf "  cost of a range           %.1f us\n", (1 / t - 1 / m) / per_step * 1e6 }'
