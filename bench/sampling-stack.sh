#!/bin/sh
# How much of each sampled stack to copy (--sampling-stack-size), at 300 Hz of CPU time:
#  1. depth: a PyTorch training loop (bench/torch-mlp.py, Debian's python3-torch) under
#     gpuprof sys and under perf record --call-graph dwarf at the same sizes: the share of
#     samples whose stack reaches the program's entry (_start, or a thread's clone);
#     and the same for a C++ program deep in templates: clang++ (Debian's clang 14)
#     checking a source that instantiates a chain of 800 templates;
#  2. cost: a CPU-bound C loop (tests/split 100), the loop's own seconds untraced, under
#     gpuprof sys and under perf record at each size, median of ROUNDS rotating rounds:
#     what a sample costs the program, (traced - untraced) / (300 x untraced seconds).
# PERFORMANCE.md has the figures.
#
# Usage: bench/sampling-stack.sh [SECONDS [ROUNDS]]   (defaults 4 and 5)
set -eu
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$(pwd)/$BUILD ;; esac
gpuprof=$BUILD/bin/gpuprof
split=$BUILD/tests/split
seconds=${1:-4}
rounds=${2:-5}
script=$(pwd)/bench/torch-mlp.py
PYTHON=${PYTHON:-/usr/bin/python3} # the Debian interpreter, which python3-torch installs into
"$PYTHON" -c "import torch" 2>/dev/null || { echo "sampling-stack: python3-torch is not installed" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"

# share of samples reaching an entry, from folded stacks on stdin ("frames count")
reach() {
	awk '{ n = $NF; total += n; split($1, f, ";")
	       if (f[1] == "_start" || f[1] == "clone" || f[1] == "clone3" || f[1] == "__clone3" ||
		   f[1] == "start_thread") whole += n }
	     END { printf "%d %.1f\n", total, total ? 100 * whole / total : 0 }'
}

echo "== 1. depth: sampled stacks of a PyTorch training loop, $seconds s at 300 Hz ($(nproc) CPUs)"
echo "| stack bytes | gpuprof sys: samples | reaching the entry | perf record: samples | reaching the entry |"
echo "|------------:|---------------------:|-------------------:|---------------------:|-------------------:|"
for size in 7936 16384 32768 65344; do
	"$gpuprof" sys --no-host-metrics --no-device-metrics --sampling-stack-size "$size" -f csv \
		-d "g$size" -- "$PYTHON" "$script" "$seconds" >/dev/null 2>&1
	ours=$(cat g"$size"/*/*_stacks.folded | reach)
	theirs="0 0"
	if command -v perf >/dev/null; then
		perf record -q -e task-clock -F 300 --call-graph dwarf,"$size" -o p"$size".data -- \
			"$PYTHON" "$script" "$seconds" >/dev/null 2>&1
		perf script -i p"$size".data -F ip,sym >p"$size".txt 2>/dev/null
		# one sample per block of frames, innermost first, blank-separated
		theirs=$(awk 'BEGIN { RS = "" } { n = split($0, l, "\n"); split(l[n], f, " ")
			print f[2] " 1" }' p"$size".txt | reach)
		rm -f p"$size".data p"$size".txt
	fi
	echo "$size $ours $theirs" | awk '{ n = "-"; r = "-"
		if ($4) { n = $4; r = sprintf("%.1f %%", $5) }
		printf "| %d | %d | %.1f %% | %s | %s |\n", $1, $2, $3, n, r }'
	rm -rf g"$size"
done


deep=$work/deep-templates.cpp
cat >"$deep" <<'CPP'
#include <regex>
template <int N> struct fib { static constexpr long value = fib<N - 1>::value + fib<N - 2>::value; };
template <> struct fib<1> { static constexpr long value = 1; };
template <> struct fib<0> { static constexpr long value = 0; };
template <int N> struct chain { using next = typename chain<N - 1>::next; };
template <> struct chain<0> { using next = int; };
long use() { chain<800>::next x = fib<80>::value; std::regex r("a+b"); return x; }
CPP
clang=$(command -v clang++-14 || command -v clang++ || true)
if [ -n "$clang" ]; then
	echo
	echo "== 1b. depth: $clang -fsyntax-only on 800 nested template instantiations, 300 Hz"
	echo "| stack bytes | gpuprof sys: samples | reaching the entry | perf record: samples | reaching the entry |"
	echo "|------------:|---------------------:|-------------------:|---------------------:|-------------------:|"
	for size in 7936 16384 32768 65344; do
		"$gpuprof" sys --no-host-metrics --no-device-metrics --sampling-stack-size "$size" -f csv \
			-d "c$size" -- "$clang" -std=c++17 -fsyntax-only -ftemplate-depth=2000 "$deep" \
			>/dev/null 2>&1
		ours=$(cat c"$size"/*/*_stacks.folded | reach)
		theirs="0 0"
		if command -v perf >/dev/null; then
			perf record -q -e task-clock -F 300 --call-graph dwarf,"$size" -o c.data -- \
				"$clang" -std=c++17 -fsyntax-only -ftemplate-depth=2000 "$deep" >/dev/null 2>&1
			theirs=$(perf script -i c.data -F ip,sym 2>/dev/null | awk 'BEGIN { RS = "" } {
				n = split($0, l, "\n"); split(l[n], f, " "); print f[2] " 1" }' | reach)
			rm -f c.data
		fi
		echo "$size $ours $theirs" | awk '{ n = "-"; r = "-"
			if ($4) { n = $4; r = sprintf("%.1f %%", $5) }
			printf "| %d | %d | %.1f %% | %s | %s |\n", $1, $2, $3, n, r }'
		rm -rf c"$size"
	done
fi
echo
echo "== 2. cost: tests/split 100 at 300 Hz, median of $rounds rounds (the loop's own seconds)"
loop() { sed -n 's/.*loop \([0-9.]*\) s.*/\1/p'; }
median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
: >plain
for size in 7936 16384 32768 65344; do : >"g$size.t"; : >"p$size.t"; done
for i in $(seq "$rounds"); do
	"$split" 100 | loop >>plain
	for size in 7936 16384 32768 65344; do
		rm -rf s
		"$gpuprof" sys --no-host-metrics --no-device-metrics --sampling-stack-size "$size" \
			-f sqlite -d s -- "$split" 100 2>/dev/null | loop >>"g$size.t"
		if command -v perf >/dev/null; then
			perf record -q -e task-clock -F 300 --call-graph dwarf,"$size" -o p.data -- \
				"$split" 100 2>/dev/null | loop >>"p$size.t"
			rm -f p.data
		fi
	done
done
plain_s=$(median <plain)
echo "untraced loop: $plain_s s"
echo "| stack bytes | gpuprof sys: loop s | per sample | perf record: loop s | per sample |"
echo "|------------:|--------------------:|-----------:|--------------------:|-----------:|"
for size in 7936 16384 32768 65344; do
	g=$(median <"g$size.t")
	p=$( [ -s "p$size.t" ] && median <"p$size.t" || echo 0)
	awk -v s="$size" -v g="$g" -v p="$p" -v b="$plain_s" 'BEGIN { n = 300 * b
		ps = "-"; pc = "-"
		if (p > 0) { ps = sprintf("%.3f", p); pc = sprintf("%.1f us", (p - b) / n * 1e6) }
		printf "| %d | %.3f | %.1f us | %s | %s |\n", s, g, (g - b) / n * 1e6, ps, pc }'
done
