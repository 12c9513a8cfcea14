#!/bin/sh
# The main job: installs what is missing, builds gpuprof, profiles the bundled vcopy
# sample: the CUDA one on an NVIDIA GPU when there is a usable one, otherwise the OpenCL
# one (on the first OpenCL device: the CPU through PoCL here). Prints the kernel
# statistics and where the outputs went.
set -eu
cd "$(dirname "$0")/.."
scripts/install-deps.sh
make -s
out=gpuprof-out
rm -rf "$out"
sample=build/samples/vcopy
if [ -x build/samples/cuda/vcopy ] && build/samples/cuda/vcopy -n 1 -i 0 >/dev/null 2>&1; then
	sample=build/samples/cuda/vcopy
fi
echo "== gpuprof trace --runtime-trace --stats -d $out -- $sample -n 1048576 -b 256 -i 10"
build/bin/gpuprof trace --runtime-trace --stats -d "$out" -- "$sample" -n 1048576 -b 256 -i 10
stats=$(find "$out" -name '*_kernel_stats.csv' | head -n 1)
if [ -z "$stats" ]; then
	echo "gpuprof: no kernel statistics were written" >&2
	exit 1
fi
echo
echo "== kernel statistics ($stats)"
awk -F, '{ gsub(/"/, ""); printf "%-24s %8s %16s %16s %10s %12s %12s %14s\n", $1, $2, $3, $4, $5, $6, $7, $8 }' "$stats"
echo
echo "== outputs"
find "$out" -type f | sort
