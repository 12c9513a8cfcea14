#!/bin/sh
# For a change meant to leave every output as it was (a refactoring): records a few runs
# once, then turns each recording into every output with two builds of gpuprof and
# compares them byte for byte (databases by their SQL dump). Prints each difference;
# exits 1 when there is one.
#   scripts/same-outputs.sh OLD_BUILD NEW_BUILD [WORK_DIR]
# OLD_BUILD and NEW_BUILD are build directories (each with bin/gpuprof), e.g. a worktree
# of the commit before the change, built: git worktree add /tmp/old HEAD~ && make -C
# /tmp/old. The runs are recorded with NEW_BUILD's gpuprof, the spools kept: the bundled
# OpenCL samples (kernels, copies, API calls, launch stacks, CPU samples), a `sys` run,
# 1000 marker ranges (bench/markers) and bench/make-spool's 10^6 synthetic records.
set -eu
[ $# -ge 2 ] || { echo "usage: $0 OLD_BUILD NEW_BUILD [WORK_DIR]" >&2; exit 2; }
old=$(cd "$1" && pwd) new=$(cd "$2" && pwd)
work=${3:-$(mktemp -d /tmp/gpuprof-same.XXXXXX)}
mkdir -p "$work"
work=$(cd "$work" && pwd)
for b in "$old" "$new"; do
	[ -x "$b/bin/gpuprof" ] || { echo "$b/bin/gpuprof is not built" >&2; exit 2; }
done
samples=$new/samples
runs=$work/runs
rm -rf "$runs" && mkdir -p "$runs"

# record NAME GPUPROF_ARGS... -- PROGRAM...: one recording, its spools kept
record() {
	name=$1; shift
	"$new/bin/gpuprof" "$@" >/dev/null 2>"$runs/$name.log" || {
		echo "recording $name failed:"; cat "$runs/$name.log"; exit 1; } >&2
}
record vcopy trace --kernel-trace --memory-copy-trace -r --marker-trace --keep-spool \
	-d "$runs/vcopy" -- "$samples/vcopy"
record hostsync trace --kernel-trace -r --launch-stacks --sample --keep-spool \
	-d "$runs/hostsync" -- "$samples/hostsync"
record sys sys --keep-spool -d "$runs/sys" -- "$samples/busy"
record markers trace --marker-trace --keep-spool -d "$runs/markers" -- "$new/bench/markers" 1000
mkdir -p "$runs/synthetic/vm"
"$new/bench/make-spool" "$runs/synthetic/vm/1.spool" 1000000

# outputs BUILD DIR: every output of every spool under $runs, written into DIR
outputs() {
	g=$1/bin/gpuprof out=$2
	rm -rf "$out" && mkdir -p "$out"
	find "$runs" -name '*.spool' | sort | while read -r spool; do
		name=$(echo "${spool#"$runs"/}" | tr / _)
		name=${name%.spool}
		d=$out/$name
		mkdir -p "$d"
		"$g" convert -f csv sqlite json pftrace html --stats -d "$d" "$spool" \
			>"$d/convert.out" 2>"$d/convert.err" || true
		db=$(find "$d" -name '*_results.db' | head -n 1)
		[ -n "$db" ] || continue
		for c in summary advise profile "profile --kernels" "profile --tree"; do
			# shellcheck disable=SC2086
			"$g" $c "$db" >"$d/$(echo "$c" | tr ' ' _).out" 2>&1 || true
		done
		"$g" report -o "$d/report.html" "$db" >/dev/null 2>&1 || true
		sqlite3 "$db" .dump >"$db.sql" && rm -f "$db"
	done
}
# Both builds write into the same path, so that paths inside the outputs agree.
outputs "$old" "$work/out" && rm -rf "$work/old" && mv "$work/out" "$work/old"
outputs "$new" "$work/out" && rm -rf "$work/new" && mv "$work/out" "$work/new"
if diff -r "$work/old" "$work/new"; then
	echo "same outputs: $(find "$work/new" -type f | wc -l) files from $(find "$runs" -name '*.spool' | wc -l) recordings ($work)"
else
	echo "outputs differ ($work/old, $work/new)" >&2
	exit 1
fi
