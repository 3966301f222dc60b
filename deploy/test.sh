#!/usr/bin/env bash
# One command for a fresh Debian machine: install what is missing, build, and
# run every test (unit, actor, integration, end-to-end with libtorrent), then
# the sanitizer stages: the unit, actor and daemon-level tests again in an
# AddressSanitizer + UndefinedBehaviorSanitizer build and in a
# ThreadSanitizer build, each in a tree of its own (tests/sanitize/README.md).
#
#   deploy/test.sh [CTEST_ARG...]
#
# Extra arguments go to the Release build's ctest, e.g. deploy/test.sh -R
# protocol; the sanitizer stages run their own selection regardless.
# SWARMKEEPER_SANITIZERS chooses the stages: `all` (the default) runs
# `tests/sanitize/run.sh asan` then `tests/sanitize/run.sh tsan`, `asan` or
# `tsan` one of them, `off` none (a quick local run). SWARMKEEPER_TEST_JOBS
# is how many tests run at once in each ctest (default: twice the cores this
# process may use; most tests wait on sockets and timers, not the CPU; 1
# runs them one by one). The exit status is 0 only if the ctest and every
# stage that ran passed.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)

sanitizers=${SWARMKEEPER_SANITIZERS:-all}
case $sanitizers in
  all) stages=(asan tsan) ;;
  asan | tsan) stages=("$sanitizers") ;;
  off) stages=() ;;
  *) echo "deploy/test.sh: SWARMKEEPER_SANITIZERS='$sanitizers': expected all, asan, tsan or off" >&2
     exit 2 ;;
esac

jobs=${SWARMKEEPER_TEST_JOBS:-$((2 * $(nproc 2>/dev/null || echo 1)))}
[[ $jobs =~ ^[1-9][0-9]*$ ]] || {
  echo "deploy/test.sh: SWARMKEEPER_TEST_JOBS='$jobs': expected a positive number" >&2
  exit 2
}
export SWARMKEEPER_TEST_JOBS=$jobs

"$root/deploy/build.sh"
cd "$root/build"
ctest --output-on-failure --timeout 600 -j "$jobs" "$@"

for kind in "${stages[@]}"; do
  echo "deploy/test.sh: sanitizer stage $kind (tests/sanitize/run.sh $kind)"
  "$root/tests/sanitize/run.sh" "$kind"
done
