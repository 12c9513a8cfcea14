#!/bin/sh
# What --memory-allocation-trace costs an allocation-heavy OpenCL loop: tests/e2e/clmem's
# `loop N` (N buffers of 4 KiB made and released in turn) timed by itself, under
# `gpuprof trace --kernel-trace` (allocations not followed) and under
# `--memory-allocation-trace` (each allocation and free recorded, each allocation's stack
# taken), side by side in each of RUNS rounds; prints the median loop time of each and
# the cost per buffer made and released.
# Usage: bench/alloc-stacks.sh [N [RUNS]]   (default 20000 and 5; the build in build/)
set -eu
cd "$(dirname "$0")/.."
n=${1:-20000}
runs=${2:-5}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
clmem=$(pwd)/build/tests/clmem
gpuprof=$(pwd)/build/bin/gpuprof
loop() { sed -n 's/^clmem: loop \([0-9.]*\) s$/\1/p'; }
i=0
while [ "$i" -lt "$runs" ]; do
	i=$((i + 1))
	plain=$("$clmem" loop "$n" | loop)
	rm -rf "$work/k" "$work/m"
	kernel=$(cd "$work" && "$gpuprof" trace --kernel-trace -d k -- "$clmem" loop "$n" 2>/dev/null | loop)
	memory=$(cd "$work" && "$gpuprof" trace --memory-allocation-trace -d m -- "$clmem" loop "$n" 2>/dev/null | loop)
	echo "$plain $kernel $memory"
done > "$work/times"
median() { cut -d' ' -f"$1" "$work/times" | sort -n | sed -n "$(((runs + 1) / 2))p"; }
awk -v n="$n" -v runs="$runs" -v p="$(median 1)" -v k="$(median 2)" -v m="$(median 3)" 'BEGIN {
	printf "%d buffers made and released, medians of %d rounds: alone %.3f s, --kernel-trace %.3f s, --memory-allocation-trace %.3f s\n", n, runs, p, k, m
	printf "per buffer: %.2f us over --kernel-trace, %.2f us over the program alone\n", (m - k) / n * 1e6, (m - p) / n * 1e6
}'
