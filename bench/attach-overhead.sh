#!/bin/sh
# What sampling a process that is already running costs it, gpuprof beside perf: the loop
# of bench/attach-target (CPU work through three levels of calls, about 0.9 s) alone,
# under `gpuprof sys --pid` and under `perf record -p`, at 300 and 1000 samples a second
# of CPU time. Each profiler is attached before the loop starts (the target waits for a
# line on stdin); rounds interleave the five ways; prints the median wall seconds of the
# loop and its ratio to alone, and each profiler's samples against CPU seconds x rate.
# gpuprof samples call stacks only (--no-host-metrics --no-device-metrics); perf the same
# event and stack copy (-e task-clock:u -c PERIOD --call-graph dwarf,16384).
# Usage: bench/attach-overhead.sh [ROUNDS]   (default 7)
set -eu
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
rounds=${1:-7}
gpuprof=$(pwd)/$BUILD/bin/gpuprof
target=$(pwd)/$BUILD/bench/attach-target
command -v perf >/dev/null 2>&1 || { echo "perf is not installed (Debian: linux-perf)"; exit 77; }
[ -x "$target" ] || { echo "$target is not built (make)"; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# one_run WAY RATE: the loop's wall seconds, appended to $work/WAY-RATE; the samples
# taken, to $work/WAY-RATE.samples
one_run() {
	way=$1 rate=$2
	rm -f "$work/fifo" "$work/out" "$work/err" "$work/perf.data"
	rm -rf "$work/g"
	mkfifo "$work/fifo"
	"$target" <"$work/fifo" >"$work/out" &
	pid=$!
	exec 3>"$work/fifo"
	case $way in
	gpuprof)
		"$gpuprof" sys --pid "$pid" --no-host-metrics --no-device-metrics -f sqlite \
			--sampling-freq "$rate" -d "$work/g" 2>"$work/err" &
		profiler=$!
		until grep -q "sys: sampling process" "$work/err" 2>/dev/null; do sleep 0.05; done ;;
	perf)
		perf record -q -e task-clock:u -c $((1000000000 / rate)) --call-graph dwarf,16384 \
			-p "$pid" -o "$work/perf.data" 2>"$work/err" &
		profiler=$!
		sleep 0.5 ;;
	*) profiler= ;;
	esac
	echo go >&3
	exec 3>&-
	wait "$pid"
	[ -n "$profiler" ] && wait "$profiler"
	cat "$work/out" >>"$work/$way-$rate"
	case $way in
	gpuprof) sqlite3 "$work"/g/*/*_results.db "SELECT COUNT(*) FROM samples" ;;
	perf) perf report -i "$work/perf.data" --stdio -F sample 2>/dev/null |
		sed -n 's/^# Samples: \([0-9]*\).*/\1/p' | head -n 1 ;;
	*) echo 0 ;;
	esac >>"$work/$way-$rate.samples"
}

median() { sort -n "$1" | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

for round in $(seq "$rounds"); do
	for rate in 300 1000; do
		one_run alone "$rate"
		one_run gpuprof "$rate"
		one_run perf "$rate"
	done
done
echo "attach overhead: $(nproc) CPUs, $rounds rounds, medians of the loop's wall seconds"
printf '%-28s %10s %8s %18s\n' "way" "seconds" "ratio" "samples/(s x rate)"
for rate in 300 1000; do
	alone=$(median "$work/alone-$rate")
	printf '%-28s %10.4f %8s %18s\n' "alone" "$alone" "1.000" "-"
	for way in gpuprof perf; do
		m=$(median "$work/$way-$rate")
		samples=$(median "$work/$way-$rate.samples")
		printf '%-28s %10.4f %8.3f %18s\n' "$way at $rate Hz" "$m" \
			"$(echo "$m $alone" | awk '{ printf "%.3f", $1 / $2 }')" \
			"$(echo "$samples $m $rate" | awk '{ printf "%d/%d", $1, $2 * $3 }')"
	done
done
