#!/usr/bin/env bash
# One command for a fresh Debian machine: install what building and running
# needs (not the test toolchain), build the daemon, and start the tracker on
# its embedded default config (HTTP and UDP announce on :6969).
# Extra arguments go to the daemon, e.g. deploy/run.sh --http.port=8080;
# deploy/run.sh --help lists every option.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/deploy/build.sh" --run
exec "$root/build/bin/swarmkeeper" "$@"
