#!/bin/sh
# The scale benchmark: every command that reads a recording, on a generated run of
# 10^7 records (bench/make-spool's mix: per launch an API call and a kernel, a copy and
# its API call every fourth launch), and with --huge on one of 10^8 as well. For each
# command: its time, the events it read per second and its peak resident memory, beside
# the floor of reading the same rows from SQLite with nothing written (bench/read-db).
# One run each (these are long); figures go to docs/PERFORMANCE-READING.md with the machine.
#
# Usage: bench/scale.sh [--huge] [RECORDS...]
#   --huge adds 10^8 records: about 9 GB of spool, 5 GB of database and 9 GB of CSV,
#   some 25 GB free in $TMPDIR in all (checked first).
set -eu
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
gpuprof=$BUILD/bin/gpuprof
sizes=10000000
if [ "${1:-}" = --huge ]; then
	shift
	sizes="$sizes 100000000"
fi
[ $# -gt 0 ] && sizes="$*"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for n in $sizes; do
	need=$((n / 4000000)) # GB: spool, database, CSV and a timeline, about 250 bytes a record
	free=$(df -P -k "$work" | awk 'NR == 2 { print int($4 / 1048576) }')
	if [ "$free" -lt "$need" ]; then
		echo "scale: $n records need about $need GB free in $work, $free GB are" >&2
		exit 1
	fi
done

# measure COMMAND...: runs it, prints "seconds peak_rss_kib peak_anonymous_kib". The
# resident peak counts the pages of the database that SQLite maps (up to 2 GiB: the
# kernel takes them back under pressure); the anonymous peak, polled from
# /proc/PID/status every 20 ms, is the memory the command itself holds.
measure() {
	python3 - "$@" <<'PY'
import resource, subprocess, sys, time
start = time.monotonic()
p = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
anonymous = 0
while p.poll() is None:
    try:
        with open(f"/proc/{p.pid}/status") as f:
            for line in f:
                if line.startswith("RssAnon:"):
                    anonymous = max(anonymous, int(line.split()[1]))
    except OSError:
        pass
    time.sleep(0.02)
err = p.stderr.read()
elapsed = time.monotonic() - start
if p.returncode not in (0, 3):  # diff's 3: a significant change (not here)
    sys.exit(f"{sys.argv[1:]} failed ({p.returncode}): {err.strip()[-400:]}")
print(f"{elapsed:.2f} {resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss} {anonymous}")
PY
}

row() { # row LABEL EVENTS "seconds peak_rss_kib peak_anonymous_kib"
	echo "$3" | awk -v l="$1" -v e="$2" '{
		rss = $2 > 0 ? sprintf("%12.0f", $2 / 1024) : "           -"
		anon = $3 > 0 ? sprintf("%13.0f", $3 / 1024) : "            -"
		printf "| %-34s | %8.2f | %12.0f | %s | %s |\n", l, $1, e / $1, rss, anon }'
}

for n in $sizes; do
	echo "== $n records ($(nproc) CPUs; one run each)"
	"$BUILD/bench/make-spool" "$work/run.spool" "$n"
	sync
	echo "| command                            | seconds | events/s     | peak RSS MiB | anonymous MiB |"
	echo "|------------------------------------|--------:|-------------:|-------------:|--------------:|"
	row "convert -f sqlite (spool)" "$n" \
		"$(measure "$gpuprof" convert -f sqlite -d "$work" "$work/run.spool")"
	db=$work/run_results.db
	rm -f "$work/run.spool"
	events=$(sqlite3 "$db" 'SELECT (SELECT COUNT(*) FROM gpuprof_kernel) +
		(SELECT COUNT(*) FROM gpuprof_api_call) + (SELECT COUNT(*) FROM gpuprof_memory_copy)')
	read_s=$("$BUILD/bench/read-db" "$db" | cut -d' ' -f2)
	row "read-db (the floor: rows read)" "$events" "$read_s 0 0"
	for format in csv pftrace json; do
		row "convert -f $format (database)" "$events" \
			"$(measure "$gpuprof" convert -f "$format" -d "$work/$format" "$db")"
		rm -rf "$work/$format"
	done
	row "summary" "$events" "$(measure "$gpuprof" summary "$db")"
	row "advise" "$events" "$(measure "$gpuprof" advise "$db")"
	row "report" "$events" "$(measure "$gpuprof" report "$db" -o "$work/report.html")"
	row "diff (the database against itself)" "$events" "$(measure "$gpuprof" diff "$db" "$db")"
	row "profile --kernels" "$events" "$(measure "$gpuprof" profile --kernels "$db")"
	row "query (kernels by name)" "$events" "$(measure "$gpuprof" query "$db" --sql \
		'SELECT name, COUNT(*), SUM(duration) FROM kernels GROUP BY name')"
	cp "$db" "$work/other.db"
	sqlite3 "$work/other.db" "UPDATE gpuprof_process SET pid = pid + 1"
	row "merge (two of them)" "$((2 * events))" \
		"$(measure "$gpuprof" merge "$db" "$work/other.db" -o "$work/merged.db")"
	rm -f "$work"/*.db "$work/report.html"
	echo
done
