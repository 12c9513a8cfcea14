#!/bin/sh
# The cost of trace --torch-trace's operator ranges: a small torch module called CALLS
# times (bench/torch-ops.py, Debian's CPU python3-torch: each call one range) untraced,
# under `gpuprof trace --marker-trace` (the recorder, no operator hooks) and under
# `gpuprof trace --torch-trace`, in ROUNDS rotating rounds. Prints each one's time a
# call (median of the rounds) and the cost of a range: the time a call gained under
# --torch-trace over --marker-trace (the hook, the name, the ctypes call, the record).
#
# With MODE backward, each call is a training step of the module (forward with gradients,
# backward): the cost is then that of its three ranges (its forward,
# torch.autograd.backward, its backward from hooks on the autograd node).
# Usage: bench/torch-ops.sh [CALLS [ROUNDS [MODE]]]   (default 200000, 5, forward)
set -eu
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
case $BUILD in /*) gpuprof=$BUILD/bin/gpuprof ;; *) gpuprof=$(pwd)/$BUILD/bin/gpuprof ;; esac
calls=${1:-200000}
rounds=${2:-5}
mode=${3:-forward}
python=/usr/bin/python3
script=$(pwd)/bench/torch-ops.py
"$python" -c 'import torch' 2>/dev/null || { echo "torch-ops: python3-torch is missing" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# one run's microseconds a call (torch-ops.py prints "torch-ops: N calls in S s")
run() {
	"$@" 2>"$work/err" | awk '$1 == "torch-ops:" { printf "%.4f\n", $5 / $2 * 1e6 }'
}
for r in $(seq "$rounds"); do
	run "$python" "$script" "$calls" "$mode" >> "$work/plain"
	run "$gpuprof" trace --marker-trace -f csv -d "$work/m$r" -- "$python" "$script" "$calls" \
		"$mode" >> "$work/marker"
	run "$gpuprof" trace --torch-trace -f csv -d "$work/t$r" -- "$python" "$script" "$calls" \
		"$mode" >> "$work/torch"
	rm -rf "$work/m$r" "$work/t$r"
done
median() { sort -n "$1" | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
plain=$(median "$work/plain"); marker=$(median "$work/marker"); torch=$(median "$work/torch")
echo "microseconds a call ($mode) of nn.Linear(4, 4), median of $rounds rounds of $calls ($(nproc) CPUs):"
echo "  untraced                $plain"
echo "  trace --marker-trace    $marker"
echo "  trace --torch-trace     $torch"
if [ "$mode" = backward ]; then
	awk -v m="$marker" -v t="$torch" 'BEGIN { printf "  cost of its ranges      %.2f us\n", t - m }'
else
	awk -v m="$marker" -v t="$torch" 'BEGIN { printf "  cost of a range         %.2f us\n", t - m }'
fi
