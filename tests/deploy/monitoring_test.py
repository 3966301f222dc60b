#!/usr/bin/env python3
"""What ships for Prometheus and Grafana works against the real daemon.

1. `promtool check rules` and `promtool test rules` pass on
   deploy/prometheus/alerts.yml and its unit tests.
2. A daemon (admin API with a metrics token, the prober and a one-node
   cluster on, so that every family is written) is started and announced
   to; /metrics is scraped with the metrics token and must pass
   `promtool check metrics`.
3. Every metric name that an alert or a dashboard query names is in that
   scrape: a rule or a panel can never watch a metric that does not exist.
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from ports import free_port  # noqa: E402  (tests/support, after the path above)

ADMIN_TOKEN = "monitoring-admin-token-0123456789"
METRICS_TOKEN = "monitoring-metrics-token-0123456789"

# PromQL words that are not metric names.
PROMQL_WORDS = {
    "sum", "by", "without", "rate", "increase", "irate", "histogram_quantile", "absent",
    "label_values", "and", "or", "unless", "on", "ignoring", "group_left", "group_right",
    "avg", "max", "min", "count", "topk", "bottomk", "offset", "le", "instance", "job",
    "outcome", "reason", "health", "state", "role", "family", "trigger", "how", "transport",
    "version", "humanize", "humanizePercentage", "humanizeDuration", "value", "labels",
}


def get(url, token, timeout=5):
    req = urllib.request.Request(url, headers={"Authorization": "Bearer " + token})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def metric_names_in(expr):
    """Identifiers of `expr` that name series: every swarmkeeper_* and
    process_* word, and any other word used as a selector (`name{` or
    `name[`), which must then be one of ours too."""
    expr = re.sub(r'"[^"]*"', '""', expr)  # label values are not names
    names = set(re.findall(r"\b((?:swarmkeeper|process)_[a-zA-Z0-9_]+)", expr))
    for word in re.findall(r"\b([a-zA-Z_:][a-zA-Z0-9_:]*)\s*[\{\[]", expr):
        if word not in PROMQL_WORDS and not word.startswith("$"):
            names.add(word)
    return names


def alert_exprs(path):
    exprs = []
    lines = open(path).read().splitlines()
    i = 0
    while i < len(lines):
        m = re.match(r"^(\s*)expr:\s*(\|)?\s*(.*)$", lines[i])
        if not m:
            i += 1
            continue
        if m.group(2):
            indent = len(m.group(1))
            body = []
            i += 1
            while i < len(lines) and (not lines[i].strip() or
                                      len(lines[i]) - len(lines[i].lstrip()) > indent):
                body.append(lines[i])
                i += 1
            exprs.append("\n".join(body))
        else:
            exprs.append(m.group(3))
            i += 1
    return exprs


def dashboard_exprs(path):
    d = json.load(open(path))
    exprs = []
    for p in d["panels"]:
        for t in p.get("targets", []):
            exprs.append(t["expr"])
    for v in d.get("templating", {}).get("list", []):
        q = v.get("query")
        if isinstance(q, dict) and "query" in q:
            exprs.append(q["query"])
    return exprs


def exported_names(text):
    names = set()
    for line in text.splitlines():
        m = re.match(r"^# TYPE (\S+) (\S+)$", line)
        if not m:
            continue
        name, kind = m.groups()
        names.add(name)
        if kind == "histogram":
            names.update({name + "_bucket", name + "_sum", name + "_count"})
    return names


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--daemon", required=True)
    ap.add_argument("--promtool", required=True)
    ap.add_argument("--source", required=True)
    args = ap.parse_args()
    failures = []
    alerts = os.path.join(args.source, "deploy/prometheus/alerts.yml")
    alerts_test = os.path.join(args.source, "deploy/prometheus/alerts_test.yml")
    dashboard = os.path.join(args.source, "deploy/grafana/swarmkeeper.json")

    for cmd in ([args.promtool, "check", "rules", alerts],
                [args.promtool, "test", "rules", alerts_test]):
        r = subprocess.run(cmd, capture_output=True, text=True)
        print(" ".join(cmd[1:]), "->", r.returncode, r.stdout.strip().splitlines()[-1:])
        if r.returncode != 0:
            failures.append(f"{' '.join(cmd)} failed:\n{r.stdout}{r.stderr}")

    with tempfile.TemporaryDirectory() as tmp:
        token_file = os.path.join(tmp, "metrics.token")
        with open(token_file, "w") as f:
            f.write(METRICS_TOKEN + "\n")
        http_port, admin_port, cluster_port = free_port(), free_port(), free_port()
        udp_port = free_port()
        cmd = [args.daemon, f"--http-port={http_port}", f"--udp-port={udp_port}",
               f"--admin-port={admin_port}", f"--admin-token={ADMIN_TOKEN}",
               f"--admin.metrics-token-file={token_file}", "--probe.enable",
               f"--cluster.port={cluster_port}", "--cluster.node-name=mon-a",
               "--cluster.secret=monitoring-cluster-secret-0123"]
        log = open(os.path.join(tmp, "stderr"), "w+")
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=log)
        try:
            metrics = None
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline and proc.poll() is None:
                try:
                    url = (f"http://127.0.0.1:{http_port}/announce?info_hash=" + "%02" * 20 +
                           "&peer_id=-XX0001-monitoring01&port=6881&uploaded=0&downloaded=0"
                           "&left=0&compact=1")
                    urllib.request.urlopen(url, timeout=2).read()
                    status, body = get(f"http://127.0.0.1:{admin_port}/metrics", METRICS_TOKEN)
                    if status == 200 and "swarmkeeper_cluster_members" in body:
                        metrics = body
                        break
                except (OSError, urllib.error.URLError):
                    pass
                time.sleep(0.2)
            if metrics is None:
                log.seek(0)
                print("daemon stderr:\n" + log.read(), file=sys.stderr)
                failures.append("no /metrics with the cluster families from the daemon")
            else:
                r = subprocess.run([args.promtool, "check", "metrics"], input=metrics,
                                   capture_output=True, text=True)
                print("check metrics ->", r.returncode)
                if r.returncode != 0:
                    failures.append("promtool check metrics:\n" + r.stdout + r.stderr)
                have = exported_names(metrics)
                print(f"/metrics exports {len(have)} names")
                for source, exprs in (("alerts.yml", alert_exprs(alerts)),
                                      ("swarmkeeper.json", dashboard_exprs(dashboard))):
                    if not exprs:
                        failures.append(f"{source}: no expressions found")
                    used = set()
                    for e in exprs:
                        used |= metric_names_in(e)
                    missing = sorted(used - have)
                    print(f"{source}: {len(exprs)} expressions, {len(used)} metric names, "
                          f"{len(missing)} missing")
                    if missing:
                        failures.append(f"{source} names metrics /metrics does not export: "
                                        f"{missing}")
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
    for f in failures:
        print("FAIL:", f, file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
