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
# data: tracker.hibernate-after, 20 s by default), then stop it. The warm reading is the cost of running swarms. Prints RSS, bytes per swarm and per peer above
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
#   MEM_STEADY [0]           seconds of a paced steady phase after the settled reading
#                            (0: none): every peer re-announces once per MEM_INTERVAL,
#                            as real clients do once per announce interval, so the
#                            swarms wake and fall asleep as a live tracker's do; prints
#                            the RSS at its end and the largest of its second half,
#                            the swarms awake then (swarmkeeper) and the tracker's CPU
#                            time per response over the phase
#   MEM_INTERVAL [1800]      seconds between a peer's announces in the steady phase
#                            (swarmkeeper's default tracker.interval, 30 min)
#   MEM_PIN [0]              1: tracker on CPU 0, load generators on CPU 1 (taskset;
#                            the tracker then sizes its threads for one CPU)
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
steady=${MEM_STEADY:-0}
interval=${MEM_INTERVAL:-1800}
pin=${MEM_PIN:-0}
admin_token=memory-bench-admin-token
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
for v in settle window threads seed0 steady interval pin; do
  [[ ${!v} =~ ^[0-9]+$ ]] || die "MEM_${v^^} must be a non-negative integer, not '${!v}'"
done

((interval > 0)) || die "MEM_INTERVAL must be at least 1"
pin_tracker=() pin_load=()
if ((pin)); then
  command -v taskset >/dev/null || die "MEM_PIN=1 needs taskset (util-linux)"
  pin_tracker=(taskset -c 0) pin_load=(taskset -c 1)
fi

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
  "${pin_tracker[@]}" opentracker -i 127.0.0.1 -p "$port" -P "$port" "${as_user[@]}" -d "$work" -w hashes.txt \
    >"$work/opentracker.log" 2>&1 &
  tracker_pid=$!
  local first
  first=$(head -1 "$work/hashes.txt" | sed 's/../%&/g')
  wait_until 60 http_ok "http://127.0.0.1:$port/scrape?info_hash=$first" \
    || { cat "$work/opentracker.log" >&2; die "opentracker did not start"; }
}

start_swarmkeeper() {
  read -r port http_port admin_port <<<"$(free_ports 3)"
  # The admin port only for the steady phase's count of awake swarms.
  local admin=()
  if ((steady > 0)); then admin=(--admin.port="$admin_port" --admin.token="$admin_token"); fi
  "${pin_tracker[@]}" "$sk" --udp-port="$port" --http-port="$http_port" --bind=127.0.0.1 "${admin[@]}" "${sk_extra[@]}" \
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
    out=$("${pin_load[@]}" "$lg" --port="$port" --torrents="$per" --peers="$p" --seed=$((seed0 + c)) \
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
  awk -v n="$name" -v t="$t" -v p="$p" -v b="$base" -v w="$warm" -v s="$settled" -v f="$flag" 'BEGIN {
    printf "   %-12s base %7.1f MB  warm %8.1f MB  settled %8.1f MB  %7.0f B/swarm  %6.0f B/peer%s\n",
      n, b / 1024, w / 1024, s / 1024, (s - b) * 1024 / t, (s - b) * 1024 / (t * p), f }'
  local live="- - - - - -"
  if ((steady > 0)); then live=$(steady_phase "$name" "$t" "$p" "$per" "$n" "$base"); fi
  stop_tracker
  rows+=("$name $t $p $base $warm $settled $live")
}

# Swarms awake now: all of the node's swarms less the sleeping ones.
awake_swarms() {
  local m
  m=$(curl -fsS --max-time 5 -H "Authorization: Bearer $admin_token" \
      "http://127.0.0.1:$admin_port/metrics" 2>/dev/null) || { echo "-"; return; }
  awk '/^swarmkeeper_swarms\{/ {all += $2} /^swarmkeeper_swarms_dormant / {d = $2}
       END {if (all == "") print "-"; else printf "%d\n", all - d}' <<<"$m"
}

# steady_phase NAME TORRENTS PEERS PER_CHUNK CHUNKS BASE_KB -> "end_kb max_kb
# awake responses cpu_us_per_response bad": one paced load generator per
# chunk, each at its slots / interval requests a second.
steady_phase() {
  local name=$1 t=$2 p=$3 per=$4 n=$5 base=$6 c rate c0 c1 r max=0 pids=() until half
  rate=$(( per * p / interval )); ((rate > 0)) || rate=1
  c0=$(cpu_ticks "$tracker_pid")
  for ((c = 0; c < n; c++)); do
    "${pin_load[@]}" "$lg" --port="$port" --torrents="$per" --peers="$p" --seed=$((seed0 + c)) \
      --window=64 --threads=1 --rate="$rate" --duration="$steady" >"$work/steady.$c" 2>&1 &
    pids+=($!)
  done
  until=$((SECONDS + steady)) half=$((SECONDS + steady / 2))
  while ((SECONDS + 10 < until)); do
    sleep 10
    r=$(rss_kb)
    if ((SECONDS >= half && r > max)); then max=$r; fi
  done
  local ok=1 pid
  for pid in "${pids[@]}"; do wait "$pid" || ok=0; done
  c1=$(cpu_ticks "$tracker_pid")
  r=$(rss_kb)
  ((r > max)) && max=$r
  local responses=0 bad=0 out
  for ((c = 0; c < n; c++)); do
    out=$(grep '^BENCH ' "$work/steady.$c") || { ok=0; continue; }
    responses=$((responses + $(field responses "$out")))
    bad=$((bad + $(field errors "$out") + $(field timeouts "$out") + $(field bad "$out")))
  done
  ((ok)) || { cat "$work"/steady.* >&2; die "a paced load generator failed"; }
  local awake="-"
  [[ $name == swarmkeeper ]] && awake=$(awake_swarms)
  awk -v n="$name" -v b="$base" -v e="$r" -v m="$max" -v a="$awake" -v q="$responses" -v bad="$bad" \
      -v c0="$c0" -v c1="$c1" -v t="$t" -v rate="$rate" -v ch="$n" -v s="$steady" 'BEGIN {
    printf "   %-12s steady %d s at %d announces/s: end %8.1f MB  max of 2nd half %8.1f MB  %7.0f B/swarm  awake %s  %.1f us CPU/response  %d errors+timeouts\n",
      n, s, rate * ch, e / 1024, m / 1024, (m - b) * 1024 / t, a, q ? (c1 - c0) * 10000 / q : 0, bad }' >&2
  echo "$r $max $awake $responses $(awk -v c0="$c0" -v c1="$c1" -v q="$responses" 'BEGIN {printf "%.1f", q ? (c1 - c0) * 10000 / q : 0}') $bad"
}

note "machine: $(nproc) CPUs, $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1), $(uname -sr), $(awk '/MemTotal/ {printf "%.0f GB", $2 / 1048576}' /proc/meminfo)"
note "opentracker $(dpkg-query -W -f='${Version}' opentracker 2>/dev/null || echo '?'), swarmkeeper $sk ($(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo '?')), options: defaults${sk_extra:+ + ${sk_extra[*]}}"
note "populations: $populations; warm-up window $window x $threads socket(s); settled reading $settle s + 1 s per 1,000 torrents after the warm-up"
if ((steady > 0)); then
  note "steady phase: $steady s, every peer re-announcing once per $interval s (paced, one load generator per chunk)"
fi
if ((pin)); then note "pinned: tracker on CPU 0, load on CPU 1"; fi

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
  read -r name t p base warm settled _ <<<"$row"
  ratio="-"
  if [[ $name == swarmkeeper ]]; then
    for o in "${rows[@]}"; do
      read -r on ot op _ _ os _ <<<"$o"
      if [[ $on == opentracker && $ot == "$t" && $op == "$p" ]]; then
        ratio=$(awk -v a="$settled" -v b="$os" 'BEGIN {printf "%.1fx", a / b}')
      fi
    done
  fi
  awk -v n="$name" -v t="$t" -v p="$p" -v b="$base" -v s="$settled" -v r="$ratio" 'BEGIN {
    printf "  %-12s %-22s %10.1f %12.0f %10.0f %14s\n", n, t " x " p, s / 1024, (s - b) * 1024 / t,
      (s - b) * 1024 / (t * p), r }'
done
if ((steady > 0)); then
  echo
  echo "RESULT, steady phase (every peer once per $interval s; the largest RSS of the phase's second half)"
  printf '  %-12s %-22s %10s %12s %10s %12s %14s %14s\n' tracker population 'RSS MB' 'B/swarm' 'B/peer' 'swarms awake' 'CPU us/resp' 'RSS ratio sk/ot'
  for row in "${rows[@]}"; do
    read -r name t p base _ _ _ smax awake _ cpu _ <<<"$row"
    ratio="-"
    if [[ $name == swarmkeeper ]]; then
      for o in "${rows[@]}"; do
        read -r on ot op _ _ _ _ omax _ <<<"$o"
        if [[ $on == opentracker && $ot == "$t" && $op == "$p" ]]; then
          ratio=$(awk -v a="$smax" -v b="$omax" 'BEGIN {printf "%.1fx", a / b}')
        fi
      done
    fi
    awk -v n="$name" -v t="$t" -v p="$p" -v b="$base" -v s="$smax" -v a="$awake" -v c="$cpu" -v r="$ratio" 'BEGIN {
      printf "  %-12s %-22s %10.1f %12.0f %10.0f %12s %14s %14s\n", n, t " x " p, s / 1024, (s - b) * 1024 / t,
        (s - b) * 1024 / (t * p), a, c, r }'
  done
fi
if ((flagged)); then
  echo "  !! at least one warm-up was incomplete (see above): its figures undercount"
  exit 1
fi
