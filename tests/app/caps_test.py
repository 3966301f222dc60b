#!/usr/bin/env python3
"""The caps of the real daemon, over real sockets on loopback.

The daemon runs with small caps (caps.max-swarms, tracker.max-peers-per-swarm,
gateway.new-swarm-burst) and a short peer timeout. One swarm S is filled to
its peer cap first; then several loopback addresses (127.0.0.10, .11, ...)
flood the UDP tracker with new info_hashes, past the node's swarm cap and
past their own new-swarm budgets. Checked:

  - exactly cap - 1 new swarms are created; the rest are refused with the
    swarm-cap or the budget text (UDP error packets, never larger than the
    announce), and a new torrent over HTTP gets a bencoded failure reason
    with 'retry in';
  - S still answers its known peers with the others, and refuses a new one
    with the swarm-full text;
  - /metrics counts the swarms, the refusals by cap and the reached state;
  - once the peers expire, the swarm count drops back and the daemon's
    resident memory (VmRSS) falls back by more than half of what the flood
    added. (health.tick is short because an ended swarm actor is freed only
    when its pending health tick fires.)

usage: caps_test.py path/to/swarmkeeper
"""
import os
import signal
import struct
import subprocess
import sys
import time
import urllib.error
import urllib.request
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from ports import free_port  # noqa: E402  (tests/support, after the path above)
import daemon_checks  # noqa: E402
from tracker_requests import bdecode  # noqa: E402
from udp_client import udp_client  # noqa: E402

MAX_SWARMS = 20000
PEERS_PER_SWARM = 5
BURST = 2600
FLOODERS = 8          # 8 x 2600 attempts: past the swarm cap and past each budget
PEER_TIMEOUT = 30     # seconds: the flood must end well within it
TOKEN = "caps-test-token-0123456789"

SWARM_CAP_TEXT = b"tracker full: no new torrents now, retry later"
BUDGET_TEXT = b"too many new torrents from your address, retry later"
SWARM_FULL_TEXT = b"swarm full: no new peers now, retry later"


def vm_rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise AssertionError("no VmRSS in /proc/PID/status")


def wait_until(what, predicate, timeout):
    return daemon_checks.wait_until(what, predicate, timeout, poll=0.2)


def classify(reply):
    action = struct.unpack("!I", reply[:4])[0]
    if action == 1:
        return "ok"
    assert action == 3, reply
    text = reply[8:]
    if text == SWARM_CAP_TEXT:
        return "swarm_cap"
    if text == BUDGET_TEXT:
        return "budget"
    raise AssertionError(f"unexpected error text {text!r}")


# -- admin API ---------------------------------------------------------------------

def metrics(admin_port):
    req = urllib.request.Request(f"http://127.0.0.1:{admin_port}/metrics",
                                 headers={"Authorization": f"Bearer {TOKEN}"})
    for attempt in range(5):
        try:
            with urllib.request.urlopen(req, timeout=10) as r:
                text = r.read().decode()
            break
        except urllib.error.HTTPError as e:
            # 504: a swarm of the fan-out did not answer in time (the
            # flood's swarms are busy); ask again.
            if e.code != 504 or attempt == 4:
                raise
    return daemon_checks.parse_metrics(text)


def cap_metric(m, family, cap):
    key = f'{family}{{cap="{cap}"}}'
    assert key in m, f"{key} not on /metrics"
    return m[key]


def main():
    binary = sys.argv[1]
    http_port = free_port()
    udp_port = free_port()
    admin_port = free_port()
    cmd = [binary, "--http.bind=127.0.0.1", f"--http.port={http_port}",
           f"--udp.port={udp_port}", "--udp.bind=127.0.0.1", f"--admin.port={admin_port}",
           f"--admin.token={TOKEN}", "--tracker.interval=10s", "--tracker.min-interval=1s",
           f"--tracker.peer-timeout={PEER_TIMEOUT}s", "--tracker.sweep-period=1s",
           "--tracker.idle-swarm-time=0s", "--health.tick=2s", f"--caps.max-swarms={MAX_SWARMS}",
           f"--tracker.max-peers-per-swarm={PEERS_PER_SWARM}",
           f"--gateway.new-swarm-burst={BURST}", "--gateway.new-swarms-per-minute=1"]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        run(proc, http_port, udp_port, admin_port)
    except BaseException:
        proc.send_signal(signal.SIGTERM)
        try:
            _, err = proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            _, err = proc.communicate()
        sys.stderr.write("daemon log (last lines):\n" + "\n".join(err.splitlines()[-40:]) + "\n")
        raise
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, f"daemon exited with {proc.returncode}"
    # Each cap's moment is logged once, not per request.
    assert err.count("swarm cap reached") == 1, err
    assert err.count("swarm cap cleared") == 1, err
    assert err.count("new-swarm budget reached") == 1, err
    assert err.count("its cap (tracker.max-peers-per-swarm)") == 1, err
    print("PASS")


def run(proc, http_port, udp_port, admin_port):
    def healthy():
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{http_port}/health", timeout=2) as r:
                return r.status == 200
        except OSError:
            return False
    wait_until("the daemon to start", healthy, 60)

    # S: a swarm at its own peer cap.
    s_hash = b"S" * 20
    s_peers = [b"-SK0001-" + bytes([i]) * 12 for i in range(PEERS_PER_SWARM)]
    local = udp_client("127.0.0.1", udp_port, timeout=5)
    for i, p in enumerate(s_peers):
        reply = local.announce(s_hash, p, 7000 + i)
        assert classify(reply) == "ok", reply
    reply = local.announce(s_hash, b"-SK0001-" + b"\xee" * 12, 7999)
    assert reply[8:] == SWARM_FULL_TEXT, reply
    size = len(local.packet(0, s_hash, b"-SK0001-" + b"\xee" * 12, 7999))
    assert len(reply) <= size, "an error packet is never larger than the request"

    m = metrics(admin_port)
    assert cap_metric(m, "swarmkeeper_cap_reached", "swarm_peers") == 1
    baseline_kib = vm_rss_kib(proc.pid)

    # The flood: new info_hashes from several addresses.
    started = time.monotonic()
    outcomes = {"ok": 0, "swarm_cap": 0, "budget": 0}
    for k in range(FLOODERS):
        c = udp_client(f"127.0.0.{10 + k}", udp_port, timeout=5)
        hashes = [os.urandom(20) for _ in range(BURST)]
        # One more than the budget from the first address, after the cap is
        # reached by the others (see below).
        for reply in c.flood([(h, os.urandom(20), 6881, 1000) for h in hashes]):
            outcomes[classify(reply)] += 1
            assert len(reply) <= 98
    flood_seconds = time.monotonic() - started
    assert flood_seconds < PEER_TIMEOUT / 2, f"the flood took {flood_seconds:.1f} s"
    assert outcomes["ok"] == MAX_SWARMS - 1, outcomes
    assert outcomes["swarm_cap"] == FLOODERS * BURST - (MAX_SWARMS - 1), outcomes
    # An address whose budget is spent: refused by its budget first.
    first = udp_client("127.0.0.10", udp_port, timeout=5)
    replies = first.flood([(os.urandom(20), os.urandom(20), 6881, 1000) for _ in range(3)])
    assert [classify(r) for r in replies] == ["budget"] * 3, replies
    outcomes["budget"] += 3
    peak_kib = vm_rss_kib(proc.pid)

    # A new torrent over HTTP, from an address with budget left.
    url = (f"http://127.0.0.1:{http_port}/announce?info_hash={'%41' * 20}"
           f"&peer_id={'%42' * 20}&port=6881&uploaded=0&downloaded=0&left=0&compact=1")
    with urllib.request.urlopen(url, timeout=10) as r:
        body, _ = bdecode(r.read())
    assert body[b"failure reason"] == SWARM_CAP_TEXT, body
    assert body[b"retry in"] >= 1, body

    # The existing swarm still answers its known peers with the others.
    reply = local.announce(s_hash, s_peers[0], 7000)
    assert classify(reply) == "ok", reply
    peers = (len(reply) - 20) // 6
    assert peers == PEERS_PER_SWARM - 1, f"{peers} peers in {reply!r}"

    m = metrics(admin_port)
    assert cap_metric(m, "swarmkeeper_cap_usage", "swarms") == MAX_SWARMS, m
    assert cap_metric(m, "swarmkeeper_cap_limit", "swarms") == MAX_SWARMS
    assert cap_metric(m, "swarmkeeper_cap_reached", "swarms") == 1
    assert cap_metric(m, "swarmkeeper_cap_refusals_total", "swarms") == outcomes["swarm_cap"] + 1
    assert cap_metric(m, "swarmkeeper_cap_refusals_total", "new_swarm_budget") == outcomes["budget"]
    assert cap_metric(m, "swarmkeeper_cap_refusals_total", "swarm_peers") == 1
    assert cap_metric(m, "swarmkeeper_cap_usage", "peers") == MAX_SWARMS - 1 + PEERS_PER_SWARM

    # Every peer expires; the swarms end; memory comes back.
    def drained():
        m = metrics(admin_port)
        return m if cap_metric(m, "swarmkeeper_cap_usage", "swarms") == 0 else None
    m = wait_until("the swarms to expire", drained, PEER_TIMEOUT + 60)
    assert cap_metric(m, "swarmkeeper_cap_usage", "peers") == 0, m
    assert cap_metric(m, "swarmkeeper_cap_reached", "swarms") == 0
    assert cap_metric(m, "swarmkeeper_cap_reached", "swarm_peers") == 0
    growth = peak_kib - baseline_kib

    def memory_back():
        now = vm_rss_kib(proc.pid)
        return now if now - baseline_kib < growth / 2 else None
    try:
        after_kib = wait_until("the resident memory to fall", memory_back, 30)
    except AssertionError:
        after_kib = vm_rss_kib(proc.pid)
        raise AssertionError(f"VmRSS baseline {baseline_kib} KiB, peak {peak_kib} KiB, after "
                             f"expiry {after_kib} KiB: less than half of the growth came back")
    print(f"flood: {outcomes} in {flood_seconds:.1f} s; VmRSS baseline {baseline_kib} KiB, "
          f"peak {peak_kib} KiB (+{growth} KiB), after expiry {after_kib} KiB")
    assert growth > 0

    # Below the cap again: a new torrent is taken.
    late = udp_client("127.0.0.30", udp_port, timeout=5)
    reply = late.announce(os.urandom(20), os.urandom(20), 6881)
    assert classify(reply) == "ok", reply


if __name__ == "__main__":
    main()
