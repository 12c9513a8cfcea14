#!/bin/sh
# Everything GPU-side in one command, for a machine with an NVIDIA GPU: builds gpuprof
# with the CUDA backend, the CUDA samples and the GPU test programs, runs the GPU tests
# (tests/gpu/run.sh: the traces, counters, launch stacks, PC sampling and PyTorch's
# operators on CUDA, beside ncu and torch.profiler), then the GPU benchmarks
# (bench/gpu/run.sh), within a budget of time, and leaves one summary file: each test
# PASS, FAIL or SKIP with its figures or its reason, and the benchmarks' table. Exits
# nonzero when a test failed or the budget ran out; 77 when there is no usable GPU.
#   tests/gpu/run-all.sh [BENCH_ROUNDS [PYTEST_ARGS...]]   (BENCH_ROUNDS 0: no benchmarks,
#                                                           default 1; PYTEST_ARGS: e.g.
#                                                           -k rename)
# GPU_SUMMARY names the summary file (default $GPU_RESULTS/summary.txt); GPU_BUDGET the
# seconds it may take in all (default 480: a device lent for a few minutes fits one run
# and a rerun). The tests stop where the budget leaves the benchmarks a minute; what they
# had not reached is said in the summary.
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
case $results in /*) ;; *) results=$(pwd)/$results ;; esac
summary=${GPU_SUMMARY:-$results/summary.txt}
case $summary in /*) ;; *) summary=$(pwd)/$summary ;; esac
budget=${GPU_BUDGET:-480}
started=$(date +%s)
left() { echo $((budget - ($(date +%s) - started))); }
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

{
	echo "gpuprof GPU check, $(head -n 1 "$results/system.txt")"
	sed -n '2,$p' "$results/system.txt" | sed 's/^/  /'
} > "$summary"
# say LINE: appends a line to the summary and shows it
say() { echo "$*" | tee -a "$summary"; }

unpack_missing >"$results/build.log" 2>&1 || { cat "$results/build.log"; say "build: FAIL (unpacking)"; exit 1; }
cat "$results/build.log"
if ! make -j"$(nproc)" >>"$results/build.log" 2>&1; then
	tail -n 30 "$results/build.log"; echo "build failed (log: $results/build.log)"
	say "build: FAIL ($(($(date +%s) - started)) s): $(grep -m 1 -E 'error|Error' "$results/build.log")"
	exit 1
fi
say "build: ok ($(($(date +%s) - started)) s)"
# run STEP SECONDS COMMAND...: runs it for at most SECONDS, its output shown and kept in
# $results/STEP, its status in $status (124: out of time)
run() {
	step=$1 limit=$2; shift 2
	{ timeout -k 10 "$limit" "$@" 2>&1; echo $? >"$results/.status"; } | tee "$results/$step"
	status=$(cat "$results/.status"); rm -f "$results/.status"
}
rounds=${1:-1}
[ $# -gt 0 ] && shift
reserve=0
[ "$rounds" -gt 0 ] && reserve=60
tests_file=$results/tests.summary
rm -f "$tests_file"
limit=$(($(left) - reserve))
if [ "$limit" -lt 30 ]; then
	say "tests: not run (the build left $(left) s of the ${budget} s budget)"
	exit 1
fi
GPU_SUMMARY=$tests_file run tests.log "$limit" sh tests/gpu/run.sh "$@"
tests=$status
if [ "$tests" -eq 77 ]; then
	say "tests: SKIP ($(tail -n 1 "$results/tests.log"))"
	exit 77
fi
[ -f "$tests_file" ] && cat "$tests_file" >> "$summary"
count() { n=$(grep -c "^$1" "$tests_file" 2>/dev/null); echo "${n:-0}"; }
late=""
[ "$tests" -eq 124 ] && late="; OUT OF TIME: the budget ended the tests, those not listed did not run"
say "tests: $(count PASS) passed, $(count FAIL) failed, $(count SKIP) skipped$late"
bench=0
if [ "$rounds" -gt 0 ] && [ "$(left)" -gt 20 ]; then
	run bench.txt "$(left)" sh bench/gpu/run.sh "$rounds"
	bench=$status
	sed 's/^/bench: /' "$results/bench.txt" >> "$summary"
	[ "$bench" -eq 124 ] && say "bench: OUT OF TIME"
elif [ "$rounds" -gt 0 ]; then
	say "bench: not run (no time left of the ${budget} s budget)"
	bench=124
fi
say "total: $(($(date +%s) - started)) s of a ${budget} s budget"
echo "results kept in $results: $(cd "$results" && ls | tr '\n' ' '); summary: $summary"
[ "$tests" -eq 0 ] && [ "$bench" -eq 0 ]
