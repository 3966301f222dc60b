#!/usr/bin/env bash
# Builds the libFuzzer targets of tests/fuzz with clang-14 (ASan + UBSan) and
# runs them for a bounded time. Any crash, leak, sanitizer report, broken
# invariant, timeout or out-of-memory fails the run.
#
#   tests/fuzz/run.sh [--build-dir DIR] build [--tolerant] [TARGET...]  configure + build
#   tests/fuzz/run.sh [--build-dir DIR] run [TARGET...]    run (all by default)
#   tests/fuzz/run.sh [--build-dir DIR] [TARGET...]        build, then run
#
# A target that builds gets a stamp, DIR/built/TARGET; `run` refuses a
# target without one (so a binary left from an earlier build never stands
# in for sources that no longer compile). When building them all together
# fails, each target is built alone to find the ones that do not compile.
# `build` fails if any target does not build; with --tolerant (ctest's
# fuzz_build) only if none does, and each missing target then fails its own
# test, `run.sh run TARGET`, with its compiler errors.
#
# DIR defaults to build/fuzz. Each run first executes the checked-in
# regression inputs (regressions/TARGET/*), then fuzzes a fresh copy of the
# seed corpus (corpus/TARGET/) with the target's dictionary for
# SK_FUZZ_SECONDS seconds (default 20). New crash inputs land in
# DIR/artifacts/TARGET/; minimize one with
#   DIR/bin/TARGET_fuzz -minimize_crash=1 -runs=20000 CRASH
# and check it in under regressions/TARGET/.
#
# Exit status: 0 passed, 1 failed, 77 skipped (no clang-14 / libFuzzer).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
build_dir="$root/build/fuzz"
seconds=${SK_FUZZ_SECONDS:-20}
cxx=${SK_FUZZ_CXX:-clang++-14}

if [[ ${1:-} == --build-dir ]]; then
  build_dir=$2
  shift 2
fi
mode=all
case ${1:-} in
  build) mode=build; shift ;;
  run) mode=run; shift ;;
esac

skip() {
  echo "fuzz: skipped: $*" >&2
  exit 77
}

check_toolchain() {
  command -v "$cxx" >/dev/null || skip "$cxx not found (Debian: clang-14 libclang-rt-14-dev)"
  local rt
  rt=$("$cxx" -print-file-name=libclang_rt.fuzzer-x86_64.a 2>/dev/null || true)
  if [[ ! -f $rt ]]; then
    rt=$("$cxx" --print-runtime-dir 2>/dev/null)/libclang_rt.fuzzer-x86_64.a
    [[ -f $rt ]] || skip "libFuzzer runtime not found (Debian: libclang-rt-14-dev)"
  fi
}

# build [--tolerant] [TARGET...]
do_build() {
  local tolerant=0
  if [[ ${1:-} == --tolerant ]]; then
    tolerant=1
    shift
  fi
  local targets=("$@")
  check_toolchain
  local start=$SECONDS
  mkdir -p "$build_dir"
  local log=$build_dir/build.log
  : >"$log"
  local generator=()
  command -v ninja >/dev/null && generator=(-G Ninja)
  if [[ ! -f $build_dir/CMakeCache.txt ]] &&
     ! cmake -S "$here" -B "$build_dir" "${generator[@]}" -DCMAKE_CXX_COMPILER="$cxx" >>"$log" 2>&1; then
    tail -n 60 "$log" >&2
    echo "fuzz: configure failed (full log: $log)" >&2
    exit 1
  fi
  ((${#targets[@]} > 0)) || mapfile -t targets <"$build_dir/targets.txt"
  local t only=()
  mkdir -p "$build_dir/built"
  for t in "${targets[@]}"; do
    rm -f "$build_dir/built/$t" "$build_dir/built/$t.log"
    only+=(--target "${t}_fuzz")
  done
  local failed=()
  if cmake --build "$build_dir" -j "$(nproc)" "${only[@]}" >>"$log" 2>&1; then
    for t in "${targets[@]}"; do touch "$build_dir/built/$t"; done
  else
    for t in "${targets[@]}"; do
      if cmake --build "$build_dir" -j "$(nproc)" --target "${t}_fuzz" >"$build_dir/built/$t.log" 2>&1; then
        touch "$build_dir/built/$t"
        rm -f "$build_dir/built/$t.log"
      else
        failed+=("$t")
        echo "fuzz: $t does not build (log: $build_dir/built/$t.log)" >&2
      fi
    done
  fi
  echo "fuzz: built $((${#targets[@]} - ${#failed[@]})) of ${#targets[@]} targets in $((SECONDS - start)) s"
  ((${#failed[@]} == 0)) && return 0
  ((tolerant && ${#failed[@]} < ${#targets[@]})) && return 0
  return 1
}

run_one() {
  local t=$1
  local bin=$build_dir/bin/${t}_fuzz
  if [[ ! -f $build_dir/built/$t ]]; then
    if [[ -f $build_dir/built/$t.log ]]; then
      grep -E -B2 -A6 "error|Error" "$build_dir/built/$t.log" | head -n 120 >&2 ||
        tail -n 60 "$build_dir/built/$t.log" >&2
      echo "fuzz $t: FAILED: does not build (full log: $build_dir/built/$t.log)" >&2
    else
      echo "fuzz $t: FAILED: not built: run '$0 --build-dir $build_dir build' first" >&2
    fi
    return 1
  fi
  local work=$build_dir/work/$t artifacts=$build_dir/artifacts/$t
  rm -rf "$work"
  mkdir -p "$work/corpus" "$artifacts"
  [[ -d $here/corpus/$t ]] && cp -r "$here/corpus/$t/." "$work/corpus/"
  local dict=()
  [[ -f $here/dict/$t.dict ]] && dict=(-dict="$here/dict/$t.dict")
  # Leak checking stays on (LeakSanitizer); UBSan reports abort with a stack.
  export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:strict_string_checks=1}
  export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
  cd "$work"

  local regressions=()
  if [[ -d $here/regressions/$t ]]; then
    while IFS= read -r -d '' f; do regressions+=("$f"); done \
      < <(find "$here/regressions/$t" -type f ! -name '*.md' -print0 | sort -z)
  fi
  if ((${#regressions[@]} > 0)); then
    if ! "$bin" -runs=1 "${regressions[@]}" >"$work/regressions.log" 2>&1; then
      cat "$work/regressions.log" >&2
      echo "fuzz $t: FAILED on a regression input (see above)" >&2
      return 1
    fi
  fi

  local status=0
  "$bin" "${dict[@]}" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="$artifacts/" "$work/corpus" \
    >"$work/fuzz.log" 2>&1 || status=$?
  local execs seeds corpus
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/fuzz.log" | tail -1)
  seeds=$(find "$here/corpus/$t" -type f 2>/dev/null | wc -l)
  corpus=$(find "$work/corpus" -type f | wc -l)
  if ((status != 0)); then
    tail -n 80 "$work/fuzz.log" >&2
    echo "fuzz $t: FAILED (exit $status); inputs in $artifacts/, log $work/fuzz.log" >&2
    return 1
  fi
  echo "fuzz $t: ok: ${execs:-?} executions in ${seconds} s, ${#regressions[@]} regression inputs, corpus $seeds -> $corpus"
}

do_run() {
  check_toolchain
  local targets=("$@")
  if ((${#targets[@]} == 0)); then
    mapfile -t targets <"$build_dir/targets.txt"
  fi
  local t failed=0
  for t in "${targets[@]}"; do
    (run_one "$t") || failed=1
  done
  return $failed
}

case $mode in
  build) do_build "$@" ;;
  run) do_run "$@" ;;
  all) do_build "$@" && do_run "$@" ;;
esac
