#!/usr/bin/env python3
"""Announces that reach the owner of a swarm vs. announces that reach another
node and are forwarded once (bench/cluster/README.md).

    bench/cluster/compare.py --daemon build/bin/swarmkeeper [--requests 4000]

Starts a two-node cluster (a, b) on loopback, picks torrents that node a
owns (rendezvous hashing, computed here exactly as cluster/ownership
does: SipHash-2-4 with the fixed key over info_hash || 0x00 || name), and
sends UDP (BEP 15) announces for them, one at a time, alternately to a (the
owner: served locally) and to b (one forward over the cluster's TLS link and
back). Prints per-path latency (median, p90, p99) and requests/s at one
request in flight, and the ratio non-owner / owner. Latency at one request
in flight is what a forward adds to each announce; it is not the tracker's
capacity.
"""

import argparse
import os
import random
import socket
import struct
import subprocess
import sys
import tempfile
import time
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "tests", "cluster"))

KEY = bytes([0x73, 0x77, 0x61, 0x72, 0x6d, 0x6b, 0x65, 0x65,
             0x70, 0x65, 0x72, 0x2d, 0x68, 0x72, 0x77, 0x31])
M = (1 << 64) - 1


def rotl(x, b):
    return ((x << b) | (x >> (64 - b))) & M


def siphash24(key, data):
    k0, k1 = struct.unpack("<QQ", key)
    v0, v1 = k0 ^ 0x736f6d6570736575, k1 ^ 0x646f72616e646f6d
    v2, v3 = k0 ^ 0x6c7967656e657261, k1 ^ 0x7465646279746573

    def rnd():
        nonlocal v0, v1, v2, v3
        v0 = (v0 + v1) & M; v1 = rotl(v1, 13); v1 ^= v0; v0 = rotl(v0, 32)
        v2 = (v2 + v3) & M; v3 = rotl(v3, 16); v3 ^= v2
        v0 = (v0 + v3) & M; v3 = rotl(v3, 21); v3 ^= v0
        v2 = (v2 + v1) & M; v1 = rotl(v1, 17); v1 ^= v2; v2 = rotl(v2, 32)

    n = len(data)
    end = n - n % 8
    for i in range(0, end, 8):
        m = struct.unpack("<Q", data[i:i + 8])[0]
        v3 ^= m; rnd(); rnd(); v0 ^= m
    tail = data[end:] + bytes(7 - n % 8)
    b = ((n & 0xff) << 56) | struct.unpack("<Q", tail + b"\0")[0]
    v3 ^= b; rnd(); rnd(); v0 ^= b
    v2 ^= 0xff
    for _ in range(4):
        rnd()
    return v0 ^ v1 ^ v2 ^ v3


def owner(info_hash, names):
    return max(names, key=lambda n: (siphash24(KEY, info_hash + b"\0" + n.encode()), [-ord(c) for c in n]))


def start(daemon, name, http, udp, cport, seed, logdir):
    argv = [daemon, "--bind=127.0.0.1", "--http-port=%d" % http, "--udp-port=%d" % udp,
            "--node-name=" + name, "--cluster-port=%d" % cport, "--seeds=" + seed,
            "--cluster-secret=bench-cluster-secret-0123456789", "--log-level=warn",
            "--tracker.min-interval=1s", "--tracker.interval=2s", "--tracker.peer-timeout=10min",
            "--clients.refuse-after-early=0",
            # One address sends all the load: its budgets are lifted.
            "--gateway.new-swarm-burst=1000000", "--gateway.requests-per-second=0",
            "--tracker.max-peers-per-address=0", "--allocation.max-address-share=1"]
    p = subprocess.Popen(argv, stdout=open(os.path.join(logdir, name + ".log"), "wb"),
                         stderr=subprocess.STDOUT)
    deadline = time.time() + 20
    while time.time() < deadline:
        try:
            with urllib.request.urlopen("http://127.0.0.1:%d/health" % http, timeout=1):
                return p
        except OSError:
            time.sleep(0.05)
    p.kill()
    sys.exit("node %s did not start" % name)


def free(kind=socket.SOCK_STREAM):
    with socket.socket(socket.AF_INET, kind) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--daemon", required=True)
    ap.add_argument("--requests", type=int, default=4000, help="per path")
    ap.add_argument("--torrents", type=int, default=100)
    args = ap.parse_args()
    logdir = tempfile.mkdtemp(prefix="sk-bench-cluster-")
    pa = [free(), free(socket.SOCK_DGRAM), free()]
    pb = [free(), free(socket.SOCK_DGRAM), free()]
    seed = "127.0.0.1:%d" % pa[2]
    a = start(args.daemon, "a", pa[0], pa[1], pa[2], seed, logdir)
    b = start(args.daemon, "b", pb[0], pb[1], pb[2], seed, logdir)
    try:
        run(args, pa[1], pb[1])
    finally:
        for p in (a, b):
            p.terminate()
            p.wait(20)


def run(args, udp_a, udp_b):
    rnd = random.Random(1)
    hashes = []
    while len(hashes) < args.torrents:
        h = bytes(rnd.getrandbits(8) for _ in range(20))
        if owner(h, ["a", "b"]) == "a":
            hashes.append(h)
    sock = {}
    cid = {}
    for name, port in (("a", udp_a), ("b", udp_b)):
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.settimeout(5)
        s.connect(("127.0.0.1", port))
        sock[name] = s
    # Wait for the two nodes to form one cluster: a connect on a must be
    # accepted by b (shared key), and an announce through b must come back.
    def connect(name):
        s = sock[name]
        s.send(struct.pack(">QII", 0x41727101980, 0, 7))
        return struct.unpack(">IIQ", s.recv(64)[:16])[2]

    def announce(name, h, i):
        pkt = struct.pack(">QII20s20sQQQIIIiH", cid[name], 1, i, h,
                          b"-BENCH0-" + struct.pack(">I", i % 50) + b"........", 0, 10, 0, 0,
                          0, 0, 50, 10000 + i % 50)
        sock[name].send(pkt)
        data = sock[name].recv(2048)
        return struct.unpack(">I", data[:4])[0]

    for name in ("a", "b"):
        cid[name] = connect(name)
    deadline = time.time() + 20
    while True:
        try:
            if announce("b", hashes[0], 0) == 1:
                break
        except socket.timeout:
            pass
        if time.time() > deadline:
            sys.exit("the cluster did not form")
        time.sleep(0.1)
    time.sleep(1.0)  # both views settled (b may still be handing a swarm over)
    for i, h in enumerate(hashes):  # warm: every swarm exists on a
        announce("a", h, i)
    lat = {"a": [], "b": []}
    t_path = {"a": 0.0, "b": 0.0}
    for i in range(args.requests):
        h = hashes[i % len(hashes)]
        for name in (("a", "b") if i % 2 == 0 else ("b", "a")):
            t = time.perf_counter()
            action = announce(name, h, i)
            d = time.perf_counter() - t
            if action != 1:
                sys.exit("announce via %s answered action %d" % (name, action))
            lat[name].append(d)
            t_path[name] += d
        if i % 500 == 499:  # connection ids expire after 2 min; refresh often
            for name in ("a", "b"):
                cid[name] = connect(name)

    def pct(xs, p):
        xs = sorted(xs)
        return xs[min(len(xs) - 1, int(p * len(xs)))] * 1e6

    res = {}
    for name, label in (("a", "owner"), ("b", "non-owner (1 forward)")):
        xs = lat[name]
        res[name] = (pct(xs, 0.5), pct(xs, 0.9), pct(xs, 0.99), len(xs) / t_path[name])
        print("%-22s median %7.1f us  p90 %7.1f us  p99 %7.1f us  %7.0f req/s (1 in flight)"
              % ((label,) + res[name]))
    print("BENCH ratio non-owner/owner: median latency %.2fx, throughput at 1 in flight %.2fx"
          % (res["b"][0] / res["a"][0], res["b"][3] / res["a"][3]))


if __name__ == "__main__":
    main()
