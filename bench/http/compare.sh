#!/usr/bin/env bash
# HTTP announce throughput: Debian's opentracker vs swarmkeeper, same load.
#
#   bench/http/compare.sh [path/to/swarmkeeper]
#
# For each round: opentracker, then swarmkeeper, each started fresh on a free
# loopback port, warmed up (every torrent x peer slot announced once with
# event=started, checked by scrape), then measured with wrk and
# bench/http/announce.lua: the same torrents and peers, the same wrk threads,
# connections and duration, "Connection: close" for both (opentracker closes
# every connection); then swarmkeeper again with keep-alive. Prints
# requests/s, the tracker's own CPU time per request, latency, and the ratio
# swarmkeeper / opentracker. See bench/http/README.md.
#
# Installs nothing: needs opentracker, wrk, curl and taskset
# (deploy/install-deps.sh --bench). Loopback only. Run as root so that
# opentracker can chroot and drop to the user nobody, as packaged.
#
# Environment (defaults in brackets):
#   BENCH_DURATION [15]      seconds per measured run
#   BENCH_WARMUP [20]        seconds of each warm-up (wrk sleeps the whole
#                            -d even when every slot is done early)
#   BENCH_THREADS [1]        wrk threads
#   BENCH_CONNECTIONS [64]   wrk connections
#   BENCH_TORRENTS [1000]    torrents
#   BENCH_PEERS [100]        peers per torrent
#   BENCH_ORDER [cycle]      steady order: cycle (each peer once per cycle,
#                            like clients at their interval) or random
#   BENCH_SEED [1]           population seed
#   BENCH_PIN [1]            1: tracker on BENCH_TRACKER_CPUS, wrk on
#                            BENCH_WRK_CPUS (taskset); 0: no pinning
#   BENCH_TRACKER_CPUS [0]   BENCH_WRK_CPUS [1]
#   BENCH_ROUNDS [1]         rounds; figures are the median over rounds
#   BENCH_SWARMKEEPER_ARGS   extra daemon options [none: the default
#                            configuration, whose thread counts follow the
#                            CPU affinity mask: one of each under taskset -c 0]
#   SWARMKEEPER              daemon path if not given as $1
#
# Exit status: 0 when every run was clean, 1 when a run was flagged (errors,
# failure replies, replies without peers, incomplete warm-up, daemon did not
# exit 0), 2 when something needed is missing.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
bench_name=compare.sh
# shellcheck source=bench/lib.sh
source "$root/bench/lib.sh"
lua="$here/announce.lua"

duration=${BENCH_DURATION:-15}
warmup=${BENCH_WARMUP:-20}
threads=${BENCH_THREADS:-1}
connections=${BENCH_CONNECTIONS:-64}
torrents=${BENCH_TORRENTS:-1000}
peers=${BENCH_PEERS:-100}
order=${BENCH_ORDER:-cycle}
seed=${BENCH_SEED:-1}
pin=${BENCH_PIN:-1}
tracker_cpus=${BENCH_TRACKER_CPUS:-0}
wrk_cpus=${BENCH_WRK_CPUS:-1}
rounds=${BENCH_ROUNDS:-1}
# swarmkeeper runs its default configuration: pinned to one CPU it starts
# one I/O and one scheduler thread by itself (opentracker is single-threaded).
read -r -a sk_extra <<<"${BENCH_SWARMKEEPER_ARGS-}"
# Every peer re-announces once per cycle (100,000 slots at 15-40k requests/s:
# 2.5-7 s), so under the default 15-minute min interval each re-announce
# would be early (warned, then refused). With 1 s the enforcement stays on
# and sees none; a refusal would count as a failure reply and show up.
sk_extra+=(--tracker.min-interval=1s)
sk_extra+=("${one_address_flags[@]}")

# --- what we need ------------------------------------------------------------
missing=()
for tool in opentracker wrk curl taskset; do
  command -v "$tool" >/dev/null || missing+=("$tool")
done
((${#missing[@]} == 0)) || die "missing ${missing[*]}; install them with: deploy/install-deps.sh --bench"
[[ -r $lua ]] || die "cannot read $lua"

sk=${1:-${SWARMKEEPER:-}}
if [[ -z $sk ]]; then
  for candidate in "$root"/build/bin/swarmkeeper "$root"/build-*/bin/swarmkeeper; do
    if [[ -x $candidate ]]; then sk=$candidate; break; fi
  done
fi
[[ -n $sk && -x $sk ]] || die "no swarmkeeper binary (build it: cmake -S . -B build -DCMAKE_BUILD_TYPE=Release && cmake --build build; or pass its path)"

for v in duration warmup threads connections torrents peers seed rounds; do
  [[ ${!v} =~ ^[0-9]+$ && ${!v} -ge 1 ]] || die "BENCH_${v^^} must be a positive integer, not '${!v}'"
done

if [[ $pin == 1 ]]; then
  pin_tracker=(taskset -c "$tracker_cpus")
  pin_wrk=(taskset -c "$wrk_cpus")
else
  pin_tracker=()
  pin_wrk=()
fi

bench_workdir swarmkeeper-bench

clk_tck=$(getconf CLK_TCK)

# --- the population ------------------------------------------------------------
# announce.lua writes the info hashes it will use (hex, one per line: the
# whitelist opentracker needs) and exits without connecting anywhere.
BENCH_SEED=$seed BENCH_TORRENTS=$torrents BENCH_PEERS=$peers BENCH_WRITE_HASHES="$work/hashes.txt" \
  wrk -s "$lua" http://127.0.0.1:9/ >/dev/null 2>"$work/hashes.log" \
  || { cat "$work/hashes.log" >&2; die "announce.lua could not write the hash list"; }
chmod 644 "$work/hashes.txt"
[[ $(wc -l <"$work/hashes.txt") -eq $torrents ]] || die "hash list has the wrong length"

# Torrents whose swarms are checked by scrape after each warm-up.
sample_hashes=$(sed -n "1p;$(((torrents + 1) / 2))p;${torrents}p" "$work/hashes.txt" | awk '!seen[$0]++')

percent_encode_hex() { sed 's/../%&/g' <<<"$1"; }

# scrape PORT HEX -> "complete incomplete" (empty on failure)
scrape() {
  local body
  body=$(curl -s --max-time 2 "http://127.0.0.1:$1/scrape?info_hash=$(percent_encode_hex "$2")" | tr -d '\0' || true)
  local c i
  c=$(grep -ao '8:completei[0-9]*e' <<<"$body" | head -1 | tr -dc 0-9 | sed 's/^8//')
  i=$(grep -ao '10:incompletei[0-9]*e' <<<"$body" | head -1 | tr -dc 0-9 | sed 's/^10//')
  [[ -n $c && -n $i ]] && echo "$c $i"
}

start_opentracker() {
  port=$(free_port)
  local as_user=()
  if [[ $(id -u) -eq 0 ]]; then as_user=(-u nobody); fi
  "${pin_tracker[@]}" opentracker -i 127.0.0.1 -p "$port" -P "$port" "${as_user[@]}" \
    -d "$work" -w hashes.txt >"$work/opentracker.log" 2>&1 &
  tracker_pid=$!
  local first
  first=$(head -1 "$work/hashes.txt")
  wait_until 10 http_ok "http://127.0.0.1:$port/scrape?info_hash=$(percent_encode_hex "$first")" \
    || { cat "$work/opentracker.log" >&2; die "opentracker did not start"; }
}

start_swarmkeeper() {
  port=$(free_port)
  # --no-udp: this bench measures HTTP, and a UDP socket on the default port
  # (6969) would collide with parallel runs or a tracker already running.
  "${pin_tracker[@]}" "$sk" --http-port="$port" --no-udp --bind=127.0.0.1 "${sk_extra[@]}" \
    >"$work/swarmkeeper.log" 2>&1 &
  tracker_pid=$!
  wait_until 20 http_ok "http://127.0.0.1:$port/health" \
    || { tail -20 "$work/swarmkeeper.log" >&2; die "swarmkeeper did not answer /health"; }
}

stop_tracker() {  # stop_tracker NAME: SIGTERM; swarmkeeper must exit 0
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

# run_wrk MODE CLOSE -> sets the global `result` to the BENCH line plus cpu_ticks=N
run_wrk() {
  local mode=$1 close=$2 secs=$3 before after out
  before=$(cpu_ticks "$tracker_pid")
  out=$(BENCH_MODE=$mode BENCH_ORDER=$order BENCH_CONNECTION_CLOSE=$close BENCH_SEED=$seed BENCH_TORRENTS=$torrents \
        BENCH_PEERS=$peers BENCH_WRK_THREADS=$threads BENCH_WRK_CONNECTIONS=$connections \
        "${pin_wrk[@]}" wrk -t"$threads" -c"$connections" -d"${secs}s" -s "$lua" \
        "http://127.0.0.1:$port/" 2>&1) || { echo "$out" >&2; die "wrk failed"; }
  after=$(cpu_ticks "$tracker_pid")
  result="$(grep '^BENCH ' <<<"$out") cpu_ticks=$((after - before))"
  [[ $result == BENCH* ]] || { echo "$out" >&2; die "no BENCH line from wrk"; }
}

warm_up() {  # warm_up NAME: announce every slot, then check the sample swarms
  run_wrk warmup 1 "$warmup"
  local bad=0 h counts total
  local summary=""
  for h in $sample_hashes; do
    counts=$(scrape "$port" "$h" || true)
    if [[ -n $counts ]]; then
      total=$((${counts% *} + ${counts#* }))
      summary+=" ${h:0:8}=${counts/ /+}"
    else
      total=-1
      summary+=" ${h:0:8}=no-scrape"
    fi
    ((total == peers)) || bad=1
  done
  echo "   warm-up: $(field requests "$result") announces with event=started;" \
       "scrape (complete+incomplete) of sample torrents:$summary (want $peers each)"
  if ((bad)); then
    echo "   !! warm-up incomplete: raise BENCH_WARMUP"
    flagged=1
  fi
  warm_sample["$1"]=$summary
}

declare -A warm_sample
declare -a rows   # "name|mode|round|BENCH line"
flagged=0

measure() {  # measure NAME CONNECTION(close|keep-alive) ROUND
  local close=1
  [[ $2 == keep-alive ]] && close=0
  run_wrk steady "$close" "$duration"
  rows+=("$1|$2|$3|$result")
  local bad=""
  (( $(field non2xx "$result") == 0 )) || bad+=" non-2xx"
  (( $(field failure "$result") == 0 )) || bad+=" failure-replies"
  (( $(field nopeers "$result") == 0 )) || bad+=" replies-without-peers"
  (( $(field connect_errors "$result") == 0 )) || bad+=" connect-errors"
  (( $(field timeouts "$result") == 0 )) || bad+=" timeouts"
  (( $(field status_errors "$result") == 0 )) || bad+=" status-errors"
  # opentracker closes without saying "Connection: close", so wrk counts one
  # read error per request there; on a keep-alive run a read error is real.
  [[ $2 == close ]] || (( $(field read_errors "$result") == 0 )) || bad+=" read-errors"
  printf '   %-12s %-10s %9.0f req/s  tracker CPU %5.1f us/req  p50 %5.2f ms  p99 %6.2f ms  %s peers/reply%s\n' \
    "$1" "$2" "$(field rps "$result")" \
    "$(awk -v t="$(field cpu_ticks "$result")" -v n="$(field requests "$result")" -v h="$clk_tck" 'BEGIN{print n ? t * 1e6 / h / n : 0}')" \
    "$(awk -v u="$(field latency_p50_us "$result")" 'BEGIN{print u / 1000}')" \
    "$(awk -v u="$(field latency_p99_us "$result")" 'BEGIN{print u / 1000}')" \
    "$(field avg_peers "$result")" \
    "${bad:+   !! FLAGGED:$bad}"
  [[ -z $bad ]] || flagged=1
}

# --- the runs ------------------------------------------------------------------
note "machine: $(nproc) CPUs, $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1), $(uname -sr)"
note "swarmkeeper options: --http-port=PORT --no-udp --bind=127.0.0.1 ${sk_extra[*]}"
note "opentracker $(dpkg-query -W -f='${Version}' opentracker 2>/dev/null || echo '?'), wrk $(dpkg-query -W -f='${Version}' wrk 2>/dev/null || echo '?'), swarmkeeper $sk ($(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo '?'))"
note "load: $torrents torrents x $peers peers (seed $seed), compact=1 numwant=50, order $order; wrk -t$threads -c$connections -d${duration}s; warm-up ${warmup}s; $rounds round(s)"
if [[ $pin == 1 ]]; then
  note "pinning: tracker on CPU $tracker_cpus, wrk on CPU $wrk_cpus (taskset)"
else
  note "pinning: none"
fi
read -r load1 _ </proc/loadavg
if awk -v l="$load1" 'BEGIN{exit !(l > 0.5)}'; then
  note "WARNING: load average $load1 before start; other work on this machine skews the figures"
fi

for ((round = 1; round <= rounds; round++)); do
  note "round $round/$rounds: opentracker"
  start_opentracker
  warm_up opentracker
  measure opentracker close "$round"
  stop_tracker opentracker

  note "round $round/$rounds: swarmkeeper"
  start_swarmkeeper
  warm_up swarmkeeper
  measure swarmkeeper close "$round"
  measure swarmkeeper keep-alive "$round"
  stop_tracker swarmkeeper
done

if [[ ${warm_sample[opentracker]} != "${warm_sample[swarmkeeper]}" ]]; then
  echo "   !! the trackers disagree on the sample swarms after warm-up:"
  echo "      opentracker:${warm_sample[opentracker]}"
  echo "      swarmkeeper:${warm_sample[swarmkeeper]}"
  flagged=1
fi

# --- summary: medians over rounds ------------------------------------------------
metric() {  # metric NAME MODE FIELD -> median over rounds
  local row
  for row in "${rows[@]}"; do
    IFS='|' read -r n m _ line <<<"$row"
    if [[ $n == "$1" && $m == "$2" ]]; then field "$3" "$line"; fi
  done | median
}
cpu_per_req() {
  local row
  for row in "${rows[@]}"; do
    IFS='|' read -r n m _ line <<<"$row"
    [[ $n == "$1" && $m == "$2" ]] || continue
    awk -v t="$(field cpu_ticks "$line")" -v n="$(field requests "$line")" -v h="$clk_tck" 'BEGIN{print t * 1e6 / h / n}'
  done | median
}

ot=$(metric opentracker close rps)
skc=$(metric swarmkeeper close rps)
skk=$(metric swarmkeeper keep-alive rps)
echo
echo "RESULT (median of $rounds round(s), $torrents x $peers peers, wrk -t$threads -c$connections -d${duration}s, pin=$pin)"
p99_ms() { awk -v u="$(metric "$1" "$2" latency_p99_us)" 'BEGIN{printf "%.2f", u / 1000}'; }
printf '  %-12s %-10s %10s %16s %12s\n' tracker connection 'req/s' 'tracker us/req' 'p99 ms'
printf '  %-12s %-10s %10.0f %16.1f %12s\n' opentracker close "$ot" "$(cpu_per_req opentracker close)" "$(p99_ms opentracker close)"
printf '  %-12s %-10s %10.0f %16.1f %12s\n' swarmkeeper close "$skc" "$(cpu_per_req swarmkeeper close)" "$(p99_ms swarmkeeper close)"
printf '  %-12s %-10s %10.0f %16.1f %12s\n' swarmkeeper keep-alive "$skk" "$(cpu_per_req swarmkeeper keep-alive)" "$(p99_ms swarmkeeper keep-alive)"
awk -v a="$skc" -v b="$ot" 'BEGIN{printf "  ratio swarmkeeper/opentracker, Connection: close: %.2fx (target 1.2x)\n", a / b}'
awk -v a="$(p99_ms swarmkeeper close)" -v b="$(p99_ms opentracker close)" \
  'BEGIN{printf "  p99 swarmkeeper/opentracker, Connection: close:   %.2fx (target at most 2x)\n", a / b}'
awk -v a="$skk" -v b="$ot" 'BEGIN{printf "  swarmkeeper keep-alive vs opentracker close:      %.2fx (target 3x)\n", a / b}'
if ((flagged)); then
  echo "  !! at least one run was FLAGGED (see above): the figures are not trustworthy"
  exit 1
fi
