#!/bin/sh
# Fuzzes with libFuzzer: `make fuzz` builds the fuzzers with clang into build/fuzz/ and
# calls this script.
#   tests/fuzz/run.sh [-t SECONDS] [--merge] [NAME...]
# Each fuzzer (all of them by default: database edits input options paths spool) runs for
# SECONDS (default 600) from its committed corpus, tests/fuzz/corpus/NAME, with the
# dictionary tests/fuzz/NAME.dict when there is one, and keeps what
# it finds in build/fuzz/found/NAME; an input that fails is saved as
# build/fuzz/crashes/NAME-*. --merge then adds to the committed corpus the inputs that
# reach edges it did not (commit them: `make check` replays the corpus). Ends with one
# line per fuzzer: executions, coverage, corpus size, failures.
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
dir=$BUILD/fuzz
seconds=600 merge=no
while [ $# -gt 0 ]; do
	case $1 in
	-t) seconds=$2; shift 2 ;;
	--merge) merge=yes; shift ;;
	-*) echo "usage: tests/fuzz/run.sh [-t SECONDS] [--merge] [NAME...]" >&2; exit 2 ;;
	*) break ;;
	esac
done
[ $# -gt 0 ] || set -- $(ls "$dir/fuzzers")
mkdir -p "$dir/logs" "$dir/crashes"
status=0 report=
for name in "$@"; do
	fuzzer=$dir/fuzzers/$name
	if [ ! -x "$fuzzer" ]; then
		echo "no fuzzer '$name' in $dir/fuzzers (make fuzz builds them)" >&2
		exit 2
	fi
	mkdir -p "$dir/found/$name"
	log=$dir/logs/$name.log
	echo "== $name: $seconds s"
	# -close_fd_mask=3: the target's own messages are not shown (failures still are);
	# -timeout=10: an input that takes longer is a failure (a loop that never ends)
	dict=
	[ -f "tests/fuzz/$name.dict" ] && dict=-dict=tests/fuzz/$name.dict
	# shellcheck disable=SC2086 # $dict: nothing, or one argument
	"$fuzzer" -max_total_time="$seconds" -timeout=10 -close_fd_mask=3 -print_final_stats=1 $dict \
		-artifact_prefix="$dir/crashes/$name-" "$dir/found/$name" "tests/fuzz/corpus/$name" \
		>"$log" 2>&1
	rc=$?
	tail -n 25 "$log"
	[ "$rc" -eq 0 ] || status=1
	if [ "$merge" = yes ] && [ "$rc" -eq 0 ]; then
		# -use_counters=0: an input joins the corpus for a new edge, not a new hit count
		"$fuzzer" -merge=1 -use_counters=0 -close_fd_mask=3 "tests/fuzz/corpus/$name" \
			"$dir/found/$name" \
			>"$dir/logs/$name.merge.log" 2>&1 || status=1
	fi
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
	final=$(grep -E '^#[0-9]+[[:space:]]+DONE' "$log" | tail -n 1)
	cov=$(echo "$final" | grep -oE 'cov: [0-9]+' | grep -oE '[0-9]+')
	ft=$(echo "$final" | grep -oE 'ft: [0-9]+' | grep -oE '[0-9]+')
	corp=$(echo "$final" | grep -oE 'corp: [0-9]+' | grep -oE '[0-9]+')
	rate=$(echo "$final" | grep -oE 'exec/s: [0-9]+' | grep -oE '[0-9]+')
	crashes=$(ls "$dir/crashes" | grep -c "^$name-")
	report="$report
$name: ${runs:-?} executions in $seconds s (${rate:-?}/s), coverage ${cov:-?} edges, ${ft:-?} features, corpus ${corp:-?}, failures $crashes, exit $rc"
done
echo "$report"
exit $status
