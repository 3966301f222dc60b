#!/usr/bin/env bash
# UDP (BEP 15) announce throughput: Debian's opentracker vs swarmkeeper, same load.
#
#   bench/udp/compare.sh [path/to/swarmkeeper [path/to/udp_loadgen]]
#
# For each round: opentracker, then swarmkeeper, each started fresh on free
# loopback ports, warmed up (udp_loadgen --warmup: every torrent x peer slot
# announced once with event=started, resent on timeout, must all be answered)
# and measured with udp_loadgen for BENCH_DURATION seconds: same population,
# window, sockets and request mix. Prints responses/s, the tracker's own CPU
# time per response and the ratio swarmkeeper / opentracker. See
# bench/udp/README.md.
#
# Installs nothing: needs opentracker, curl and taskset
# (deploy/install-deps.sh --bench) and a built udp_loadgen. Loopback only.
# Run as root so that opentracker can chroot and drop to the user nobody.
#
# Environment (defaults in brackets):
#   BENCH_DURATION [15]      seconds per measured run
#   BENCH_WINDOW [64]        requests in flight per socket
#   BENCH_THREADS [1]        load generator threads (one socket each)
#   BENCH_SCRAPE_PCT [0]     % of measured requests that are scrapes
#   BENCH_SCRAPE_HASHES [10] info hashes per scrape
#   BENCH_TORRENTS [1000]    BENCH_PEERS [200]   BENCH_SEED [1]
#   BENCH_ORDER [cycle]      udp_loadgen --order: cycle (each peer once per
#                            cycle, like clients at their interval) or random
#   BENCH_PIN [1]            1: tracker on BENCH_TRACKER_CPUS (0), loadgen on
#                            BENCH_LOADGEN_CPUS (1) via taskset; 0: no pinning
#   BENCH_ROUNDS [1]         rounds; figures are medians over rounds
#   BENCH_MAX_LOSS [0.001]   a run is flagged when (errors + timeouts) /
#                            responses exceeds this
#   BENCH_SWARMKEEPER_ARGS   extra daemon options [none: the default
#                            configuration, whose thread counts follow the
#                            CPU affinity mask: one of each under taskset -c 0]
#   BENCH_FLOOR [0]          1: also measure udp_floor (bench/udp/udp_floor.cpp,
#                            built next to udp_loadgen), a responder that does
#                            only the datagram I/O, with --io=mmsg and
#                            --io=uring: the part of the CPU per response no
#                            tracker saves on, and io_uring against
#                            recvmmsg/sendmmsg
#
# swarmkeeper always gets --tracker.min-interval=1s: every peer re-announces
# once per cycle (200,000 slots at 100-200k responses/s: 1-2 s), so under the
# default 15-minute min interval each re-announce would be early and get
# warned, then refused. With 1 s the enforcement stays on and sees no early
# announce (the early threshold is min interval minus half of it); a refusal
# would show up as an error and flag the run.
#
# Exit status: 0 when every run was clean, 1 when one was flagged, 2 when
# something needed is missing.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
bench_name=compare.sh
# shellcheck source=bench/lib.sh
source "$root/bench/lib.sh"

duration=${BENCH_DURATION:-15}
window=${BENCH_WINDOW:-64}
threads=${BENCH_THREADS:-1}
scrape_pct=${BENCH_SCRAPE_PCT:-0}
scrape_hashes=${BENCH_SCRAPE_HASHES:-10}
torrents=${BENCH_TORRENTS:-1000}
peers=${BENCH_PEERS:-200}
order=${BENCH_ORDER:-cycle}
seed=${BENCH_SEED:-1}
pin=${BENCH_PIN:-1}
tracker_cpus=${BENCH_TRACKER_CPUS:-0}
loadgen_cpus=${BENCH_LOADGEN_CPUS:-1}
rounds=${BENCH_ROUNDS:-1}
max_loss=${BENCH_MAX_LOSS:-0.001}
floor=${BENCH_FLOOR:-0}
read -r -a sk_extra <<<"${BENCH_SWARMKEEPER_ARGS-}"
sk_extra+=(--tracker.min-interval=1s)
sk_extra+=("${one_address_flags[@]}")

missing=()
for tool in opentracker curl taskset; do
  command -v "$tool" >/dev/null || missing+=("$tool")
done
((${#missing[@]} == 0)) || die "missing ${missing[*]}; install them with: deploy/install-deps.sh --bench"

sk=$(find_bin swarmkeeper "${1:-${SWARMKEEPER:-}}")
lg=$(find_bin udp_loadgen "${2:-${UDP_LOADGEN:-}}")
[[ -n $sk && -x $sk ]] || die "no swarmkeeper binary (cmake --build build, or pass its path)"
[[ -n $lg && -x $lg ]] || die "no udp_loadgen binary (cmake --build build --target udp_loadgen, or pass its path as \$2)"
floor_modes=()
if [[ $floor == 1 ]]; then
  fl=$(dirname "$lg")/udp_floor
  [[ -x $fl ]] || die "BENCH_FLOOR=1 needs udp_floor next to udp_loadgen (cmake --build build --target udp_floor)"
  floor_modes=(mmsg)
  usage_line=$("$fl" --io=uring 2>&1 || true)  # no port: only the usage line, status 2
  if grep -q 'without liburing' <<<"$usage_line"; then
    note "udp_floor was built without liburing (apt install liburing-dev, rebuild): no io_uring row"
  else
    floor_modes+=(uring)
  fi
fi

for v in duration window threads scrape_hashes torrents peers rounds; do
  [[ ${!v} =~ ^[0-9]+$ && ${!v} -ge 1 ]] || die "BENCH_${v^^} must be a positive integer, not '${!v}'"
done

if [[ $pin == 1 ]]; then
  pin_tracker=(taskset -c "$tracker_cpus")
  pin_lg=(taskset -c "$loadgen_cpus")
else
  pin_tracker=()
  pin_lg=()
fi

bench_workdir swarmkeeper-udpbench

clk_tck=$(getconf CLK_TCK)
pop=(--torrents="$torrents" --peers="$peers" --seed="$seed")

"$lg" --write-hashes="$work/hashes.txt" "${pop[@]}" || die "udp_loadgen could not write the hash list"
chmod 644 "$work/hashes.txt"
[[ $(wc -l <"$work/hashes.txt") -eq $torrents ]] || die "hash list has the wrong length"

start_opentracker() {
  port=$(free_port)
  local as_user=()
  if [[ $(id -u) -eq 0 ]]; then as_user=(-u nobody); fi
  # -p: HTTP (readiness check only), -P: UDP, the port measured.
  "${pin_tracker[@]}" opentracker -i 127.0.0.1 -p "$port" -P "$port" "${as_user[@]}" \
    -d "$work" -w hashes.txt >"$work/opentracker.log" 2>&1 &
  tracker_pid=$!
  local first
  first=$(head -1 "$work/hashes.txt" | sed 's/../%&/g')
  wait_until 10 http_ok "http://127.0.0.1:$port/scrape?info_hash=$first" \
    || { cat "$work/opentracker.log" >&2; die "opentracker did not start"; }
}

start_swarmkeeper() {
  read -r port http_port <<<"$(free_ports 2)"
  "${pin_tracker[@]}" "$sk" --udp-port="$port" --http-port="$http_port" --bind=127.0.0.1 "${sk_extra[@]}" \
    >"$work/swarmkeeper.log" 2>&1 &
  tracker_pid=$!
  wait_until 20 http_ok "http://127.0.0.1:$http_port/health" \
    || { tail -20 "$work/swarmkeeper.log" >&2; die "swarmkeeper did not answer /health"; }
}

start_floor() {  # start_floor MODE
  port=$(free_port)
  rm -f "$work/floor.log"  # the wait below must see this start's "ready", not the last one's
  # Replies as long as the trackers': numwant (50) peers, fewer in smaller swarms.
  "${pin_tracker[@]}" "$fl" --port="$port" --io="$1" --peers=$((peers < 50 ? peers : 50)) \
    >"$work/floor.log" 2>&1 &
  tracker_pid=$!
  wait_until 10 grep -qs '^ready' "$work/floor.log" \
    || { cat "$work/floor.log" >&2; die "udp_floor --io=$1 did not start"; }
}

stop_tracker() {
  local rc=0
  kill -TERM "$tracker_pid"
  wait "$tracker_pid" || rc=$?
  tracker_pid=""
  if [[ $1 == swarmkeeper && $rc -ne 0 ]]; then
    echo "   !! swarmkeeper exited with status $rc after SIGTERM"
    tail -20 "$work/swarmkeeper.log"
    flagged=1
  fi
}

run_lg() {  # run_lg ARGS... -> global result = BENCH line + cpu_ticks=N
  local before after out
  before=$(cpu_ticks "$tracker_pid")
  out=$("${pin_lg[@]}" "$lg" --port="$port" "${pop[@]}" --order="$order" --window="$window" --threads="$threads" "$@" 2>&1) \
    || { echo "$out" >&2; die "udp_loadgen failed"; }
  after=$(cpu_ticks "$tracker_pid")
  result="$(grep '^BENCH ' <<<"$out") cpu_ticks=$((after - before))"
  [[ $result == BENCH* ]] || { echo "$out" >&2; die "no BENCH line from udp_loadgen"; }
}

warm_up() {
  run_lg --warmup
  echo "   warm-up: $(field warm_done "$result")/$(field warm_total "$result") slots announced with event=started" \
       "($(field timeouts "$result") timeouts resent, $(field errors "$result") error replies)"
  if [[ $(field warm_done "$result") != "$(field warm_total "$result")" ]]; then
    echo "   !! warm-up incomplete"
    flagged=1
  fi
}

declare -a rows
flagged=0

measure() {  # measure NAME ROUND
  run_lg --duration="$duration" --scrape-pct="$scrape_pct" --scrape-hashes="$scrape_hashes"
  rows+=("$1|$2|$result")
  local bad="" resp errs tos
  resp=$(field responses "$result"); errs=$(field errors "$result"); tos=$(field timeouts "$result")
  awk -v e="$errs" -v t="$tos" -v r="$resp" -v m="$max_loss" 'BEGIN{exit !(r == 0 || (e + t) / r > m)}' \
    && bad+=" errors+timeouts=$((errs + tos))"
  (( $(field bad "$result") == 0 )) || bad+=" malformed/unmatched=$(field bad "$result")"
  (( $(field nopeers "$result") == 0 )) || bad+=" announces-without-peers=$(field nopeers "$result")"
  printf '   %-12s %9.0f resp/s  tracker CPU %5.1f us/resp  %s peers/announce  errors %s  timeouts %s%s\n' \
    "$1" "$(field rps "$result")" \
    "$(awk -v t="$(field cpu_ticks "$result")" -v n="$resp" -v h="$clk_tck" 'BEGIN{print n ? t * 1e6 / h / n : 0}')" \
    "$(field avg_peers "$result")" "$errs" "$tos" "${bad:+   !! FLAGGED:$bad}"
  [[ -z $bad ]] || flagged=1
}

note "machine: $(nproc) CPUs, $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1), $(uname -sr)"
note "swarmkeeper options: --udp-port=PORT --http-port=PORT2 --bind=127.0.0.1 ${sk_extra[*]}"
note "opentracker $(dpkg-query -W -f='${Version}' opentracker 2>/dev/null || echo '?'), swarmkeeper $sk ($(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo '?'))"
note "load: $torrents torrents x $peers peers (seed $seed), numwant=50, order $order; $threads socket(s) x window $window; scrapes ${scrape_pct}% (${scrape_hashes} hashes); ${duration}s; $rounds round(s)"
if [[ $pin == 1 ]]; then note "pinning: tracker on CPU $tracker_cpus, udp_loadgen on CPU $loadgen_cpus"; else note "pinning: none"; fi
read -r load1 _ </proc/loadavg
if awk -v l="$load1" 'BEGIN{exit !(l > 0.5)}'; then
  note "WARNING: load average $load1 before start; other work on this machine skews the figures"
fi

for ((round = 1; round <= rounds; round++)); do
  note "round $round/$rounds: opentracker"
  start_opentracker; warm_up; measure opentracker "$round"; stop_tracker opentracker
  note "round $round/$rounds: swarmkeeper"
  start_swarmkeeper; warm_up; measure swarmkeeper "$round"; stop_tracker swarmkeeper
  for m in "${floor_modes[@]}"; do
    note "round $round/$rounds: udp_floor --io=$m"
    start_floor "$m"; warm_up; measure "floor-$m" "$round"; stop_tracker "floor-$m"
  done
done

metric() {
  local row n line
  for row in "${rows[@]}"; do
    IFS='|' read -r n _ line <<<"$row"
    if [[ $n == "$1" ]]; then field "$2" "$line"; fi
  done | median
}
cpu_per_resp() {
  local row n line
  for row in "${rows[@]}"; do
    IFS='|' read -r n _ line <<<"$row"
    [[ $n == "$1" ]] || continue
    awk -v t="$(field cpu_ticks "$line")" -v n="$(field responses "$line")" -v h="$clk_tck" 'BEGIN{print n ? t * 1e6 / h / n : 0}'
  done | median
}
ot=$(metric opentracker rps)
skr=$(metric swarmkeeper rps)
echo
echo "RESULT (median of $rounds round(s), $torrents x $peers peers, $threads x window $window, ${duration}s, scrapes ${scrape_pct}%, pin=$pin)"
printf '  %-12s %10s %16s %14s\n' tracker 'resp/s' 'tracker us/resp' 'peers/announce'
printf '  %-12s %10.0f %16.1f %14s\n' opentracker "$ot" "$(cpu_per_resp opentracker)" "$(metric opentracker avg_peers)"
printf '  %-12s %10.0f %16.1f %14s\n' swarmkeeper "$skr" "$(cpu_per_resp swarmkeeper)" "$(metric swarmkeeper avg_peers)"
for m in "${floor_modes[@]}"; do
  printf '  %-12s %10.0f %16.1f %14s\n' "floor-$m" "$(metric "floor-$m" rps)" "$(cpu_per_resp "floor-$m")" \
    "$(metric "floor-$m" avg_peers)"
done
awk -v a="$skr" -v b="$ot" 'BEGIN{printf "  ratio swarmkeeper/opentracker: %.2fx (target 1.2x with no more CPU per response)\n", a / b}'
if ((flagged)); then
  echo "  !! at least one run was FLAGGED (see above): the figures are not trustworthy"
  exit 1
fi
