#!/usr/bin/env python3
"""A bounded soak of the real daemon on loopback: valid HTTP and UDP
announces and scrapes from many simulated peers on many 127/8 source
addresses, mixed with hostile traffic from other addresses, for a few
minutes; then checks that the daemon survived and served the valid peers.

usage: soak.py --daemon path/to/swarmkeeper [--minutes 3] [options]
       (soak.py --help lists them)

Valid side (this process, one thread per source address 127.1.x.y):
  peers announce every 'interval' of their last reply (HTTP keep-alive or
  BEP 15 UDP with a cached connection id), leechers' 'left' goes down and
  some complete, a few stop and start again later; every address also
  scrapes its swarms now and then. Each request is judged (a reply that is
  not a failure), timed, and the time of each peer's last accepted announce
  is kept.

Hostile side (a child process, so its work does not stall the valid
clients' threads): garbage and malformed UDP packets, garbage and malformed
HTTP, oversized URLs, headers and queries, HTTP and UDP floods from a few
addresses (rate-limited by the daemon: the expected answer), a flood of new
info_hashes from one address (the new-swarm budget), slow clients
trickling a request, idle connections (one address past the per-address
cap).

Checks at the end (each printed with its figure; nonzero exit on a failed
one): the daemon alive all along and exiting 0 on SIGTERM; the share of
failed valid requests under --max-failure-share; VmRSS after the warm-up
growing by no more than the bound; every valid peer whose last accepted
announce lies within peer-timeout listed in an announce with a large
numwant (HTTP and UDP), no stopped peer listed; p50/p99/max latencies.
"""
import argparse
import collections
import hashlib
import multiprocessing
import os
import random
import resource
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from ports import free_port  # noqa: E402  (tests/support, after the path above)
from tracker_requests import (announce_query, bdecode, scrape_query, udp_announce_packet,  # noqa: E402
                              udp_connect_packet, udp_reply_header, UDP_PROTOCOL_ID)

TOKEN = "soak-test-admin-token-0123456789"
CHECK_ADDRESS = "127.0.0.250"
HEALTH_ADDRESS = "127.0.0.251"
UDP_TIMEOUT = 3.0       # one attempt of a UDP request
HTTP_TIMEOUT = 10.0     # one HTTP request
CONNECTION_ID_AGE = 50  # seconds a UDP connection id is reused (BEP 15: 1 minute)


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--daemon", required=True, help="the swarmkeeper binary")
    p.add_argument("--minutes", type=float, default=3.0, help="length of the load phase")
    p.add_argument("--warmup", type=float, default=None,
                   help="seconds of warm-up excluded from the memory check (default: a third "
                        "of the run, at least 20 s)")
    p.add_argument("--peers", type=int, default=1500, help="valid simulated peers")
    p.add_argument("--addresses", type=int, default=150, help="source addresses of valid peers")
    p.add_argument("--swarms", type=int, default=60, help="torrents of the valid peers")
    p.add_argument("--interval", type=int, default=20, help="--tracker.interval, seconds")
    p.add_argument("--min-interval", type=int, default=10, help="--tracker.min-interval, seconds")
    p.add_argument("--peer-timeout", type=int, default=45, help="--tracker.peer-timeout, seconds")
    p.add_argument("--max-failure-share", type=float, default=0.005,
                   help="failed valid requests allowed, as a share of all valid requests")
    p.add_argument("--rss-growth-pct", type=float, default=20.0,
                   help="VmRSS growth allowed over the steady phase, percent of its first sample")
    p.add_argument("--rss-growth-mb", type=float, default=20.0,
                   help="... and at most this many MB")
    p.add_argument("--check-swarms", type=int, default=20, help="swarms whose peer lists are checked")
    p.add_argument("--no-hostile", action="store_true", help="valid load only")
    p.add_argument("--seed", type=int, default=1, help="seed of the simulated population")
    return p.parse_args()


def percentile(sorted_values, q):
    if not sorted_values:
        return float("nan")
    k = min(len(sorted_values) - 1, max(0, int(round(q * (len(sorted_values) - 1)))))
    return sorted_values[k]


def valid_address(i):
    return "127.1.%d.%d" % (i // 250, i % 250 + 1)


def peer_ip_bytes(addr):
    return socket.inet_aton(addr)


def compact_peers(blob):
    return {(socket.inet_ntoa(blob[i:i + 4]), struct.unpack(">H", blob[i + 4:i + 6])[0])
            for i in range(0, len(blob) - len(blob) % 6, 6)}


# -- the daemon ---------------------------------------------------------------------------

class Daemon:
    def __init__(self, binary, args, workdir):
        self.http = free_port()
        self.udp = free_port()
        self.admin = free_port()
        self.log_path = os.path.join(workdir, "daemon.log")
        self.cmd = [binary, "--http.bind=127.0.0.1", "--http.port=%d" % self.http,
                    "--udp.bind=127.0.0.1", "--udp.port=%d" % self.udp,
                    "--admin.port=%d" % self.admin, "--admin.token=" + TOKEN,
                    "--tracker.interval=%ds" % args.interval,
                    "--tracker.min-interval=%ds" % args.min_interval,
                    "--tracker.peer-timeout=%ds" % args.peer_timeout,
                    "--tracker.sweep-period=5s", "--tracker.idle-swarm-time=20s",
                    "--tracker.max-numwant=1000"]
        self.log = open(self.log_path, "w")
        self.proc = subprocess.Popen(self.cmd, stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 30
        while not self.healthy():
            if time.monotonic() > deadline:
                raise SystemExit("the daemon did not come up:\n" + self.log_tail())
            time.sleep(0.1)

    def alive(self):
        return self.proc.poll() is None

    def healthy(self):
        if not self.alive():
            raise SystemExit("the daemon exited with %s at start:\n%s"
                             % (self.proc.returncode, self.log_tail()))
        try:
            s = socket.create_connection(("127.0.0.1", self.http), timeout=2,
                                         source_address=(HEALTH_ADDRESS, 0))
            s.sendall(b"GET /health HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
            data = s.recv(100)
            s.close()
            return data.startswith(b"HTTP/1.1 200")
        except OSError:
            return False

    def rss_kb(self):
        try:
            with open("/proc/%d/status" % self.proc.pid) as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        return int(line.split()[1])
        except OSError:
            return None
        return None

    def metrics(self):
        req = urllib.request.Request("http://127.0.0.1:%d/metrics" % self.admin,
                                     headers={"Authorization": "Bearer " + TOKEN})
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.read().decode()

    def stop(self):
        """SIGTERM; the exit status (None when it had to be killed)."""
        self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            return None

    def log_tail(self, n=40):
        self.log.flush()
        with open(self.log_path, errors="replace") as f:
            return "".join(f.readlines()[-n:])


# -- valid clients ----------------------------------------------------------------------

class Stats:
    """Counts and latencies of the valid requests (shared by the client threads)."""

    def __init__(self):
        self.lock = threading.Lock()
        self.ok = collections.Counter()
        self.failures = collections.Counter()   # (kind, text) -> count
        self.latency = collections.defaultdict(list)  # "http" / "udp" -> seconds
        self.retries = collections.Counter()

    def record(self, kind, transport, seconds, failure=None):
        with self.lock:
            if failure is None:
                self.ok[kind] += 1
                self.latency[transport].append(seconds)
            else:
                self.failures[(kind, failure)] += 1

    def retry(self, what):
        with self.lock:
            self.retries[what] += 1


class Peer:
    def __init__(self, rng, address, port, swarm, transport, seeder):
        self.address = address
        self.port = port
        self.swarm = swarm
        self.transport = transport
        self.peer_id = b"-SK0001-" + bytes(rng.randrange(256) for _ in range(12))
        self.key = rng.randrange(1 << 32)
        self.size = rng.randrange(50, 400) << 20
        self.left = 0 if seeder else self.size - (rng.randrange(0, self.size >> 20) << 20) // 2
        self.rate = rng.randrange(1, 4) << 20       # bytes a second while leeching
        self.uploaded = 0
        self.downloaded = self.size - self.left if not seeder else 0
        self.state = "new"          # new -> active <-> stopped
        self.next_event = "started"
        self.next_time = 0.0
        self.last_time = None       # monotonic time of the last announce
        self.last_ok_sent = None    # send time of the last accepted announce
        self.last_ok_event = None   # its event
        self.uncertain = False      # the last announce failed: the daemon may or may not have it


class HttpConn:
    """One keep-alive HTTP connection from a source address."""

    def __init__(self, source, port):
        self.source = source
        self.port = port
        self.sock = None
        self.buf = b""

    def close(self):
        if self.sock:
            self.sock.close()
        self.sock = None
        self.buf = b""

    def _open(self):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind((self.source, 0))
        s.settimeout(HTTP_TIMEOUT)
        s.connect(("127.0.0.1", self.port))
        self.sock = s
        self.buf = b""

    def _read_reply(self):
        while b"\r\n\r\n" not in self.buf:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionResetError("closed before a reply")
            self.buf += chunk
        head, _, rest = self.buf.partition(b"\r\n\r\n")
        lines = head.split(b"\r\n")
        status = int(lines[0].split(b" ", 2)[1])
        length = 0
        close = False
        for line in lines[1:]:
            name, _, value = line.partition(b":")
            name = name.strip().lower()
            if name == b"content-length":
                length = int(value.strip())
            elif name == b"connection" and value.strip().lower() == b"close":
                close = True
        while len(rest) < length:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionResetError("closed inside a reply")
            rest += chunk
        body, self.buf = rest[:length], rest[length:]
        if close:
            self.close()
        return status, body

    def get(self, target, stats):
        """(status, body) of GET target; a reused connection the server
        closed meanwhile is opened again once, as clients do."""
        request = ("GET %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nUser-Agent: soak/1\r\n"
                   "Accept-Encoding: identity\r\n\r\n" % (target, self.port)).encode()
        for attempt in (0, 1):
            reused = self.sock is not None
            try:
                if not reused:
                    self._open()
                self.sock.sendall(request)
                return self._read_reply()
            except (ConnectionError, BrokenPipeError) as e:
                self.close()
                if reused and attempt == 0:
                    stats.retry("http reconnect")
                    continue
                raise e
            except (OSError, ValueError, IndexError):
                self.close()
                raise
        raise ConnectionError("unreachable")


class UdpConn:
    """One UDP socket of a source address and its connection id."""

    def __init__(self, source, port, rng):
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind((source, 0))
        self.dest = ("127.0.0.1", port)
        self.rng = rng
        self.conn_id = None
        self.conn_time = 0.0

    def ask(self, build, stats):
        """The reply to a packet (build(tid) makes it), one resend after a
        timeout; None when both attempts time out."""
        for attempt in (0, 1):
            tid = self.rng.randrange(1 << 32)
            self.sock.sendto(build(tid), self.dest)
            deadline = time.monotonic() + UDP_TIMEOUT
            while True:
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                self.sock.settimeout(left)
                try:
                    data, _ = self.sock.recvfrom(65536)
                except socket.timeout:
                    break
                if len(data) >= 8 and udp_reply_header(data)[1] == tid:
                    return data
            if attempt == 0:
                stats.retry("udp resend")
        return None

    def connection(self, stats):
        """A connection id (a cached one while fresh): (id, None) or (None, failure)."""
        now = time.monotonic()
        if self.conn_id is not None and now - self.conn_time < CONNECTION_ID_AGE:
            return self.conn_id, None
        t0 = time.perf_counter()
        data = self.ask(udp_connect_packet, stats)
        dt = time.perf_counter() - t0
        if data is None:
            stats.record("udp connect", "udp", dt, "udp connect: no reply")
            return None, "no connection id"
        action, _ = udp_reply_header(data)
        if action != 0 or len(data) < 16:
            text = data[8:].decode(errors="replace") if action == 3 else "action %d" % action
            stats.record("udp connect", "udp", dt, "udp connect: " + text)
            return None, "no connection id"
        stats.record("udp connect", "udp", dt)
        self.conn_id = struct.unpack(">Q", data[8:16])[0]
        self.conn_time = now
        return self.conn_id, None


class AddressClient(threading.Thread):
    """The valid peers of one source address, announcing on their schedule."""

    def __init__(self, index, peers, hashes, daemon, stats, stop, start_by, seed):
        super().__init__(daemon=True, name="valid-%d" % index)
        self.address = valid_address(index)
        self.peers = peers
        self.hashes = hashes
        self.stats = stats
        self.stop_flag = stop
        self.rng = random.Random(seed)
        self.http = HttpConn(self.address, daemon.http)
        self.udp = UdpConn(self.address, daemon.udp, self.rng)
        for p in peers:   # first announces spread over the ramp-up
            p.next_time = time.monotonic() + self.rng.uniform(0, start_by)
        self.next_scrape = time.monotonic() + self.rng.uniform(5, 40)
        self.error = None

    def run(self):
        try:
            self.loop()
        except Exception as e:  # a bug of the client shows in the report
            self.error = repr(e)
            raise

    def loop(self):
        while not self.stop_flag.is_set():
            now = time.monotonic()
            peer = min(self.peers, key=lambda p: p.next_time)
            due = min(peer.next_time, self.next_scrape)
            if due > now:
                self.stop_flag.wait(min(due - now, 1.0))
                continue
            if self.next_scrape <= now:
                self.scrape()
                self.next_scrape = now + self.rng.uniform(20, 40)
            else:
                self.announce(peer)

    # An announce of `peer`: its event, counters moved on since the last one.
    def announce(self, peer):
        now = time.monotonic()
        if peer.last_time is not None and peer.left > 0 and peer.state == "active":
            got = int(peer.rate * (now - peer.last_time))
            got = min(got, peer.left)
            peer.left -= got
            peer.downloaded += got
            if peer.left == 0:
                peer.next_event = "completed"
        if peer.state == "active":
            peer.uploaded += int(peer.rate * 0.3 * (now - (peer.last_time or now)))
        if peer.next_event is None and peer.state == "active" and self.rng.random() < 0.03:
            peer.next_event = "stopped"
        event = peer.next_event
        sent = time.monotonic()
        if peer.transport == "http":
            interval, failure = self.http_announce(peer, event)
        else:
            interval, failure = self.udp_announce(peer, event)
        peer.last_time = now
        if failure is not None:
            peer.uncertain = True
            peer.next_time = time.monotonic() + 5
            return
        peer.uncertain = False
        peer.last_ok_sent = sent
        peer.last_ok_event = event
        peer.next_event = None
        if event == "stopped":
            peer.state = "stopped"
            peer.next_event = "started"
            peer.next_time = time.monotonic() + self.rng.uniform(10, 40)
        else:
            peer.state = "active"
            # the interval of the reply, as clients follow it (a little late at times)
            peer.next_time = time.monotonic() + interval * self.rng.uniform(0.98, 1.05)

    def http_announce(self, peer, event):
        q = announce_query(self.hashes[peer.swarm], peer.peer_id, peer.port, peer.left,
                           event=event, numwant=50, uploaded=peer.uploaded,
                           downloaded=peer.downloaded)
        t0 = time.perf_counter()
        try:
            status, body = self.http.get("/announce?" + q, self.stats)
        except (OSError, ValueError, IndexError) as e:
            self.stats.record("http announce", "http", time.perf_counter() - t0,
                              "http: %s" % type(e).__name__)
            return None, "error"
        dt = time.perf_counter() - t0
        failure = None
        interval = None
        if status != 200:
            failure = "http status %d" % status
        else:
            try:
                reply = bdecode(body)[0]
            except (ValueError, IndexError):
                reply = None
            if not isinstance(reply, dict):
                failure = "http: reply not bencoded"
            elif b"failure reason" in reply:
                failure = "failure: " + reply[b"failure reason"].decode(errors="replace")
            elif not isinstance(reply.get(b"interval"), int):
                failure = "http: no interval"
            elif not isinstance(reply.get(b"peers", b""), bytes) or len(reply.get(b"peers", b"")) % 6:
                failure = "http: peers not compact"
            else:
                interval = reply[b"interval"]
        self.stats.record("http announce", "http", dt, failure)
        return interval, failure

    def udp_announce(self, peer, event):
        t0 = time.perf_counter()
        conn, failure = self.udp.connection(self.stats)
        if failure:
            return None, failure
        data = self.udp.ask(lambda tid: udp_announce_packet(
            conn, tid, self.hashes[peer.swarm], peer.peer_id, peer.port, peer.left,
            event=event, numwant=50, uploaded=peer.uploaded, downloaded=peer.downloaded,
            key=peer.key), self.stats)
        dt = time.perf_counter() - t0
        failure = None
        interval = None
        if data is None:
            failure = "udp announce: no reply"
        else:
            action, _ = udp_reply_header(data)
            if action == 3:
                text = data[8:].decode(errors="replace")
                failure = "udp error: " + text
                self.udp.conn_id = None   # a client connects again after an error
            elif action != 1 or len(data) < 20 or (len(data) - 20) % 6:
                failure = "udp announce: bad reply (action %d, %d bytes)" % (action, len(data))
            else:
                interval = struct.unpack(">I", data[8:12])[0]
        self.stats.record("udp announce", "udp", dt, failure)
        return interval, failure

    def scrape(self):
        hashes = sorted({self.hashes[p.swarm] for p in self.peers})[:20]
        if self.rng.random() < 0.5:
            t0 = time.perf_counter()
            try:
                status, body = self.http.get("/scrape?" + scrape_query(hashes), self.stats)
            except (OSError, ValueError, IndexError) as e:
                self.stats.record("http scrape", "http", time.perf_counter() - t0,
                                  "http: %s" % type(e).__name__)
                return
            dt = time.perf_counter() - t0
            failure = None
            if status != 200:
                failure = "http status %d" % status
            else:
                try:
                    reply = bdecode(body)[0]
                except (ValueError, IndexError):
                    reply = {}
                if b"failure reason" in reply:
                    failure = "failure: " + reply[b"failure reason"].decode(errors="replace")
                elif not isinstance(reply.get(b"files"), dict):
                    failure = "http scrape: no files"
            self.stats.record("http scrape", "http", dt, failure)
        else:
            t0 = time.perf_counter()
            conn, failure = self.udp.connection(self.stats)
            if failure:
                return
            data = self.udp.ask(lambda tid: struct.pack(">QII", conn, 2, tid) + b"".join(hashes),
                                self.stats)
            dt = time.perf_counter() - t0
            failure = None
            if data is None:
                failure = "udp scrape: no reply"
            else:
                action, _ = udp_reply_header(data)
                if action == 3:
                    failure = "udp error: " + data[8:].decode(errors="replace")
                    self.udp.conn_id = None
                elif action != 2 or len(data) != 8 + 12 * len(hashes):
                    failure = "udp scrape: bad reply (action %d, %d bytes)" % (action, len(data))
            self.stats.record("udp scrape", "udp", dt, failure)


# -- hostile traffic (a child process) ------------------------------------------------------

def hostile_main(http_port, udp_port, stop, out, seed):
    """Runs every hostile generator in threads until `stop` is set; puts
    their counters (a dict) on `out`."""
    counts = collections.Counter()
    lock = threading.Lock()

    def count(key, n=1):
        with lock:
            counts[key] += n

    def tcp(source, timeout=5):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind((source, 0))
        s.settimeout(timeout)
        s.connect(("127.0.0.1", http_port))
        return s

    def drain(s, limit=1 << 20):
        data = b""
        try:
            while len(data) < limit:
                chunk = s.recv(65536)
                if not chunk:
                    break
                data += chunk
        except OSError:
            pass
        return data

    def read_replies(s, n):
        """The bodies of n HTTP replies read from s (Content-Length framed)."""
        buf = b""
        bodies = []
        while len(bodies) < n:
            while b"\r\n\r\n" not in buf:
                chunk = s.recv(65536)
                if not chunk:
                    raise ConnectionResetError
                buf += chunk
            head, _, buf = buf.partition(b"\r\n\r\n")
            length = 0
            for line in head.split(b"\r\n")[1:]:
                k, _, v = line.partition(b":")
                if k.strip().lower() == b"content-length":
                    length = int(v)
            while len(buf) < length:
                chunk = s.recv(65536)
                if not chunk:
                    raise ConnectionResetError
                buf += chunk
            bodies.append(buf[:length])
            buf = buf[length:]
        return bodies

    def status_of(data):
        try:
            return int(data.split(b" ", 2)[1]) if data.startswith(b"HTTP/") else 0
        except (ValueError, IndexError):
            return 0

    # Garbage and malformed UDP: random bytes, a wrong magic, unknown
    # actions, bad connection ids, truncated announces, empty scrapes.
    def udp_garbage(source, rng):
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.bind((source, 0))
        s.setblocking(False)
        while not stop.is_set():
            kind = rng.randrange(6)
            tid = rng.randrange(1 << 32)
            if kind == 0:
                pkt = os.urandom(rng.randrange(0, 1400))
            elif kind == 1:
                pkt = struct.pack(">QII", UDP_PROTOCOL_ID ^ 1, 0, tid)
            elif kind == 2:
                pkt = struct.pack(">QII", rng.randrange(1 << 64), rng.randrange(4, 1 << 32), tid)
            elif kind == 3:
                pkt = udp_announce_packet(rng.randrange(1 << 64), tid, os.urandom(20),
                                          os.urandom(20), 6881, 1)
            elif kind == 4:
                pkt = udp_announce_packet(rng.randrange(1 << 64), tid, os.urandom(20),
                                          os.urandom(20), 6881, 1)[:rng.randrange(16, 98)]
            else:
                pkt = struct.pack(">QII", rng.randrange(1 << 64), 2, tid)
            try:
                s.sendto(pkt, ("127.0.0.1", udp_port))
                count("sent udp garbage")
            except OSError:
                count("udp garbage send errors")
            try:
                while True:
                    s.recvfrom(65536)
                    count("udp garbage answered")
            except OSError:
                pass
            stop.wait(0.005)

    # Garbage and malformed HTTP, oversized requests: each on its own
    # connection; the status of the answer (0: none, closed) is counted.
    def http_garbage(source, rng):
        good = announce_query(b"G" * 20, b"-XX0000-" + b"g" * 12, 6881, 5)
        cases = [
            lambda: os.urandom(rng.randrange(1, 4000)),
            lambda: b"GET\r\n\r\n",
            lambda: b"BREW /announce HTTP/1.1\r\nHost: t\r\n\r\n",
            lambda: b"GET /announce HTTP/1.1\r\n\r\n",
            lambda: b"GET /announce?info_hash=%zz&port=abc HTTP/1.1\r\nHost: t\r\n\r\n",
            lambda: b"GET /announce?info_hash=short&peer_id=x&port=1&left=1 HTTP/1.1\r\nHost: t\r\n\r\n",
            lambda: ("GET /announce?%s&numwant=-5&port=99999 HTTP/1.1\r\nHost: t\r\n\r\n" % good).encode(),
            lambda: b"GET /" + b"A" * 100000 + b" HTTP/1.1\r\nHost: t\r\n\r\n",
            lambda: ("GET /announce?%s&x=%s HTTP/1.1\r\nHost: t\r\n\r\n" % (good, "y" * 7000)).encode(),
            lambda: b"GET /announce HTTP/1.1\r\n" + b"X-Junk: " + b"z" * 70000 + b"\r\n\r\n",
            lambda: b"GET / HTTP/1.1\r\n" + b"".join(b"H%d: v\r\n" % i for i in range(3000)) + b"\r\n",
            lambda: b"POST /announce HTTP/1.1\r\nHost: t\r\nContent-Length: 99999999999\r\n\r\nabc",
            lambda: b"GET /announce HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nffffffff\r\n",
            lambda: b"GET /scrape?" + b"info_hash=" + b"%41" * 20 * 1 + b"&info_hash=%41" * 600 + b" HTTP/1.1\r\n\r\n",
            lambda: b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03" + os.urandom(200),
            lambda: (b"GET /announce?" + good.encode() + b" HTTP/1.1\r\nHost: t\r\n\r\n") * 40,
        ]
        while not stop.is_set():
            i = rng.randrange(len(cases))
            try:
                s = tcp(source)
                try:
                    count("sent http garbage")
                    s.sendall(cases[i]())
                    s.shutdown(socket.SHUT_WR)
                except OSError:
                    pass
                data = drain(s)
                s.close()
                status = status_of(data)
                if status == 200:   # a tracker reply: a bencoded failure or a served announce
                    body = data.partition(b"\r\n\r\n")[2]
                    status = "200 failure" if body.startswith(b"d14:failure reason") else "200 served"
                count("http garbage case %02d status %s" % (i, status))
            except OSError as e:
                count("http garbage connect %s" % type(e).__name__)
            stop.wait(0.02)

    # A flood of announces on keep-alive connections, pipelined 16 deep,
    # from one address: past the burst the daemon answers 'rate limited'.
    def http_flood(source, rng, per_second):
        peer_id = b"-FL0001-" + os.urandom(6).hex().encode()[:12]
        q = announce_query(hashlib.sha1(b"flood" + source.encode()).digest(), peer_id, 6881, 1)
        req = ("GET /announce?%s HTTP/1.1\r\nHost: t\r\n\r\n" % q).encode()
        s = None
        next_t = time.monotonic()
        while not stop.is_set():
            try:
                if s is None:
                    s = tcp(source)
                s.sendall(req * 16)
                count("sent http flood", 16)
                bodies = read_replies(s, 16)
                count("http flood rate limited", sum(b"rate limited" in b for b in bodies))
                count("http flood served", sum(b"interval" in b for b in bodies))
            except OSError:
                count("http flood connection errors")
                if s:
                    s.close()
                s = None
            next_t += 16.0 / per_second
            delay = next_t - time.monotonic()
            if delay > 0:
                stop.wait(delay)
            else:
                next_t = time.monotonic()

    # A UDP flood of connects and announces from one address.
    def udp_flood(source, rng, per_second):
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.bind((source, 0))
        s.setblocking(False)
        conn = None
        ih = hashlib.sha1(b"udp flood").digest()
        next_t = time.monotonic()
        while not stop.is_set():
            for _ in range(10):
                tid = rng.randrange(1 << 32)
                if conn is None or rng.random() < 0.2:
                    pkt = udp_connect_packet(tid)
                else:
                    pkt = udp_announce_packet(conn, tid, ih, b"-FL0002-" + b"u" * 12, 6881, 1)
                try:
                    s.sendto(pkt, ("127.0.0.1", udp_port))
                    count("sent udp flood")
                except OSError:
                    count("udp flood send errors")
            try:
                while True:
                    data, _ = s.recvfrom(65536)
                    action = udp_reply_header(data)[0]
                    if action == 0:
                        conn = struct.unpack(">Q", data[8:16])[0]
                    count("udp flood answers action %d" % action)
            except OSError:
                pass
            next_t += 10.0 / per_second
            delay = next_t - time.monotonic()
            if delay > 0:
                stop.wait(delay)
            else:
                next_t = time.monotonic()

    # New info_hashes from one address: the new-swarm budget refuses most.
    def swarm_flood(source, rng, per_second):
        s = None
        while not stop.is_set():
            q = announce_query(os.urandom(20), b"-NS0001-" + os.urandom(6).hex().encode()[:12],
                               6881, 1000)
            try:
                if s is None:
                    s = tcp(source)
                s.sendall(("GET /announce?%s HTTP/1.1\r\nHost: t\r\n\r\n" % q).encode())
                count("sent new-swarm flood")
                reply = bdecode(read_replies(s, 1)[0])[0]
                if b"failure reason" in reply:
                    count("new-swarm flood refused: " + reply[b"failure reason"].decode(errors="replace"))
                else:
                    count("new-swarm flood served")
            except OSError:
                count("new-swarm flood connection errors")
                if s:
                    s.close()
                s = None
            stop.wait(1.0 / per_second)

    # Slow clients: a valid request trickled a byte a second; the read
    # deadline cuts them off, then they come back.
    def slowloris(source, rng):
        req = ("GET /announce?%s HTTP/1.1\r\nHost: t\r\n\r\n"
               % announce_query(b"S" * 20, b"-SL0001-" + b"s" * 12, 6881, 1)).encode()
        while not stop.is_set():
            try:
                s = tcp(source)
            except OSError:
                count("slowloris connect errors")
                stop.wait(1)
                continue
            count("sent slowloris connections")
            t0 = time.monotonic()
            cut = False
            for b in req:
                if stop.is_set():
                    break
                try:
                    s.send(bytes([b]))
                except OSError:
                    cut = True
                    break
                s.settimeout(1.0)
                try:
                    if s.recv(4096) == b"":
                        cut = True
                        break
                    cut = True
                    break
                except socket.timeout:
                    pass
                except OSError:
                    cut = True
                    break
            if cut:
                count("slowloris cut off")
                with lock:
                    counts["slowloris held seconds"] += int(time.monotonic() - t0)
            s.close()

    # Idle connections: opened, never used, opened again when the daemon
    # closes them; the second address asks for more than its cap.
    def idle(source, n):
        socks = []
        while not stop.is_set():
            while len(socks) < n and not stop.is_set():
                try:
                    s = tcp(source)
                    s.setblocking(False)
                    socks.append(s)
                    count("sent idle connections")
                except OSError:
                    count("idle connect errors")
                    stop.wait(0.5)
                    break
            stop.wait(1.0)
            keep = []
            for s in socks:
                try:
                    if s.recv(1) == b"":
                        count("idle connections closed by the daemon")
                        s.close()
                        continue
                except BlockingIOError:
                    keep.append(s)
                    continue
                except OSError:
                    count("idle connections closed by the daemon")
                    s.close()
                    continue
                keep.append(s)
            socks = keep
        for s in socks:
            s.close()

    rng = random.Random(seed)
    jobs = []
    for i in range(3):
        jobs.append((udp_garbage, ("127.2.0.%d" % (i + 1), random.Random(rng.random()))))
    for i in range(3):
        jobs.append((http_garbage, ("127.2.1.%d" % (i + 1), random.Random(rng.random()))))
    jobs.append((http_flood, ("127.3.0.1", random.Random(rng.random()), 1200)))
    jobs.append((http_flood, ("127.3.0.2", random.Random(rng.random()), 800)))
    jobs.append((udp_flood, ("127.3.0.3", random.Random(rng.random()), 1500)))
    jobs.append((swarm_flood, ("127.3.0.4", random.Random(rng.random()), 15)))
    for i in range(40):
        jobs.append((slowloris, ("127.4.0.%d" % (i % 4 + 1), random.Random(rng.random()))))
    jobs.append((idle, ("127.4.1.1", 300)))
    jobs.append((idle, ("127.4.1.2", 560)))
    threads = [threading.Thread(target=f, args=a, daemon=True) for f, a in jobs]
    for t in threads:
        t.start()
    stop.wait()
    for t in threads:
        t.join(5)
    out.put(dict(counts))


# -- the checks at the end --------------------------------------------------------------

def check_peer_lists(daemon, hashes, peers, sample, args, stats_lines):
    """Announces (numwant 1000) into each sampled swarm over HTTP and UDP
    from CHECK_ADDRESS; every valid peer whose last accepted announce lies
    within peer-timeout of the reply must be listed, no stopped one may be.
    Returns (expected, missing, stopped listed, problems)."""
    expected_total = missing_total = stopped_listed = 0
    problems = []
    http = HttpConn(CHECK_ADDRESS, daemon.http)
    rng = random.Random(7)
    udp = UdpConn(CHECK_ADDRESS, daemon.udp, rng)
    dummy = Stats()
    for n, swarm in enumerate(sample):
        h = hashes[swarm]
        for transport in ("http", "udp"):
            peer_id = b"-CK0001-" + os.urandom(6).hex().encode()[:12]
            port = 7000 + 2 * n + (transport == "udp")
            if transport == "http":
                status, body = http.get("/announce?" + announce_query(h, peer_id, port, 1, numwant=1000), dummy)
                reply = bdecode(body)[0] if status == 200 else {}
                if b"failure reason" in reply or b"peers" not in reply:
                    problems.append("swarm %d http check: %r" % (swarm, reply or status))
                    continue
                listed = compact_peers(reply[b"peers"])
            else:
                conn, failure = udp.connection(dummy)
                data = udp.ask(lambda tid: udp_announce_packet(conn, tid, h, peer_id, port, 1,
                                                               numwant=1000), dummy) if conn else None
                if data is None or udp_reply_header(data)[0] != 1:
                    problems.append("swarm %d udp check: %r" % (swarm, data))
                    continue
                listed = compact_peers(data[20:])
            at = time.monotonic()
            members = [p for p in peers if p.swarm == swarm]
            expected = {(p.address, p.port) for p in members if not p.uncertain
                        and p.last_ok_sent is not None and p.last_ok_event != "stopped"
                        and at < p.last_ok_sent + args.peer_timeout}
            stopped = {(p.address, p.port) for p in members
                       if not p.uncertain and p.last_ok_event == "stopped"}
            miss = expected - listed
            bad = stopped & listed
            expected_total += len(expected)
            missing_total += len(miss)
            stopped_listed += len(bad)
            if miss or bad:
                problems.append("swarm %d (%s): %d of %d expected peers missing %s, %d stopped listed %s"
                                % (swarm, transport, len(miss), len(expected), sorted(miss)[:5],
                                   len(bad), sorted(bad)[:5]))
            stats_lines.append((swarm, transport, len(expected), len(listed)))
    http.close()
    return expected_total, missing_total, stopped_listed, problems


def main():
    args = parse_args()
    duration = args.minutes * 60
    warmup = args.warmup if args.warmup is not None else max(20.0, duration / 3)
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    workdir = tempfile.mkdtemp(prefix="swarmkeeper-soak-")
    rng = random.Random(args.seed)

    daemon = Daemon(args.daemon, args, workdir)
    print("soak: daemon pid %d, http %d, udp %d, log %s" % (daemon.proc.pid, daemon.http,
                                                           daemon.udp, daemon.log_path), flush=True)
    print("soak: %s" % " ".join(daemon.cmd), flush=True)

    # The hostile child first, before this process starts threads (fork).
    ctx = multiprocessing.get_context("fork")
    hostile_stop = ctx.Event()
    hostile_out = ctx.Queue()
    hostile = None
    if not args.no_hostile:
        hostile = ctx.Process(target=hostile_main, args=(daemon.http, daemon.udp, hostile_stop,
                                                          hostile_out, args.seed), daemon=True)
        hostile.start()

    # The population: swarm sizes fall off with rank (a few big swarms, many small).
    hashes = [hashlib.sha1(b"soak swarm %d seed %d" % (i, args.seed)).digest()
              for i in range(args.swarms)]
    weights = [1.0 / (i + 1) ** 0.8 for i in range(args.swarms)]
    by_address = collections.defaultdict(list)
    peers = []
    for i in range(args.peers):
        a = i % args.addresses
        address = valid_address(a)
        swarm = rng.choices(range(args.swarms), weights)[0]
        transport = "http" if rng.random() < 0.5 else "udp"
        p = Peer(rng, address, 10000 + len(by_address[a]), swarm, transport, rng.random() < 0.4)
        by_address[a].append(p)
        peers.append(p)

    stats = Stats()
    stop = threading.Event()
    clients = [AddressClient(a, ps, hashes, daemon, stats, stop, min(args.interval, warmup / 2),
                             rng.random()) for a, ps in sorted(by_address.items())]

    rss = []            # (seconds since start, kB)
    alive_all_along = [True]

    def sample():
        t0 = time.monotonic()
        while not stop.is_set():
            kb = daemon.rss_kb()
            if kb is None or not daemon.alive():
                alive_all_along[0] = False
            else:
                rss.append((time.monotonic() - t0, kb))
            stop.wait(3.0)

    sampler = threading.Thread(target=sample, daemon=True)
    start = time.monotonic()
    sampler.start()
    for c in clients:
        c.start()
    last_report = start
    while time.monotonic() - start < duration:
        time.sleep(1)
        if not daemon.alive():
            alive_all_along[0] = False
            break
        if time.monotonic() - last_report >= 30:
            last_report = time.monotonic()
            with stats.lock:
                ok = sum(stats.ok.values())
                bad = sum(stats.failures.values())
            print("soak: %3.0fs valid ok %d failed %d rss %s kB" % (
                time.monotonic() - start, ok, bad, rss[-1][1] if rss else "?"), flush=True)

    # End of the load: valid clients finish their request in flight, the
    # hostile child stops.
    stop.set()
    for c in clients:
        c.join(HTTP_TIMEOUT + 2 * UDP_TIMEOUT + 2)
    hostile_counts = {}
    if hostile is not None:
        hostile_stop.set()
        try:
            hostile_counts = hostile_out.get(timeout=20)
        except Exception:
            hostile_counts = {"(no counters from the hostile process)": 1}
        hostile.join(10)
        if hostile.is_alive():
            hostile.terminate()
    sampler.join(5)
    client_errors = [c.error for c in clients if c.error]

    results = []   # (name, passed, text)
    alive = alive_all_along[0] and daemon.alive()

    # Peer lists.
    sizes = collections.Counter(p.swarm for p in peers)
    ranked = [s for s, _ in sizes.most_common()]
    sample_swarms = ranked[:args.check_swarms // 2] + rng.sample(
        ranked[args.check_swarms // 2:], min(len(ranked) - args.check_swarms // 2,
                                             args.check_swarms - args.check_swarms // 2))
    lines = []
    if alive:
        try:
            expected, missing, stopped_listed, problems = check_peer_lists(
                daemon, hashes, peers, sample_swarms, args, lines)
        except (OSError, ValueError, IndexError) as e:
            expected, missing, stopped_listed, problems = 0, 0, 0, ["check failed: %r" % e]
        try:
            metrics = daemon.metrics()
        except OSError as e:
            metrics = "(no metrics: %r)" % e
    else:
        expected, missing, stopped_listed, problems = 0, 0, 0, ["daemon not alive"]
        metrics = ""

    rc = daemon.stop() if daemon.alive() else daemon.proc.returncode

    # -- report --
    print()
    print("soak: valid requests by kind:")
    for k in sorted(set(stats.ok) | {k for k, _ in stats.failures}):
        print("  %-14s ok %7d  failed %5d" % (k, stats.ok[k],
                                             sum(v for (kk, _), v in stats.failures.items() if kk == k)))
    if stats.failures:
        print("soak: failures of valid requests, by text:")
        for (k, text), v in stats.failures.most_common():
            print("  %6d  %s: %s" % (v, k, text))
    print("soak: client-side retries: %s" % (dict(stats.retries) or "none"))
    if hostile_counts:
        print("soak: hostile traffic (counted by the hostile clients):")
        for k in sorted(hostile_counts):
            print("  %8d  %s" % (hostile_counts[k], k))
    print("soak: daemon metrics of refusals and limits:")
    for line in metrics.splitlines():
        if line.startswith(("swarmkeeper_rate_limited_total", "swarmkeeper_http_connections_refused_total",
                            "swarmkeeper_http_connections_shed_total", "swarmkeeper_udp_dropped_total",
                            "swarmkeeper_cap_refusals_total", "swarmkeeper_limit_reached")):
            print("  " + line)
    for p in problems[:20]:
        print("soak: peer list: " + p)
    if client_errors:
        print("soak: client thread errors: %s" % client_errors[:5])

    ok_n = sum(stats.ok.values())
    fail_n = sum(stats.failures.values())
    total = ok_n + fail_n
    share = fail_n / total if total else 1.0
    hostile_n = sum(v for k, v in hostile_counts.items() if k.startswith("sent "))

    steady = [kb for t, kb in rss if t >= warmup]
    if len(steady) >= 2:
        first, last, top = steady[0], steady[-1], max(steady)
        growth = last - first
        bound = min(first * args.rss_growth_pct / 100.0, args.rss_growth_mb * 1024)
        rss_ok = growth <= bound
        rss_text = ("VmRSS after %.0fs warm-up: first %.1f MB, last %.1f MB, max %.1f MB, growth %+.1f MB "
                    "(bound %.1f MB = min(%g%%, %g MB)), %d samples"
                    % (warmup, first / 1024, last / 1024, top / 1024, growth / 1024, bound / 1024,
                       args.rss_growth_pct, args.rss_growth_mb, len(steady)))
    else:
        rss_ok = False
        rss_text = "VmRSS: too few samples after the warm-up (%d)" % len(steady)

    results.append(("daemon alive", alive, "daemon alive through the soak: %s" % ("yes" if alive else "NO")))
    results.append(("sigterm", rc == 0, "exit status on SIGTERM: %s" % rc))
    results.append(("failures", total > 0 and share <= args.max_failure_share and not client_errors,
                    "valid requests: %d, failed %d (%.3f%%, allowed %.3f%%)"
                    % (total, fail_n, 100 * share, 100 * args.max_failure_share)))
    results.append(("memory", rss_ok, rss_text))
    results.append(("peers", expected > 0 and missing == 0 and stopped_listed == 0 and not problems,
                    "peer lists of %d swarms (HTTP and UDP): %d expected peers, %d missing, "
                    "%d stopped peers listed" % (len(sample_swarms), expected, missing, stopped_listed)))
    for tr in ("http", "udp"):
        v = sorted(stats.latency[tr])
        results.append(("latency " + tr, bool(v),
                        "%s latency (%d requests): p50 %.1f ms, p99 %.1f ms, max %.1f ms"
                        % (tr.upper(), len(v), 1000 * percentile(v, 0.5), 1000 * percentile(v, 0.99),
                           1000 * (v[-1] if v else float("nan")))))

    # The hostile share got the answers the limits promise.
    def hc(prefix):
        return sum(v for k, v in hostile_counts.items() if k.startswith(prefix))
    if not args.no_hostile:
        handled = {"http flood rate limited": hc("http flood rate limited"),
                   "udp flood error replies": hc("udp flood answers action 3"),
                   "new swarms refused": hc("new-swarm flood refused"),
                   "slow clients cut off": hc("slowloris cut off"),
                   "idle connections closed": hc("idle connections closed")}
        results.append(("hostile handled", all(handled.values()),
                        "hostile traffic limited: " + ", ".join("%s %d" % kv for kv in handled.items())))

    print()
    print("==== soak summary ====")
    print("load: %.1f min, %d valid peers on %d addresses in %d swarms, interval %ds/min %ds, "
          "peer-timeout %ds" % (args.minutes, args.peers, args.addresses, args.swarms,
                                args.interval, args.min_interval, args.peer_timeout))
    print("hostile: %s" % ("none" if args.no_hostile else
                           "%d requests/packets/connections (%.0f%% of all traffic sent)"
                           % (hostile_n, 100.0 * hostile_n / max(1, hostile_n + total))))
    for name, passed, text in results:
        print("%-4s %s" % ("ok" if passed else "FAIL", text))
    failed = [n for n, passed, _ in results if not passed]
    print("result: %s" % ("PASS" if not failed else "FAIL (" + ", ".join(failed) + ")"))
    if failed:
        print("daemon log (last lines):\n" + daemon.log_tail())
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
