#!/bin/sh
# GPU overhead benchmarks, each measured against an untraced run in the same call:
#   launch-bound  bench/gpu/empty: LAUNCHES empty kernels; untraced, under the minimal
#                 CUPTI client (libcupti-floor.so: CONCURRENT_KERNEL only, buffers thrown
#                 away: the floor of any CUPTI tracer), under gpuprof --kernel-trace and
#                 under gpuprof --kernel-trace --launch-stacks (a stack per launch)
#   GPU-bound     bench/gpu/matmul: large SGEMMs; untraced and under gpuprof
#   PyTorch       samples/python/train.py; untraced, under gpuprof --kernel-trace, and
#                 under torch.profiler with CUDA activities
# Each figure is the median over ROUNDS runs of the time the program measures itself
# (its timed loop), the order of the variants rotated every round. Prints one table.
#   bench/gpu/run.sh [ROUNDS [LAUNCHES]]
set -eu
cd "$(dirname "$0")/../.."
BUILD=$(cd "${BUILD:-build}" && pwd) || exit 1 # the programs run in a scratch directory
ROUNDS=${1:-5}
LAUNCHES=${2:-100000}
GPUPROF="$BUILD/bin/gpuprof"
FLOOR="$BUILD/bench/gpu/libcupti-floor.so"
TRAIN="$(pwd)/samples/python/train.py"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

if ! "$BUILD/bench/gpu/empty" -n 1 >/dev/null 2>&1; then
	echo "skipped: GPU benchmarks (no usable CUDA device)"
	exit 77
fi

seconds() { # the timed loop of a program's output: "... in X s"
	sed -n 's/.* in \([0-9.]*\) s.*/\1/p' | tail -n 1
}

measure() { # measure NAME VARIANT COMMAND...: appends NAME VARIANT SECONDS to results
	name=$1 variant=$2; shift 2
	s=$(cd "$work" && "$@" 2>"$work/stderr" | seconds) || true
	if [ -z "$s" ]; then
		echo "bench: $name/$variant failed:" >&2; cat "$work/stderr" >&2; exit 1
	fi
	echo "$name $variant $s" >> "$work/results"
	rm -rf "$work/out"
}

traced() { "$GPUPROF" trace --kernel-trace -d "$work/out" -f sqlite -- "$@"; }
stacked() { "$GPUPROF" trace --kernel-trace --launch-stacks -d "$work/out" -f sqlite -- "$@"; }
floor() { CUDA_INJECTION64_PATH="$FLOOR" "$@"; }

has_torch=no
if python3 -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null; then has_torch=yes; fi

for round in $(seq 1 "$ROUNDS"); do
	for i in 0 1 2; do
		case $(( (round + i) % 3 )) in
		0) measure launch untraced "$BUILD/bench/gpu/empty" -n "$LAUNCHES"
		   measure gemm untraced "$BUILD/bench/gpu/matmul"
		   [ $has_torch = no ] || measure pytorch untraced python3 "$TRAIN" --steps 50 ;;
		1) measure launch floor floor "$BUILD/bench/gpu/empty" -n "$LAUNCHES"
		   [ $has_torch = no ] || measure pytorch torch.profiler python3 "$TRAIN" --steps 50 --torch-profiler ;;
		2) measure launch gpuprof traced "$BUILD/bench/gpu/empty" -n "$LAUNCHES"
		   measure launch stacks stacked "$BUILD/bench/gpu/empty" -n "$LAUNCHES"
		   measure gemm gpuprof traced "$BUILD/bench/gpu/matmul"
		   [ $has_torch = no ] || measure pytorch gpuprof traced python3 "$TRAIN" --steps 50 ;;
		esac
	done
done

median() { # median NAME VARIANT
	awk -v n="$1" -v v="$2" '$1 == n && $2 == v { print $3 }' "$work/results" | sort -g |
		awk '{ a[NR] = $1 } END { if (NR) print (NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2) }'
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a > 0 && b > 0) printf "%.3f", a / b; else printf "-" }'; }

device=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n 1 || echo "a CUDA device")
echo "GPU benchmarks on $device, median of $ROUNDS rounds (seconds of each program's timed loop)"
printf '%-42s %12s %12s %12s %10s %s\n' workload untraced floor gpuprof ratio target
lu=$(median launch untraced) lf=$(median launch floor) lg=$(median launch gpuprof)
printf '%-42s %12s %12s %12s %10s %s\n' "launch-bound: $LAUNCHES empty kernels" "$lu" "$lf" "$lg" \
	"$(ratio "$lg" "$lf")" "gpuprof/floor <= 1.15"
ls=$(median launch stacks)
printf '%-42s %12s %12s %12s %10s %s\n' "  the same with --launch-stacks" "$lu" "$lg" "$ls" \
	"$(ratio "$ls" "$lg")" "stacks/--kernel-trace (floor column: --kernel-trace)"
gu=$(median gemm untraced) gg=$(median gemm gpuprof)
printf '%-42s %12s %12s %12s %10s %s\n' "GPU-bound: 50 SGEMM 4096^3" "$gu" "-" "$gg" \
	"$(ratio "$gg" "$gu")" "gpuprof/untraced <= 1.02"
if [ $has_torch = yes ]; then
	pu=$(median pytorch untraced) pt=$(median pytorch torch.profiler) pg=$(median pytorch gpuprof)
	printf '%-42s %12s %12s %12s %10s %s\n' "PyTorch loop: 50 steps" "$pu" "$pt" "$pg" \
		"$(ratio "$pg" "$pt")" "gpuprof/torch.profiler <= 1 (floor column: torch.profiler)"
else
	echo "PyTorch loop: skipped (PyTorch with CUDA is not installed)"
fi
echo "launch-bound overhead per launch: untraced $(awk -v t="$lu" -v n="$LAUNCHES" 'BEGIN{printf "%.2f", t/n*1e6}') us," \
	"floor $(awk -v t="$lf" -v n="$LAUNCHES" 'BEGIN{printf "%.2f", t/n*1e6}') us," \
	"gpuprof $(awk -v t="$lg" -v n="$LAUNCHES" 'BEGIN{printf "%.2f", t/n*1e6}') us," \
	"with --launch-stacks $(awk -v t="$ls" -v n="$LAUNCHES" 'BEGIN{printf "%.2f", t/n*1e6}') us"
