#!/bin/sh
# The benchmarks; each prints ratios measured in the same run.
#   1. launch overhead: N tiny kernels on the first OpenCL device (PoCL here), loop time
#      untraced, at the floor any OpenCL tracer pays, and under gpuprof trace (kernels,
#      the runtime, and kernels with each launch's call stack: --launch-stacks)
#   2. post-processing: a synthetic spool of M records to database + CSV, records per
#      second and peak memory
#   3. timeline formats: pftrace and JSON written from that database, events per
#      second against the floor of reading the rows alone, and the bytes one kernel
#      takes in each format
#   4. markers: the cost of a push/pop pair without a profiler and under
#      gpuprof trace --marker-trace
#   5. metrics: a ten times longer launch loop under gpuprof trace --kernel-trace with and without
#      --host-metrics (every 50 ms, and every 10 ms): the loop's time and the CPU time
#      of the whole run, whose difference is what the sampler costs
#   6. call-stack sampling: a CPU-bound program's loop (tests/split) untraced, under
#      perf record -e task-clock --call-graph dwarf (when perf is installed) and under
#      gpuprof sys (no metrics), side by side, at 300 and at 1000 Hz; then the
#      post-processing of a spool (the 1000 Hz run's) per million samples
#   7. sampling modes: the same C loop and a Python one (tests/e2e/split.py, CPython
#      3.11's frames read at every tick) untraced, under gpuprof sys at 300 Hz and with
#      --sampling-realtime, side by side
#   8. the HTML report of a database of 1,000,000 kernels (and their API calls and
#      copies): gpuprof report's time, peak memory and page size, and the time headless
#      Chromium takes to load the page (when chromium is installed)
#   9. roofline: the ceilings gpuprof roofline measures on OpenCL device 0 and what
#      clpeak (scripts/install-deps.sh --bench) measures there, and the time each takes;
#      device memory against a plain C triad (tests/e2e/triad.c)
#  (BEFORE=DIR adds, to the launch benchmark, --launch-stacks under the gpuprof built in
#  DIR, another version's build: before and after in one run)
#  (bench/scale.sh, apart: every command that reads a recording at 10^7 and 10^8 records)
#  (bench/capped.sh, apart: summary, advise and report under a limit of data memory)
#  (bench/mpi-device.sh, apart: MPI CALLS AND THE DEVICE against a real two-rank run's
#  own figures)
#  (bench/alloc-stacks.sh, apart: --memory-allocation-trace on an allocation-heavy loop)
#  (bench/memory-ranges.sh, apart: MEMORY AT THE PEAK BY RANGE's cost to summary)
# Usage: bench/run.sh [LAUNCHES [RECORDS [ROUNDS]]]   (defaults 20000 5000000 9)
#   BENCH_SECTIONS="1 6" runs those sections only (3 brings the conversion of 2 along)
set -eu
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
launches=${1:-20000}
records=${2:-5000000}
rounds=${3:-9}
gpuprof=$BUILD/bin/gpuprof
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

python=python3
measure() { # measure LABEL COMMAND...: runs it, prints "seconds peak_kib"
	"$python" - "$@" <<'PY'
import resource, subprocess, sys, time
start = time.monotonic()
r = subprocess.run(sys.argv[2:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
elapsed = time.monotonic() - start
if r.returncode:
    sys.exit(f"{sys.argv[1]} failed ({r.returncode}): {r.stderr.strip()}")
print(f"{elapsed:.3f} {resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss}")
PY
}

# want N: section N is to run
want() { case " ${BENCH_SECTIONS:-1 2 3 4 5 6 7 8 9} " in *" $1 "*) ;; *) return 1 ;; esac; }

median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

if want 1; then
	if [ -x "$BUILD/bench/launches" ]; then
		echo "== launch overhead: $launches kernels, median of $rounds rounds (loop time in ms)"
		run_one() { # run_one CONFIG ROUND
			case $1 in
			plain | floor) "$BUILD/bench/launches" "$launches" "$1" ;;
			kernel) "$gpuprof" trace --kernel-trace -f sqlite -d "$work/k$2" -- \
				"$BUILD/bench/launches" "$launches" plain ;;
			runtime) "$gpuprof" trace --runtime-trace -f sqlite -d "$work/r$2" -- \
				"$BUILD/bench/launches" "$launches" plain ;;
			stacks) "$gpuprof" trace --kernel-trace --launch-stacks -f sqlite -d "$work/s$2" -- \
				"$BUILD/bench/launches" "$launches" plain ;;
			before) "$BEFORE/bin/gpuprof" trace --kernel-trace --launch-stacks -f sqlite \
				-d "$work/b$2" -- "$BUILD/bench/launches" "$launches" plain ;;
			esac 2>/dev/null >>"$work/$1"
		}
		# the order rotates every round: on a small machine the position in a round
		# matters as much as the configuration
		configs="plain floor kernel runtime stacks${BEFORE:+ before}"
		count=$(echo "$configs" | wc -w)
		for i in $(seq "$rounds"); do
			order=$(echo "$configs $configs" | tr ' ' '\n' | sed -n "$((i % count + 1)),$((i % count + count))p")
			for config in $order; do run_one "$config" "$i"; done
		done
		kernels=$(find "$work"/k1 -name '*_results.db' -exec sqlite3 {} 'SELECT COUNT(*) FROM kernels' \;)
		plain=$(median <"$work/plain"); floor=$(median <"$work/floor")
		kernel=$(median <"$work/kernel"); runtime=$(median <"$work/runtime")
		stacks=$(median <"$work/stacks")
		awk -v p="$plain" -v f="$floor" -v k="$kernel" -v r="$runtime" -v s="$stacks" -v n="$launches" 'BEGIN {
			printf "%-36s %10s %12s %12s\n", "run", "ms", "vs floor", "vs untraced"
			printf "%-36s %10.1f %12.3f %12.3f\n", "untraced", p / 1e6, p / f, 1
			printf "%-36s %10.1f %12.3f %12.3f\n", "floor (profiling queue + events)", f / 1e6, 1, f / p
			printf "%-36s %10.1f %12.3f %12.3f\n", "gpuprof trace --kernel-trace", k / 1e6, k / f, k / p
			printf "%-36s %10.1f %12.3f %12.3f\n", "gpuprof trace --runtime-trace", r / 1e6, r / f, r / p
			printf "%-36s %10.1f %12.3f %12.3f\n", "  --kernel-trace --launch-stacks", s / 1e6, s / f, s / p
			printf "per launch: untraced %.2f us, floor %.2f us, --kernel-trace %.2f us, --runtime-trace %.2f us, --launch-stacks %.2f us (%.2f us more than --kernel-trace)\n",
				p / n / 1e3, f / n / 1e3, k / n / 1e3, r / n / 1e3, s / n / 1e3, (s - k) / n / 1e3 }'
		if [ -n "${BEFORE:-}" ]; then
			before=$(median <"$work/before")
			awk -v p="$plain" -v k="$kernel" -v s="$stacks" -v b="$before" -v n="$launches" -v d="$BEFORE" 'BEGIN {
				printf "%-36s %10.1f %12s %12.3f\n", "  --launch-stacks of " d, b / 1e6, "", b / p
				printf "launch stacks: %.2f us a launch more than --kernel-trace, %.2f us with %s\n",
					(s - k) / n / 1e3, (b - k) / n / 1e3, d }'
		fi
		echo "kernels recorded in round 1 under --kernel-trace: $kernels (the loop and its one warm-up launch: $((launches + 1)))"
	else
		echo "== launch overhead: skipped (built without the OpenCL headers)"
	fi
fi

# the database of section 2 is the one section 3 reads
if want 2 || want 3; then
	echo
	echo "== post-processing: $records records, spool to database + csv, median of 3 runs"
	"$BUILD/bench/make-spool" "$work/bench.spool" "$records"
	sync # the spool's own writeback must not land inside the measurement
	size=$(stat -c %s "$work/bench.spool")
	: >"$work/post"
	for i in 1 2 3; do
		rm -rf "$work/out"
		measure convert "$gpuprof" convert -f csv sqlite -d "$work/out" "$work/bench.spool" >>"$work/post"
	done
	seconds=$(cut -d' ' -f1 "$work/post" | median)
	peak=$(cut -d' ' -f2 "$work/post" | sort -n | tail -n 1)
	rows=$(sqlite3 "$work/out/bench_results.db" \
		'SELECT (SELECT COUNT(*) FROM gpuprof_kernel) + (SELECT COUNT(*) FROM gpuprof_api_call) + (SELECT COUNT(*) FROM gpuprof_memory_copy)')
	awk -v s="$seconds" -v n="$records" -v r="$rows" -v m="$peak" -v b="$size" -v all="$(cut -d' ' -f1 "$work/post" | tr '\n' ' ')" 'BEGIN {
		printf "spool %.0f MiB, %d event rows in the database; runs: %ss\n", b / 1048576, r, all
		printf "%.2f s, %.0f records/s, peak memory %.0f MiB (the mapped spool counts in it)\n", s, n / s, m / 1024 }'
fi

if want 3; then
	echo
	echo "== timeline formats from the database of $rows event rows, median of 3 runs"
	db=$work/out/bench_results.db
	# the floor: reading every column of every row, with nothing written
	: >"$work/read"
	for i in 1 2 3; do "$BUILD/bench/read-db" "$db" | cut -d' ' -f2 >>"$work/read"; done
	awk -v s="$(median <"$work/read")" -v r="$rows" 'BEGIN {
		printf "%-8s %.2f s, %.0f rows/s (SQLite alone: the ceiling for every format)\n", "reading", s, r / s }'
	for format in pftrace json; do
		: >"$work/$format"
		for i in 1 2 3; do
			rm -rf "$work/$format-out"
			measure "$format" "$gpuprof" convert -f "$format" -d "$work/$format-out" "$db" >>"$work/$format"
		done
		seconds=$(cut -d' ' -f1 "$work/$format" | median)
		peak=$(cut -d' ' -f2 "$work/$format" | sort -n | tail -n 1)
		size=$(stat -c %s "$work/$format-out/bench_results.$format")
		awk -v f="$format" -v s="$seconds" -v r="$rows" -v m="$peak" -v b="$size" 'BEGIN {
			printf "%-8s %.2f s, %.0f events/s, %.0f MiB written, peak memory %.0f MiB\n",
				f, s, r / s, b / 1048576, m / 1024 }'
		rm -rf "$work/$format-out"
	done
	# bytes per kernel: the same database with its kernels only
	sqlite3 "$db" ".backup '$work/kernels.db'"
	sqlite3 "$work/kernels.db" 'DELETE FROM gpuprof_api_call; DELETE FROM gpuprof_memory_copy; VACUUM;'
	kernels=$(sqlite3 "$work/kernels.db" 'SELECT COUNT(*) FROM gpuprof_kernel')
	"$gpuprof" convert -f csv json pftrace -d "$work/kernels" "$work/kernels.db" 2>/dev/null
	printf "bytes per kernel event (%d kernels): " "$kernels"
	awk -v k="$kernels" -v c="$(stat -c %s "$work/kernels/kernels_kernel_trace.csv")" \
		-v j="$(stat -c %s "$work/kernels/kernels_results.json")" \
		-v p="$(stat -c %s "$work/kernels/kernels_results.pftrace")" \
		-v d="$(stat -c %s "$work/kernels.db")" 'BEGIN {
		printf "csv %.1f, json %.1f, pftrace %.1f, sqlite %.1f\n", c / k, j / k, p / k, d / k }'
fi

if want 4; then
	echo
	echo "== markers: one gpuprof_range_push + gpuprof_range_pop pair, median of 3 runs of 1000000"
	: >"$work/plain-markers"
	: >"$work/traced-markers"
	for i in 1 2 3; do
		"$BUILD/bench/markers" 1000000 >>"$work/plain-markers"
		"$gpuprof" trace --marker-trace --buffer-size 256M --buffer-limit 4G -d "$work/markers$i" -f sqlite -- \
			"$BUILD/bench/markers" 1000000 2>/dev/null >>"$work/traced-markers"
	done
	ranges=$(find "$work/markers1" -name '*_results.db' -exec sqlite3 {} 'SELECT COUNT(*) FROM markers' \;)
	awk -v p="$(median <"$work/plain-markers")" -v t="$(median <"$work/traced-markers")" -v r="$ranges" 'BEGIN {
		printf "no profiler %.1f ns, under --marker-trace %.1f ns (ranges recorded in run 1: %d)\n", p, t, r }'
fi

if want 5; then
	if [ -x "$BUILD/bench/launches" ]; then
		echo
		long=$((launches * 10)) # a loop long enough for the sampler to run many rounds
		echo "== metrics: $long launches under --kernel-trace, with --host-metrics, median of $rounds rounds"
		cpu_run() { # cpu_run OUT OPTIONS...: the loop's ms, then the run's CPU seconds
			out=$1
			shift
			"$python" - "$@" <<'PY' >>"$out"
import resource, subprocess, sys
r = subprocess.run(sys.argv[1:], capture_output=True, text=True)
if r.returncode:
    sys.exit(f"metrics run failed ({r.returncode}): {r.stderr.strip()}")
u = resource.getrusage(resource.RUSAGE_CHILDREN)
print(r.stdout.split()[0], f"{u.ru_utime + u.ru_stime:.3f}")
PY
		}
		: >"$work/m0"
		: >"$work/m50"
		: >"$work/m10"
		for i in $(seq "$rounds"); do
			for interval in 0 50 10; do
				case $interval in
				0) set -- ;;
				*) set -- --host-metrics --sampling-interval "$interval" ;;
				esac
				cpu_run "$work/m$interval" "$gpuprof" trace --kernel-trace -f sqlite "$@" \
					-d "$work/metrics$interval-$i" -- "$BUILD/bench/launches" "$long" plain
			done
		done
		samples=$(find "$work"/metrics50-1 -name '*_results.db' -exec sqlite3 {} \
			"SELECT COUNT(*) FROM metrics WHERE name = 'memory used'" \;)
		awk -v a="$(cut -d' ' -f1 "$work/m0" | median)" -v b="$(cut -d' ' -f1 "$work/m50" | median)" \
		    -v c="$(cut -d' ' -f1 "$work/m10" | median)" -v ca="$(cut -d' ' -f2 "$work/m0" | median)" \
		    -v cb="$(cut -d' ' -f2 "$work/m50" | median)" -v cc="$(cut -d' ' -f2 "$work/m10" | median)" \
		    -v n="$samples" 'BEGIN {
			printf "%-34s %10s %10s %14s\n", "run", "loop ms", "vs none", "CPU s (run)"
			printf "%-34s %10.1f %10.3f %14.3f\n", "--kernel-trace", a / 1e6, 1, ca
			printf "%-34s %10.1f %10.3f %14.3f\n", "  + --host-metrics, every 50 ms", b / 1e6, b / a, cb
			printf "%-34s %10.1f %10.3f %14.3f\n", "  + --host-metrics, every 10 ms", c / 1e6, c / a, cc
			printf "rounds of the machine series in round 1 at 50 ms: %d\n", n }'
	fi
fi

if want 6; then
	if [ -x "$BUILD/tests/split" ]; then
		have_perf=$(command -v perf >/dev/null 2>&1 && perf record -e task-clock -F 300 \
			--call-graph dwarf,8192 -o "$work/probe.data" true >/dev/null 2>&1 && echo yes || echo no)
		loop() { sed -n 's/.*loop \([0-9.]*\) s.*/\1/p'; }
		for rate in 300 1000; do
		echo
		echo "== call-stack sampling at $rate Hz: tests/split 100, median of $rounds rounds (the loop's own seconds)"
		: >"$work/s-plain"
		: >"$work/s-perf"
		: >"$work/s-gpuprof"
		# the order rotates every round, as in the launch benchmark; perf copies the stack as
		# gpuprof does (DWARF unwinding, 8 KiB), on the same software event
		for i in $(seq "$rounds"); do
			case $((i % 3)) in
			0) order="plain perf gpuprof" ;;
			1) order="perf gpuprof plain" ;;
			2) order="gpuprof plain perf" ;;
			esac
			for config in $order; do
				case $config in
				plain) "$BUILD/tests/split" 100 | loop >>"$work/s-plain" ;;
				perf) [ "$have_perf" = yes ] && perf record -q -e task-clock -F "$rate" \
					--call-graph dwarf,8192 -o "$work/perf$i.data" -- \
					"$BUILD/tests/split" 100 2>/dev/null | loop >>"$work/s-perf"
				      rm -f "$work/perf$i.data" ;;
				gpuprof) rm -rf "$work/sampled$i"
					"$gpuprof" sys --no-host-metrics --no-device-metrics -f sqlite --keep-spool \
					--sampling-freq "$rate" -d "$work/sampled$i" -- "$BUILD/tests/split" 100 \
					2>/dev/null | loop >>"$work/s-gpuprof" ;;
				esac
			done
		done
		plain=$(median <"$work/s-plain")
		traced=$(median <"$work/s-gpuprof")
		perf_time=$( [ "$have_perf" = yes ] && median <"$work/s-perf" || echo 0)
		awk -v p="$plain" -v f="$perf_time" -v g="$traced" -v r="$rate" 'BEGIN {
			printf "%-52s %8s %12s\n", "run", "s", "vs untraced"
			printf "%-52s %8.3f %12.3f\n", "untraced", p, 1
			if (f > 0) printf "%-52s %8.3f %12.3f\n", "perf record -e task-clock -F " r " --call-graph dwarf", f, f / p
			else print "perf record: not installed or not allowed here"
			printf "%-52s %8.3f %12.3f\n", "gpuprof sys --sampling-freq " r ", call stacks only", g, g / p
			if (f > 0) printf "gpuprof / perf: %.3f\n", g / f }'
		done
		spool=$(find "$work/sampled1" -name '*.spool' | head -n 1)
		samples=$(find "$work/sampled1" -name '*_results.db' -exec sqlite3 {} 'SELECT COUNT(*) FROM samples' \;)
		: >"$work/s-post"
		for i in 1 2 3; do
			rm -rf "$work/post-out"
			measure post "$gpuprof" convert -f sqlite csv -d "$work/post-out" "$spool" | cut -d' ' -f1 >>"$work/s-post"
		done
		awk -v s="$(median <"$work/s-post")" -v n="$samples" 'BEGIN {
			printf "post-processing (unwinding, names, database, folded stacks): %d samples in %.3f s, %.1f s per million\n", n, s, s / n * 1e6 }'
	fi
fi

if want 7; then
	py=/usr/bin/python3
	if [ -x "$BUILD/tests/split" ] && [ -x "$py" ]; then
		echo
		echo "== sampling modes at 300 Hz, median of $rounds rounds (the loop's own seconds)"
		loop() { sed -n 's/.*loop \([0-9.]*\) s.*/\1/p'; }
		for config in c-plain c-cpu c-wall py-plain py-cpu py-wall; do : >"$work/m-$config"; done
		for i in $(seq "$rounds"); do
			for config in c-plain c-cpu c-wall py-plain py-cpu py-wall; do
				case $config in
				c-*) program="$BUILD/tests/split 100" ;;
				py-*) program="$py tests/e2e/split.py 40" ;;
				esac
				case $config in
				*-plain) $program | loop >>"$work/m-$config" ;;
				*-cpu) "$gpuprof" sys --no-host-metrics --no-device-metrics -f sqlite \
					-d "$work/m$i$config" -- $program 2>/dev/null | loop >>"$work/m-$config" ;;
				*-wall) "$gpuprof" sys --sampling-realtime --no-host-metrics --no-device-metrics \
					-f sqlite -d "$work/m$i$config" -- $program 2>/dev/null | loop \
					>>"$work/m-$config" ;;
				esac
				rm -rf "$work/m$i$config"
			done
		done
		printf "%-44s %8s %12s\n" "run" "s" "vs untraced"
		for lang in c py; do
			plain=$(median <"$work/m-$lang-plain")
			for config in plain cpu wall; do
				case $config in
				plain) label="untraced" ;;
				cpu) label="gpuprof sys (CPU time)" ;;
				wall) label="gpuprof sys --sampling-realtime" ;;
				esac
				[ "$lang" = py ] && label="python: $label" || label="C: $label"
				awk -v l="$label" -v t="$(median <"$work/m-$lang-$config")" -v p="$plain" \
					'BEGIN { printf "%-44s %8.3f %12.3f\n", l, t, t / p }'
			done
		done
	fi
fi

if want 8; then
	echo
	echo "== report: gpuprof report of a database of 1000000 kernels, median of 3 runs"
	"$BUILD/bench/make-spool" "$work/report.spool" 2666668 # a kernel in 2.67 records
	"$gpuprof" convert -f sqlite -d "$work/report" "$work/report.spool" 2>/dev/null
	rm -f "$work/report.spool"
	: >"$work/report-times"
	for i in 1 2 3; do
		measure report "$gpuprof" report -o "$work/report.html" "$work/report/report_results.db" \
			>>"$work/report-times"
	done
	kernels=$(sqlite3 "$work/report/report_results.db" 'SELECT COUNT(*) FROM gpuprof_kernel')
	awk -v k="$kernels" -v s="$(cut -d' ' -f1 "$work/report-times" | median)" \
		-v m="$(cut -d' ' -f2 "$work/report-times" | sort -n | tail -n 1)" \
		-v b="$(stat -c %s "$work/report.html")" 'BEGIN {
		printf "%d kernels: %.2f s, peak memory %.0f MiB, page %.1f KiB\n", k, s, m / 1024, b / 1024 }'
	if command -v chromium >/dev/null 2>&1; then
		: >"$work/open-times"
		for i in 1 2 3; do
			measure chromium chromium --headless --no-sandbox --disable-gpu \
				--user-data-dir="$work/chromium" --dump-dom "file://$work/report.html" \
				>>"$work/open-times"
		done
		awk -v s="$(cut -d' ' -f1 "$work/open-times" | median)" 'BEGIN {
			printf "headless chromium loads the page in %.2f s (its start included)\n", s }'
	fi
fi

if want 9; then
	echo
	echo "== roofline: gpuprof roofline and clpeak on OpenCL device 0, medians of 3 rounds"
	if [ ! -x "$BUILD/lib/gpuprof/gpuprof-roofline-opencl" ]; then
		echo "skipped: built without the OpenCL headers"
	elif ! command -v clpeak >/dev/null 2>&1; then
		echo "skipped: clpeak is not installed (scripts/install-deps.sh --bench installs it)"
	else
		# gpuprof's 100 experiments per ceiling, measured again (not the cache), and clpeak's
		# tests of the same ceilings on the same device (OpenCL platform 0, device 0), in
		# turns: a shared machine's memory bandwidth drifts over minutes
		: >"$work/roof-times"
		: >"$work/clpeak-times"
		for i in 1 2 3; do
			[ $((i % 2)) -eq 0 ] && order="clpeak gpuprof" || order="gpuprof clpeak"
			for tool in $order; do
				case $tool in
				gpuprof) measure roofline "$gpuprof" roofline --backend opencl --device 0 \
					--rerun -q -o "$work/roofline$i" >>"$work/roof-times" ;;
				clpeak) measure clpeak sh -c 'clpeak -p 0 -d 0 --global-bandwidth \
					--compute-sp --compute-dp --compute-integer >"$1"' sh \
					"$work/clpeak$i.txt" >>"$work/clpeak-times" ;;
				esac
			done
		done
		"$python" - "$work" "$(cut -d' ' -f1 "$work/roof-times" | median)" \
			"$(cut -d' ' -f1 "$work/clpeak-times" | median)" <<'PY'
import csv, re, statistics, sys
work = sys.argv[1]
ours = [next(csv.DictReader(open(f"{work}/roofline{i}/roofline.csv"))) for i in (1, 2, 3)]
def clpeak(path):  # each test's rate per vector width: its ceiling is the best of them
    best, test = {}, None
    for line in open(path):
        if re.search(r"\((GBPS|GFLOPS|GIOPS)\)", line):
            test = line.split("(")[0].strip()
        elif (m := re.match(r"\s+\w+\s*:\s*([0-9.]+)\s*$", line)) and test:
            best[test] = max(best.get(test, 0.0), float(m.group(1)))
    return best
theirs = [clpeak(f"{work}/clpeak{i}.txt") for i in (1, 2, 3)]
rows = [("device memory, read", "HBMReadBw", "Global memory bandwidth", "GB/s"),
        ("FP32 multiply-add", "FP32Flops", "Single-precision compute", "GFLOP/s"),
        ("FP64 multiply-add", "FP64Flops", "Double-precision compute", "GFLOP/s"),
        ("INT32 multiply-add", "I32Ops", "Integer compute", "GOP/s")]
print(f"device: {ours[0]['device_name']}")
print(f"{'ceiling':22} {'gpuprof roofline':>18} {'clpeak':>10} {'ratio':>7}  unit   (each round: gpuprof / clpeak)")
for label, column, test, unit in rows:
    a = [float(r[column]) for r in ours if r[column]]
    b = [t[test] for t in theirs if test in t]
    if len(a) < 3 or len(b) < 3:
        print(f"{label:22} {'not measured' if len(a) < 3 else '':>18} {'not measured' if len(b) < 3 else '':>10}")
        continue
    rounds = "  ".join(f"{x:.1f}/{y:.1f}" for x, y in zip(a, b))
    print(f"{label:22} {statistics.median(a):>18.2f} {statistics.median(b):>10.2f} "
          f"{statistics.median(a) / statistics.median(b):>7.2f}  {unit:8} ({rounds})")
t_ours, t_theirs = float(sys.argv[2]), float(sys.argv[3])
print(f"{'run time':22} {t_ours:>17.1f}s {t_theirs:>9.1f}s {t_ours / t_theirs:>7.2f}")
PY
		# a peer nobody can tune for device memory (PoCL's memory is the CPU's): a plain C
		# triad on every CPU, right after the last rounds
		awk -v ours="$("$python" -c 'import csv,sys; print(next(csv.DictReader(open(sys.argv[1])))["HBMBw"])' \
			"$work/roofline3/roofline.csv")" -v triad="$("$BUILD/tests/triad" 512 10)" 'BEGIN {
			printf "device memory, copy: gpuprof roofline %.2f GB/s, a C triad %.2f GB/s, ratio %.2f\n",
				ours, triad, ours / triad }'
	fi
fi
