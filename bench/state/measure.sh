#!/usr/bin/env bash
# The state file (state.dir) at scale: how long a snapshot takes to write
# and to load, how large it is, and the longest announce a client waits
# while periodic snapshots run.
#
#   bench/state/measure.sh [path/to/swarmkeeper [path/to/udp_loadgen]]
#
# For each population (STATE_POPULATIONS, default "100000x10"; for example
# "100000x10 1000000x10") and each of
# STATE_ROUNDS rounds (3): start the daemon with --state-dir and
# --state.snapshot-period=10s, fill it with udp_loadgen --warmup, then run
# pause_probe.py (one UDP client, one announce in flight) three times:
#   awake   for STATE_PROBE_SECONDS (35) right after the warm-up, across at
#           least three periodic snapshots of swarms that are all awake
#           (each snapshot asks every swarm actor for its state);
#   falling for STATE_SLEEP_SECONDS (100) after that, while the population
#           falls asleep (tracker.hibernate-after, default 20 s) and the
#           snapshots go on;
#   asleep  for STATE_PROBE_SECONDS once every swarm of the population is
#           asleep (swarmkeeper_swarms_dormant, read from /metrics), across
#           periodic snapshots of sleeping swarms (written from the
#           directory's data; no actor is asked);
# then SIGTERM (the final snapshot: its time and size from the daemon's log
# line), start again (the load line, the time until /health answers) and
# run the probe once more with a daemon that writes no snapshot meanwhile
# (--state.snapshot-period=0s, same population, swarms awake as loaded):
# the baseline. With "asleep0" among STATE_PHASES that daemon is then left
# until every swarm is asleep again and probed once more: the asleep phase
# without any snapshot (the heap trimmer's calls after the wave, but no
# write), to tell the snapshots' share of the asleep phase's waits from the
# node's own. Each round prints its lines; the summary prints the median
# over the rounds of each probe's p99 and maximum. STATE_PHASES (default
# "awake falling asleep") names the probes run before SIGTERM (the awake
# probe and the baseline always run; the other two as named): a million
# swarms take about 17 minutes to fall asleep at the default rate, so
# "STATE_PHASES=awake" measures the write, the load and the pause of a
# population that is awake, without that wait.
# Tracker on CPU 0, load generator and probe on CPU 1 (taskset), default
# config apart from the state options, --tracker.min-interval=1s, the
# per-address new-swarm budget (the load generator is one address) (the
# warm-up re-announces; see bench/udp/compare.sh) and an admin port for
# /metrics.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
bench_name="state bench"
# shellcheck source=bench/lib.sh
source "$root/bench/lib.sh"
sk=${1:-$root/build/bin/swarmkeeper}
lg=${2:-$root/build/bin/udp_loadgen}
populations=${STATE_POPULATIONS:-100000x10}
probe_s=${STATE_PROBE_SECONDS:-35}
sleep_s=${STATE_SLEEP_SECONDS:-100}
rounds=${STATE_ROUNDS:-3}
phases=" ${STATE_PHASES:-awake falling asleep} "
token=state-bench-admin-token
[[ -x $sk && -x $lg ]] || { echo "state bench: need $sk and $lg" >&2; exit 1; }
work=$(mktemp -d)
pid=""
cleanup() { [[ -n $pid ]] && kill -KILL "$pid" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT

healthy() { curl -fsS -o /dev/null "http://127.0.0.1:$port/health" 2>/dev/null; }

start() {  # start PERIOD
  : >"$work/log"
  local t0=$(date +%s%N)
  taskset -c 0 "$sk" --bind=127.0.0.1 --http-port="$port" --udp-port="$port" \
    --admin.port="$admin_port" --admin.token="$token" \
    --state-dir="$work/state" --state.snapshot-period="$1" --tracker.min-interval=1s \
    "${one_address_flags[@]}" \
    >>"$work/log" 2>&1 &
  pid=$!
  # /health answers once the state file is loaded: about 4 s for 100,000
  # swarms x 10 peers, about a minute for 1,000,000 x 10. Ten minutes at most.
  for _ in $(seq 12000); do healthy && break; sleep 0.05; done
  healthy || { tail -20 "$work/log" >&2; exit 1; }
  up_ms=$(( ($(date +%s%N) - t0) / 1000000 ))
}
stop() { kill -TERM "$pid"; wait "$pid" || true; pid=""; }
dormant() {
  curl -fsS -H "Authorization: Bearer $token" "http://127.0.0.1:$admin_port/metrics" 2>/dev/null |
    sed -n 's/^swarmkeeper_swarms_dormant \([0-9]*\).*/\1/p'
}
probe() { taskset -c 1 python3 "$here/pause_probe.py" "$port" "$1"; }
# Until every swarm of the population ($t) is asleep, then the dormant count
# into the variable named $1. (The probe's own swarm stays awake; they fall
# asleep at tracker.hibernations-per-second, 1,000 by default, after
# tracker.hibernate-after, 20 s.)
wait_asleep() {
  local -n n_=$1
  n_=$(dormant)
  for _ in $(seq $(( t / 500 + 120 ))); do
    (( ${n_:-0} >= t )) && break; sleep 1; n_=$(dormant)
  done
}
slowest_write() { grep 'state: wrote' "$work/log" | sed -n 's/.* in \([0-9]*\) ms.*/\1/p' | sort -n | tail -1; }

echo "machine: $(nproc) CPUs, $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1); swarmkeeper $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo '?')"
for pop in $populations; do
  t=${pop%x*} p=${pop#*x}
  summary=()
  for (( round = 1; round <= rounds; round++ )); do
    read -r port admin_port < <(free_ports 2)
    rm -rf "$work/state"
    start 10s
    # udp_loadgen keeps each run at or under 1,000,000 slots.
    per=$(( 1000000 / p )); (( per > t )) && per=$t
    for (( done_t = 0, s = 1; done_t < t; done_t += per, s++ )); do
      n=$(( t - done_t < per ? t - done_t : per ))
      taskset -c 1 "$lg" --port="$port" --torrents="$n" --peers="$p" --seed="$s" --warmup \
        | grep '^BENCH' | sed 's/^/  warm-up: /'
    done
    awake=$(probe "$probe_s")
    awake_writes=$(grep -c 'state: wrote' "$work/log" || true)
    awake_slowest=$(slowest_write)
    falling="" asleep="" asleep_n="" asleep_writes=0 asleep_slowest=""
    if [[ $phases == *" falling "* ]]; then falling=$(probe "$sleep_s"); fi
    if [[ $phases == *" asleep "* ]]; then
      wait_asleep asleep_n
      before=$(grep -c 'state: wrote' "$work/log" || true)
      asleep=$(probe "$probe_s")
      asleep_writes=$(( $(grep -c 'state: wrote' "$work/log" || true) - before ))
      asleep_slowest=$(grep 'state: wrote' "$work/log" | tail -n "$asleep_writes" |
        sed -n 's/.* in \([0-9]*\) ms.*/\1/p' | sort -n | tail -1)
    fi
    stop
    final=$(grep 'state: wrote' "$work/log" | tail -1)
    bytes=$(stat -c %s "$work/state/swarmkeeper.state")
    start 0s
    load=$(grep 'state: loaded' "$work/log" | tail -1)
    load_up=$up_ms
    without=$(probe "$probe_s")
    asleep0="" asleep0_n=""
    if [[ $phases == *" asleep0 "* ]]; then
      wait_asleep asleep0_n
      asleep0=$(probe "$probe_s")
    fi
    stop
    echo "== $t swarms x $p peers, round $round"
    echo "  probe awake, with snapshots ($awake_writes written, slowest ${awake_slowest:-?} ms): $awake"
    if [[ -n $falling ]]; then
      echo "  probe while falling asleep, with snapshots:                  $falling"
    fi
    if [[ -n $asleep ]]; then
      echo "  probe asleep ($asleep_n swarms), with snapshots ($asleep_writes written, slowest ${asleep_slowest:-?} ms): $asleep"
    fi
    echo "  probe without snapshots (baseline):                          $without"
    if [[ -n $asleep0 ]]; then
      echo "  probe asleep ($asleep0_n swarms), without snapshots:        $asleep0"
    fi
    echo "  final snapshot: ${final#*state: } ($bytes bytes on disk)"
    echo "  load: ${load#*state: }; /health answered ${load_up} ms after the start"
    for k in awake falling asleep without asleep0; do
      if [[ -n ${!k} ]]; then summary+=("$k $(field p99_us "${!k}") $(field max_us "${!k}")"); fi
    done
  done
  echo "== $t swarms x $p peers: medians over $rounds rounds (microseconds)"
  for k in awake falling asleep without asleep0; do
    [[ $k == awake || $k == without || $phases == *" $k "* ]] || continue
    p99=$(printf '%s\n' "${summary[@]}" | awk -v k="$k" '$1 == k {print $2}' | median)
    mx=$(printf '%s\n' "${summary[@]}" | awk -v k="$k" '$1 == k {print $3}' | median)
    printf '  %-8s p99 %8s   max %8s\n' "$k" "$p99" "$mx"
  done
done
