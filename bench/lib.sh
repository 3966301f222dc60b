# shellcheck shell=bash
# Helpers the bench scripts share; sourced after they set `root` (the
# checkout) and `bench_name` (how their errors start).
#
#   bench_workdir PREFIX   a fresh directory $work (opentracker chroots into
#                          it and runs as nobody: mode 755), removed on exit
#                          with the tracker in $tracker_pid stopped
#   find_bin NAME [GIVEN]  GIVEN, else build/bin/NAME or build-*/bin/NAME
#   free_port              a port free for TCP and UDP on 127.0.0.1, below
#                          the ephemeral range (tests/support/ports.py)
#   free_ports N           N such ports, distinct, on one line
#   wait_until SECONDS CMD...  poll CMD until it succeeds; fails early when
#                          $tracker_pid has exited
#   http_ok URL            the URL answers 200
#   cpu_ticks PID          user + system clock ticks of PID so far
#   field NAME LINE        the value of NAME=VALUE in a space-separated line
#   median                 the median of the numbers on stdin

: "${root:?bench/lib.sh is sourced after root is set}"

# The load generators send every request from 127.0.0.1: the per-address
# bounds (new swarms, request rate, peers of one address in a swarm and in
# one reply) would refuse or thin them as the flood of one address they
# look like. Every bench lifts those and nothing else.
# shellcheck disable=SC2034  # used by the scripts that source this file
one_address_flags=(--gateway.new-swarm-burst=1000000 --gateway.requests-per-second=0
                   --tracker.max-peers-per-address=0 --allocation.max-address-share=1)

die() { echo "${bench_name:-bench}: $*" >&2; exit 2; }
note() { echo "== $*"; }

bench_cleanup() {
  if [[ -n ${tracker_pid:-} ]] && kill -0 "$tracker_pid" 2>/dev/null; then
    kill -TERM "$tracker_pid" 2>/dev/null || true
    wait "$tracker_pid" 2>/dev/null || true
  fi
  [[ -n ${work:-} ]] && rm -rf "$work"
  return 0
}

bench_workdir() {
  work=$(mktemp -d "/tmp/$1.XXXXXX")
  chmod 755 "$work"
  tracker_pid=""
  trap bench_cleanup EXIT
  trap 'exit 130' INT TERM
}

find_bin() {
  local c
  if [[ -n ${2:-} ]]; then echo "$2"; return; fi
  for c in "$root"/build/bin/"$1" "$root"/build-*/bin/"$1"; do
    if [[ -x $c ]]; then echo "$c"; return; fi
  done
}

free_port() { python3 "$root/tests/support/ports.py" 127.0.0.1 || die "no free port"; }
free_ports() {
  local out
  out=$(python3 "$root/tests/support/ports.py" 127.0.0.1 "$1") || die "no free ports"
  echo "${out//$'\n'/ }"
}

wait_until() {
  local deadline=$((SECONDS + $1))
  shift
  until "$@"; do
    ((SECONDS < deadline)) || return 1
    [[ -z ${tracker_pid:-} ]] || kill -0 "$tracker_pid" 2>/dev/null || return 1
    sleep 0.05
  done
}

http_ok() { [[ $(curl -s -o /dev/null -w '%{http_code}' --max-time 1 "$1") == 200 ]]; }
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
field() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<<" $2"; }
median() { sort -g | awk '{v[NR] = $1} END {if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
