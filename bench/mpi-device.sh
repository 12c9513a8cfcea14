#!/bin/sh
# Whether gpuprof's MPI CALLS AND THE DEVICE tells a real run's device time in MPI calls
# as the program measures it itself: two Open MPI ranks of bench/mpi-device.c on PoCL
# under gpuprof trace --mpi-trace --kernel-trace, the ranks merged, and rank 0's rows for
# MPI_Barrier (its kernel runs inside) and MPI_Allreduce (its device idle) beside the
# program's own figures (its clock around each call; its kernel's span from OpenCL's
# profiled duration and its completion callback). Prints both and their ratio; says
# whether each busy and idle time is within 20 % (or 5 ms) of the program's.
# Usage: bench/mpi-device.sh [STEPS]   (default 3)
set -eu
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
steps=${1:-3}
gpuprof=$PWD/$BUILD/bin/gpuprof
program=$PWD/$BUILD/bench/mpi-device
[ -x "$program" ] || { echo "bench/mpi-device.sh: $program not built (Open MPI's and OpenCL's headers)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mpirun=${MPIRUN:-mpirun}
(cd "$work" && $mpirun --allow-run-as-root --oversubscribe -n 2 "$gpuprof" trace --mpi-trace \
	--kernel-trace -d out -o 'rank%rank%' -- "$program" "$steps" > own 2> trace.err) ||
	{ cat "$work/trace.err" >&2; exit 1; }
"$gpuprof" merge -o "$work/all.db" "$work/out/rank0_results.db" "$work/out/rank1_results.db" \
	2> /dev/null
"$gpuprof" summary --format csv -u msec "$work/all.db" |
	awk -v RS= '/^# MPI CALLS AND THE DEVICE/' | tail -n +3 > "$work/rows"
echo "rank 0 of 2, $steps steps: time in calls, device busy and idle there (ms), the program's own beside gpuprof's:"
awk -F, -v own="$work/own" 'BEGIN {
	while ((getline line < own) > 0) {
		split(line, w, " ")
		calls[w[1]] = w[2]; in_ms[w[1]] = w[3]; busy[w[1]] = w[4]
	}
	ok = 1
}
{ gsub(/"/, "") }
$2 == 0 && ($4 in calls) {
	f = $4; gin = $6; gbusy = $7; gidle = $8; idle = in_ms[f] - busy[f]
	printf "  %-14s calls %d/%d  in %9.3f / %9.3f  busy %9.3f / %9.3f  idle %9.3f / %9.3f\n",
		f, calls[f], $5, in_ms[f], gin, busy[f], gbusy, idle, gidle
	d1 = gbusy - busy[f]; d2 = gidle - idle
	if (d1 < 0) d1 = -d1
	if (d2 < 0) d2 = -d2
	if (d1 > 5 && d1 > 0.2 * busy[f]) ok = 0
	if (d2 > 5 && d2 > 0.2 * idle) ok = 0
	seen++
}
END {
	if (seen != 2) { print "  the rows of MPI_Barrier and MPI_Allreduce were not found"; exit 1 }
	print ok ? "  within 20 % (or 5 ms) of the figures the program measured" : "  NOT within 20 % of the figures the program measured"
}' "$work/rows"
