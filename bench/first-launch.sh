#!/bin/sh
# What gpuprof costs the first kernel launch of an OpenCL program: the duration of the
# first clEnqueueNDRangeKernel under `gpuprof trace --opencl-trace --kernel-trace`, as
# recorded, in RUNS runs of samples/vcopy (one launch). The recorder follows each
# command in a slot of a pool that its writer thread fills ahead of need; a launch that
# found the pool empty allocated and chained 65,536 slots itself.
# Usage: bench/first-launch.sh [RUNS]   (default 9; the build in build/, as `make` makes)
set -eu
cd "$(dirname "$0")/.."
runs=${1:-9}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
i=0
while [ "$i" -lt "$runs" ]; do
	i=$((i + 1))
	rm -rf "$work/run" && mkdir "$work/run"
	(cd "$work/run" && "$OLDPWD/build/bin/gpuprof" trace --opencl-trace --kernel-trace \
		-f sqlite -o first -- "$OLDPWD/build/samples/vcopy" >/dev/null 2>&1)
	sqlite3 "$work/run/first_results.db" "SELECT (a.end - a.start) / 1000.0 FROM
		gpuprof_api_call a JOIN gpuprof_string s ON s.id = a.function_id WHERE s.string
		LIKE 'clEnqueue%Kernel' ORDER BY a.start LIMIT 1"
done | sort -n | awk '{ v[NR] = $1 } END { printf "first launch, us: min %.0f, median %.0f, max %.0f (%d runs)\n", v[1], v[int((NR + 1) / 2)], v[NR], NR }'
