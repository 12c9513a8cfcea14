#!/bin/sh
# Runs every test layer and prints one closing line: "N passed, N failed, N skipped".
#   floors scripts/check-floors.sh: no source includes a header of a floor above its own
#   unit/  C unit tests (build/tests/test-*), each printing "name: N passed, N failed"
#          last, and "skipped: REASON" for each part it cannot run
#   e2e/   end-to-end tests on real OpenCL (PoCL without a GPU), with pytest (each skip
#          with its reason at the end), two
#          workers per CPU where pytest-xdist is installed
#   gpu/   the CUDA backend on a real GPU (tests/gpu/run.sh); it exits 77 with its reason
#          on a machine without one, counted as one skip
# BUILD names the build to test (build by default).
set -u
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
export BUILD
passed=0 failed=0 skipped=0

add() { # add PASSED FAILED SKIPPED
	passed=$((passed + $1)); failed=$((failed + $2)); skipped=$((skipped + $3))
}

number() { # number WORD TEXT: the count before WORD in a summary line, or 0
	echo "$2" | grep -oE "[0-9]+ $1" | head -n 1 | grep -oE '^[0-9]+' || echo 0
}

# the sources' floors: no include points up (scripts/check-floors.sh)
out=$(sh scripts/check-floors.sh 2>&1)
echo "$out"
line=$(echo "$out" | tail -n 1)
add "$(number passed "$line")" "$(number failed "$line")" 0

for t in "$BUILD"/tests/test-*; do
	[ -x "$t" ] || continue
	out=$("$t" 2>&1)
	echo "$out"
	line=$(echo "$out" | tail -n 1)
	p=$(number passed "$line"); f=$(number failed "$line")
	case "$line" in *passed*) ;; *) f=$((f + 1)) ;; esac
	add "$p" "$f" "$(echo "$out" | grep -c '^skipped:')"
done

if [ "${HAVE_OPENCL:-yes}" != yes ]; then
	echo "skipped: end-to-end tests (the OpenCL headers were not found at build time)"
	add 0 0 1
else
	python=python3
	for candidate in python3 /usr/bin/python3; do
		if "$candidate" -c 'import pytest' 2>/dev/null; then python=$candidate; break; fi
	done
	# two workers per CPU (pytest-xdist), each test on the next free one: much of a test
	# is waiting for the programs it runs
	parallel=
	if "$python" -c 'import xdist' 2>/dev/null; then
		parallel="-n $((2 * $(nproc 2>/dev/null || echo 1))) --dist load"
	fi
	out=$(mktemp)
	# shellcheck disable=SC2086 # the options' words
	"$python" -m pytest -q -rs -p no:cacheprovider $parallel tests/e2e 2>&1 | tee "$out"
	line=$(grep -E '(passed|failed|error)' "$out" | tail -n 1)
	rm -f "$out"
	if [ -z "$line" ]; then
		echo "the end-to-end tests did not run (is python3-pytest installed?)"
		add 0 1 0
	else
		add "$(number passed "$line")" "$(($(number failed "$line") + $(number error "$line")))" \
			"$(number skipped "$line")"
	fi
fi

out=$(mktemp)
sh tests/gpu/run.sh 2>&1 | tee "$out"
line=$(tail -n 1 "$out")
rm -f "$out"
case "$line" in
skipped:*) add 0 0 1 ;;
*passed*|*failed*|*error*)
	add "$(number passed "$line")" "$(($(number failed "$line") + $(number error "$line")))" \
		"$(number skipped "$line")" ;;
*) echo "the GPU tests did not run"; add 0 1 0 ;;
esac
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
