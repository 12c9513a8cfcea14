#!/bin/sh
# What --mpi-trace costs on small messages: two ranks (Open MPI, on this machine) ping-pong
# N messages of 8 bytes (bench/mpi-rate.c), untraced, under gpuprof trace without MPI
# tracing, and under gpuprof trace --mpi-trace, interleaved ROUNDS times; medians of the
# loop's time, the ratios to untraced and the cost per MPI call.
# Usage: bench/mpi-overhead.sh [N [ROUNDS]]   (defaults 200000 7)
set -eu
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
n=${1:-200000}
rounds=${2:-7}
gpuprof=$BUILD/bin/gpuprof
rate=$BUILD/bench/mpi-rate
[ -x "$rate" ] || { echo "bench/mpi-overhead.sh: $rate not built (Open MPI's headers: libopenmpi-dev)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mpirun=${MPIRUN:-mpirun}
launch="$mpirun --allow-run-as-root --oversubscribe -n 2"
: > "$work/plain"; : > "$work/trace"; : > "$work/mpi"
for i in $(seq "$rounds"); do
	$launch "$rate" "$n" | cut -d' ' -f1 >> "$work/plain"
	(cd "$work" && $launch "$OLDPWD/$gpuprof" trace --kernel-trace -d out -- "$OLDPWD/$rate" "$n" 2>/dev/null) | cut -d' ' -f1 >> "$work/trace"
	rm -rf "$work/out"
	(cd "$work" && $launch "$OLDPWD/$gpuprof" trace --mpi-trace -d out -- "$OLDPWD/$rate" "$n" 2>/dev/null) | cut -d' ' -f1 >> "$work/mpi"
	rm -rf "$work/out"
done
median() { sort -g "$1" | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
plain=$(median "$work/plain"); traced=$(median "$work/trace"); mpi=$(median "$work/mpi")
echo "message rate, 2 ranks, $n round trips of 8 bytes, median of $rounds interleaved rounds:"
printf '  untraced                      %.3f s\n' "$plain"
awk -v p="$plain" -v t="$traced" -v m="$mpi" -v n="$n" 'BEGIN {
	printf "  gpuprof trace (no MPI)        %.3f s  %.2fx\n", t, t / p
	printf "  gpuprof trace --mpi-trace     %.3f s  %.2fx   %.0f ns per MPI call (2 calls per round trip and rank)\n", m, m / p, (m - p) * 1e9 / (2 * n)
}'
