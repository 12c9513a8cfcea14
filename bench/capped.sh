#!/bin/sh
# The findings under a limit of data memory: summary, advise and report of a generated
# run (bench/make-spool's mix, 10^7 records by default), each without a limit and under
# `prlimit --data` (16 MiB by default), side by side: the time of each, whether it ended
# well, and whether its output is the same bytes as without the limit. A second gpuprof
# (BEFORE=path/to/gpuprof, an older build) adds its uncapped time and checks that the
# outputs are the bytes it writes. One run each; figures go to docs/PERFORMANCE-READING.md.
#   bench/capped.sh [RECORDS [MIB]]
set -eu
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
gpuprof=$(pwd)/$BUILD/bin/gpuprof
records=${1:-10000000}
mib=${2:-16}
before=${BEFORE:-}
command -v prlimit >/dev/null || { echo "capped: prlimit (util-linux) is not installed" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$BUILD/bench/make-spool" "$work/run.spool" "$records"
"$gpuprof" convert -f sqlite -d "$work" "$work/run.spool" 2>/dev/null
rm -f "$work/run.spool"
db=$work/run_results.db

# timed NAME COMMAND...: runs it, its output into $work/NAME (report: its page), prints
# its seconds, or "failed" with its status
timed() {
	name=$1; shift
	start=$(date +%s.%N)
	if "$@" >"$work/$name.out" 2>"$work/$name.err"; then
		end=$(date +%s.%N)
		awk -v a="$start" -v b="$end" 'BEGIN { printf "%.2f", b - a }'
	else
		echo "failed ($?): $(tail -n 1 "$work/$name.err")"
	fi
}
# output NAME: the file holding what NAME wrote
output() { if [ -f "$work/$1.html" ]; then echo "$work/$1.html"; else echo "$work/$1.out"; fi; }

echo "== $records records, $(nproc) CPUs, a limit of $mib MiB of data memory (one run each)"
echo "| command | $( [ -n "$before" ] && echo 'before, uncapped (s) | ')uncapped (s) | under $mib MiB (s) | capped output |"
echo "|---|$( [ -n "$before" ] && echo '---:|')---:|---:|---|"
for command in summary advise report; do
	extra=""
	for variant in before free capped; do
		case $variant in
		before) [ -n "$before" ] || continue; run="$before" ;;
		*) run=$gpuprof ;;
		esac
		name=$command.$variant
		set -- "$run" "$command" "$db"
		[ "$command" = report ] && set -- "$@" -o "$work/$name.html"
		[ "$variant" = capped ] && set -- prlimit --data=$((mib << 20)) "$@"
		t=$(timed "$name" "$@")
		case $variant in before) t_before=$t ;; free) t_free=$t ;; capped) t_capped=$t ;; esac
	done
	same="differs"
	cmp -s "$(output "$command.free")" "$(output "$command.capped")" && same="the same bytes"
	if [ -n "$before" ]; then
		cmp -s "$(output "$command.before")" "$(output "$command.capped")" &&
			same="$same; as before's"
		extra="$t_before | "
	fi
	echo "| $command | $extra$t_free | $t_capped | $same |"
done
