#!/usr/bin/env python3
"""Automatic rebalancing with two real daemons on loopback.

    rebalance_test.py --daemon build/bin/swarmkeeper

1. Bad rebalance options stop the daemon with status 2 naming the option.
2. a and b form a cluster with a short rebalance period and a low floor.
   Announces go only to torrents a owns, so a is hot and b idle: a moves
   some of its hottest swarms to b (logged), b then serves them (its admin
   listing has them; a scrape through a counts every peer), and b, which
   is not hot, never moves anything back.

Reuses tests/cluster/cluster_test.py's Node. Only the standard library.
Exit 0 on success, 1 with FAIL: lines.
"""

import argparse
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cluster_test import SECRET, Node, fail, free_port, log, wait_for  # noqa: E402

# Every peer of this test announces from 127.0.0.1: up to 900 per swarm, and
# more requests than one address may send by default.
REBALANCE = ["--cluster.rebalance-period=500ms", "--cluster.rebalance-min-rate=5",
             "--cluster.rebalance-factor=1.2", "--cluster.rebalance-max-moves=2",
             "--tracker.max-peers-per-address=0", "--gateway.requests-per-second=0"]
MOVE_RE = re.compile(r"cluster: rebalance: moving swarm ([0-9a-f]{40}) .* to (\w+) \(load")


def config_errors(daemon):
    base = ["--cluster-port=7000", "--cluster-secret=" + SECRET]
    cases = [
        ("--cluster.rebalance-factor=1", "cluster.rebalance-factor"),
        ("--cluster.rebalance-factor=abc", "cluster.rebalance-factor"),
        ("--cluster.rebalance-min-rate=-1", "cluster.rebalance-min-rate"),
        ("--cluster.rebalance-max-moves=0", "cluster.rebalance-max-moves"),
        ("--cluster.rebalance-period=-1s", "cluster.rebalance-period"),
        ("--cluster.rebalance-period=5ms", "cluster.rebalance-period"),
    ]
    for arg, option in cases:
        r = subprocess.run([daemon] + base + [arg], capture_output=True, text=True, timeout=20)
        if r.returncode != 2 or option not in r.stderr:
            fail("%s: want exit 2 naming %s, got %d: %s" % (arg, option, r.returncode,
                                                            r.stderr.strip()))
    log("bad rebalance options exit 2 naming the option")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--daemon", required=True)
    args = ap.parse_args()
    args.fixed_ports = False
    config_errors(args.daemon)
    work = tempfile.mkdtemp(prefix="sk-rebalance-test-")
    a = Node(args, "a", "127.0.0.1", SECRET, "", work)
    a.seeds = "127.0.0.1:%d" % a.cluster_port
    b = Node(args, "b", "127.0.0.1", SECRET, a.seeds, work)
    for n in (a, b):
        n.admin_port = free_port("127.0.0.1")
        n.extra = list(REBALANCE)
    nodes = [a, b]
    try:
        run(a, b, nodes)
    finally:
        for n in nodes:
            n.kill()
    shutil.rmtree(work, ignore_errors=True)
    log("PASS")


def local_swarms(n, nodes):
    status, listing = n.admin("GET", "/api/swarms")
    if status != 200:
        fail("GET /api/swarms on %s: %d %r" % (n.name, status, listing), nodes)
    return {s["hash"] for s in listing["swarms"]}


def run(a, b, nodes):
    a.start()
    b.start()
    wait_for("a and b converge", lambda: a.members() == ["a", "b"] and b.members() == ["a", "b"],
             nodes)
    rnd = random.Random(7)
    torrents = [bytes(rnd.getrandbits(8) for _ in range(20)) for _ in range(16)]
    peers = {t: set() for t in torrents}
    port = 20000
    for t in torrents:
        a.announce(t, port)
        peers[t].add(port)
        port += 1
    on_a = local_swarms(a, nodes)
    hot = [t for t in torrents if t.hex() in on_a]
    if len(hot) < 3:
        fail("a owns only %d of 16 torrents" % len(hot), nodes)
    log("a owns %d torrents; announcing to them through a" % len(hot))

    # Keep a hot (announces only to its torrents, fresh peers so none is
    # "too frequent") until it logs a move; generous deadline.
    deadline = time.time() + 90
    moves = []
    i = 0
    while time.time() < deadline and not moves:
        t = hot[i % len(hot)]
        i += 1
        if len(peers[t]) < 900:  # below the swarm's peer limit
            a.announce(t, port, numwant=0)
            peers[t].add(port)
            port += 1
        else:
            # Full: its oldest peer leaves, and a fresh one takes its place
            # on the next turn. The load goes on however long the decision
            # takes (a slow machine may need more than the ~4500 announces
            # that fill the swarms).
            gone = min(peers[t])
            a.announce(t, gone, event="stopped", numwant=0)
            peers[t].discard(gone)
        if i % 50 == 0:
            moves = MOVE_RE.findall(a.text())
    if not moves:
        fail("a never rebalanced after %d announces" % i, nodes)
    log("a moved %d swarm(s): %s" % (len(moves), moves))
    for h, to in moves:
        if to != "b":
            fail("a moved %s to %r, not to b" % (h, to), nodes)
        if h not in {t.hex() for t in hot}:
            fail("a moved %s, which is not one of its announced torrents" % h, nodes)
    moved = {h for h, _ in moves}
    wait_for("b to serve the moved swarms", lambda: moved <= local_swarms(b, nodes), nodes,
             timeout=60)
    # Nothing lost on the way: a scrape through a (forwarded to b) counts
    # every peer of each moved torrent.
    files = a.scrape([bytes.fromhex(h) for h in moved])
    for h in moved:
        f = files.get(bytes.fromhex(h))
        want = len(peers[bytes.fromhex(h)])
        if f is None or f[b"incomplete"] != want:
            fail("scrape of moved %s through a: %r, want %d leechers" % (h, f, want), nodes)
    # b got load, but is not above factor x mean: it moves nothing (the
    # moved swarms do not come back).
    time.sleep(2.0)  # a few rebalance periods
    if "rebalance: moving" in b.text():
        fail("b moved swarms although it was never the hot node", nodes)
    log("b serves the moved swarms with every peer and moves nothing back")


if __name__ == "__main__":
    main()
