#!/usr/bin/env bash
# One command for a fresh Debian machine: install what is missing, build, and
# start the tracker on its embedded default config (HTTP announce on :6969).
# Extra arguments go to the daemon, e.g. deploy/run.sh --http-port=8080
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/deploy/build.sh"
exec "$root/build/bin/swarmkeeper" "$@"
