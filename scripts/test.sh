#!/bin/sh
# Runs every test: installs what is missing, builds, then `make check`.
set -eu
cd "$(dirname "$0")/.."
scripts/install-deps.sh
make -s
make -s check
