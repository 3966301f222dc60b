#!/usr/bin/env bash
# One command for a fresh Debian machine: install what is missing, build, and
# run every test (unit, actor, integration, end-to-end with libtorrent).
# Extra arguments go to ctest, e.g. deploy/test.sh -R protocol
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/deploy/build.sh"
cd "$root/build"
ctest --output-on-failure --timeout 600 "$@"
