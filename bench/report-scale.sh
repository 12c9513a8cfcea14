#!/bin/sh
# The HTML report of a run of 10^6 records (bench/make-spool's mix: per launch an API
# call and a kernel, a copy with its API call every fourth launch): the time gpuprof
# report takes to write it, the page's size, and the time headless Chromium takes to
# load and lay it out (--dump-dom, which returns once the page and its script ran).
# Usage: bench/report-scale.sh [RECORDS]   (default 1000000)
set -eu
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
records=${1:-1000000}
chromium=$(command -v chromium || command -v chromium-browser || true)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$BUILD/bench/make-spool" "$work/run.spool" "$records"
"$BUILD/bin/gpuprof" convert -f sqlite "$work/run.spool" >/dev/null 2>&1
db=$(ls "$work"/run*_results.db | head -n 1)
seconds() { date +%s.%N; }
a=$(seconds)
"$BUILD/bin/gpuprof" report -o "$work/run.html" "$db" 2>/dev/null
b=$(seconds)
size=$(wc -c <"$work/run.html")
echo "report of $records records: written in $(echo "$a $b" | awk '{ printf "%.2f", $2 - $1 }') s, $size bytes"
if [ -n "$chromium" ]; then
	a=$(seconds)
	"$chromium" --headless --no-sandbox --disable-gpu --no-first-run \
		--user-data-dir="$work/profile" --dump-dom "file://$work/run.html" >/dev/null 2>&1
	b=$(seconds)
	echo "headless Chromium loads and lays it out in $(echo "$a $b" | awk '{ printf "%.2f", $2 - $1 }') s"
	a=$(seconds)
	"$chromium" --headless --no-sandbox --disable-gpu --no-first-run \
		--user-data-dir="$work/profile" --dump-dom "about:blank" >/dev/null 2>&1
	b=$(seconds)
	echo "(an empty page: $(echo "$a $b" | awk '{ printf "%.2f", $2 - $1 }') s)"
fi
