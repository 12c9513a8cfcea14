#!/bin/sh
# The GPU tests: tests/gpu/test_*.py against real CUDA programs and PyTorch under
# `gpuprof trace`. Without a usable NVIDIA GPU (or without the CUDA backend in this
# build) it says why and exits 77, the conventional "skipped" status.
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
export BUILD
if [ ! -f "$BUILD/lib/gpuprof/libgpuprof-cuda.so" ]; then
	echo "skipped: GPU tests (gpuprof was built without the CUDA toolkit)"
	exit 77
fi
if ! probe=$("$BUILD/samples/cuda/vcopy" -n 1 -i 0 2>&1); then
	echo "skipped: GPU tests (no usable CUDA device: $(echo "$probe" | tail -n 1))"
	exit 77
fi
python=python3
for candidate in python3 /usr/bin/python3; do
	if "$candidate" -c 'import pytest' 2>/dev/null; then python=$candidate; break; fi
done
# -rfEsP: the reasons of failures, errors and skips, and what passing tests printed (the
# figures measured against their peers). The trace first, then counters, findings and
# the roofline: a run cut short by a budget of time has the most basic results.
files="tests/gpu/test_cuda.py tests/gpu/test_counters.py"
for f in tests/gpu/test_*.py; do
	case " $files " in *" $f "*) ;; *) files="$files $f" ;; esac
done
# shellcheck disable=SC2086
exec "$python" -m pytest -q -rfEsP -p no:cacheprovider $files "$@"
