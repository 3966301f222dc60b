#!/usr/bin/env python3
"""A whole cluster stops and starts again; every swarm comes back once.

    cluster_restart_test.py --daemon build/bin/swarmkeeper

Three real daemons on loopback, each with its own --state-dir:

1. 24 torrents get two peers each and one completion, announced through
   all three nodes; the scrape through every node then agrees.
2. All three get SIGTERM at the same moment. Each hands its swarms to the
   others while they leave too; a handoff nobody takes keeps the swarm
   where it was, so each swarm is in exactly one node's state file (the
   log lines "state: wrote N swarms" add up to 24).
3. All three start again (each loads its file before it opens its ports)
   and form the cluster. Through every node, every torrent scrapes as
   before: the same seeders and leechers and `downloaded` 1 (a swarm
   loaded on two nodes would be merged into its owner with `downloaded`
   added up), and the nodes' own swarm listings hold each torrent once.
4. The same with a rolling stop: a, then b, then c, each after the one
   before has exited. a and b hand everything over; c, alone at the end,
   writes all 24.
5. SIGKILL: c is killed; a and b install its swarms from their replicas
   and write them in their periodic snapshots (every 10 s here); then a
   and b are killed too. c's file still holds the swarms it owned, so after
   the restart those torrents are loaded twice (c's copy and a replica's):
   their owner merges the two copies of one history without counting them
   twice: every torrent still scrapes (2, 0, 1) through every node and is
   held by one node.

Reuses tests/cluster/cluster_test.py's Node. Only the standard library.
Exit 0 on success, 1 with FAIL: lines.
"""

import argparse
import hashlib
import os
import re
import shutil
import signal
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cluster_test import SECRET, Node, fail, free_port, log, wait_for  # noqa: E402

TORRENTS = 24
WROTE_RE = re.compile(r"state: wrote (\d+) swarms")
LOADED_RE = re.compile(r"state: loaded (\d+) swarms")


def local_swarms(n, nodes):
    status, listing = n.admin("GET", "/api/swarms?limit=500")
    if status != 200:
        fail("GET /api/swarms on %s: %d %r" % (n.name, status, listing), nodes)
    return [s["hash"] for s in listing["swarms"]]


def counts(n, hashes):
    files = n.scrape(hashes)
    return {h.hex(): (files[h][b"complete"], files[h][b"incomplete"], files[h][b"downloaded"])
            for h in hashes if h in files}


def wait_counts(n, hashes, want, nodes, timeout=30):
    """Waits until the scrape through n gives `want`; else fails naming what differs."""
    deadline = time.time() + timeout
    got = {}
    while time.time() < deadline:
        try:
            got = counts(n, hashes)
            if got == want:
                return
        except (OSError, RuntimeError):
            pass
        time.sleep(0.05)
    bad = {k: got.get(k) for k in want if got.get(k) != want[k]}
    fail("the scrape through %s: %d torrents differ from (seeders 2, leechers 0, downloaded 1): "
         "%r" % (n.name, len(bad), bad), nodes)


def metrics(n):
    """{(name, labels): value} of n's /metrics (the admin token)."""
    import urllib.request
    from cluster_test import ADMIN_TOKEN
    req = urllib.request.Request("http://%s:%d/metrics" % (n.host, n.admin_port),
                                 headers={"Authorization": "Bearer " + ADMIN_TOKEN})
    with urllib.request.urlopen(req, timeout=10) as r:
        text = r.read().decode()
    out = {}
    for line in text.splitlines():
        m = re.match(r"^(swarmkeeper_cluster_\w+)(\{[^}]*\})? (\S+)$", line)
        if m:
            out[(m.group(1), m.group(2) or "")] = float(m.group(3))
    return out


def last_count(n, pattern):
    found = pattern.findall(n.text())
    return int(found[-1]) if found else None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--daemon", required=True)
    args = ap.parse_args()
    args.fixed_ports = False
    work = tempfile.mkdtemp(prefix="sk-cluster-restart-")
    a = Node(args, "a", "127.0.0.1", SECRET, "", work)
    a.seeds = "127.0.0.1:%d" % a.cluster_port
    b = Node(args, "b", "127.0.0.1", SECRET, a.seeds, work)
    c = Node(args, "c", "127.0.0.1", SECRET, a.seeds, work)
    nodes = [a, b, c]
    for n in nodes:
        n.admin_port = free_port("127.0.0.1")
        n.extra = ["--state-dir=" + os.path.join(work, "state-" + n.name),
                   "--tracker.min-interval=1s", "--state.snapshot-period=10s"]
    try:
        run(nodes)
    finally:
        for n in nodes:
            n.kill()
    shutil.rmtree(work, ignore_errors=True)
    log("PASS")


def c_of(nodes):
    return next(n for n in nodes if n.name == "c")


def converge(nodes):
    names = sorted(n.name for n in nodes)
    wait_for("the three nodes to see each other", lambda: all(n.members() == names for n in nodes),
             nodes, timeout=60)


def run(nodes):
    a, b, c = nodes
    for n in nodes:
        n.start()
    converge(nodes)
    hashes = [hashlib.sha1(b"cluster-restart-%d" % i).digest() for i in range(TORRENTS)]
    for i, h in enumerate(hashes):
        via = nodes[i % 3]
        via.announce(h, 20000 + 2 * i, left=0)                     # a seeder
        nodes[(i + 1) % 3].announce(h, 20001 + 2 * i, left=100)   # a leecher ...
        nodes[(i + 2) % 3].announce(h, 20001 + 2 * i, left=0, event="completed")  # ... completes
    want = {h.hex(): (2, 0, 1) for h in hashes}
    for n in nodes:
        wait_counts(n, hashes, want, nodes)
    before = sorted(sum((local_swarms(n, nodes) for n in nodes), []))
    if before != sorted(want):
        fail("before the stop the nodes hold %d swarms, want each of %d once"
             % (len(before), TORRENTS), nodes)
    # Announces through non-owners were forwarded; replicas flow between all three.
    forwarded = sum(metrics(n).get(("swarmkeeper_cluster_forwarded_total", ""), 0) for n in nodes)
    if forwarded < TORRENTS:
        fail("swarmkeeper_cluster_forwarded_total adds up to %d, want at least %d (two of three "
             "announces of each torrent go through a non-owner)" % (forwarded, TORRENTS), nodes)

    def lags_known():
        for n in nodes:
            got = metrics(n)
            for other in nodes:
                if other is n:
                    continue
                key = ("swarmkeeper_cluster_replication_lag_seconds", '{origin="%s"}' % other.name)
                if key not in got or got[key] < 0:
                    return False
        return True

    wait_for("every node to report the replication lag of the two others", lags_known, nodes)
    log("%d torrents announced; each held by one node (a %d, b %d, c %d)"
        % (TORRENTS, len(local_swarms(a, nodes)), len(local_swarms(b, nodes)),
           len(local_swarms(c, nodes))))

    stop_and_restart(nodes, hashes, want, rolling=False)
    stop_and_restart(nodes, hashes, want, rolling=True)
    kill_and_restart(nodes, hashes, want)


def held_once(nodes, want):
    return sorted(sum((local_swarms(n, nodes) for n in nodes), [])) == sorted(want)


def kill_and_restart(nodes, hashes, want):
    a, b, c = nodes
    owned_by_c = len(local_swarms(c, nodes))
    if owned_by_c == 0:
        fail("c owns no swarm before its SIGKILL: nothing would be loaded twice", nodes)
    # c's own periodic snapshot holds its swarms (a write every 10 s).
    mark = len(WROTE_RE.findall(c.text()))
    wait_for("two periodic snapshots on c", lambda: len(WROTE_RE.findall(c.text())) >= mark + 2,
             nodes, timeout=45)
    c.kill(signal.SIGKILL)
    survivors = [a, b]
    wait_for("a and b to hold all %d swarms after c's SIGKILL" % TORRENTS,
             lambda: held_once(survivors, want), nodes, timeout=45)
    for n in survivors:
        wait_counts(n, hashes, want, nodes)
    marks = {n.name: len(WROTE_RE.findall(n.text())) for n in survivors}
    wait_for("two periodic snapshots on a and b after the takeover",
             lambda: all(len(WROTE_RE.findall(n.text())) >= marks[n.name] + 2 for n in survivors),
             nodes, timeout=45)
    for n in survivors:
        n.kill(signal.SIGKILL)
    log("SIGKILL: c (holding %d swarms), then a and b after they took them over" % owned_by_c)

    for n in nodes:
        n.start()
    loaded = {n.name: last_count(n, LOADED_RE) for n in nodes}
    if None in loaded.values() or sum(loaded.values()) != TORRENTS + owned_by_c:
        fail("after the SIGKILLs the nodes loaded %r swarms, want %d + %d (c's copies twice)"
             % (loaded, TORRENTS, owned_by_c), nodes)
    converge(nodes)
    wait_for("each torrent to be held by exactly one node", lambda: held_once(nodes, want), nodes)
    for n in nodes:
        wait_counts(n, hashes, want, nodes)
    log("restarted after SIGKILL: %r swarms loaded, two copies of %d merged; every torrent "
        "back once with downloaded 1 through every node" % (loaded, owned_by_c))


def stop_and_restart(nodes, hashes, want, rolling):
    how = "one after the other" if rolling else "at once"
    for n in nodes:
        n.proc.send_signal(signal.SIGTERM)
        if rolling:
            n.proc.wait(60)
    for n in nodes:
        rc = n.proc.wait(60)
        if rc != 0:
            fail("%s exited with status %d after SIGTERM" % (n.name, rc), nodes)
    written = {n.name: last_count(n, WROTE_RE) for n in nodes}
    if None in written.values() or sum(written.values()) != TORRENTS:
        fail("SIGTERM %s: the state files hold %r swarms, want %d in all"
             % (how, written, TORRENTS), nodes)
    if rolling and written["c"] != TORRENTS:
        fail("rolling stop: c, the last, should write all %d, wrote %r" % (TORRENTS, written),
             nodes)
    log("SIGTERM to all three %s: the state files hold %r swarms (%d in all)"
        % (how, written, TORRENTS))

    for n in nodes:
        n.start()
    loaded = {n.name: last_count(n, LOADED_RE) for n in nodes}
    if loaded != written:
        fail("loaded %r swarms, wrote %r" % (loaded, written), nodes)
    converge(nodes)
    for n in nodes:
        wait_counts(n, hashes, want, nodes)
    wait_for("each torrent to be held by exactly one node",
             lambda: sorted(sum((local_swarms(n, nodes) for n in nodes), [])) == sorted(want),
             nodes)
    # Every node still agrees after that: nothing merged in late.
    for n in nodes:
        got = counts(n, hashes)
        if got != want:
            bad = {k: v for k, v in got.items() if v != want[k]}
            fail("through %s: %r differ from (2, 0, 1)" % (n.name, bad), nodes)
    if rolling:
        # c came back with all 24 and handed each to its owner as a and b joined.
        done = metrics(c_of(nodes)).get(("swarmkeeper_cluster_handoffs_total", '{outcome="done"}'), 0)
        arrived = sum(metrics(n).get(("swarmkeeper_cluster_arrivals_total",
                                      '{reason="membership"}'), 0) for n in nodes)
        if done < 1 or arrived < done:
            fail("after the rolling restart c counts %d handoffs done and the nodes %d arrivals"
                 % (done, arrived), nodes)
    log("restarted: every torrent back once, seeders, leechers and downloaded as before "
        "through every node")


if __name__ == "__main__":
    main()
