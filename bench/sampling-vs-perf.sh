#!/bin/sh
# gpuprof sys's call-stack samples beside Linux perf's, on real programs nobody here wrote:
# perl, python3, gzip and gcc (gcc runs cc1 and as: an exec chain of processes). Each
# program runs three times: alone under /usr/bin/time (its user CPU seconds, children
# included), under `perf record -e task-clock:u -F RATE --call-graph dwarf` (user space,
# as gpuprof samples), and under
# `gpuprof sys --sampling-freq RATE`. Prints, per program: the samples each took against
# CPU seconds x RATE, the processes each saw, and the self share of the functions perf
# puts on top beside gpuprof's (perf's _PyEval_EvalFrameDefault beside the Python
# functions gpuprof names in its place).
# Usage: bench/sampling-vs-perf.sh [RATE]   (default 300)
set -eu
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
rate=${1:-300}
gpuprof=$(pwd)/$BUILD/bin/gpuprof
command -v perf >/dev/null 2>&1 || { echo "perf is not installed (Debian: linux-perf)"; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
head -c 80000000 /dev/urandom >"$work/random"
# a C file of 800 small functions for gcc -O2 to compile
python3 -c 'print("\n".join(f"int f{i}(int x) {{ int s = 0; for (int k = 0; k < x; k++) s += k * {i} % 7; return s; }}" for i in range(800)))' >"$work/work.c"
# one program per line: a name, then the command (run in $work)
cat >"$work/programs" <<'EOF'
perl perl -e 'my $s = 0; for my $i (1 .. 16000000) { $s += sqrt($i) * 1.5 } print "$s\n"'
python3 python3 -c 'import json; d = [{"k": i, "v": [i] * 5} for i in range(500000)]; print(sum(len(json.dumps(x)) for x in d))'
gzip gzip -9 -c random
gcc gcc -O2 -c -o work.o work.c
EOF
while read -r name command; do
	cd "$work"
	rm -rf "$work/$name.perf" "$work/$name.gpuprof"
	# each run's own user CPU seconds (time(1) inside the profiled run: it only waits)
	perf record -q -e task-clock:u -F "$rate" --call-graph dwarf,8192 -o "$work/$name.perf" -- \
		/usr/bin/time -f "%U" -o "$work/$name.perf-time" sh -c "$command" >/dev/null 2>&1
	perf report -i "$work/$name.perf" --stdio --no-children -g none --sort comm,sym \
		-F sample,comm,sym 2>/dev/null >"$work/$name.report"
	"$gpuprof" sys --no-host-metrics --no-device-metrics -f sqlite --sampling-freq "$rate" \
		-d "$work/$name.gpuprof" -- /usr/bin/time -f "%U" -o "$work/$name.gpuprof-time" \
		sh -c "$command" >/dev/null 2>"$work/$name.stderr"
	python3 - "$name" "$rate" "$work" "$gpuprof" <<'PY'
import collections, glob, os, re, sqlite3, subprocess, sys
name, rate, work, gpuprof = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
cpu = {tool: float(open(f"{work}/{name}.{tool}-time").read().split()[-1])
       for tool in ("perf", "gpuprof")}

def normal(symbol):  # an address in a file without a symbol, as both name it
    m = re.fullmatch(r"(?:.*\+)?0x0*([0-9a-f]+)", symbol)
    return "0x" + m.group(1) if m else symbol

perf, perf_comms = collections.Counter(), collections.Counter()
for line in open(f"{work}/{name}.report"):
    m = re.match(r"\s*(\d+)\s+(\S+)\s+\[[.k]\]\s+(.*\S)", line)
    if m:
        perf[normal(m.group(3))] += int(m.group(1))
        perf_comms[m.group(2)] += int(m.group(1))
ours, our_comms = collections.Counter(), collections.Counter()
for db in glob.glob(f"{work}/{name}.gpuprof/*/*_results.db"):
    c = sqlite3.connect(db)
    command = c.execute("SELECT command FROM processes").fetchone()[0]
    comm = os.path.basename(command.split()[0])[:15] if command else "?"
    # a leaf's function as perf names it: the symbol, not the functions inlined into it
    frames = {k: (f, inlined) for k, f, inlined in c.execute(
        "SELECT frame_id, function, inlined FROM gpuprof_frame")}
    nodes = {k: (parent, frame) for k, parent, frame in c.execute(
        "SELECT stack_id, parent_id, frame_id FROM gpuprof_stack")}
    for leaf, n in c.execute("SELECT stack_id, COUNT(*) FROM gpuprof_sample GROUP BY 1"):
        node = leaf
        while node in nodes and frames[nodes[node][1]][1] and nodes[node][0]:
            node = nodes[node][0]
        function = frames[nodes[node][1]][0] if node in nodes else "?"
        python = re.match(r".*\.py:|<string>:|<frozen ", function)
        ours["_PyEval_EvalFrameDefault" if python else normal(function)] += n
        our_comms[comm] += n
p, g = sum(perf.values()), sum(ours.values())
print(f"\n== {name} at {rate} Hz")
print("samples against the run's user CPU seconds x rate: " + ", ".join(
    f"{tool} {n} of {cpu[tool] * rate:.0f} ({100 * (n / (cpu[tool] * rate) - 1):+.1f} %)"
    for tool, n in (("perf", p), ("gpuprof", g))))
print("processes: perf " + ", ".join(f"{k} {v}" for k, v in perf_comms.most_common()) +
      "; gpuprof " + ", ".join(f"{k} {v}" for k, v in our_comms.most_common()))
print(f"{'function (self)':48} {'perf %':>7} {'gpuprof %':>9} {'points':>7}")
for function, n in perf.most_common(6):
    a, b = 100 * n / p, 100 * ours[function] / g if g else 0
    print(f"{function[:48]:48} {a:7.1f} {b:9.1f} {b - a:+7.1f}")
PY
done <"$work/programs"
