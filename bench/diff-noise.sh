#!/bin/sh
# gpuprof diff as a regression gate on a loaded machine: how often it fails an unchanged
# program, and whether it always fails one with a kernel twice as slow.
#   For each of PAIRS pairs: three runs of A and three of B, interleaved (A B A B A B),
#   each under gpuprof trace --kernel-trace --marker-trace. Then `gpuprof diff
#   --threshold 10` of the first run of A against the first of B (one run a side) and of
#   the three against the three. Two programs:
#     unchanged  samples/hostsync, the same on both sides
#     slower     tests/slowdown on A, tests/slowdown --slower 2 on B (kernel "varied"
#                does twice the work; "steady" and the range "step" around both are
#                the same program's)
#   Prints, per program and comparison, the exit-3 count, the names called
#   significantly slower, and for one run a side the largest |change| of a kernel mean.
# Usage: bench/diff-noise.sh [PAIRS [LOADS [KEEP]]]   (defaults 20 and 2: LOADS busy
#        loops, `yes > /dev/null`, run beside it all; the runs' databases are kept in
#        the directory KEEP when it is given)
set -eu
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
pairs=${1:-20}
loads=${2:-2}
gpuprof=$BUILD/bin/gpuprof
if [ -n "${3:-}" ]; then
	work=$3
	mkdir -p "$work"
	trap 'kill $busy 2>/dev/null' EXIT
else
	work=$(mktemp -d)
	trap 'kill $busy 2>/dev/null; rm -rf "$work"' EXIT
fi
busy=
i=0
while [ "$i" -lt "$loads" ]; do
	yes > /dev/null &
	busy="$busy $!"
	i=$((i + 1))
done

record() { # record DIR COMMAND...
	dir=$1
	shift
	"$gpuprof" trace --kernel-trace --marker-trace -f sqlite -d "$dir" -o run -- "$@" \
		> /dev/null 2>&1 || { echo "bench: gpuprof trace failed in $dir" >&2; exit 1; }
}

for program in unchanged slower; do
	p=1
	while [ "$p" -le "$pairs" ]; do
		for r in 1 2 3; do
			if [ "$program" = unchanged ]; then
				record "$work/$program/$p/a$r" "$BUILD/samples/hostsync"
				record "$work/$program/$p/b$r" "$BUILD/samples/hostsync"
			else
				record "$work/$program/$p/a$r" "$BUILD/tests/slowdown"
				record "$work/$program/$p/b$r" "$BUILD/tests/slowdown" --slower 2
			fi
		done
		p=$((p + 1))
	done
done

python3 - "$gpuprof" "$work" "$pairs" <<'PY'
import json, subprocess, sys
gpuprof, work, pairs = sys.argv[1], sys.argv[2], int(sys.argv[3])
print(f"gpuprof diff --threshold 10, {pairs} pairs a program, the machine loaded")
print(f"{'program':<10} {'runs a side':>11} {'exit 3':>7}  called slower (times)                 largest |change| of a kernel")
for program in ("unchanged", "slower"):
    for side in (1, 3):
        fails, named, largest = 0, {}, 0.0
        for p in range(1, pairs + 1):
            db = lambda s, r: f"{work}/{program}/{p}/{s}{r}/run_results.db"
            args = [db("a", 1), db("b", 1)] if side == 1 else \
                [db("a", r) for r in (1, 2, 3)] + ["--"] + [db("b", r) for r in (1, 2, 3)]
            r = subprocess.run([gpuprof, "diff", "--format", "json", "--threshold", "10", *args],
                               capture_output=True, text=True)
            if r.returncode not in (0, 3):
                sys.exit(f"bench: gpuprof diff failed: {r.stderr}")
            fails += r.returncode == 3
            [table] = json.loads(r.stdout)
            for row in (dict(zip(table["columns"], x)) for x in table["rows"]):
                if row["Status"] == "slower":
                    key = f"{row['Kind']} {row['Name']}"
                    named[key] = named.get(key, 0) + 1
                if row["Kind"] == "kernel" and row["Change_pct"] is not None:
                    largest = max(largest, abs(row["Change_pct"]))
        text = ", ".join(f"{k} ({n})" for k, n in sorted(named.items())) or "none"
        print(f"{program:<10} {side:>11} {fails:>4}/{pairs}  {text:<37} "
              f"{largest:.1f} %" if side == 1 else
              f"{program:<10} {side:>11} {fails:>4}/{pairs}  {text}")
PY
