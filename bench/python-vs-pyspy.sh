#!/bin/sh
# gpuprof sys beside py-spy (record) on a Python program whose time splits 70/30 between
# two functions (tests/e2e/split.py: seventy() and thirty(), each calling work()), for
# each interpreter given: the share of seventy() in each tool's samples, the samples
# against the rate times the CPU time the program measured itself, and the program's
# loop time against a run alone (its slowdown), at 100 and 1000 Hz. py-spy from PyPI
# (pip install py-spy), found on PATH or given as PYSPY.
#
# Usage: bench/python-vs-pyspy.sh [ROUNDS [PYTHON...]]   (default 60 rounds, Debian's
#        python3.11; pyenv's: ~/.pyenv/versions/3.12.1/bin/python3.12 ...)
set -eu
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$(pwd)/$BUILD ;; esac
gpuprof=$BUILD/bin/gpuprof
script=$(pwd)/tests/e2e/split.py
pyspy=${PYSPY:-$(command -v py-spy || true)}
[ -n "$pyspy" ] || { echo "py-spy not found: pip install py-spy, or set PYSPY" >&2; exit 2; }
rounds=${1:-60}
[ $# -gt 0 ] && shift
[ $# -gt 0 ] || set -- /usr/bin/python3.11
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# the share of seventy() and the count of samples in folded stacks ("frames count")
shares() {
	awk '{ n = $NF; total += n; if ($0 ~ /seventy/) s += n; else if ($0 ~ /thirty/) t += n }
	     END { printf "%.3f %d", (s + t) ? s / (s + t) : 0, total }' "$1"
}
loop() { sed -n 's/.*loop \([0-9.]*\) s.*/\1/p' "$1"; }
cpu() { sed -n 's/^split.py: \([0-9.]*\) CPU seconds.*/\1/p' "$1"; }

printf "%-10s %5s %-8s %7s %8s %9s %9s\n" python Hz tool seventy samples expected slowdown
for python in "$@"; do
	version=$("$python" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
	"$python" "$script" "$rounds" > "$work/alone"
	alone=$(loop "$work/alone")
	for hz in 100 1000; do
		rm -rf "$work/g" && mkdir "$work/g"
		(cd "$work/g" && "$gpuprof" sys --no-host-metrics --no-device-metrics \
			--sampling-freq "$hz" -- "$python" "$script" "$rounds" > out 2> err)
		set -- $(shares "$(ls "$work"/g/*/*_stacks.folded)")
		printf "%-10s %5s %-8s %7s %8s %9.0f %9.3f\n" "$version" "$hz" gpuprof "$1" "$2" \
			"$(echo "$hz * $(cpu "$work/g/out")" | bc -l)" \
			"$(echo "$(loop "$work/g/out") / $alone" | bc -l)"
		# (py-spy 0.4 may end with "No child process" after writing its samples)
		rm -f "$work/pyspy.txt"
		"$pyspy" record -r "$hz" -f raw -o "$work/pyspy.txt" -- "$python" "$script" \
			"$rounds" > "$work/p.out" 2> "$work/p.err" || [ -s "$work/pyspy.txt" ]
		set -- $(shares "$work/pyspy.txt")
		printf "%-10s %5s %-8s %7s %8s %9.0f %9.3f\n" "$version" "$hz" py-spy "$1" "$2" \
			"$(echo "$hz * $(cpu "$work/p.out")" | bc -l)" \
			"$(echo "$(loop "$work/p.out") / $alone" | bc -l)"
	done
done
