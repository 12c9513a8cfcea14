#!/bin/sh
# Installs the Debian packages listed in scripts/debian-packages.txt that are missing.
# Needs root (or sudo) only when something is missing.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
packages=$(grep -v '^#' "$here/debian-packages.txt" | tr -s ' \n' ' ')
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
