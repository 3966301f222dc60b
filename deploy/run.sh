#!/usr/bin/env bash
# One command for a fresh Debian machine: install what building and running
# needs (not the test toolchain), build the daemon, and start the tracker on
# its embedded default config (HTTP and UDP announce on :6969), keeping its
# state in build/state across restarts.
# Extra arguments go to the daemon, e.g. deploy/run.sh --http.port=8080;
# deploy/run.sh --help lists every option.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/deploy/build.sh" --run
# What survives a restart (swarms, peers, counters, bans) goes to
# build/state, writable without root, unless the arguments name a state
# directory or a config file of their own.
defaults=(--state-dir="$root/build/state")
for arg in "$@"; do
  case $arg in
    --state-dir*|--state.dir*|--config-file*) defaults=() ;;
  esac
done
exec "$root/build/bin/swarmkeeper" "${defaults[@]}" "$@"
