#!/bin/sh
# Counters for 50 kernels, gpuprof compute profile against Nsight Compute on the same
# program (samples/cuda/vcopy, 50 launches of 16M floats): the speed-of-light block
# (`-b 2.1` against `ncu --section SpeedOfLight`), or with SET=full every block (`--set
# full` against `ncu --set full`); wall-clock time of the whole run, median of ROUNDS, the
# order of the two rotated every round. ncu locks the clocks to base and flushes the
# caches before every pass; gpuprof leaves clocks and caches as the program has them
# (CUPTI's kernel replay restores the memory a kernel writes, not the caches). Prints the
# two medians and the ratio ncu / gpuprof.
#   bench/gpu/compute-vs-ncu.sh [ROUNDS]      SET=full bench/gpu/compute-vs-ncu.sh [ROUNDS]
set -eu
cd "$(dirname "$0")/../.."
BUILD=$(cd "${BUILD:-build}" && pwd) || exit 1
ROUNDS=${1:-3}
VCOPY="$BUILD/samples/cuda/vcopy"
if ! command -v ncu >/dev/null 2>&1; then
	echo "skipped: compute profile against ncu (Nsight Compute's ncu is not installed)"
	exit 77
fi
if ! "$VCOPY" -n 1 -i 0 >/dev/null 2>&1; then
	echo "skipped: compute profile against ncu (no usable CUDA device)"
	exit 77
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
now() { date +%s.%N; }
SET=${SET:-speed-of-light}
case "$SET" in
speed-of-light) ours="-b 2.1" theirs="--section SpeedOfLight" ;;
full) ours="--set full" theirs="--set full" ;;
*) echo "SET is speed-of-light or full, not '$SET'" >&2; exit 2 ;;
esac
run_gpuprof() {
	# shellcheck disable=SC2086
	"$BUILD/bin/gpuprof" compute profile -q $ours --no-roof --overwrite \
		--output-directory "$work/w" -- "$VCOPY" -n 16777216 -i 50 >/dev/null
}
# shellcheck disable=SC2086
run_ncu() { ncu $theirs "$VCOPY" -n 16777216 -i 50 >"$work/ncu.txt"; }
: > "$work/times"
round=0
while [ "$round" -lt "$ROUNDS" ]; do
	for tool in $( [ $((round % 2)) -eq 0 ] && echo "gpuprof ncu" || echo "ncu gpuprof"); do
		start=$(now)
		"run_$tool"
		echo "$tool $(echo "$(now) - $start" | bc)" >> "$work/times"
	done
	round=$((round + 1))
done
median() { grep "^$1 " "$work/times" | cut -d' ' -f2 | sort -n | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
g=$(median gpuprof) n=$(median ncu)
printf "%s, 50 kernels: gpuprof %.2f s, ncu %.2f s, ncu/gpuprof %.2f\n" \
	"$SET" "$g" "$n" "$(echo "$n / $g" | bc -l)"
