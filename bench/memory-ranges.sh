#!/bin/sh
# What MEMORY AT THE PEAK BY RANGE costs gpuprof summary. A generated recording of one
# process (tests/e2e/make-recording.c): RANGES push/pop ranges of 10 us on the
# allocating thread, half of them nested in the one before, and ALLOCS device
# allocations of 4 KiB spread over them, each freed 5 us later; beside it the same
# recording without its allocations and without its ranges. `gpuprof summary` of each is
# timed side by side in each of RUNS rounds (the conversions not timed). Prints the
# medians and what the memory by range adds over the two apart.
# Usage: bench/memory-ranges.sh [RANGES [ALLOCS [RUNS]]]   (default 500000, 1000, 5;
# the build in build/)
set -eu
cd "$(dirname "$0")/.."
ranges=${1:-500000}
allocs=${2:-1000}
runs=${3:-5}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
gpuprof=$(pwd)/build/bin/gpuprof
make_recording=$(pwd)/build/tests/make-recording
awk -v ranges="$ranges" -v allocs="$allocs" 'BEGIN {
	print "process pid=4242 start=0 command=app"
	print "agent id=1 type=gpu name=\"GPU\""
	every = int(ranges / allocs); if (every < 1) every = 1
	t = 1000000
	for (i = 1; i <= ranges; i++) {
		nested = i % 2 == 0
		printf "push id=%.0f tid=4242 start=%.0f text=\"op%.0f\"%s\n", i, t, i % 97, nested ? " parent=" (i - 1) : ""
		if (i % every == 0 && n < allocs) {
			n++
			printf "allocation address=%.0f bytes=4096 start=%.0f end=%.0f\n", n * 4096, t + 2000, t + 2000
			printf "allocation op=free address=%.0f bytes=0 start=%.0f end=%.0f\n", n * 4096, t + 7000, t + 7000
		}
		if (nested) {
			printf "pop id=%.0f tid=4242 end=%.0f\n", i, t + 8000
			printf "pop id=%.0f tid=4242 end=%.0f\n", i - 1, t + 9000
		}
		t += 10000
	}
	printf "end time=%.0f\n", t
}' > "$work/ranges.txt"
mv "$work/ranges.txt" "$work/both.txt"
grep -v -e '^push' -e '^pop' "$work/both.txt" > "$work/allocations.txt"
grep -v '^allocation' "$work/both.txt" > "$work/ranges.txt"
for kind in allocations ranges both; do
	mkdir "$work/$kind"
	"$make_recording" "$work/$kind/4242.spool" < "$work/$kind.txt"
	(cd "$work/$kind" && "$gpuprof" convert -f sqlite 4242.spool >/dev/null 2>&1)
done
seconds() {
	start=$(date +%s%N)
	"$gpuprof" summary "$1" > /dev/null
	end=$(date +%s%N)
	echo $(((end - start) / 1000000))
}
i=0
while [ "$i" -lt "$runs" ]; do
	i=$((i + 1))
	echo "$(seconds "$work/allocations/4242_results.db") $(seconds "$work/ranges/4242_results.db")" \
		"$(seconds "$work/both/4242_results.db")"
done > "$work/times"
"$gpuprof" summary --format csv "$work/both/4242_results.db" |
	sed -n '/^# MEMORY AT THE PEAK BY RANGE/,/^$/p' | head -4
median() { cut -d' ' -f"$1" "$work/times" | sort -n | sed -n "$(((runs + 1) / 2))p"; }
awk -v r="$ranges" -v a="$allocs" -v runs="$runs" -v p="$(median 1)" -v q="$(median 2)" \
    -v b="$(median 3)" 'BEGIN {
	printf "%d allocations, %d ranges, medians of %d rounds of gpuprof summary:\n", a, r, runs
	printf "  allocations only %d ms, ranges only %d ms, both %d ms\n", p, q, b
	printf "  the memory by range: %d ms over the two apart (%.2f us per range)\n", b - p - q, (b - p - q) * 1000 / r
}'
