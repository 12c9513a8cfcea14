#!/bin/sh
# Everything GPU-side in one command, for a machine with an NVIDIA GPU: builds gpuprof
# with the CUDA backend, the CUDA samples and the GPU test programs, runs the GPU tests
# (tests/gpu/run.sh), then the GPU benchmarks (bench/gpu/run.sh), and prints their
# results. Exits nonzero when a test failed; 77 when there is no usable GPU.
#   tests/gpu/run-all.sh [BENCH_ROUNDS [PYTEST_ARGS...]]   (BENCH_ROUNDS 0: no benchmarks;
#                                                           PYTEST_ARGS: e.g. -k rename)
# On a machine that reaches no package registry, the headers and libraries the build
# needs come from the Debian packages that tests/gpu/stage.sh put in .gpu-debs (or
# $GPU_DEBS): those the system lacks are unpacked into $BUILD/deps, never into /.
# Everything it prints is also kept in $GPU_RESULTS (default $BUILD/gpu-results):
# system.txt (GPU, driver, CUDA, compiler), build.log, tests.log, bench.txt.
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
export BUILD
debs=${GPU_DEBS:-.gpu-debs}
results=${GPU_RESULTS:-$BUILD/gpu-results}
mkdir -p "$results" || exit 1
CC=${CC:-cc}

# has_header FILE: the compiler finds #include <FILE>
has_header() { printf '#include <%s>\n' "$1" | $CC -E -x c - >/dev/null 2>&1; }

# Unpacks each staged -dev package whose headers the system lacks, with the staged
# packages it depends on, into $BUILD/deps; absolute links inside are made to point
# into it; the compiler and the linker are told where (CPATH, LIBRARY_PATH), and the
# programs built are given it as their run path (LD_RUN_PATH).
unpack_missing() {
	[ -d "$debs" ] || return 0
	case $BUILD in /*) prefix=$BUILD/deps ;; *) prefix=$(pwd)/$BUILD/deps ;; esac
	unpacked=""
	mkdir -p "$prefix" || exit 1
	for deb in "$debs"/*-dev_*.deb "$debs"/*-headers_*.deb; do
		[ -f "$deb" ] || continue
		missing=no
		for h in $(dpkg-deb -c "$deb" | sed -n 's|.* \./usr/include/\(.*\.h\)$|\1|p'); do
			has_header "$h" || { missing=yes; break; }
		done
		[ $missing = yes ] || continue
		needs=$(dpkg-deb -f "$deb" Depends | tr ',|' '\n\n' | sed 's/^ *\([^ ]*\).*/\1/')
		for d in "$deb" $(for n in $needs; do ls "$debs/${n}"_*.deb 2>/dev/null; done); do
			case " $unpacked " in *" $d "*) continue ;; esac
			dpkg-deb -x "$d" "$prefix" || { echo "cannot unpack $d" >&2; exit 1; }
			unpacked="$unpacked $d"
		done
	done
	[ -n "$unpacked" ] || return 0
	find "$prefix" -type l | while read -r link; do
		target=$(readlink "$link")
		case $target in /*) ln -sfn "$prefix$target" "$link" ;; esac
	done
	libs="$prefix/usr/lib/x86_64-linux-gnu:$prefix/lib/x86_64-linux-gnu"
	export CPATH="$prefix/usr/include${CPATH:+:$CPATH}"
	export LIBRARY_PATH="$libs${LIBRARY_PATH:+:$LIBRARY_PATH}"
	export LD_RUN_PATH="$libs"
	echo "unpacked into $prefix (the system lacks their headers):"
	for d in $unpacked; do echo "  $(basename "$d")"; done
}

{
	date -u '+%Y-%m-%d %H:%M UTC'
	nvidia-smi --query-gpu=name,driver_version,memory.total,pci.bus_id --format=csv,noheader 2>&1
	nvidia-smi 2>/dev/null | sed -n 's/.*CUDA Version: *\([0-9.]*\).*/CUDA driver API \1/p'
	"${CUDA_HOME:-/usr/local/cuda}/bin/nvcc" --version 2>&1 | tail -n 2 | head -n 1
	$CC --version | head -n 1
	python3 -c 'import sys, torch; print("python", sys.version.split()[0], "torch", torch.__version__)' 2>&1 | tail -n 1
	uname -r
} > "$results/system.txt"
cat "$results/system.txt"

unpack_missing >"$results/build.log" 2>&1 || { cat "$results/build.log"; exit 1; }
cat "$results/build.log"
if ! make -j"$(nproc)" >>"$results/build.log" 2>&1; then
	tail -n 30 "$results/build.log"; echo "build failed (log: $results/build.log)"; exit 1
fi
# run STEP COMMAND...: runs it, its output shown and kept in $results/STEP, its status
# in $status
run() {
	step=$1; shift
	{ "$@" 2>&1; echo $? >"$results/.status"; } | tee "$results/$step"
	status=$(cat "$results/.status"); rm -f "$results/.status"
}
rounds=${1:-5}
[ $# -gt 0 ] && shift
run tests.log sh tests/gpu/run.sh "$@"
tests=$status
[ "$tests" -eq 77 ] && exit 77
bench=0
if [ "$rounds" -gt 0 ]; then
	run bench.txt sh bench/gpu/run.sh "$rounds"
	bench=$status
fi
echo "results kept in $results: $(cd "$results" && ls | tr '\n' ' ')"
[ "$tests" -eq 0 ] && [ "$bench" -eq 0 ]
