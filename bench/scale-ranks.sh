#!/bin/sh
# The cross-rank work at scale: RANKS generated rank recordings (bench/make-ranks.c: an
# all-reduce per step with a straggler, a ring exchange; hosts of 64 ranks whose clocks
# differ), each made a database (convert), merged (merge) and analysed (summary, advise),
# with each command's time and peak memory (/usr/bin/time); then the same with twice the
# steps, so that time against events and memory against run size can be read.
# Usage: bench/scale-ranks.sh [RANKS [STEPS]]   (defaults 1024 200)
set -eu
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
ranks=${1:-1024}
steps=${2:-200}
gpuprof=$(pwd)/$BUILD/bin/gpuprof
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
measure() { # LABEL COMMAND...: seconds and peak resident MiB
	label=$1
	shift
	/usr/bin/time -f "%e %M" -o "$work/time" "$@" > /dev/null 2>&1
	read -r seconds kib < "$work/time"
	printf '  %-34s %8.2f s %8.1f MiB\n' "$label" "$seconds" "$(echo "$kib" | awk '{ print $1 / 1024 }')"
}
for s in "$steps" $((steps * 2)); do
	rm -rf "$work/run"
	mkdir "$work/run"
	"$BUILD/bench/make-ranks" "$work/run" "$ranks" "$s"
	calls=$((ranks * (4 * s + 2)))
	echo "$ranks ranks, $s steps: $calls MPI calls and $((ranks * s * 2)) completions"
	cd "$work/run"
	measure "convert -f sqlite (every rank)" "$gpuprof" convert -f sqlite $(ls rank*.spool | sort -V)
	measure "merge" "$gpuprof" merge -o all.db $(ls rank*_results.db | sort -V)
	measure "summary" "$gpuprof" summary all.db
	measure "advise" "$gpuprof" advise all.db
	measure "convert -f otf2" "$gpuprof" convert -f otf2 all.db
	printf '  merged database %s MiB\n' "$(du -m all.db | cut -f1)"
	cd - > /dev/null
done
