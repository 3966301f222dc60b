#!/usr/bin/env python3
"""Three real swarmkeeper daemons on loopback form one tracker.

    cluster_test.py --daemon build/bin/swarmkeeper [--host 127.0.0.1 ...]

1. A and B start (A is the seed of both) and converge on two members.
2. Peers of several torrents announce through A and B in turn; every node
   returns every peer of each torrent (answers for a torrent another node
   owns are forwarded), and one multi-hash scrape through one node counts
   every torrent right (split by owner, merged).
3. A process with the WRONG secret (a fourth daemon seeded with A) is
   refused: it never becomes a member anywhere, and a TLS client without
   the certificate cannot complete a handshake with the cluster port.
4. C joins: the swarms it now owns move to it (migration with their whole
   state) and every node still returns every peer. The UDP connection id
   one node issued is accepted by another (the key is shared).
   GET /api/cluster on every node shows the same three live members and
   swarm counts that add up to the torrents; after an operator move the
   receiving node records the migration (with its peer count), and
   `swarmctl members` (--swarmctl) shows the three nodes. Through a node
   that does not own a swarm, the admin API answers as the owner does:
   status (peers, owner_node, actor), a policy pinned on the owner, a
   restart of the owner's actor (peers kept), a remediation started and
   stopped on the owner, each through both nodes that do not own the swarm;
   owner_node and every answer name the owner's --node-name; /api/node
   names the cluster node.
5. B gets SIGTERM: it hands its swarms over and exits 0; nothing is lost.
6. C gets SIGKILL: A notices within the connection timeout, keeps
   answering, and C's peers come back from the replica A holds.

With --hosts (one address per node, e.g. network namespaces), each node
binds its own address instead of loopback; --wrap NODE_INDEX PREFIX runs
node i's command under a prefix (e.g. "ip netns exec sk1"). Used by
deploy/cluster-netns.sh.

Only the standard library. Exit 0 on success, 1 with FAIL: lines.
"""

import argparse
import os
import random
import shutil
import re
import signal
import socket
import ssl
import struct
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
import tracker_requests  # noqa: E402  (tests/support, after the path above)
from ports import free_port  # noqa: E402  (tests/support, after the path above)

SECRET = "test-cluster-secret-0123456789"
ADMIN_TOKEN = "cluster-test-admin-token-0123"
WRONG = "not-the-cluster-secret-987654321"


def log(msg):
    print("[cluster_test] %s" % msg, flush=True)


def fail(msg, nodes=()):
    print("FAIL: %s" % msg, flush=True)
    for n in nodes:
        print("--- log of %s ---\n%s" % (n.name, n.tail()), flush=True)
    for n in nodes:
        n.kill()
    sys.exit(1)


# -- bencode (decode only) ---------------------------------------------------


class Node:
    def __init__(self, args, name, host, secret, seeds, workdir, wrap=None):
        self.name = name
        self.host = host
        if args.fixed_ports:
            # Each node has its own namespace (and address): fixed ports.
            self.http_port, self.udp_port, self.cluster_port = 6969, 6969, 7000
        else:
            self.http_port = free_port(host)
            self.udp_port = free_port(host)
            self.cluster_port = free_port(host)
        self.log_path = os.path.join(workdir, name + ".log")
        self.workdir = workdir
        self.secret = secret
        self.seeds = seeds
        self.args = args
        self.wrap = wrap or []
        self.proc = None
        self.admin_port = None
        # More daemon options (tests/cluster/rebalance_test.py).
        self.extra = []

    def start(self):
        argv = self.wrap + [
            self.args.daemon, "--bind=" + self.host, "--http-port=%d" % self.http_port,
            "--udp-port=%d" % self.udp_port, "--node-name=" + self.name,
            "--cluster-port=%d" % self.cluster_port, "--seeds=" + self.seeds,
            "--cluster-secret=" + self.secret, "--cluster.bind=" + self.host,
            "--cluster.heartbeat-interval=200ms", "--cluster.connection-timeout=1s",
            "--cluster.replication-period=300ms", "--log-level=info",
            "--shutdown.drain-timeout=2s"
        ]
        if self.admin_port:
            argv += ["--admin-port=%d" % self.admin_port, "--admin-token=" + ADMIN_TOKEN,
                     "--admin.bind=" + self.host]
        argv += self.extra
        self.log_file = open(self.log_path, "ab")
        # TLS identity files go to the test's directory (removed on success).
        env = dict(os.environ, TMPDIR=self.workdir)
        self.proc = subprocess.Popen(argv, stdout=self.log_file, stderr=subprocess.STDOUT,
                                     env=env)
        deadline = time.time() + 30
        while time.time() < deadline:
            if self.proc.poll() is not None:
                fail("%s exited at start (status %s)" % (self.name, self.proc.returncode), [self])
            try:
                with urllib.request.urlopen(self.url("/health"), timeout=1) as r:
                    if r.status == 200:
                        return
            except OSError:
                pass
            time.sleep(0.05)
        fail("%s did not answer /health" % self.name, [self])

    def admin(self, method, path, body=None):
        """(status, parsed JSON) of an admin API call."""
        import json
        h = "[%s]" % self.host if ":" in self.host else self.host
        req = urllib.request.Request("http://%s:%d%s" % (h, self.admin_port, path), method=method,
                                     data=None if body is None else json.dumps(body).encode(),
                                     headers={"Authorization": "Bearer " + ADMIN_TOKEN})
        try:
            with urllib.request.urlopen(req, timeout=10) as r:
                return r.status, json.loads(r.read() or b"null")
        except urllib.error.HTTPError as e:
            return e.code, json.loads(e.read() or b"null")

    def url(self, path):
        h = "[%s]" % self.host if ":" in self.host else self.host
        return "http://%s:%d%s" % (h, self.http_port, path)

    def members(self):
        """The last member list this node logged."""
        last = None
        for line in self.text().splitlines():
            m = re.search(r"cluster: members now \[([^\]]*)\]", line)
            if m:
                last = sorted(x for x in m.group(1).split(",") if x)
        return last

    def text(self):
        try:
            with open(self.log_path, "rb") as f:
                return f.read().decode("utf-8", "replace")
        except OSError:
            return ""

    def tail(self, n=40):
        return "\n".join("    | " + l for l in self.text().splitlines()[-n:])

    def kill(self, sig=signal.SIGKILL):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()

    def announce(self, info_hash, peer_port, left=100, event="started", numwant=200):
        peer_id = b"-SK0001-" + struct.pack(">I", peer_port) + b"cluster!"
        q = tracker_requests.announce_query(info_hash, peer_id, peer_port, left, event=event,
                                            numwant=numwant)
        with urllib.request.urlopen(self.url("/announce?" + q), timeout=10) as r:
            body = r.read()
        d, _ = tracker_requests.bdecode(body)
        if b"failure reason" in d:
            raise RuntimeError("failure: %r" % d[b"failure reason"])
        peers = d.get(b"peers", b"")
        return {struct.unpack(">H", peers[i + 4:i + 6])[0] for i in range(0, len(peers), 6)}

    def scrape(self, hashes):
        q = tracker_requests.scrape_query(hashes)
        with urllib.request.urlopen(self.url("/scrape?" + q), timeout=10) as r:
            d, _ = tracker_requests.bdecode(r.read())
        return d[b"files"]

    def udp_connect(self):
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.settimeout(5)
            s.sendto(tracker_requests.udp_connect_packet(1234), (self.host, self.udp_port))
            data, _ = s.recvfrom(2048)
        action, tid, cid = struct.unpack(">IIQ", data[:16])
        assert action == 0 and tid == 1234
        return cid

    def udp_announce(self, cid, info_hash, port):
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.settimeout(5)
            pkt = tracker_requests.udp_announce_packet(cid, 99, info_hash, b"-SK0001-udpudpudpxyz",
                                                       port, 50, numwant=200)
            s.sendto(pkt, (self.host, self.udp_port))
            data, _ = s.recvfrom(4096)
        return tracker_requests.udp_reply_header(data)[0]


def wait_for(what, cond, nodes, timeout=30):
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            if cond():
                return
        except (OSError, RuntimeError):
            pass
        time.sleep(0.05)
    fail("timed out waiting for: " + what, nodes)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--daemon", required=True)
    ap.add_argument("--swarmctl", help="swarmctl binary (checks `swarmctl members`)")
    ap.add_argument("--hosts", default="127.0.0.1,127.0.0.1,127.0.0.1,127.0.0.1",
                    help="address of node a,b,c and of the rogue")
    ap.add_argument("--fixed-ports", action="store_true",
                    help="every node on ports 6969 (HTTP, UDP) and 7000 (cluster): one "
                    "address per node, e.g. network namespaces")
    ap.add_argument("--wrap", nargs=2, action="append", default=[],
                    metavar=("INDEX", "PREFIX"), help="run node INDEX under PREFIX")
    args = ap.parse_args()
    hosts = args.hosts.split(",")
    wraps = {int(i): p.split() for i, p in args.wrap}
    work = tempfile.mkdtemp(prefix="sk-cluster-test-")
    a = Node(args, "a", hosts[0], SECRET, "", work, wraps.get(0))
    a.admin_port = 6970 if args.fixed_ports else free_port(hosts[0])
    seed = "%s:%d" % (a.host, a.cluster_port)
    a.seeds = seed
    b = Node(args, "b", hosts[1], SECRET, seed, work, wraps.get(1))
    c = Node(args, "c", hosts[2], SECRET, seed, work, wraps.get(2))
    b.admin_port = 6970 if args.fixed_ports else free_port(hosts[1])
    c.admin_port = 6970 if args.fixed_ports else free_port(hosts[2])
    rogue = Node(args, "rogue", hosts[3], WRONG, seed, work, wraps.get(3))
    nodes = [a, b, c, rogue]
    try:
        run(a, b, c, rogue, nodes)
    finally:
        for n in nodes:
            n.kill()
    shutil.rmtree(work, ignore_errors=True)
    log("PASS")


def config_errors(daemon):
    """Bad cluster options stop the daemon with status 2 and name the option
    (the secret's value is never echoed)."""
    cases = [
        (["--cluster-port=7000"], "cluster.secret"),
        (["--cluster-port=7000", "--cluster-secret=short-secret"], "cluster.secret"),
        (["--cluster-port=70000"], "cluster.port"),
        (["--cluster-port=7000", "--cluster-secret=" + SECRET, "--seeds=a:1,b"], "cluster.seeds"),
        (["--cluster-port=7000", "--cluster-secret=" + SECRET, "--cluster.bind=nowhere"],
         "cluster.bind"),
        (["--cluster-port=7000", "--cluster.secret-file=/nonexistent/secret"],
         "cluster.secret-file"),
        (["--cluster-port=7000", "--cluster-secret=" + SECRET, "--cluster.bind=0.0.0.0"],
         "cluster.advertise"),
        (["--cluster-port=7000", "--cluster-secret=" + SECRET,
          "--cluster.heartbeat-interval=1s", "--cluster.connection-timeout=1s"],
         "cluster.connection-timeout"),
    ]
    for argv, option in cases:
        r = subprocess.run([daemon] + argv, capture_output=True, text=True, timeout=20)
        if r.returncode != 2 or option not in r.stderr or SECRET in r.stderr:
            fail("%s: want exit 2 naming %s, got %d: %s" % (argv, option, r.returncode,
                                                            r.stderr.strip()))
    log("bad cluster options exit 2 naming the option")


def run(a, b, c, rogue, nodes):
    config_errors(a.args.daemon)
    a.start()
    b.start()
    wait_for("a and b converge", lambda: a.members() == ["a", "b"] and b.members() == ["a", "b"],
             nodes)
    log("a and b are one cluster")

    rnd = random.Random(1)
    torrents = [bytes(rnd.getrandbits(8) for _ in range(20)) for _ in range(8)]
    peers = {t: set() for t in torrents}
    port = 20000
    for t in torrents:
        for i in range(6):
            node = [a, b][i % 2]
            node.announce(t, port)
            peers[t].add(port)
            port += 1

    checker = [40000]  # a fresh peer per check: a repeat would be "too often"

    def all_peers_everywhere(live, tag):
        for t in torrents:
            for n in live:
                checker[0] += 1
                got = n.announce(t, checker[0], left=5)
                missing = peers[t] - got
                if missing:
                    fail("%s: %s misses peers %s of torrent %s" %
                         (tag, n.name, sorted(missing), t.hex()), nodes)
        files = live[0].scrape(torrents)
        for t in torrents:
            f = files.get(t)
            if f is None or f[b"incomplete"] < len(peers[t]):
                fail("%s: scrape through %s counts %r for %s (want >= %d)" %
                     (tag, live[0].name, f, t.hex(), len(peers[t])), nodes)

    all_peers_everywhere([a, b], "two nodes")
    log("every node returns every peer; the multi-hash scrape is complete")

    # -- wrong secret -----------------------------------------------------------
    rogue.start()
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    refused = False
    try:
        with socket.create_connection((a.host, a.cluster_port), timeout=5) as raw:
            with ctx.wrap_socket(raw) as tls:
                tls.sendall(b"\0" * 64)
                refused = tls.recv(64) == b""
    except (ssl.SSLError, OSError):
        refused = True
    if not refused:
        fail("a TLS client without the cluster certificate got through", nodes)
    # The rogue dials a every reconnect period; give it a few attempts.
    wait_for("the rogue to have tried",
             lambda: rogue.text().count("listening on") >= 1, nodes)
    time.sleep(2.0)
    if a.members() != ["a", "b"] or b.members() != ["a", "b"]:
        fail("the wrong-secret process joined: %s / %s" % (a.members(), b.members()), nodes)
    if rogue.members() != ["rogue"] or "connected to" in rogue.text():
        fail("the wrong-secret process sees members: %s" % rogue.members(), nodes)
    if "connected to rogue" in a.text() + b.text():
        fail("a member connected to the wrong-secret process", nodes)
    rogue.kill()
    log("a process with the wrong secret is refused")

    # -- join: migration --------------------------------------------------------
    c.start()
    three = ["a", "b", "c"]
    wait_for("a, b, c converge", lambda: all(n.members() == three for n in (a, b, c)), nodes)
    wait_for("swarms handed to c",
             lambda: "handed to c" in a.text() + b.text(), nodes)
    all_peers_everywhere([a, b, c], "after c joined")
    log("c joined, its swarms moved to it, no peer lost")

    # The connection-id key is shared: connect on a, announce on c.
    cid = a.udp_connect()
    action = c.udp_announce(cid, torrents[0], 30000)
    if action != 1:
        fail("a connection id from a was refused by c (action %d)" % action, nodes)
    peers[torrents[0]].add(30000)
    log("a UDP connection id issued by a is accepted by c")

    # -- GET /api/cluster on every node ---------------------------------------
    def cluster_view(n):
        status, body = n.admin("GET", "/api/cluster")
        if status != 200:
            fail("GET /api/cluster on %s: %d %r" % (n.name, status, body), nodes)
        return body

    def cluster_settled():
        for n in (a, b, c):
            v = cluster_view(n)
            if not v["enabled"] or v["node"] != n.name or v["handoffs_pending"] != 0:
                return False
            ms = v["members"]
            if sorted(m["name"] for m in ms) != three:
                return False
            if any(m["state"] != "live" or m["swarms"] is None for m in ms):
                return False
            if [m["name"] for m in ms if m["self"]] != [n.name]:
                return False
            if sum(m["swarms"] for m in ms) != len(torrents):
                return False
        return True

    wait_for("GET /api/cluster: three live members whose swarms add up to %d" % len(torrents),
             cluster_settled, nodes)
    addresses = {m["name"]: m["address"] for m in cluster_view(a)["members"]}
    if addresses["c"] != "%s:%d" % (c.host, c.cluster_port):
        fail("a reports c's address as %r" % addresses["c"], nodes)
    log("GET /api/cluster: every node sees a, b, c live; swarm counts add up")

    operator_calls_through_non_owners(a, b, c, torrents, nodes)

    # -- operator move (admin API) -------------------------------------------
    status, listing = a.admin("GET", "/api/swarms")
    if status != 200:
        fail("GET /api/swarms on a: %d %r" % (status, listing), nodes)
    local = {s["hash"] for s in listing["swarms"]}
    movable = [t for t in torrents if t.hex() in local]
    if not movable:
        fail("a owns none of the torrents (listing %r)" % sorted(local), nodes)
    h = movable[0].hex()
    moved_peers = [s["peers"] for s in listing["swarms"] if s["hash"] == h][0]
    status, body = a.admin("POST", "/api/swarms/%s/move" % h, {"node": "c"})
    if status != 202:
        fail("move %s to c: %d %r" % (h, status, body), nodes)
    wait_for("the moved swarm to arrive on c", lambda: ("swarm %s handed to c" % h) in a.text(),
             nodes)
    status, listing = a.admin("GET", "/api/swarms")
    if h in {s["hash"] for s in listing["swarms"]}:
        fail("swarm %s is still listed on a after the move" % h, nodes)
    all_peers_everywhere([a, b, c], "after the operator move")
    status, body = a.admin("POST", "/api/swarms/%s/move" % h, {"node": "nosuch"})
    if status not in (404, 409) or "error" not in body:
        fail("move to an unknown member answered %d %r" % (status, body), nodes)
    log("an operator moved swarm %s from a to c; no peer lost" % h[:12])

    def move_recorded(n):
        for r in cluster_view(n)["migrations"]:
            if r["hash"] == h and r["reason"] == "operator":
                return r
        return None

    for n in (a, b, c):
        wait_for("the operator move in GET /api/cluster on %s" % n.name,
                 lambda: move_recorded(n) is not None, nodes)
        r = move_recorded(n)
        if r["from"] != "a" or r["to"] != "c" or r["peers"] != moved_peers:
            fail("%s records the move as %r (want a -> c with %d peers)" %
                 (n.name, r, moved_peers), nodes)
        if not isinstance(r["finished_ms"], int) or r["finished_ms"] <= 0:
            fail("migration record without a finish time: %r" % r, nodes)
    log("every node lists the operator move a -> c with its %d peers" % moved_peers)

    if a.args.swarmctl:
        h_url = "[%s]" % a.host if ":" in a.host else a.host
        ctl = [a.args.swarmctl, "--url=http://%s:%d" % (h_url, a.admin_port),
               "--token=" + ADMIN_TOKEN, "members"]
        out = subprocess.run(ctl, capture_output=True, text=True, timeout=30)
        if out.returncode != 0:
            fail("swarmctl members exited %d: %s" % (out.returncode, out.stderr), nodes)
        for name in three:
            if not re.search(r"^%s( \*)?\s+live\s" % name, out.stdout, re.M):
                fail("swarmctl members does not show %s live:\n%s" % (name, out.stdout), nodes)
        if h not in out.stdout or "operator" not in out.stdout:
            fail("swarmctl members does not list the move:\n%s" % out.stdout, nodes)
        js = subprocess.run(ctl + ["--json"], capture_output=True, text=True, timeout=30)
        import json
        if js.returncode != 0 or sorted(m["name"] for m in json.loads(js.stdout)["members"]) != three:
            fail("swarmctl members --json: %d %s" % (js.returncode, js.stdout), nodes)
        log("swarmctl members shows a, b, c and the move")

    # -- SIGTERM: graceful leave ----------------------------------------------
    b.proc.send_signal(signal.SIGTERM)
    try:
        status = b.proc.wait(30)
    except subprocess.TimeoutExpired:
        fail("b did not exit after SIGTERM", nodes)
    if status != 0:
        fail("b exited with %d after SIGTERM" % status, nodes)
    if not re.search(r"handed \d+ swarms over before leaving", b.text()):
        fail("b did not report its handoff", nodes)
    wait_for("a and c drop b", lambda: a.members() == ["a", "c"] and c.members() == ["a", "c"],
             nodes)
    all_peers_everywhere([a, c], "after b left")
    log("b left on SIGTERM, nothing lost")

    # -- SIGKILL: crash, replicas ---------------------------------------------
    moved_to_c = (a.text() + b.text()).count("handed to c")
    # Replicas are sent every replication period (300 ms): wait a few.
    time.sleep(1.5)
    c.kill(signal.SIGKILL)
    wait_for("a drops c", lambda: a.members() == ["a"], nodes, timeout=20)
    all_peers_everywhere([a], "after c was killed")
    if "took over" not in a.text():
        fail("a did not take over c's swarms from replicas", nodes)
    log("c was killed; a answers and c's peers came back from the replicas "
        "(%d swarms had moved to c)" % moved_to_c)


def owners_of(nodes_up, torrents, nodes):
    """info_hash hex -> the node whose admin API lists it as a local swarm."""
    owner = {}
    for n in nodes_up:
        status, listing = n.admin("GET", "/api/swarms?limit=1000")
        if status != 200:
            fail("GET /api/swarms on %s: %d %r" % (n.name, status, listing), nodes)
        for s in listing["swarms"]:
            if s["hash"] in owner:
                fail("swarm %s is local on both %s and %s" % (s["hash"], owner[s["hash"]].name,
                                                              n.name), nodes)
            owner[s["hash"]] = n
    for t in torrents:
        if t.hex() not in owner:
            fail("no node lists swarm %s" % t.hex(), nodes)
    return owner


def operator_calls_through_non_owners(a, b, c, torrents, nodes):
    """The admin API of a node that does not own a swarm answers for it as
    its owner does: status, a pinned policy, a restart."""
    live = [a, b, c]
    for n in live:
        status, body = n.admin("GET", "/api/node")
        if status != 200 or body["node"] != n.name or body["cluster_node"] != n.name:
            fail("GET /api/node on %s names %r (want the cluster name %s)" %
                 (n.name, body.get("node") if isinstance(body, dict) else body, n.name), nodes)
    owner = owners_of(live, torrents, nodes)

    def detail(n, h):
        # 503 "restarting; retry" is the answer while a restarted actor
        # replaces the old one: retried, with a deadline.
        deadline = time.time() + 10
        while True:
            status, body = n.admin("GET", "/api/swarms/" + h)
            if status != 503 or time.time() > deadline:
                break
            time.sleep(0.05)
        if status != 200:
            fail("GET /api/swarms/%s on %s (owner %s): %d %r" %
                 (h, n.name, owner[h].name, status, body), nodes)
        return body

    def listed(d):
        return sorted((p["port"], p["peer_id"]) for p in d["peers_listed"])

    # Status: every swarm through every node that does not own it.
    for t in torrents:
        h = t.hex()
        o = owner[h]
        mine = detail(o, h)
        if mine["owner_node"] != o.name:
            fail("the owner %s names %r as owner_node of %s" % (o.name, mine["owner_node"], h),
                 nodes)
        for n in live:
            if n is o:
                continue
            theirs = detail(n, h)
            for key in ("owner_node", "peers", "peer_count", "actor_id", "seeders", "leechers"):
                if theirs[key] != mine[key]:
                    fail("GET /api/swarms/%s on %s: %s is %r, the owner %s says %r" %
                         (h, n.name, key, theirs[key], o.name, mine[key]), nodes)
            if listed(theirs) != listed(mine):
                fail("GET /api/swarms/%s on %s lists other peers than the owner %s" %
                     (h, n.name, o.name), nodes)
    unknown = "ab" * 20
    for n in live:
        status, body = n.admin("GET", "/api/swarms/" + unknown)
        if status != 404:
            fail("GET /api/swarms/<unknown> on %s: %d %r (want 404)" % (n.name, status, body),
                 nodes)
    log("every swarm's status through each node that does not own it equals the owner's "
        "(%d swarms); an unknown one is 404 everywhere" % len(torrents))

    # Policy and restart of one swarm b or c owns, through a.
    remote = [t.hex() for t in torrents if owner[t.hex()] is not a]
    if not remote:
        fail("a owns every torrent; nothing to ask through a", nodes)
    h = remote[0]
    o = owner[h]
    status, body = a.admin("POST", "/api/swarms/%s/policy" % h, {"policy": "role-aware"})
    if status != 200 or not body.get("pinned") or body.get("node") != o.name or \
            body.get("policy") != "role-aware":
        fail("POST policy of %s through a (owner %s): %d %r" % (h, o.name, status, body), nodes)
    for n in (o, a):
        d = detail(n, h)
        if d["knobs"]["policy"] != "role-aware" or d["policy_pinned"] is not True:
            fail("after pinning through a, %s shows policy %r pinned %r" %
                 (n.name, d["knobs"]["policy"], d["policy_pinned"]), nodes)
    status, events = o.admin("GET", "/api/events")
    if status != 200 or not any(e["hash"] == h and e["kind"] == "operator-policy"
                                for e in events["events"]):
        fail("the owner %s did not record the operator's policy change" % o.name, nodes)
    status, body = a.admin("POST", "/api/swarms/%s/policy" % h, {"policy": "default"})
    if status != 200 or body.get("pinned") is not False or body.get("was_pinned") is not True:
        fail("unpinning %s through a: %d %r" % (h, status, body), nodes)
    if detail(o, h)["policy_pinned"] is not False:
        fail("%s is still pinned on %s after 'default' through a" % (h, o.name), nodes)
    log("a policy set through a is pinned on the owner %s, and 'default' unpins it" % o.name)

    before = detail(o, h)
    status, body = a.admin("POST", "/api/swarms/%s/restart" % h)
    if status != 202 or body.get("old_actor_id") != before["actor_id"] or \
            body.get("node") != o.name:
        fail("POST restart of %s through a (owner %s, actor %d): %d %r" %
             (h, o.name, before["actor_id"], status, body), nodes)
    wait_for("a new actor for %s on %s" % (h, o.name),
             lambda: detail(o, h)["actor_id"] != before["actor_id"], nodes)
    after = detail(o, h)
    if after["peer_count"] != before["peer_count"] or listed(after) != listed(before):
        fail("the restart through a lost peers: %d -> %d" %
             (before["peer_count"], after["peer_count"]), nodes)
    through = detail(a, h)
    if through["actor_id"] != after["actor_id"]:
        fail("a shows actor %r for %s, the owner %r" % (through["actor_id"], h, after["actor_id"]),
             nodes)
    if "restarted by an operator" not in o.text():
        fail("the owner %s did not log the operator's restart" % o.name, nodes)
    log("a restart through a replaced the owner %s's actor %d by %d; its %d peers kept" %
        (o.name, before["actor_id"], after["actor_id"], after["peer_count"]))

    # The same calls through the other node that does not own h: a pin, a
    # restart, and a remediation started through one non-owner and stopped
    # through the other run under the owner's supervisor; every answer names
    # the owner's --node-name.
    other = [n for n in live if n is not o and n is not a][0]
    status, body = other.admin("POST", "/api/swarms/%s/policy" % h, {"policy": "random"})
    if status != 200 or not body.get("pinned") or body.get("node") != o.name:
        fail("POST policy of %s through %s (owner %s): %d %r" % (h, other.name, o.name, status,
                                                                body), nodes)
    if detail(o, h)["knobs"]["policy"] != "random":
        fail("the policy pinned through %s is not the owner %s's" % (other.name, o.name), nodes)
    status, body = other.admin("POST", "/api/swarms/%s/policy" % h, {"policy": "default"})
    if status != 200 or body.get("pinned") is not False:
        fail("unpinning %s through %s: %d %r" % (h, other.name, status, body), nodes)
    before = detail(o, h)
    status, body = other.admin("POST", "/api/swarms/%s/restart" % h)
    if status != 202 or body.get("old_actor_id") != before["actor_id"] or \
            body.get("node") != o.name:
        fail("POST restart of %s through %s (owner %s, actor %d): %d %r" %
             (h, other.name, o.name, before["actor_id"], status, body), nodes)
    wait_for("a new actor for %s on %s after a restart through %s" % (h, o.name, other.name),
             lambda: detail(o, h)["actor_id"] != before["actor_id"], nodes)
    if detail(o, h)["peer_count"] != before["peer_count"]:
        fail("the restart through %s lost peers" % other.name, nodes)

    def remediating(n):
        status, body = n.admin("GET", "/api/remediations")
        if status != 200:
            fail("GET /api/remediations on %s: %d %r" % (n.name, status, body), nodes)
        return [e["hash"] for e in body["active"]]

    status, body = a.admin("POST", "/api/swarms/%s/remediation/start" % h)
    if status != 202 or body.get("started") is not True:
        fail("POST remediation/start of %s through a (owner %s): %d %r" % (h, o.name, status,
                                                                          body), nodes)
    if h not in remediating(o):
        fail("the remediation started through a does not run on the owner %s" % o.name, nodes)
    if h in remediating(a) or h in remediating(other):
        fail("the remediation of %s runs on a node that does not own it" % h, nodes)
    status, body = a.admin("POST", "/api/swarms/%s/remediation/start" % h)
    if status != 409:
        fail("a second start through a: %d %r (want 409: one runs)" % (status, body), nodes)
    status, body = other.admin("POST", "/api/swarms/%s/remediation/stop" % h)
    if status != 200 or body.get("stopped") is not True:
        fail("POST remediation/stop of %s through %s (owner %s): %d %r" %
             (h, other.name, o.name, status, body), nodes)
    if h in remediating(o):
        fail("the owner %s still remediates %s after a stop through %s" % (o.name, h, other.name),
             nodes)
    for n in live:
        if detail(n, h)["owner_node"] != o.name:
            fail("%s names %r as owner_node of %s (want %s)" %
                 (n.name, detail(n, h)["owner_node"], h, o.name), nodes)
    log("through %s too: a pin, a restart, and a remediation started through a and stopped "
        "through %s ran on the owner %s; owner_node is %s everywhere" %
        (other.name, other.name, o.name, o.name))


if __name__ == "__main__":
    main()
