#!/usr/bin/env bash
# The self-healing evaluation: every scenario, every policy, N replications
# with common random numbers, then the markdown table and the PNG plots.
#
#   bench/sim/run.sh [--build DIR] [--out DIR] [--replications N] [--seed S]
#
# Defaults: build dir ./build (built here if swarmsim is missing), output
# bench/sim/results, 20 replications, seed 1. Needs python3 (standard
# library) for the table and gnuplot (Debian: gnuplot-nox) for the plots;
# without gnuplot the plots are skipped with a note.
#
# Writes OUT/results.jsonl (swarmsim --json), OUT/results.md (the table),
# OUT/series.csv (60 s samples of replication 0), OUT/*.png and
# OUT/runtime.txt (how long the evaluation took).
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
build="$root/build"
out="$here/results"
reps=20
seed=1
while [[ $# -gt 0 ]]; do
  case "$1" in
    --build) build="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --replications) reps="$2"; shift 2 ;;
    --seed) seed="$2"; shift 2 ;;
    -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
    *) echo "run.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done

sim="$build/bin/swarmsim"
if [[ ! -x "$sim" ]]; then
  cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build "$build" -j"$(nproc)" --target swarmsim
fi
mkdir -p "$out"

start=$(date +%s)
"$sim" --scenario=all --policy=all --replications="$reps" --seed="$seed" --json \
  >"$out/results.jsonl"
end=$(date +%s)
echo "swarmsim --scenario=all --policy=all --replications=$reps --seed=$seed: $((end - start)) s on $(nproc) cores ($(uname -m), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'))" \
  >"$out/runtime.txt"
cat "$out/runtime.txt"

# Time series of replication 0 for the plots (three setups are enough).
for pol in self-healing; do
  "$sim" --scenario=flash-crowd --policy="$pol" --replications=1 --seed="$seed" \
    --series="$out/series.csv" >/dev/null
done

python3 "$here/report.py" "$out/results.jsonl" "$out"
echo "table: $out/results.md"

if ! command -v gnuplot >/dev/null; then
  echo "gnuplot not found (Debian: gnuplot-nox): plots skipped"
  exit 0
fi

# One bar chart per metric: relative difference to random, 95% interval.
for metric in median_s p95_s first_copy_s unreachable_median_s; do
  dat="$out/rel_$metric.dat"
  [[ -s "$dat" ]] || continue
  gnuplot <<EOF
set terminal pngcairo size 1100,520 noenhanced
set output "$out/rel_$metric.png"
set title "$metric: paired difference to random (mean of $reps replications, bootstrap 95% CI)"
set ylabel "% vs random (lower is better)"
set style data histogram
set style histogram errorbars gap 2 lw 1
set style fill solid 0.6 border -1
set xtics rotate by -30
set grid ytics
set key outside right
set yrange [*:*]
policies = "seeder-rotation flash-crowd reachability-aware adaptive self-healing"
plot for [p in policies] "< awk '\$2==\"".p."\"' $dat" using 3:4:5:xtic(1) title p
EOF
done

# Flash crowd over time (replication 0): leechers and the least-replicated
# piece's copies, random vs self-healing.
gnuplot <<EOF
set terminal pngcairo size 1100,520 noenhanced
set output "$out/flash_crowd_series.png"
set datafile separator ","
set title "flash crowd, replication 0: leechers left and min piece copies"
set xlabel "time (min)"
set ylabel "leechers"
set y2label "min piece copies among leechers"
set y2tics
set grid
plot "< grep '^flash-crowd,random,' $out/series.csv" using (\$3/60):4 with lines lw 2 title "leechers, random", \
     "< grep '^flash-crowd,self-healing,' $out/series.csv" using (\$3/60):4 with lines lw 2 title "leechers, self-healing", \
     "< grep '^flash-crowd,random,' $out/series.csv" using (\$3/60):6 axes x1y2 with lines dt 2 title "min copies, random", \
     "< grep '^flash-crowd,self-healing,' $out/series.csv" using (\$3/60):6 axes x1y2 with lines dt 2 title "min copies, self-healing"
EOF
echo "plots: $out/*.png"
