#!/usr/bin/env python3
"""The swarm-side bounds of the real daemon, over real sockets on loopback.

  1. Swarm poisoning: 127.0.0.1 announces 1000 fake seeders (distinct
     peer ids and ports) into a swarm with 5 real seeders at addresses of
     their own. Only tracker.max-peers-per-address (256) of them are stored,
     the rest get the address-full failure with 'retry in' (UDP error
     packets; over HTTP a bencoded failure reason with 'retry in'); the
     counts say 256 + 5 seeders; and every reply of 50 to a real leecher
     holds all 5 real seeders and at most max(1, 50 / 8) = 6 fakes.
  2. Log flood: 200 swarms of leechers without seeders all go critical and
     get a remediation each (health.tick=1s). Their per-swarm info lines
     stay within log.swarm-lines-burst plus log.swarm-lines-per-minute; the
     rest are counted in a summary warning, which comes within a minute and
     a bit.
  3. Metrics count every swarm: past 10,000 swarms, swarmkeeper_swarms adds
     up to the number of swarms the flood created.

usage: bounds_test.py path/to/swarmkeeper
"""
import os
import re
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from ports import free_port  # noqa: E402  (tests/support, after the path above)
import daemon_checks  # noqa: E402
from tracker_requests import announce_query  # noqa: E402
from udp_client import udp_client  # noqa: E402

TOKEN = "bounds-test-token-0123456789"
PER_ADDRESS = 256
ADDRESS_FULL = b"too many peers from your address in this torrent, retry later"
LOG_BURST = 20
LOG_RATE = 30  # per minute
LOG_SWARMS = 200
MANY_SWARMS = 10050


def wait_until(what, predicate, timeout):
    return daemon_checks.wait_until(what, predicate, timeout, poll=0.2)


def peers_of(reply):
    """(action 1) -> list of (ip, port) from the compact IPv4 peers."""
    action, _, _, leechers, seeders = struct.unpack("!IIIII", reply[:20])
    assert action == 1, reply
    body = reply[20:]
    return [(socket.inet_ntoa(body[i:i + 4]), struct.unpack("!H", body[i + 4:i + 6])[0])
            for i in range(0, len(body) - len(body) % 6, 6)], leechers, seeders


def metrics(admin_port):
    req = urllib.request.Request(f"http://127.0.0.1:{admin_port}/metrics",
                                 headers={"Authorization": f"Bearer {TOKEN}"})
    for attempt in range(5):
        try:
            with urllib.request.urlopen(req, timeout=20) as r:
                text = r.read().decode()
            break
        except urllib.error.HTTPError as e:
            if e.code != 504 or attempt == 4:
                raise
    return daemon_checks.parse_metrics(text)


def poisoning(http_port, udp_port):
    h = b"P" * 20
    real = []
    for i in range(5):
        c = udp_client(f"127.0.0.{2 + i}", udp_port)
        r = c.announce(h, b"-RS0001-" + bytes([i]) * 12, 6000 + i, 0)
        assert struct.unpack("!I", r[:4])[0] == 1, r
        real.append((f"127.0.0.{2 + i}", 6000 + i))
    fake = udp_client("127.0.0.1", udp_port)
    replies = fake.flood([(h, b"-FK0001-" + struct.pack("!I", i) + b"\0" * 8, 10000 + i, 0)
                          for i in range(1000)])
    ok = sum(1 for r in replies if struct.unpack("!I", r[:4])[0] == 1)
    refused = [r for r in replies if struct.unpack("!I", r[:4])[0] == 3]
    assert ok == PER_ADDRESS, f"{ok} fake seeders stored, expected {PER_ADDRESS}"
    assert len(refused) == 1000 - PER_ADDRESS
    assert all(r[8:] == ADDRESS_FULL for r in refused), refused[0]
    # Over HTTP the refusal is a failure reason with 'retry in'.
    q = announce_query(h, b"-FK0002-" + b"\x01" * 12, 9999, 0, event="started")
    with urllib.request.urlopen(f"http://127.0.0.1:{http_port}/announce?{q}", timeout=10) as r:
        body = r.read()
    assert b"14:failure reason" in body and ADDRESS_FULL in body, body
    assert b"8:retry in" in body, body
    # Real leechers: every reply of 50 holds the 5 real seeders, few fakes.
    for k in range(20):
        c = udp_client(f"127.0.1.{1 + k}", udp_port)
        r = c.announce(h, b"-RL0001-" + bytes([k]) * 12, 7000 + k, 1000, numwant=50)
        peers, leechers, seeders = peers_of(r)
        assert seeders == PER_ADDRESS + 5, seeders
        assert len(peers) == 50, len(peers)
        missing = [p for p in real if p not in peers]
        assert not missing, f"leecher {k}: real seeders {missing} missing"
        fakes = sum(1 for ip, _ in peers if ip == "127.0.0.1")
        others = 5 + k  # real seeders and the leechers before this one
        if others + 6 >= 50:
            assert fakes <= 6, f"leecher {k}: {fakes} fake peers of 50"
        else:
            # The reply is filled from the crowd only once the others are in.
            assert fakes == 50 - others, (k, fakes)
    print(f"poisoning: {ok} of 1000 fake seeders stored, {len(refused)} refused; "
          f"every reply of 50 holds the 5 real seeders")


def log_flood(udp_port, log_path):
    c = udp_client("127.0.0.50", udp_port)
    requests = []
    for s in range(LOG_SWARMS):
        h = b"L" + struct.pack("!I", s) + b"\0" * 15
        for i in range(6):
            requests.append((h, b"-LF0001-" + struct.pack("!II", s, i) + b"\0" * 4, 8000 + i, 5000))
    started = time.monotonic()
    c.flood(requests)

    def read_log():
        with open(log_path, errors="replace") as f:
            return f.read().splitlines()

    def summarised():
        lines = read_log()
        return lines if any("per-swarm info lines suppressed" in l for l in lines) else None
    lines = wait_until("the summary of suppressed lines", summarised, 150)
    elapsed_min = (time.monotonic() - started) / 60.0
    per_swarm = [l for l in lines if " info " in l and (
        "remediation of swarm" in l or "remediation started" in l or "remediation of" in l)]
    allowed = LOG_BURST + LOG_RATE * elapsed_min + 1
    assert len(per_swarm) <= allowed, f"{len(per_swarm)} per-swarm info lines > {allowed:.0f}"
    summaries = [int(m.group(1)) for l in lines
                 for m in [re.search(r"swarm log: (\d+) per-swarm info lines suppressed", l)] if m]
    # Each of the 200 remediations writes at least a "started" and a
    # "start" line: without the budget there would be 400 or more.
    assert len(per_swarm) + sum(summaries) >= 2 * LOG_SWARMS, (len(per_swarm), summaries)
    print(f"log flood: {LOG_SWARMS} remediating swarms, {len(per_swarm)} per-swarm info lines "
          f"written in {elapsed_min * 60:.0f} s, {sum(summaries)} summarised in "
          f"{len(summaries)} warning(s)")


def many_swarms(udp_port, admin_port):
    before = metrics(admin_port)
    base = sum(v for k, v in before.items() if k.startswith("swarmkeeper_swarms{"))
    clients = [udp_client(f"127.0.2.{1 + i}", udp_port) for i in range(4)]
    per = MANY_SWARMS // len(clients) + 1
    created = 0
    for n, c in enumerate(clients):
        reqs = [(b"M" + struct.pack("!II", n, i) + b"\0" * 11, b"-MS0001-" + os.urandom(12),
                 6881, 100) for i in range(per)]
        created += sum(1 for r in c.flood(reqs) if struct.unpack("!I", r[:4])[0] == 1)
    assert created > 10000, created

    def counted():
        m = metrics(admin_port)
        total = sum(v for k, v in m.items() if k.startswith("swarmkeeper_swarms{"))
        return m if total == base + created else None
    m = wait_until("swarmkeeper_swarms to count every swarm", counted, 60)
    peers = sum(v for k, v in m.items() if k.startswith("swarmkeeper_peers{"))
    assert peers >= created, peers
    print(f"metrics: {created} new swarms all counted ({base + created:.0f} swarms, "
          f"{peers:.0f} peers)")


def main():
    binary = sys.argv[1]
    http_port = free_port()
    udp_port = free_port()
    admin_port = free_port()
    cmd = [binary, "--http.bind=127.0.0.1", f"--http.port={http_port}",
           f"--udp.port={udp_port}", "--udp.bind=127.0.0.1", f"--admin.port={admin_port}",
           f"--admin.token={TOKEN}", "--tracker.interval=600s", "--tracker.min-interval=1s",
           "--health.tick=1s", "--gateway.new-swarm-burst=100000",
           f"--log.swarm-lines-burst={LOG_BURST}", f"--log.swarm-lines-per-minute={LOG_RATE}"]
    with tempfile.NamedTemporaryFile(prefix="bounds_test_", suffix=".log", delete=False) as log:
        log_path = log.name
    with open(log_path, "w") as log:
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=log, text=True)
    try:
        def healthy():
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{http_port}/health",
                                            timeout=2) as r:
                    return r.status == 200
            except OSError:
                return False
        wait_until("the daemon to start", healthy, 60)
        poisoning(http_port, udp_port)
        log_flood(udp_port, log_path)
        many_swarms(udp_port, admin_port)
    except BaseException:
        proc.kill()
        proc.wait()
        with open(log_path, errors="replace") as f:
            tail = f.read().splitlines()[-40:]
        sys.stderr.write("daemon log (last lines):\n" + "\n".join(tail) + "\n")
        os.unlink(log_path)
        raise
    proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=60)
    with open(log_path, errors="replace") as f:
        err = f.read()
    os.unlink(log_path)
    assert proc.returncode == 0, f"daemon exited with {proc.returncode}"
    # The per-address bound's moment is logged once, not per refusal.
    assert err.count("tracker.max-peers-per-address;") == 1, err[-2000:]
    print("PASS")


if __name__ == "__main__":
    main()
