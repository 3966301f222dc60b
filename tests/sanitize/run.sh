#!/usr/bin/env bash
# Builds swarmkeeper under a sanitizer and runs its unit, actor and
# daemon-level tests there. Any sanitizer report fails the run.
#
#   tests/sanitize/run.sh [--build-dir DIR] [--generator G] [--cxx CXX] [--jobs N] KIND [CTEST_ARG...]
#
# KIND is `asan` (AddressSanitizer + UndefinedBehaviorSanitizer, leaks
# checked) or `tsan` (ThreadSanitizer). DIR defaults to build/sanitize-KIND;
# it is configured once with -DSWARMKEEPER_SANITIZE=... (Debug: no NDEBUG,
# so assertions count too; benchmarks off), rebuilt on every run, and its
# ctest runs the tests select_tests.py picks for KIND. CTEST_ARG... go to
# that ctest, e.g. `-R Gateway` to narrow the run further. --jobs is the
# build's parallelism (default: every core). SWARMKEEPER_TEST_JOBS is how
# many tests the ctest runs at once (default: twice the cores).
#
# Before the tests a self-test plants bugs in a small program built with the
# same sanitizer (a heap overflow, a use after free, a leak, a signed
# overflow and a null reference under ASan + UBSan; a data race between a
# thread and an actor under TSan) and fails the stage unless every one is
# reported and the clean run, which goes through CAF, reports nothing.
#
# Every sanitized process writes its reports to DIR/sanitizer-reports/
# (log_path), whoever started it and wherever its stderr went (the daemon
# tests send the daemons' output to files of their own); the options stop a
# process at its first report. After ctest, any file there fails the run and
# is printed, and so does a report found in ctest's own log. The suppression
# files next to this script cover CAF's own reports only.
#
# Exit status: 0 passed, 1 failed. A missing sanitizer runtime is a failure
# (Debian's GCC ships libasan, libubsan and libtsan with libgcc-12-dev).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
build_dir=""
generator=${CMAKE_GENERATOR:-}
cxx=${CXX:-}
jobs=$(nproc 2>/dev/null || echo 2)
test_jobs=${SWARMKEEPER_TEST_JOBS:-$((2 * jobs))}

while [[ ${1:-} == --* ]]; do
  case $1 in
    --build-dir) build_dir=$2; shift 2 ;;
    --generator) generator=$2; shift 2 ;;
    --cxx) cxx=$2; shift 2 ;;
    --jobs) jobs=$2; shift 2 ;;
    *) echo "sanitize: unknown option $1" >&2; exit 1 ;;
  esac
done
kind=${1:-}
shift || true
case $kind in
  asan) sanitize=address,undefined; runtime_libs=(libasan libubsan) ;;
  tsan) sanitize=thread; runtime_libs=(libtsan) ;;
  *) echo "usage: $0 [--build-dir DIR] [--generator G] [--cxx CXX] [--jobs N] {asan|tsan} [CTEST_ARG...]" >&2
     exit 1 ;;
esac
build_dir=${build_dir:-$root/build/sanitize-$kind}
mkdir -p "$build_dir"
build_dir=$(cd "$build_dir" && pwd)
[[ -n $cxx ]] || cxx=c++
reports=$build_dir/sanitizer-reports
# The flags the project's SWARMKEEPER_SANITIZE block adds, for the self-test.
san_flags=(-fsanitize="$sanitize" -fno-omit-frame-pointer -Og -g1)

fail() {
  echo "sanitize $kind: FAILED: $*" >&2
  exit 1
}

# The runtime must be there: a stage that cannot run fails.
check_runtime() {
  local tmp
  tmp=$(mktemp -d)
  printf 'int main() { return 0; }\n' >"$tmp/probe.cpp"
  if ! "$cxx" -fsanitize="$sanitize" "$tmp/probe.cpp" -o "$tmp/probe" >"$tmp/log" 2>&1 ||
     ! "$tmp/probe" >>"$tmp/log" 2>&1; then
    cat "$tmp/log" >&2
    rm -rf "$tmp"
    fail "$cxx cannot build and run a -fsanitize=$sanitize program (Debian: libgcc-12-dev brings libasan8, libubsan1, libtsan2)"
  fi
  rm -rf "$tmp"
}

configure() {
  local log=$build_dir/configure.log
  if [[ -f $build_dir/CMakeCache.txt ]]; then
    local have
    have=$(sed -n 's/^SWARMKEEPER_SANITIZE:STRING=//p' "$build_dir/CMakeCache.txt")
    [[ $have == "$sanitize" ]] ||
      fail "$build_dir is configured with SWARMKEEPER_SANITIZE='$have', not '$sanitize' (remove it or pick another --build-dir)"
    return
  fi
  local gen=()
  if [[ -n $generator ]]; then
    gen=(-G "$generator")
  elif command -v ninja >/dev/null; then
    gen=(-G Ninja)
  fi
  if ! cmake -S "$root" -B "$build_dir" "${gen[@]}" -DCMAKE_CXX_COMPILER="$cxx" \
       -DCMAKE_BUILD_TYPE=Debug -DSWARMKEEPER_SANITIZE="$sanitize" \
       -DSWARMKEEPER_BUILD_BENCH=OFF >"$log" 2>&1; then
    tail -n 40 "$log" >&2
    fail "configure failed (full log: $log)"
  fi
}

# ctest's list of this build's tests, as JSON (gtest binaries that are not
# built yet appear as <target>_NOT_BUILT, which is how their targets are found).
# Arguments go to ctest: the caller's -R/-E/-L filters, since ctest numbers
# `-I` within the list those filters leave.
test_list() {
  (cd "$build_dir" && ctest --show-only=json-v1 "$@")
}

do_build() {
  local start=$SECONDS
  local log=$build_dir/build.log
  : >"$log"
  local targets=() t
  while IFS= read -r t; do targets+=(--target "$t"); done \
    < <(test_list | (cd "$build_dir" && python3 "$here/select_tests.py" "$kind" --targets))
  ((${#targets[@]} > 0)) || fail "no build targets selected"
  if ! cmake --build "$build_dir" -j "$jobs" "${targets[@]}" >>"$log" 2>&1; then
    grep -E -B2 -A6 "error|Error" "$log" | head -n 120 >&2 || tail -n 60 "$log" >&2
    fail "build failed (full log: $log)"
  fi
  echo "sanitize $kind: built $((${#targets[@]} / 2)) targets in $((SECONDS - start)) s"
}

# TSan only: CAF's synchronisation, told to TSan (see tsan_caf_sync.cpp),
# preloaded into every process of the run. Not instrumented itself: it only
# calls the __tsan_* annotations, which processes without TSan lack.
build_caf_sync() {
  local lib=$build_dir/libsk_tsan_caf_sync.so
  if [[ ! -f $lib || $here/tsan_caf_sync.cpp -nt $lib ]]; then
    if ! "$cxx" -std=c++17 -O1 -g -fPIC -shared -fvisibility-inlines-hidden -Wall -Wextra \
         -o "$lib" "$here/tsan_caf_sync.cpp" -ldl >>"$build_dir/build.log" 2>&1; then
      tail -n 30 "$build_dir/build.log" >&2
      fail "tsan_caf_sync.cpp does not build"
    fi
  fi
  export LD_PRELOAD="$lib${LD_PRELOAD:+:$LD_PRELOAD}"
}

# Report settings: stop at the first report, with a stack, written to a file
# under $1 named after the program and its pid; the caller's own
# *SAN_OPTIONS come last and win (e.g. TSAN_OPTIONS=halt_on_error=0 to see
# every report of a run). LSan checks every process at exit, daemons
# included. TSan keeps the longest access history (history_size=7) so the
# older of two accesses still has its stack, which the suppressions match.
export_options() {
  local dir=$1 common
  common="log_path=$dir/report:log_exe_name=1"
  export ASAN_OPTIONS="$common:halt_on_error=1:detect_leaks=1:strict_string_checks=1:check_initialization_order=1:strict_init_order=1:detect_stack_use_after_return=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
  export LSAN_OPTIONS="suppressions=$here/lsan.supp:print_suppressions=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
  export UBSAN_OPTIONS="$common:halt_on_error=1:print_stacktrace=1:suppressions=$here/ubsan.supp:print_suppressions=0${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
  export TSAN_OPTIONS="$common:halt_on_error=1:second_deadlock_stack=1:history_size=7:suppressions=$here/tsan.supp:print_suppressions=0${TSAN_OPTIONS:+:$TSAN_OPTIONS}"
}

# Runs `selftest MODE` with the stage's options; $2 is what its report must
# contain, or `clean` for none. Fails the stage otherwise. ASan and LSan
# write their reports to the log_path files; UBSan inside GCC 12's ASan
# runtime writes to stderr whatever log_path says, so a planted UBSan bug is
# looked for in both (halt_on_error=1 makes its process exit non-zero, which
# is what fails a test whose daemon's stderr goes elsewhere).
selftest_mode() {
  local bin=$1 mode=$2 want=$3 dir
  dir=$(mktemp -d "$build_dir/selftest.XXXXXX")
  local status=0 out
  out=$(export_options "$dir" && "$bin" "$mode" 2>&1) || status=$?
  local found
  found=$(cat "$dir"/report* 2>/dev/null || true)
  rm -rf "$dir"
  if [[ $want == clean ]]; then
    if ((status != 0)) || [[ -n $found ]]; then
      printf '%s\n%s\n' "$out" "$found" >&2
      fail "self-test '$mode' went through CAF and was not clean (exit $status): a suppression is missing or too narrow"
    fi
  elif ((status == 0)) || ! grep -q -- "$want" <<<"$found"$'\n'"$out"; then
    printf '%s\n%s\n' "$out" "$found" >&2
    fail "self-test '$mode': the planted bug was not reported as '$want' (exit $status): the stage would be blind"
  fi
}

selftest() {
  local src=$here/${kind}_selftest.cpp bin=$build_dir/${kind}_selftest
  if [[ ! -x $bin || $src -nt $bin ]]; then
    "$cxx" -std=c++17 "${san_flags[@]}" -o "$bin" "$src" -lcaf_core -pthread \
      >>"$build_dir/build.log" 2>&1 || fail "${kind}_selftest.cpp does not build (see $build_dir/build.log)"
  fi
  if [[ $kind == asan ]]; then
    selftest_mode "$bin" clean clean
    selftest_mode "$bin" overflow "ERROR: AddressSanitizer: heap-buffer-overflow"
    selftest_mode "$bin" use-after-free "ERROR: AddressSanitizer: heap-use-after-free"
    selftest_mode "$bin" leak "ERROR: LeakSanitizer: detected memory leaks"
    selftest_mode "$bin" overflow-int "runtime error: signed integer overflow"
    selftest_mode "$bin" null-ref "runtime error: reference binding to null pointer"
    echo "sanitize asan: self-test ok (CAF's spawn path is clean; a heap overflow, a use after free, a leak, a signed overflow and a null reference are each reported)"
  else
    selftest_mode "$bin" clean clean
    selftest_mode "$bin" racy "WARNING: ThreadSanitizer: data race"
    echo "sanitize tsan: self-test ok (CAF's message passing is silent, a race between a thread and an actor is reported)"
  fi
}

# Every selected test binary must carry the sanitizer's runtime: a build
# that lost its flags would otherwise pass without checking anything.
check_binaries() {
  local exe lib linked
  for exe in "$@"; do
    linked=$(ldd "$exe") || fail "ldd $exe failed"
    for lib in "${runtime_libs[@]}"; do
      grep -q "$lib" <<<"$linked" || fail "$exe is not linked with $lib"
    done
  done
}

do_run() {
  local start=$SECONDS json selection
  json=$(test_list)
  (cd "$build_dir" && python3 "$here/select_tests.py" "$kind" --check <<<"$json") ||
    fail "the selection names tests that do not exist"
  selection=$(cd "$build_dir" && python3 "$here/select_tests.py" "$kind" <<<"$(test_list "$@")") ||
    fail "no tests selected"
  local binaries=()
  mapfile -t binaries < <(python3 -c '
import json, os, sys
build = os.path.realpath(sys.argv[1])
for t in json.load(sys.stdin)["tests"]:
    exe = os.path.realpath((t.get("command") or [""])[0] or "/")
    if exe.startswith(build + os.sep):
        print(exe)' "$build_dir" <<<"$json" | sort -u)
  check_binaries "${binaries[@]}" "$build_dir/bin/swarmkeeper" "$build_dir/bin/swarmctl"
  local count
  count=$(tr ',' '\n' <<<"$selection" | tail -n +4 | grep -c . || true)
  ((count > 0)) || fail "no selected test matches the filter ${*:-}"
  if [[ $kind == tsan ]]; then
    build_caf_sync
  fi
  selftest
  rm -rf "$reports"
  mkdir -p "$reports"
  export_options "$reports"
  echo "sanitize $kind: running $count tests in $build_dir, $test_jobs at a time"
  local status=0 out=$build_dir/ctest.out
  # --timeout covers the tests that set none (gtest unit tests): far above
  # any normal run, so only a hang ends one.
  (cd "$build_dir" && ctest -I "$selection" --output-on-failure --timeout 300 -j "$test_jobs" "$@") 2>&1 |
    tee "$out" || status=$?
  local log=$build_dir/Testing/Temporary/LastTest.log
  if compgen -G "$reports/report*" >/dev/null; then
    local f
    for f in "$reports"/report*; do
      echo "---- $f" >&2
      if grep -q "ERROR: LeakSanitizer" "$f"; then
        # One block a leak, its first frames: a long report's direct
        # leaks are then in view however many indirect ones there are.
        grep -E -A3 "^(Direct|Indirect) leak of|^SUMMARY" "$f" | cut -c1-240 | head -n 160 >&2
      else
        head -n 60 "$f" >&2
      fi
    done
    echo "sanitize $kind: $(ls "$reports" | wc -l) sanitizer report(s) in $reports" >&2
    status=1
  fi
  if [[ -f $log ]] && grep -E -q "ERROR: AddressSanitizer|ERROR: LeakSanitizer|WARNING: ThreadSanitizer|ThreadSanitizer: reported|runtime error:" "$log"; then
    { grep -E -n "ERROR: AddressSanitizer|ERROR: LeakSanitizer|WARNING: ThreadSanitizer|runtime error:|^SUMMARY: " "$log" || true; } |
      head -n 100 >&2
    echo "sanitize $kind: sanitizer report in the test log ($log)" >&2
    status=1
  fi
  local summary
  summary=$(grep -E "tests passed, [0-9]+ tests failed out of" "$out" | tail -n 1 || true)
  echo "sanitize $kind: ${summary:-no ctest summary}; ran in $((SECONDS - start)) s"
  ((status == 0)) || fail "see above"
  # A run that ran nothing checked nothing (a filter that matches no
  # selected test, a ctest that stopped before its summary).
  [[ -n $summary ]] || fail "ctest printed no summary: no test ran"
  echo "sanitize $kind: ok"
}

check_runtime
configure
do_build
do_run "$@"
