#!/bin/sh
# Run on the development machine (Debian, with a package registry) before sending the
# working tree to a bare GPU machine that reaches no registry: downloads the Debian
# packages whose headers and libraries the build needs (the "-dev" and "-headers" names of
# scripts/debian-packages.txt, and the library packages they depend on) into .gpu-debs/,
# which git ignores. tests/gpu/run-all.sh unpacks them there, into a private prefix, only
# when that system lacks a header the build needs.
#   tests/gpu/stage.sh [DIR]        (default .gpu-debs)
set -eu
cd "$(dirname "$0")/../.."
dir=${1:-.gpu-debs}
list=scripts/debian-packages.txt
wanted=$(grep -E '^[a-z0-9]' "$list" | grep -v -E '^(fuzz|bench):' | grep -E -e '-(dev|headers)$' | tr '\n' ' ')
[ -n "$wanted" ] || { echo "stage: no -dev or -headers package in $list" >&2; exit 1; }
# What they depend on directly (the libraries they link against), and so on through each
# -dev package among them (libdw-dev needs libelf-dev, which needs libelf1), the C
# library, the compilers and their runtimes excepted: every machine that compiles has them.
direct() {
	# shellcheck disable=SC2086
	apt-cache depends --no-recommends --no-suggests --no-conflicts --no-breaks \
		--no-replaces --no-enhances $1 2>/dev/null |
		sed -n 's/^ *|\{0,1\}Depends: \([a-z0-9][a-z0-9.+-]*\)$/\1/p' |
		grep -v -E '^(libc6|libc6?-dev|libgcc-s1|libstdc\+\+6|gcc|g\+\+|gfortran)(-[0-9]+)?$' | sort -u | tr '\n' ' '
}
deps="" dev=$wanted
while [ -n "$dev" ]; do
	new=""
	for d in $(direct "$dev"); do
		case " $wanted $deps " in *" $d "*) continue ;; esac
		deps="$deps $d"
		case $d in *-dev|*-headers) new="$new $d" ;; esac
	done
	dev=$new
done
rm -rf "$dir.tmp"
mkdir -p "$dir.tmp"
chmod 777 "$dir.tmp" # apt-get drops to its own user to write the files
# shellcheck disable=SC2086
(cd "$dir.tmp" && apt-get download -q $wanted $deps) || {
	echo "stage: apt-get download failed (is the package list current? try apt-get update)" >&2
	rm -rf "$dir.tmp"; exit 1; }
rm -rf "$dir"
mv "$dir.tmp" "$dir"
echo "stage: $(ls "$dir" | wc -l) packages in $dir ($(du -sh "$dir" | cut -f1)):"
ls "$dir" | sed 's/^/  /'
echo "stage: send it with the working tree (the device tool: carry [\"$dir\"]), then run tests/gpu/run-all.sh there"
