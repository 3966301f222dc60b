#!/usr/bin/env bash
# Installs missing dependencies, then configures and builds swarmkeeper into
# ./build (Release). Used by deploy/run.sh, deploy/test.sh and .ci/run.
#
#   deploy/build.sh --run    the daemon and swarmctl only (run dependencies)
#   deploy/build.sh          also the tests and benchmarks (test dependencies)
#   deploy/build.sh --bench  as above, plus opentracker and wrk for bench/
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/deploy/install-deps.sh" "$@"
with_tests=ON
[[ ${1:-} == --run ]] && with_tests=OFF
jobs=$(nproc 2>/dev/null || echo 2)
# A new tree builds with Ninja (deploy/install-deps.sh installs it; it
# schedules every target's compilations together, an eighth faster than
# Makefiles here); a tree already configured keeps its generator.
generator=()
[[ -f $root/build/CMakeCache.txt ]] || ! command -v ninja >/dev/null || generator=(-G Ninja)
cmake -S "$root" -B "$root/build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release \
  -DSWARMKEEPER_BUILD_TESTS=$with_tests -DSWARMKEEPER_BUILD_BENCH=$with_tests >/dev/null
cmake --build "$root/build" -j "$jobs"
