#!/usr/bin/env python3
"""The network-side limits of the real daemon, over real sockets on loopback.

Loopback accepts any 127/8 source address (bind() before connect), so each
"client address" below is its own 127.0.0.x. Two daemons run with small
limits given as flags:

daemon A (http.max-connections=60, http.max-connections-per-address=20,
gateway.request-burst=50, gateway.requests-per-second=1,
admin.auth-timeout=1s, http.defer-accept=0s: its idle connections are
accepted at once and in the order they connected, where the default
deferral would hand them to the server only after it, in the kernel's
order):
  - 30 idle connections from 127.0.0.1: 20 are served, 10 are closed at
    once; announces from 127.0.0.2 are all served meanwhile; a trusted
    proxy (127.0.0.50) is not capped;
  - the total full of idle connections (20 each from three addresses): a
    new announce from another address is served, the oldest idle
    connection is the one shed; a connection holding half a request is
    shed as slow before idle ones that came after it;
  - the request rate: HTTP announces past the burst get a bencoded failure
    reason with 'retry in'; UDP announces (connected) an error packet no
    larger than the request; a UDP connect over the rate gets nothing;
  - an idle admin connection is closed after admin.auth-timeout;
  - /metrics counts all of it, and each limit's log line appears once.

daemon B (http.read-timeout=2s, admin.auth-timeout=60s, http.defer-accept=5s):
  - a connection that sends nothing is not handed to the server during the
    deferral, one that sends its request at once is answered at once, and
    the silent one is accepted after the deferral and then closed at the
    read deadline;
  - a request trickled a byte at a time is cut off at the read deadline;
  - 200 idle connections to the admin port (more than admin.max-connections,
    64), then an authenticated GET /api/node succeeds.

usage: limits_test.py path/to/swarmkeeper
       limits_test.py path/to/swarmkeeper --measure-flood [N [K]]
         N idle connections from 127.0.0.1 (default 10,500; from K
         addresses 127.0.1.1..K round robin when K > 1), then 45 announces
         from 127.0.0.2, default limits: prints how many were served (any
         build: the command line names no limit option).
"""
import os
import random
import resource
import signal
import socket
import struct
import subprocess
import sys
import time
import urllib.error
import urllib.request
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from ports import free_port  # noqa: E402  (tests/support, after the path above)
import daemon_checks  # noqa: E402
from tracker_requests import (bdecode, announce_query, scrape_query, udp_announce_packet,  # noqa: E402
                              udp_connect_packet, udp_reply_header)

TOKEN = "limits-test-token-0123456789"
RATE_TEXT = b"rate limited, retry later"
MAX_CONNECTIONS = 60
PER_ADDRESS = 20
BURST = 50
PROXY = "127.0.0.50"


def wait_until(what, predicate, timeout=20):
    return daemon_checks.wait_until(what, predicate, timeout, poll=0.05)


# -- HTTP -------------------------------------------------------------------------

def tcp_from(source, port, timeout=10):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((source, 0))
    s.settimeout(timeout)
    s.connect(("127.0.0.1", port))
    return s


def closed_by_server(s, wait=0.0):
    """True when the server closed `s` (EOF or reset) within `wait` seconds."""
    s.settimeout(wait if wait > 0 else 0.001)
    try:
        return s.recv(1) == b""
    except socket.timeout:
        return False
    except (ConnectionResetError, BrokenPipeError):
        return True
    except BlockingIOError:
        return False


def http_get(source, port, target, timeout=10):
    """One request on a new connection from `source`: (status, body)."""
    s = tcp_from(source, port, timeout)
    try:
        s.sendall(f"GET {target} HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n".encode())
        data = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
    finally:
        s.close()
    head, _, body = data.partition(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1]) if head else 0
    return status, body


def announce(source, port, info_hash=None):
    """One HTTP announce from `source`: its bencoded reply (a dict)."""
    q = announce_query(info_hash or b"L" * 20, os.urandom(20), 6881, 1000)
    status, body = http_get(source, port, "/announce?" + q)
    assert status == 200, (status, body)
    return bdecode(body)[0]


# -- UDP --------------------------------------------------------------------------

class udp_client:
    def __init__(self, source, port):
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind((source, 0))
        self.dest = ("127.0.0.1", port)
        self.tid = random.randrange(1 << 30)

    def ask(self, packet, tid, timeout):
        self.sock.settimeout(timeout)
        self.sock.sendto(packet, self.dest)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                data, _ = self.sock.recvfrom(2048)
            except socket.timeout:
                return None
            if udp_reply_header(data)[1] == tid:
                return data
        return None

    def connect(self, timeout=5):
        self.tid += 1
        data = self.ask(udp_connect_packet(self.tid), self.tid, timeout)
        if data is None:
            return None
        action, _ = udp_reply_header(data)
        assert action == 0, data
        return struct.unpack(">Q", data[8:16])[0]

    def announce(self, conn):
        self.tid += 1
        packet = udp_announce_packet(conn, self.tid, b"U" * 20, os.urandom(20), 6881, 1000)
        data = self.ask(packet, self.tid, 5)
        assert data is not None, "a connected announce is always answered"
        return len(packet), data


# -- admin API ----------------------------------------------------------------------

def admin_get(admin_port, path, timeout=10):
    req = urllib.request.Request(f"http://127.0.0.1:{admin_port}{path}",
                                 headers={"Authorization": f"Bearer {TOKEN}"})
    with urllib.request.urlopen(req, timeout=timeout) as r:
        return r.status, r.read().decode()


def metrics(admin_port):
    _, text = admin_get(admin_port, "/metrics")
    return daemon_checks.parse_metrics(text)


def metric(admin_port, key):
    m = metrics(admin_port)
    assert key in m, f"{key} not on /metrics"
    return m[key]


# -- the daemon ---------------------------------------------------------------------

class daemon:
    def __init__(self, binary, extra):
        self.http = free_port()
        self.udp = free_port()
        self.admin = free_port()
        cmd = [binary, "--http.bind=127.0.0.1", f"--http.port={self.http}",
               f"--udp.port={self.udp}", "--udp.bind=127.0.0.1", f"--admin.port={self.admin}",
               f"--admin.token={TOKEN}", "--tracker.min-interval=1s"] + extra
        self.proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                     text=True)
        wait_until("/health", self.healthy, 30)

    def healthy(self):
        if self.proc.poll() is not None:
            raise AssertionError(f"daemon exited with {self.proc.returncode}")
        try:
            return http_get("127.0.0.250", self.http, "/health", 2)[0] == 200
        except OSError:
            return False

    def stop(self):
        """SIGTERM; returns the daemon's log (stderr)."""
        self.proc.send_signal(signal.SIGTERM)
        try:
            _, err = self.proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            _, err = self.proc.communicate()
            raise AssertionError("daemon did not stop on SIGTERM:\n" + err[-3000:])
        assert self.proc.returncode == 0, f"daemon exited with {self.proc.returncode}:\n{err}"
        return err


def with_daemon(binary, extra, body):
    d = daemon(binary, extra)
    try:
        body(d)
    except BaseException:
        d.proc.send_signal(signal.SIGTERM)
        try:
            _, err = d.proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            d.proc.kill()
            _, err = d.proc.communicate()
        sys.stderr.write("daemon log (last lines):\n" + "\n".join(err.splitlines()[-40:]) + "\n")
        raise
    return d.stop()


# -- daemon A: connections per address and in total, the request rate -------------------

def connections_per_address(d):
    flood = [tcp_from("127.0.0.1", d.http) for _ in range(PER_ADDRESS + 10)]
    wait_until("the per-address refusals",
               lambda: metric(d.admin, 'swarmkeeper_http_connections_refused_total'
                                       '{reason="per_address"}') == 10)
    closed = [i for i, s in enumerate(flood) if closed_by_server(s, 0.2)]
    assert closed == list(range(PER_ADDRESS, PER_ADDRESS + 10)), closed
    # Another address is served all the while.
    for _ in range(10):
        reply = announce("127.0.0.2", d.http)
        assert b"interval" in reply, reply
    m = metrics(d.admin)
    assert m['swarmkeeper_limit_reached{limit="http_connections_per_address"}'] == 1
    assert m['swarmkeeper_limit{limit="http_connections_per_address"}'] == PER_ADDRESS
    assert m["swarmkeeper_http_connections_busiest_address"] == PER_ADDRESS
    for s in flood:
        s.close()
    wait_until("the flood's connections to end",
               lambda: metric(d.admin, "swarmkeeper_http_connections") == 0)
    # A trusted proxy carries many clients: no per-address cap.
    proxy = [tcp_from(PROXY, d.http) for _ in range(PER_ADDRESS + 5)]
    wait_until("the proxy's connections",
               lambda: metric(d.admin, "swarmkeeper_http_connections") == PER_ADDRESS + 5)
    assert not any(closed_by_server(s, 0.05) for s in proxy), "a trusted proxy was capped"
    assert metric(d.admin, 'swarmkeeper_http_connections_refused_total{reason="per_address"}') == 10
    for s in proxy:
        s.close()
    wait_until("the proxy's connections to end",
               lambda: metric(d.admin, "swarmkeeper_http_connections") == 0)


def fill(d, sources, n):
    """`n` idle connections, PER_ADDRESS from each of `sources` in order."""
    out = []
    for src in sources:
        for _ in range(min(PER_ADDRESS, n - len(out))):
            out.append(tcp_from(src, d.http))
    assert len(out) == n
    return out


def total_full(d):
    idle = fill(d, ["127.0.0.3", "127.0.0.4", "127.0.0.5"], MAX_CONNECTIONS)
    wait_until("the total to fill",
               lambda: metric(d.admin, "swarmkeeper_http_connections") == MAX_CONNECTIONS)
    reply = announce("127.0.0.6", d.http)
    assert b"interval" in reply, f"the new announce was not served: {reply}"
    wait_until("the oldest idle connection to be shed", lambda: closed_by_server(idle[0], 0.2))
    assert not any(closed_by_server(s) for s in idle[1:]), "only the oldest was shed"
    m = metrics(d.admin)
    assert m['swarmkeeper_http_connections_shed_total{state="idle"}'] == 1, m
    assert m['swarmkeeper_http_connections_refused_total{reason="total"}'] == 0
    assert m['swarmkeeper_limit_reached{limit="http_connections"}'] == 1
    for s in idle:
        s.close()
    wait_until("the idle connections to end",
               lambda: metric(d.admin, "swarmkeeper_http_connections") == 0)

    # Half a request, then idle connections after it: the slow one waited
    # longest, so it goes first.
    slow = tcp_from("127.0.0.7", d.http)
    slow.sendall(b"GET /announce?info_hash=")
    idle = [slow] + fill(d, ["127.0.0.8", "127.0.0.9", "127.0.0.10"], MAX_CONNECTIONS - 1)
    wait_until("the total to fill",
               lambda: metric(d.admin, "swarmkeeper_http_connections") == MAX_CONNECTIONS)
    reply = announce("127.0.0.11", d.http)
    assert b"interval" in reply, reply
    wait_until("the slow connection to be shed", lambda: closed_by_server(slow, 0.2))
    assert metric(d.admin, 'swarmkeeper_http_connections_shed_total{state="slow"}') == 1
    for s in idle:
        s.close()
    wait_until("the connections to end",
               lambda: metric(d.admin, "swarmkeeper_http_connections") == 0)


def request_rate(d):
    # HTTP: the burst is served, then a failure with 'retry in'. The rate
    # refills one a second, so a few more may pass while the burst is sent.
    served = 0
    while True:
        reply = announce("127.0.0.20", d.http)
        if b"failure reason" in reply:
            break
        served += 1
        assert served <= BURST + 20, "never limited"
    assert served >= BURST - 1, served
    assert reply[b"failure reason"] == RATE_TEXT, reply
    assert reply[b"retry in"] >= 1, reply
    status, body = http_get("127.0.0.20", d.http, "/scrape?" + scrape_query([b"L" * 20]))
    assert status == 200 and bdecode(body)[0][b"failure reason"] == RATE_TEXT, body
    assert announce("127.0.0.21", d.http).get(b"interval"), "another address is not limited"

    # UDP: connected announces past the burst get an error packet no larger
    # than the request; a connect over the rate gets nothing.
    c = udp_client("127.0.0.30", d.udp)
    conn = c.connect()
    assert conn is not None
    for _ in range(BURST + 20):
        size, reply = c.announce(conn)
        action, _ = udp_reply_header(reply)
        if action == 3:
            break
        assert action == 1, reply
    else:
        raise AssertionError("UDP announces never limited")
    assert reply[8:] == RATE_TEXT and len(reply) <= size, reply
    for attempt in range(3):
        # Refused just now: less than one token left, and the connect right
        # after it is dropped (a token refilling in between: try again).
        assert udp_reply_header(c.announce(conn)[1])[0] == 3
        if c.connect(timeout=0.5) is None:
            break
    else:
        raise AssertionError("a connect over the rate was answered three times")
    assert udp_client("127.0.0.31", d.udp).connect() is not None, "another address connects"

    m = metrics(d.admin)
    assert m['swarmkeeper_rate_limited_total{transport="http",request="announce"}'] >= 1, m
    assert m['swarmkeeper_rate_limited_total{transport="http",request="scrape"}'] >= 1
    assert m['swarmkeeper_rate_limited_total{transport="udp",request="announce"}'] >= 1
    assert m['swarmkeeper_rate_limited_total{transport="udp",request="connect"}'] >= 1
    assert m['swarmkeeper_limit_reached{limit="request_rate"}'] == 1
    assert m["swarmkeeper_rate_limit_addresses"] >= 4
    assert m['swarmkeeper_tracker_requests_total{transport="http",outcome="rate_limited"}'] >= 2


def admin_auth_timeout(d):
    s = socket.create_connection(("127.0.0.1", d.admin), timeout=10)
    started = time.monotonic()
    assert closed_by_server(s, 15), "an idle admin connection outlived admin.auth-timeout"
    took = time.monotonic() - started
    s.close()
    assert took < 10, f"closed after {took:.1f} s (admin.auth-timeout is 1 s)"


def daemon_a(binary):
    def body(d):
        connections_per_address(d)
        total_full(d)
        request_rate(d)
        admin_auth_timeout(d)

    log = with_daemon(binary, [f"--http.max-connections={MAX_CONNECTIONS}",
                               f"--http.max-connections-per-address={PER_ADDRESS}",
                               "--http.read-timeout=120s",
                               f'--http.trusted-proxies=["{PROXY}"]',
                               f"--gateway.request-burst={BURST}",
                               "--gateway.requests-per-second=1", "--admin.auth-timeout=1s",
                               "--http.defer-accept=0s"],
                      body)
    # Each limit's moment is logged once, not per refusal.
    assert log.count("holds http.max-connections-per-address") == 1, log
    assert log.count(f"http.max-connections ({MAX_CONNECTIONS}) reached") == 1, log
    assert log.count("request rate limit reached") == 1, log


# -- daemon B: slowloris, the admin port under idle connections ------------------------

DEFER_SECONDS = 5


def http_connections(d):
    return metric(d.admin, "swarmkeeper_http_connections")


def deferred_accept(d):
    # The /health checks' connections are closed by the client; the server
    # counts each until it has seen the close.
    wait_until("the health checks' connections to end", lambda: http_connections(d) == 0)
    silent = tcp_from("127.0.0.42", d.http)
    connected = time.monotonic()
    # The server has not seen it: no connection is counted.
    assert http_connections(d) == 0
    # A client that speaks first is served without waiting for the deferral.
    started = time.monotonic()
    reply = announce("127.0.0.43", d.http)
    took = time.monotonic() - started
    assert b"interval" in reply, reply
    assert took < DEFER_SECONDS, f"an announce on a new connection took {took:.1f} s"
    # Once the server has seen the announce's connection close, none is
    # counted until the deferral ends.
    wait_until("no connection counted within the deferral (one that sent nothing was "
               "accepted, or the announce's was still counted)",
               lambda: http_connections(d) == 0,
               DEFER_SECONDS - 0.5 - (time.monotonic() - connected))
    # After the deferral the kernel hands it over; the read deadline (2 s)
    # then closes it.
    assert closed_by_server(silent, 60), "a silent connection was never accepted and closed"
    lived = time.monotonic() - connected
    silent.close()
    assert lived >= DEFER_SECONDS - 0.5, f"a silent connection was closed after {lived:.1f} s"


def trickle(d):
    request = ("GET /announce?" + announce_query(b"T" * 20, b"P" * 20, 6881, 0) +
               " HTTP/1.1\r\nHost: t\r\n\r\n").encode()
    s = tcp_from("127.0.0.40", d.http)
    started = time.monotonic()
    cut = False
    for i, byte in enumerate(request[:-1]):  # never complete
        try:
            s.sendall(bytes([byte]))
        except (BrokenPipeError, ConnectionResetError):
            cut = True
            break
        if closed_by_server(s, 0.1):
            cut = True
            break
    took = time.monotonic() - started
    s.close()
    assert cut, f"a trickled request held its slot for {took:.1f} s"
    # The trickle would take len(request) / 10 s (> 20 s); the deadline is 2 s.
    assert took < 10, f"cut off after {took:.1f} s (http.read-timeout is 2 s)"


def admin_under_idle_connections(d):
    idle = [socket.create_connection(("127.0.0.1", d.admin), timeout=10) for _ in range(200)]
    wait_until("the admin server to shed them",
               lambda: metric(d.admin, "swarmkeeper_admin_connections_shed_total") >= 136)
    # An operator with the token gets in while they are open.
    started = time.monotonic()
    status, body = admin_get(d.admin, "/api/node", timeout=30)
    assert status == 200 and '"version"' in body, body
    took = time.monotonic() - started
    m = metrics(d.admin)
    assert m["swarmkeeper_admin_connections_refused_total"] == 0, m
    assert m['swarmkeeper_limit_reached{limit="admin_connections"}'] == 1
    assert m["swarmkeeper_admin_connections"] <= 64 + 1, m
    for s in idle:
        s.close()
    print(f"admin: GET /api/node with 200 idle connections open took {took * 1000:.0f} ms")


def daemon_b(binary):
    def body(d):
        deferred_accept(d)
        trickle(d)
        admin_under_idle_connections(d)

    log = with_daemon(binary, ["--http.read-timeout=2s", "--admin.auth-timeout=60s",
                               f"--http.defer-accept={DEFER_SECONDS}s"], body)
    assert log.count("admin.max-connections (64) reached") == 1, log


# -- the flood measurement (by hand) -------------------------------------------------

def measure_flood(binary, n, sources):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    # Default limits either way (a binary from before the per-address
    # options gets the same command line).
    d = daemon(binary, [])
    try:
        flood = []
        for _ in range(n):
            try:
                flood.append(tcp_from(f"127.0.1.{1 + len(flood) % sources}" if sources > 1
                                      else "127.0.0.1", d.http, 5))
            except OSError as e:
                print(f"connect {len(flood)}: {e}")
                break
        time.sleep(1)  # let the server accept (or refuse) the whole backlog
        served = 0
        for i in range(45):
            try:
                reply = announce("127.0.0.2", d.http, bytes([i]) * 20)
                served += b"interval" in reply
            except (OSError, AssertionError, ValueError, IndexError):
                pass
        open_flood = sum(1 for s in flood if not closed_by_server(s))
        where = f"127.0.1.1-{sources}" if sources > 1 else "127.0.0.1"
        print(f"{n} idle connections from {where} ({open_flood} still open), then 45 announces "
              f"from 127.0.0.2: {served} served")
        for s in flood:
            s.close()
    finally:
        d.stop()


def main():
    binary = sys.argv[1]
    if "--measure-flood" in sys.argv:
        rest = [a for a in sys.argv[2:] if a != "--measure-flood"]
        measure_flood(binary, int(rest[0]) if rest else 10500, int(rest[1]) if len(rest) > 1 else 1)
        return
    daemon_a(binary)
    daemon_b(binary)
    print("PASS")


if __name__ == "__main__":
    main()
