#!/bin/sh
# Installs the Debian packages listed in scripts/debian-packages.txt that are missing;
# with --fuzz, also those marked "fuzz:" (for `make fuzz`), with --bench those marked
# "bench:" (the peers `make bench` compares with).
# Needs root (or sudo) only when something is missing.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
list=$here/debian-packages.txt
packages=$(grep -E '^[a-z0-9]' "$list" | grep -v -E '^(fuzz|bench):' | tr -s ' \n' ' ')
case "${1:-}" in
--fuzz | --bench)
	tag=${1#--}
	packages="$packages $(sed -n "s/^$tag: *//p" "$list" | tr -s ' \n' ' ')" ;;
"") ;;
*) echo "usage: scripts/install-deps.sh [--fuzz | --bench]" >&2; exit 2 ;;
esac
missing=""
for p in $packages; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
		missing="$missing $p"
done
[ -z "$missing" ] && exit 0
echo "gpuprof: installing Debian packages:$missing"
if [ "$(id -u)" -eq 0 ]; then
	run=""
elif command -v sudo >/dev/null 2>&1; then
	run="sudo"
else
	echo "gpuprof: cannot install$missing: run this script as root" >&2
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive
$run apt-get update -qq
# shellcheck disable=SC2086
$run apt-get install -y -qq --no-install-recommends $missing
