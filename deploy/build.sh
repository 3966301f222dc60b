#!/usr/bin/env bash
# Installs missing dependencies, then configures and builds swarmkeeper into
# ./build (Release). Used by deploy/run.sh, deploy/test.sh and .ci/run.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/deploy/install-deps.sh" "$@"
jobs=$(nproc 2>/dev/null || echo 2)
cmake -S "$root" -B "$root/build" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$root/build" -j "$jobs"
