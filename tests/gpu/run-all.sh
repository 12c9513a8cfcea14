#!/bin/sh
# Everything GPU-side in one command, for a machine with an NVIDIA GPU: builds gpuprof
# with the CUDA backend, the CUDA samples and the GPU test programs, runs the GPU tests
# (tests/gpu/run.sh), then the GPU benchmarks (bench/gpu/run.sh), and prints their
# results. Exits nonzero when a test failed; 77 when there is no usable GPU.
#   tests/gpu/run-all.sh [BENCH_ROUNDS]
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
export BUILD
make -j"$(nproc)" >"${TMPDIR:-/tmp}/gpuprof-build.log" 2>&1 || {
	tail -n 30 "${TMPDIR:-/tmp}/gpuprof-build.log"; echo "build failed"; exit 1; }
sh tests/gpu/run.sh
tests=$?
[ $tests -eq 77 ] && exit 77
sh bench/gpu/run.sh "${1:-5}"
bench=$?
[ $tests -eq 0 ] && [ $bench -eq 0 ]
