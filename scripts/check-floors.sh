#!/bin/sh
# The floors of gpuprof's sources, and a check that every include points down. This list
# is where the floors are written down (README.md, "Layout", explains each):
#
#   src/  lowest first: a file includes headers of its own floor and of floors below it
#     util      helpers with no knowledge of profiling
#     core      the record model: records, spools, the clock, events, stacks, reading a
#               spool back into memory
#     runtime   what runs inside the profiled program (the preload library)
#     metrics   machine, process and GPU metrics (gpuprof sys)
#     roofline  the roofline's ceilings and plot
#     store     the SQLite database
#     analysis  statistics, findings, profiles, unwinding
#     writer    the output formats
#     compute   gpuprof compute: the metric catalog, workloads, CUPTI's host API
#     commands  the commands, main()
#     ranks     summary --mpi's helper, run by every rank under an MPI launcher
#   inject/  the backends the vendors' runtimes load into the program: util, core and
#            runtime of src/, their own headers, and inject/'s interface headers
#            (roofline-result.h, cupti-host.h), which src/ may include too.
#
# Prints each include that points up and one closing line, "floors: N passed, N failed"
# (one per file checked); exits 1 when one points up.
#   scripts/check-floors.sh
set -u
cd "$(dirname "$0")/.."
floors="util core runtime metrics roofline store analysis writer compute commands ranks"

# rank FLOOR: its place in $floors from 1, 0 when it is not one
rank() {
	i=1
	for f in $floors; do
		[ "$f" = "$1" ] && { echo $i; return; }
		i=$((i + 1))
	done
	echo 0
}

passed=0 failed=0
for file in $(git ls-files 'src/*.c' 'src/*.h' 'src/*.cpp' 'inject/*.c' 'inject/*.h' \
	'inject/*.cu'); do
	case $file in
	src/*) own=$(echo "$file" | cut -d/ -f2); limit=$(rank "$own") ;;
	inject/*) own=inject; limit=$(rank runtime) ;;
	esac
	bad=""
	for target in $(sed -n 's/^#include "\([^"]*\)".*/\1/p' "$file"); do
		case $target in
		../../inject/*/* | ../inject/*/*) bad="$bad $target" ;; # a backend's insides
		*/*/* | ../*) ;; # relative: the file's own folder or inject/'s interfaces
		*/*)
			floor=${target%%/*}
			r=$(rank "$floor")
			[ "$r" -gt 0 ] && [ "$r" -gt "$limit" ] && bad="$bad $target"
			;;
		esac
	done
	if [ -n "$bad" ]; then
		for b in $bad; do echo "$file ($own) includes $b, a floor above it"; done
		failed=$((failed + 1))
	else
		passed=$((passed + 1))
	fi
done
echo "floors: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
