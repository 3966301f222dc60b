#!/usr/bin/env python3
"""Turns swarmsim --json output into the markdown results table and the
gnuplot data files for the plots (bench/sim/run.sh calls it).

usage: report.py RESULTS.jsonl OUTDIR

Writes OUTDIR/results.md (the targets, then one table per scenario) and
OUTDIR/rel_<metric>.dat (relative difference to random with the bootstrap
interval, one block per policy) for run.sh's gnuplot scripts. Standard
library only.
"""
import json
import sys
from collections import OrderedDict

# (metric, column title, lower is better)
COLUMNS = [
    ("median_s", "median", True),
    ("p95_s", "p95", True),
    ("max_s", "max", True),
    ("fraction_completed", "completed", False),
    ("first_copy_s", "first copy", True),
    ("seed_upload_copies", "seed upload (copies)", True),
    ("min_copies_mean", "min piece copies", False),
    ("stalled_mean", "stalled", True),
]
EXTRA = {
    "unreachable-30": [("unreachable_median_s", "unreachable median", True)],
    "unreachable-50": [("unreachable_median_s", "unreachable median", True)],
    "unreachable-70": [("unreachable_median_s", "unreachable median", True)],
    "unreachable-50-small": [("unreachable_median_s", "unreachable median", True)],
    "free-riders": [("compliant_median_s", "compliant median", True),
                    ("compliant_vs_no_freeriders", "compliant vs no free-riders", True)],
    "partial-seeds": [("partial_median_s", "partial seeds' median", True),
                      ("partial_fraction_completed", "partial seeds done", False),
                      ("announces", "announces", True),
                      ("remediation_actions", "remediation actions", True),
                      ("unhealthy_share", "unhealthy ticks", True),
                      ("seeding_alarm", "seeding alarm", True)],
    "partial-seeds-no-paused": [("partial_median_s", "partial seeds' median", True),
                                ("announces", "announces", True),
                                ("remediation_actions", "remediation actions", True),
                                ("unhealthy_share", "unhealthy ticks", True),
                                ("seeding_alarm", "seeding alarm", True)],
}
# Tracker side, one table for every scenario: (metric, column title).
TRACKER = [
    ("announces", "announces"),
    ("remediation_actions", "remediation actions"),
    ("remediation_starts", "remediations started"),
    ("unhealthy_share", "unhealthy ticks"),
    ("leave_early_share", "ticks: seeders leave early"),
    ("seeding_alarm", "runs with a seeding alarm"),
    ("seeding_remediation", "runs with a seeding remediation"),
    ("seeder_appeals", "seeder appeals"),
]

# The evaluation's targets: (scenario, metric, title, test on (rel, ci_low, ci_high)).
TARGETS = [
    ("steady", "median_s", "steady state: median within ±5% of random",
     lambda r, lo, hi: abs(r) <= 0.05),
    ("steady", "p95_s", "steady state: p95 within ±5% of random",
     lambda r, lo, hi: abs(r) <= 0.05),
    ("flash-crowd", "first_copy_s", "flash crowd: first full copy ≥20% faster",
     lambda r, lo, hi: r <= -0.20),
    ("flash-crowd", "p95_s", "flash crowd: p95 ≥10% better",
     lambda r, lo, hi: r <= -0.10),
    ("unreachable-50", "unreachable_median_s", "50% unreachable: their median ≥20% better",
     lambda r, lo, hi: r <= -0.20),
    ("unreachable-70", "unreachable_median_s", "70% unreachable: their median ≥20% better",
     lambda r, lo, hi: r <= -0.20),
    ("unreachable-50-small", "unreachable_median_s",
     "50% unreachable, swarm smaller than numwant: their median ≥20% better",
     lambda r, lo, hi: r <= -0.20),
    ("partial-seeds", "median_s", "partial seeds: full leechers' median within ±5% of random",
     lambda r, lo, hi: abs(r) <= 0.05),
    ("partial-seeds", "p95_s", "partial seeds: full leechers' p95 within ±5% of random",
     lambda r, lo, hi: abs(r) <= 0.05),
    ("partial-seeds", "announces", "partial seeds: announces within ±5% of random",
     lambda r, lo, hi: abs(r) <= 0.05),
]


def fmt_value(metric, v):
    if v is None:
        return "–"
    if metric.endswith("_s"):
        return "%.0f s" % v
    if metric == "fraction_completed":
        return "%.1f%%" % (100 * v)
    if metric == "compliant_vs_no_freeriders":
        return "%+.1f%%" % (100 * v)
    if metric in ("partial_fraction_completed", "unhealthy_share", "seeding_alarm",
                  "leave_early_share", "seeding_remediation"):
        return "%.1f%%" % (100 * v)
    if metric in ("announces", "seeder_appeals"):
        return "%.0f" % v
    if metric == "remediation_actions":
        return "%.1f" % v
    return "%.2f" % v


def fmt_rel(c):
    if not c:
        return ""
    return " (%+.1f%% [%+.1f, %+.1f])" % (100 * c["rel"], 100 * c["ci_low"], 100 * c["ci_high"])


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    rows = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
    out = sys.argv[2]
    by = OrderedDict()
    for r in rows:
        by.setdefault(r["scenario"], OrderedDict())[r["policy"]] = r
    reps = rows[0]["replications"] if rows else 0
    seed = rows[0]["seed"] if rows else 0
    md = []
    md.append("Each cell: mean over %d replications (seed %d); in brackets the paired "
              "difference to `random` over the same replications, with its bootstrap 95%% "
              "interval." % (reps, seed))
    md.append("")
    md.append("### Targets (self-healing = swarmkeeper as shipped, vs random)")
    md.append("")
    md.append("| target | random | self-healing | difference [95% CI] | met |")
    md.append("|---|---|---|---|---|")
    for scen, metric, title, ok in TARGETS:
        p = by.get(scen, {})
        if "self-healing" not in p or "random" not in p:
            continue
        base = p["random"]["metrics"].get(metric, {})
        sh = p["self-healing"]["metrics"].get(metric, {})
        c = sh.get("vs_baseline")
        if not c:
            continue
        met = ok(c["rel"], c["ci_low"], c["ci_high"])
        md.append("| %s | %s | %s | %+.1f%% [%+.1f, %+.1f] | %s |" % (
            title, fmt_value(metric, base.get("mean")), fmt_value(metric, sh.get("mean")),
            100 * c["rel"], 100 * c["ci_low"], 100 * c["ci_high"], "yes" if met else "**no**"))
    fr = by.get("free-riders", {})
    for pol in ("random", "self-healing"):
        m = fr.get(pol, {}).get("metrics", {}).get("compliant_vs_no_freeriders")
        if m:
            vals = [v for v in m["values"] if v is not None]
            md.append("| free-riders: compliant median within 5%% of the run without them (%s) "
                      "| | %+.1f%% | per-replication range [%+.1f, %+.1f] | %s |" % (
                          pol, 100 * m["mean"], 100 * min(vals), 100 * max(vals),
                          "yes" if abs(m["mean"]) <= 0.05 else "**no**"))
    md.append("")
    for scen, pols in by.items():
        cols = COLUMNS + EXTRA.get(scen, [])
        md.append("### %s" % scen)
        md.append("")
        md.append("| policy | " + " | ".join(c[1] for c in cols) + " |")
        md.append("|---|" + "---|" * len(cols))
        for pol, r in pols.items():
            cells = []
            for metric, _, _ in cols:
                m = r["metrics"].get(metric)
                if not m:
                    cells.append("–")
                    continue
                cells.append(fmt_value(metric, m["mean"]) + fmt_rel(m.get("vs_baseline")))
            md.append("| %s | %s |" % (pol, " | ".join(cells)))
        md.append("")
    md.append("### Tracker side (means over the replications)")
    md.append("")
    md.append("`unhealthy ticks`: share of the health ticks in the measured span that said "
              "degraded or critical (`seeders leave early`: of all ticks, those giving that "
              "reason); `runs with a seeding alarm` / `seeding remediation`: share of the "
              "replications with such a tick / a remediation started for no / few seeders, "
              "stalled leechers, low completion rate or flash crowd. Remediation actions count "
              "every record of the plan (start, apply, keep, rollback, exhausted, end).")
    md.append("")
    md.append("| scenario | policy | " + " | ".join(t for _, t in TRACKER) + " |")
    md.append("|---|---|" + "---|" * len(TRACKER))
    for scen, pols in by.items():
        for pol, r in pols.items():
            if pol not in ("random", "adaptive", "self-healing"):
                continue
            cells = []
            for metric, _ in TRACKER:
                m = r["metrics"].get(metric)
                cells.append(fmt_value(metric, m["mean"]) if m else "–")
            md.append("| %s | %s | %s |" % (scen, pol, " | ".join(cells)))
    md.append("")
    with open(out + "/results.md", "w") as f:
        f.write("\n".join(md))
    # Plot data: per metric, one line per (scenario, policy) with rel and CI.
    for metric in ("median_s", "p95_s", "first_copy_s", "unreachable_median_s"):
        with open("%s/rel_%s.dat" % (out, metric), "w") as f:
            f.write("# scenario policy rel_percent ci_low ci_high\n")
            for scen, pols in by.items():
                for pol, r in pols.items():
                    c = r["metrics"].get(metric, {}).get("vs_baseline")
                    if c and pol in ("adaptive", "self-healing", "flash-crowd",
                                     "reachability-aware", "seeder-rotation"):
                        f.write("%s %s %.3f %.3f %.3f\n" % (scen, pol, 100 * c["rel"],
                                                           100 * c["ci_low"], 100 * c["ci_high"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
