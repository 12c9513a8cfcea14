#!/bin/sh
# Runs every test: installs what is missing, builds, then runs the suite three times:
# `make check`, `make check-asan` (AddressSanitizer with UndefinedBehaviorSanitizer) and
# `make check-tsan` (ThreadSanitizer), each on a build of its own. Ends with one line,
# the sum of the three: "N passed, N failed, N skipped". Builds use every CPU.
#   scripts/test.sh --no-sanitizers   only `make check`
set -u
cd "$(dirname "$0")/.."
targets="check check-asan check-tsan"
case "${1:-}" in
--no-sanitizers) targets=check ;;
"") ;;
*) echo "usage: scripts/test.sh [--no-sanitizers]" >&2; exit 2 ;;
esac
scripts/install-deps.sh || exit 1
jobs=$(nproc 2>/dev/null || echo 1)
make -s -j"$jobs" || exit 1
passed=0 failed=0 skipped=0 lines=
for target in $targets; do
	out=$(mktemp)
	began=$(date +%s)
	make -s -j"$jobs" "$target" 2>&1 | tee "$out"
	line=$(grep -E '^[0-9]+ passed, [0-9]+ failed, [0-9]+ skipped$' "$out" | tail -n 1)
	rm -f "$out"
	if [ -z "$line" ]; then
		line="0 passed, 1 failed, 0 skipped"
		echo "make $target did not finish"
	fi
	# shellcheck disable=SC2086 # the line's words: N passed, N failed, N skipped
	set -- $line
	passed=$((passed + $1)) failed=$((failed + $3)) skipped=$((skipped + $5))
	lines="$lines
  make $target: $line ($(($(date +%s) - began)) s)"
done
echo
echo "suites:$lines"
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
