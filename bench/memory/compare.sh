#!/usr/bin/env bash
# Resident memory of populations of swarms: Debian's opentracker vs
# swarmkeeper, default configuration, one after the other.
#
#   bench/memory/compare.sh [path/to/swarmkeeper [path/to/udp_loadgen]]
#
# For each population (torrents x peers per torrent) and each tracker: start
# the tracker fresh on free loopback ports, read its RSS once it is up
# (the baseline), fill it with `udp_loadgen --warmup` (every slot announces
# once with event=started; timeouts are resent; all must be answered), read
# the RSS again right after the warm-up and once more after MEM_SETTLE
# seconds (by then every swarm has run its first sweep and health tick, which
# allocate too, and, nobody announcing any more, has been put to sleep as
# data: tracker.hibernate-after, 1 min by default, checked at each 1-min
# sweep), then stop it. The warm reading is the cost of running swarms. Prints RSS, bytes per swarm and per peer above
# the baseline, and the ratio swarmkeeper / opentracker. See
# bench/memory/README.md.
#
# Populations of more than 1,000,000 slots are announced in chunks of
# 1,000,000 slots with consecutive load generator seeds (udp_loadgen bounds
# one warm-up to 120 s); opentracker's whitelist holds every chunk's hashes.
#
# Installs nothing: needs opentracker and curl (deploy/install-deps.sh
# --bench) and a built udp_loadgen. Loopback only. Run as root so that
# opentracker can chroot and drop to the user nobody (it refuses root).
#
# Environment (defaults in brackets):
#   MEM_POPULATIONS ["100000x10 100000x1 1000x1000"]   torrents x peers, space separated
#   MEM_LARGE [0]            1: also 1000000x10 (10,000,000 peers; several minutes per tracker)
#   MEM_TRACKERS ["opentracker swarmkeeper"]
#   MEM_SETTLE [150]         seconds between the warm-up and the settled reading (past
#                            tracker.hibernate-after and a sweep: quiet swarms asleep),
#                            plus one second per 1,000 torrents: the swarms fall asleep
#                            at tracker.hibernations-per-second (1,000 by default)
#   MEM_WINDOW [256]         requests in flight per load generator socket
#   MEM_THREADS [2]          load generator sockets
#   MEM_SEED [1]             first load generator seed
#   MEM_SWARMKEEPER_ARGS     extra daemon options (default: none; the per-address
#                            budgets are always lifted, see bench/lib.sh)
#
# Exit status: 0 when every warm-up completed, 1 when one did not (its
# figures are flagged), 2 when something needed is missing.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
bench_name=compare.sh
# shellcheck source=bench/lib.sh
source "$root/bench/lib.sh"

populations=${MEM_POPULATIONS:-"100000x10 100000x1 1000x1000"}
if [[ ${MEM_LARGE:-0} == 1 ]]; then populations+=" 1000000x10"; fi
trackers=${MEM_TRACKERS:-"opentracker swarmkeeper"}
settle=${MEM_SETTLE:-150}
window=${MEM_WINDOW:-256}
threads=${MEM_THREADS:-2}
seed0=${MEM_SEED:-1}
read -r -a sk_extra <<<"${MEM_SWARMKEEPER_ARGS:-}"
sk_extra+=("${one_address_flags[@]}")
chunk_slots=1000000

for tool in opentracker curl; do
  if [[ $trackers == *$tool* || $tool == curl ]]; then
    command -v "$tool" >/dev/null || die "missing $tool; install it with: deploy/install-deps.sh --bench"
  fi
done

sk=$(find_bin swarmkeeper "${1:-${SWARMKEEPER:-}}")
lg=$(find_bin udp_loadgen "${2:-${UDP_LOADGEN:-}}")
[[ -n $sk && -x $sk ]] || die "no swarmkeeper binary (cmake --build build, or pass its path)"
[[ -n $lg && -x $lg ]] || die "no udp_loadgen binary (pass its path as \$2)"
for v in settle window threads seed0; do
  [[ ${!v} =~ ^[0-9]+$ ]] || die "MEM_${v^^} must be a non-negative integer, not '${!v}'"
done

bench_workdir swarmkeeper-membench

rss_kb() { awk '/^VmRSS:/ {print $2}' "/proc/$tracker_pid/status"; }

# chunks TORRENTS PEERS -> "torrents_per_chunk chunk_count"
chunks() {
  local t=$1 p=$2 n=1
  while (( (t / n) * p > chunk_slots && n < t )); do n=$((n * 2)); done
  while (( t % n != 0 )); do n=$((n + 1)); done
  echo "$((t / n)) $n"
}

write_hashes() {  # write_hashes TORRENTS_PER_CHUNK CHUNKS PEERS
  : >"$work/hashes.txt"
  local c
  for ((c = 0; c < $2; c++)); do
    "$lg" --write-hashes="$work/chunk.txt" --torrents="$1" --peers="$3" --seed=$((seed0 + c)) \
      || die "udp_loadgen could not write the hash list"
    cat "$work/chunk.txt" >>"$work/hashes.txt"
  done
  chmod 644 "$work/hashes.txt"
}

start_opentracker() {
  port=$(free_port)
  local as_user=()
  if [[ $(id -u) -eq 0 ]]; then as_user=(-u nobody); fi
  opentracker -i 127.0.0.1 -p "$port" -P "$port" "${as_user[@]}" -d "$work" -w hashes.txt \
    >"$work/opentracker.log" 2>&1 &
  tracker_pid=$!
  local first
  first=$(head -1 "$work/hashes.txt" | sed 's/../%&/g')
  wait_until 60 http_ok "http://127.0.0.1:$port/scrape?info_hash=$first" \
    || { cat "$work/opentracker.log" >&2; die "opentracker did not start"; }
}

start_swarmkeeper() {
  read -r port http_port <<<"$(free_ports 2)"
  "$sk" --udp-port="$port" --http-port="$http_port" --bind=127.0.0.1 "${sk_extra[@]}" \
    >"$work/swarmkeeper.log" 2>&1 &
  tracker_pid=$!
  wait_until 30 http_ok "http://127.0.0.1:$http_port/health" \
    || { tail -20 "$work/swarmkeeper.log" >&2; die "swarmkeeper did not answer /health"; }
}

stop_tracker() {
  kill -TERM "$tracker_pid"
  wait "$tracker_pid" || true
  tracker_pid=""
}

declare -a rows
flagged=0

run_one() {  # run_one TRACKER TORRENTS PEERS
  local name=$1 t=$2 p=$3 per n c out done_total=0 want_total=0
  read -r per n < <(chunks "$t" "$p")
  "start_$name"
  sleep 1
  local base
  base=$(rss_kb)
  for ((c = 0; c < n; c++)); do
    out=$("$lg" --port="$port" --torrents="$per" --peers="$p" --seed=$((seed0 + c)) \
            --window="$window" --threads="$threads" --warmup 2>&1) \
      || { echo "$out" >&2; die "udp_loadgen failed"; }
    out=$(grep '^BENCH ' <<<"$out")
    done_total=$((done_total + $(field warm_done "$out")))
    want_total=$((want_total + $(field warm_total "$out")))
  done
  local flag=""
  if ((done_total != want_total)); then flag="  !! warm-up incomplete ($done_total/$want_total)"; flagged=1; fi
  sleep 2
  local warm settled wait_s=$((settle + t / 1000))
  warm=$(rss_kb)
  sleep "$wait_s"
  settled=$(rss_kb)
  stop_tracker
  rows+=("$name $t $p $base $warm $settled")
  awk -v n="$name" -v t="$t" -v p="$p" -v b="$base" -v w="$warm" -v s="$settled" -v f="$flag" 'BEGIN {
    printf "   %-12s base %7.1f MB  warm %8.1f MB  settled %8.1f MB  %7.0f B/swarm  %6.0f B/peer%s\n",
      n, b / 1024, w / 1024, s / 1024, (s - b) * 1024 / t, (s - b) * 1024 / (t * p), f }'
}

note "machine: $(nproc) CPUs, $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1), $(uname -sr), $(awk '/MemTotal/ {printf "%.0f GB", $2 / 1048576}' /proc/meminfo)"
note "opentracker $(dpkg-query -W -f='${Version}' opentracker 2>/dev/null || echo '?'), swarmkeeper $sk ($(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo '?')), options: defaults${sk_extra:+ + ${sk_extra[*]}}"
note "populations: $populations; warm-up window $window x $threads socket(s); settled reading $settle s + 1 s per 1,000 torrents after the warm-up"

for pop in $populations; do
  [[ $pop =~ ^([0-9]+)x([0-9]+)$ ]] || die "population '$pop' is not TORRENTSxPEERS"
  t=${BASH_REMATCH[1]} p=${BASH_REMATCH[2]}
  read -r per n < <(chunks "$t" "$p")
  write_hashes "$per" "$n" "$p"
  note "$t swarms x $p peers ($((t * p)) peers; $n chunk(s) of $per torrents)"
  for tr in $trackers; do run_one "$tr" "$t" "$p"; done
done

echo
echo "RESULT (settled RSS; per swarm and per peer above the tracker's idle RSS)"
printf '  %-12s %-22s %10s %12s %10s %14s\n' tracker population 'RSS MB' 'B/swarm' 'B/peer' 'RSS ratio sk/ot'
for row in "${rows[@]}"; do
  read -r name t p base warm settled <<<"$row"
  ratio="-"
  if [[ $name == swarmkeeper ]]; then
    for o in "${rows[@]}"; do
      read -r on ot op _ _ os <<<"$o"
      if [[ $on == opentracker && $ot == "$t" && $op == "$p" ]]; then
        ratio=$(awk -v a="$settled" -v b="$os" 'BEGIN {printf "%.1fx", a / b}')
      fi
    done
  fi
  awk -v n="$name" -v t="$t" -v p="$p" -v b="$base" -v s="$settled" -v r="$ratio" 'BEGIN {
    printf "  %-12s %-22s %10.1f %12.0f %10.0f %14s\n", n, t " x " p, s / 1024, (s - b) * 1024 / t,
      (s - b) * 1024 / (t * p), r }'
done
if ((flagged)); then
  echo "  !! at least one warm-up was incomplete (see above): its figures undercount"
  exit 1
fi
