#!/usr/bin/env bash
# The state file (state.dir) at scale: how long a snapshot takes to write
# and to load, how large it is, and the longest announce a client waits
# while periodic snapshots run.
#
#   bench/state/measure.sh [path/to/swarmkeeper [path/to/udp_loadgen]]
#
# For each population (STATE_POPULATIONS, default "100000x10"): start the
# daemon with --state-dir and --state.snapshot-period=10s, fill it with
# udp_loadgen --warmup, run pause_probe.py (one UDP client, one announce in
# flight) for STATE_PROBE_SECONDS (35) across at least three periodic
# snapshots, then the same probe with a daemon that writes no snapshot
# meanwhile (--state.snapshot-period=0s, same population); SIGTERM (the
# final snapshot: its time and size from the daemon's log line), start
# again and read the load line and the time until /health answers.
# Tracker on CPU 0, load generator and probe on CPU 1 (taskset), default
# config apart from the state options, --tracker.min-interval=1s and the
# per-address new-swarm budget (the load generator is one address)
# (the warm-up re-announces; see bench/udp/compare.sh).
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
    --state-dir="$work/state" --state.snapshot-period="$1" --tracker.min-interval=1s \
    "${one_address_flags[@]}" \
    >>"$work/log" 2>&1 &
  pid=$!
  for _ in $(seq 600); do healthy && break; sleep 0.05; done
  healthy || { tail -20 "$work/log" >&2; exit 1; }
  up_ms=$(( ($(date +%s%N) - t0) / 1000000 ))
}
stop() { kill -TERM "$pid"; wait "$pid" || true; pid=""; }

echo "machine: $(nproc) CPUs, $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1); swarmkeeper $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo '?')"
for pop in $populations; do
  t=${pop%x*} p=${pop#*x}
  port=$(free_port)
  rm -rf "$work/state"
  start 10s
  # udp_loadgen keeps each run at or under 1,000,000 slots.
  per=$(( 1000000 / p )); (( per > t )) && per=$t
  for (( done_t = 0, s = 1; done_t < t; done_t += per, s++ )); do
    n=$(( t - done_t < per ? t - done_t : per ))
    taskset -c 1 "$lg" --port="$port" --torrents="$n" --peers="$p" --seed="$s" --warmup \
      | grep '^BENCH' | sed 's/^/  warm-up: /'
  done
  with=$(taskset -c 1 python3 "$here/pause_probe.py" "$port" "$probe_s")
  writes=$(grep -c 'state: wrote' "$work/log" || true)
  periodic=$(grep 'state: wrote' "$work/log" | sed -n 's/.* in \([0-9]*\) ms.*/\1/p' | sort -n | tail -1)
  stop
  final=$(grep 'state: wrote' "$work/log" | tail -1)
  bytes=$(stat -c %s "$work/state/swarmkeeper.state")
  start 0s
  load=$(grep 'state: loaded' "$work/log" | tail -1)
  load_up=$up_ms
  without=$(taskset -c 1 python3 "$here/pause_probe.py" "$port" "$probe_s")
  stop
  echo "== $t swarms x $p peers"
  echo "  periodic snapshots during the probe: $writes (slowest ${periodic:-?} ms)"
  echo "  probe with snapshots:    $with"
  echo "  probe without snapshots: $without"
  echo "  final snapshot: ${final#*state: } ($bytes bytes on disk)"
  echo "  load: ${load#*state: }; /health answered ${load_up} ms after the start"
done
