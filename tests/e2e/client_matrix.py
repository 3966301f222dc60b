#!/usr/bin/python3
"""Real-client matrix: libtorrent, aria2 and Transmission in one swarm, several announce rounds.

Run it under run_with_daemon.py, which starts the daemon with short announce
intervals and the admin API (see CMakeLists.txt), e.g.

    /usr/bin/python3 tests/e2e/run_with_daemon.py --daemon build-e2e/bin/swarmkeeper \\
        --daemon-arg=--tracker.interval=5s --daemon-arg=--tracker.min-interval=3s \\
        --daemon-arg=--tracker.peer-timeout=60s \\
        --daemon-arg=--admin-port={admin_port} --daemon-arg=--admin-token=TOKEN -- \\
        /usr/bin/python3 tests/e2e/client_matrix.py --tracker-port {port} \\
        --udp-port {udp_port} --admin-port {admin_port} --admin-token TOKEN

The clients (all Debian bookworm packages) share ONE torrent (one info hash,
v1 only, not private: libtorrent does not hand out the metadata of private
torrents, and the magnet start needs it), but each gets its own tracker list:

  lt-seeder, lt-leecher  python3-libtorrent sessions, each with TWO listen
                         sockets (127.0.0.1 and [::1]); the .torrent lists
                         http://127.0.0.1:PORT/announce (tier 0) and
                         udp://127.0.0.1:UDP_PORT (tier 1), and the sessions
                         announce to all tiers and all trackers.
  aria2                  aria2c with a .torrent that lists only the HTTP
                         tracker (aria2 speaks UDP trackers only with DHT on).
  transmission           transmission-daemon, started from a MAGNET link
                         (xt, dn, tr=http, tr=udp) added with
                         transmission-remote: it must get the metadata from a
                         peer the tracker gave it.

With --dual-stack (the daemon then listens on 0.0.0.0 and ::, see
run_with_daemon.py --daemon-bind any) libtorrent's torrent also lists
http://[::1]:PORT/announce and udp://[::1]:UDP_PORT (tiers 2 and 3), so both
listen sockets of each session announce, each to the tracker of its family.

DHT, LSD, PEX, UPnP/NAT-PMP and uTP are off in every client, so the tracker
is the only way the peers can meet. The clients use only loopback.

The tracker's interval and min interval are read from the admin API. The
rounds are counted from the moment every leecher is complete: each client
must then announce --rounds times to the HTTP tracker (its udp:// trackers
must have answered at least once; their counts are printed: libtorrent 2.0
gives UDP replies a fixed 60 s min interval, so a session that has sent
`completed` re-announces over UDP only every 60 s), then one more interval is
watched before everybody stops.

The test FAILS when any of these holds (all are collected and printed, per
client, before the verdict; nothing is skipped):

* any client saw a tracker `warning message` or `failure reason`, or an
  announce/scrape error, at any time (stopped announces included):
  libtorrent's tracker_warning_alert, tracker_error_alert,
  scrape_failed_alert, and each endpoint's `message`, `fails` and
  `last_error` in handle.trackers() (the one exception: libtorrent's own
  announce_skipped, error 180 "skipping tracker announce (unreachable)", for
  a listen socket of the other address family than the tracker's literal IP
  -- no request is sent, so no tracker is involved; printed as a note);
  aria2's log lines
  "Tracker returned failure reason" / "Tracker returned warning message" and
  tracker-request failures; Transmission's RPC trackerStats
  (lastAnnounceResult other than "Success", lastAnnounceSucceeded false,
  lastScrapeResult, torrent error 1/2 = tracker warning/error) polled all the
  time, and its debug log;
* the tracker itself counted a warned, refused or banned announce in the
  swarm (admin API GET /api/swarms/<hash>, counters.warned / refused /
  banned);
* a client is missing (python module, aria2c, transmission-daemon,
  transmission-remote): that is a FAIL, never a skip;
* a leecher did not finish within the deadline, or a downloaded file is not
  byte-identical to the seeded data (sha256);
* a client did not announce at least --rounds times after it finished (its
  started/completed announces not counted), measured on the client side
  (announce alerts, aria2's announce requests in its log, Transmission's
  lastAnnounceTime changes) AND on the tracker side (the admin API's per-peer
  announce count, peers told apart by their announced port);
* libtorrent did not get replies from both the http:// and the udp://
  tracker (and the [::1] ones with --dual-stack), transmission from both of
  its trackers, or a libtorrent session was connected to a peer that did not
  come from the tracker;
* 15 s after every client stopped, the tracker still lists a peer that was
  announcing during the rounds (a record that stopped announcing before
  them, like the peer_id transmission drops when its magnet metadata
  arrives, can only expire: printed as a note).

Exit status 0 when everything held; 1 with "FAIL:" lines otherwise.
"""

import argparse
import hashlib
import json
import os
import random
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
import ports  # noqa: E402  (tests/support, after the path above)
import tracker_requests  # noqa: E402

START = time.monotonic()


def log(msg):
    print("[matrix %7.2fs] %s" % (time.monotonic() - START, msg), flush=True)


class TestFailure(Exception):
    pass


try:
    import libtorrent as lt
except ImportError as exc:
    sys.stderr.write("FAIL: cannot import libtorrent with %s (%s); install Debian's "
                     "python3-libtorrent (deploy/install-deps.sh)\n" % (sys.executable, exc))
    sys.exit(1)

PAYLOAD_DIR = "matrix-payload"
PAYLOAD_FILES = (("one.bin", 2 * 1024 * 1024 + 1234), ("two.bin", 1024 * 1024 + 99))
PIECE_SIZE = 32 * 1024
NON_TRACKER_SOURCES = lt.peer_info.dht | lt.peer_info.pex | lt.peer_info.lsd | lt.peer_info.resume_data


# --------------------------------------------------------------------------
# Small helpers
# --------------------------------------------------------------------------

def free_tcp_port(host="127.0.0.1"):
    """A port below the ephemeral range, claimed against parallel tests (ports.py)."""
    return ports.free_port(host)


def free_dual_port():
    """A port free on both 127.0.0.1 and ::1 (clients listen on both)."""
    for _ in range(50):
        p = free_tcp_port("127.0.0.1")
        try:
            with socket.socket(socket.AF_INET6, socket.SOCK_STREAM) as s:
                s.bind(("::1", p))
            return p
        except OSError:
            continue
    raise TestFailure("no port free on both 127.0.0.1 and ::1")


def sha256_file(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def which_or_fail(name, package):
    path = shutil.which(name)
    if not path:
        raise TestFailure("%s is not installed (Debian package %s; deploy/install-deps.sh "
                          "installs it): a missing client fails this test" % (name, package))
    return path


class Findings:
    """Every tracker message or error any client saw, by client."""

    def __init__(self):
        self.items = []   # (client, kind, text)
        self._seen = set()

    def add(self, client, kind, text):
        key = (client, kind, text)
        if key in self._seen:
            return
        self._seen.add(key)
        self.items.append(key)
        log("TRACKER MESSAGE for %s: %s: %s" % (client, kind, text))


# --------------------------------------------------------------------------
# Payload, torrent files, magnet
# --------------------------------------------------------------------------

def write_payload(root, seed):
    rng = random.Random(seed)
    digests = {}
    os.makedirs(os.path.join(root, PAYLOAD_DIR))
    for name, size in PAYLOAD_FILES:
        data = rng.randbytes(size)
        rel = os.path.join(PAYLOAD_DIR, name)
        with open(os.path.join(root, rel), "wb") as f:
            f.write(data)
        digests[rel] = hashlib.sha256(data).hexdigest()
    return digests


def make_torrent_dict(root):
    fs = lt.file_storage()
    lt.add_files(fs, os.path.join(root, PAYLOAD_DIR))
    ct = lt.create_torrent(fs, PIECE_SIZE, flags=lt.create_torrent.v1_only)
    ct.set_creator("swarmkeeper e2e client matrix")
    lt.set_piece_hashes(ct, root)
    return ct.generate()


def torrent_with_tiers(base, tiers):
    """The same info dict (same info hash) with another tracker list."""
    d = dict(base)
    d.pop(b"announce-list", None)
    d[b"announce"] = tiers[0][0].encode()
    if len(tiers) > 1 or len(tiers[0]) > 1:
        d[b"announce-list"] = [[u.encode() for u in tier] for tier in tiers]
    return lt.bencode(d)


# --------------------------------------------------------------------------
# Tracker side: admin API and scrape
# --------------------------------------------------------------------------

class Tracker:
    def __init__(self, host, port, admin_port, token, info_hash):
        self.host, self.port, self.admin_port, self.token = host, port, admin_port, token
        self.info_hash = info_hash

    def swarm(self):
        """GET /api/swarms/<hash>, or None while the tracker has no such swarm."""
        url = "http://%s:%d/api/swarms/%s" % (self.host, self.admin_port, self.info_hash.hex())
        req = urllib.request.Request(url, headers={"Authorization": "Bearer " + self.token})
        try:
            with urllib.request.urlopen(req, timeout=5) as r:
                return json.loads(r.read())
        except urllib.error.HTTPError as exc:
            if exc.code == 404:
                return None
            raise TestFailure("admin API %s: HTTP %d %s" % (url, exc.code, exc.read()[:300]))
        except (urllib.error.URLError, OSError) as exc:
            raise TestFailure("admin API %s failed: %s" % (url, exc))

    def scrape(self):
        url = "http://%s:%d/scrape?%s" % (self.host, self.port,
                                          tracker_requests.scrape_query([self.info_hash]))
        with urllib.request.urlopen(url, timeout=5) as r:
            reply = lt.bdecode(r.read())
        entry = (reply.get(b"files") or {}).get(self.info_hash)
        if not entry:
            return (0, 0, 0)
        return (int(entry[b"complete"]), int(entry[b"incomplete"]), int(entry[b"downloaded"]))


# --------------------------------------------------------------------------
# libtorrent
# --------------------------------------------------------------------------

class LtClient:
    kind = "libtorrent"

    def __init__(self, name, torrent_bytes, save_path, findings, port):
        self.name, self.save_path, self.findings = name, save_path, findings
        self.port = port
        self.session = lt.session({
            # Two listen sockets: libtorrent 2.0 keeps tracker state per local
            # endpoint and may announce from each of them.
            "listen_interfaces": "127.0.0.1:%d,[::1]:%d" % (port, port),
            "listen_system_port_fallback": False,
            "enable_dht": False, "enable_lsd": False,
            "enable_upnp": False, "enable_natpmp": False,
            "enable_incoming_utp": False, "enable_outgoing_utp": False,
            "allow_multiple_connections_per_ip": True,
            # Announce to every tracker of every tier (http and udp).
            "announce_to_all_tiers": True, "announce_to_all_trackers": True,
            # libtorrent never re-announces sooner than this (default 300 s);
            # the tracker's short test interval must be honoured as given.
            "min_announce_interval": 1,
            "min_reconnect_time": 1, "peer_connect_timeout": 5,
            "tracker_receive_timeout": 10, "stop_tracker_timeout": 5,
            "user_agent": "swarmkeeper-e2e-" + name,
            "alert_mask": lt.alert_category.error | lt.alert_category.status
                          | lt.alert_category.tracker | lt.alert_category.connect,
        })
        params = lt.add_torrent_params()
        params.ti = lt.torrent_info(lt.bdecode(torrent_bytes))
        params.save_path = save_path
        params.flags = (params.flags & ~lt.torrent_flags.auto_managed & ~lt.torrent_flags.paused)
        params.flags |= (lt.torrent_flags.disable_dht | lt.torrent_flags.disable_lsd
                         | lt.torrent_flags.disable_pex)
        self.handle = self.session.add_torrent(params)
        self.announces = {}     # (url, local endpoint) -> [(time, event)]
        self.replies = {}       # (url, local endpoint) -> [time]
        self.listen = []
        self.errors = []
        self.bad_sources = set()
        self.local_notes = set()
        self.finished_at = None

    @staticmethod
    def _ep(a):
        try:
            ep = a.local_endpoint
            return "%s:%d" % (ep[0], ep[1]) if isinstance(ep, tuple) else str(ep)
        except AttributeError:
            return "?"

    def poll(self):
        self._alerts()
        for p in self.handle.get_peer_info():
            if p.source & NON_TRACKER_SOURCES:
                self.bad_sources.add("%s:%d source=0x%x" % (p.ip[0], p.ip[1], p.source))
        self.check_endpoints()

    def _alerts(self):
        now = time.monotonic()
        for a in self.session.pop_alerts():
            if isinstance(a, lt.tracker_announce_alert):
                self.announces.setdefault((a.tracker_url(), self._ep(a)), []).append(
                    (now, int(a.event)))
            elif isinstance(a, lt.tracker_reply_alert):
                self.replies.setdefault((a.tracker_url(), self._ep(a)), []).append(now)
            elif isinstance(a, lt.tracker_warning_alert):
                self.findings.add(self.name, "tracker_warning_alert from %s (%s)"
                                  % (a.tracker_url(), self._ep(a)), a.message())
            elif isinstance(a, lt.tracker_error_alert):
                if self._local_skip(a.tracker_url(), self._ep(a), a.error.category().name(),
                                    a.error.value()):
                    continue
                self.findings.add(self.name, "tracker_error_alert from %s (%s)"
                                  % (a.tracker_url(), self._ep(a)),
                                  "failure reason %r, error %s [%s:%d], alert: %s" % (
                                      a.failure_reason(), a.error.message(),
                                      a.error.category().name(), a.error.value(), a.message()))
            elif isinstance(a, lt.scrape_failed_alert):
                self.findings.add(self.name, "scrape_failed_alert from %s" % a.tracker_url(),
                                  a.error_message())
            elif isinstance(a, lt.listen_succeeded_alert):
                self.listen.append("%s:%d/%s" % (a.address, a.port, a.socket_type))
            elif isinstance(a, (lt.listen_failed_alert, lt.torrent_error_alert,
                                lt.file_error_alert, lt.hash_failed_alert)):
                self.errors.append(a.message())
            elif isinstance(a, lt.torrent_finished_alert) and self.finished_at is None:
                self.finished_at = now

    def _local_skip(self, url, endpoint, category, value):
        """libtorrent's own 'skipping tracker announce (unreachable)' (libtorrent error 180,
        announce_skipped) for the [::1] listen socket: the tracker URL is an IPv4 literal,
        so libtorrent never sends that endpoint's announce. No request reaches the tracker,
        so no tracker message is involved; it is recorded as a note, and only for exactly
        that case (an IPv6 local endpoint and an IPv4-literal tracker host)."""
        host = urllib.parse.urlsplit(url).hostname or ""
        v4_literal = re.fullmatch(r"\d+\.\d+\.\d+\.\d+", host) is not None
        v6_literal = ":" in host
        v6_endpoint = endpoint.startswith(("::", "["))
        if category == "libtorrent" and value == 180 and (
                (v4_literal and v6_endpoint) or (v6_literal and not v6_endpoint)):
            self.local_notes.add("%s: libtorrent skips %s from its %s listen socket "
                                 "(announce_skipped, 'unreachable': other address family)"
                                 % (self.name, url, "[::1]" if v6_endpoint else "127.0.0.1"))
            return True
        return False

    def check_endpoints(self):
        """Every endpoint's stored message / failure counters, as handle.trackers() shows them."""
        for t in self.handle.trackers():
            for ep in t["endpoints"]:
                la = ep["local_address"]
                where = "%s (%s:%d)" % (t["url"], la[0], la[1])
                for ih in ep["info_hashes"][:1]:
                    if ih["message"]:
                        self.findings.add(self.name, "endpoint message of " + where, ih["message"])
                    err = ih["last_error"]
                    if (ih["fails"] or err["value"]) and self._local_skip(
                            t["url"], la[0], err["category"], err["value"]):
                        continue
                    if ih["fails"] or err["value"]:
                        self.findings.add(self.name, "endpoint failure of " + where,
                                          "fails=%d last_error=%r" % (ih["fails"], err))

    def done(self):
        s = self.handle.status()
        return s.is_seeding

    def progress(self):
        return self.handle.status().progress

    def announce_times(self, url):
        """Times of tracker replies from url, over all local endpoints."""
        return sorted(t for (u, _), ts in self.replies.items() if u == url for t in ts)

    def endpoint_summary(self):
        out = []
        for t in self.handle.trackers():
            for ep in t["endpoints"]:
                ih = ep["info_hashes"][0]
                now = time.time()
                out.append("%s from %s:%d: start_sent=%s complete_sent=%s fails=%d "
                           "last_error=%s:%d message=%r next_announce in %.0fs "
                           "(min_announce in %.0fs)"
                           % (t["url"], ep["local_address"][0], ep["local_address"][1],
                              ih["start_sent"], ih["complete_sent"], ih["fails"],
                              ih["last_error"]["category"], ih["last_error"]["value"],
                              ih["message"], ih["next_announce"] - now,
                              ih["min_announce"] - now))
        return out

    def stop(self, timeout):
        """Removes the torrent (libtorrent sends event=stopped) and collects what the
        stopped announces bring back, with the same checks as before."""
        self.check_endpoints()
        self.session.remove_torrent(self.handle)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self._alerts()
            if not self.session.get_torrents() and any(
                    e == 3 for v in self.announces.values() for _, e in v):
                time.sleep(0.5)   # the stopped replies
                self._alerts()
                break
            time.sleep(0.1)

    def close(self):
        self.session = None


# --------------------------------------------------------------------------
# aria2
# --------------------------------------------------------------------------

# aria2 1.36 (DefaultBtAnnounce::processAnnounceResponse): a failure reason
# throws "Tracker returned failure reason: %s.", a warning is logged as
# "Tracker returned warning message: %s".
ARIA2_BAD = [
    ("failure reason", re.compile(r"Tracker returned failure reason: ?(.*)")),
    ("warning message", re.compile(r"Tracker returned warning message: ?(.*)")),
    # "GID#%s - Tracker request %s failed" (the URL's query is cut off below)
    ("request failed", re.compile(r"Tracker request (\S+?)(?:\?\S*)? failed")),
    ("other", re.compile(r"(Tracker returned .*)")),
]
ARIA2_ANNOUNCE = re.compile(r"GET /announce\?[^ ]*")


class Aria2Client:
    kind = "aria2"

    def __init__(self, name, torrent_path, workdir, findings, port):
        self.name, self.findings, self.port = name, findings, port
        self.save_path = os.path.join(workdir, "dl")
        os.makedirs(self.save_path)
        self.log_path = os.path.join(workdir, "aria2.log")
        self.out_path = os.path.join(workdir, "aria2.out")
        argv = [which_or_fail("aria2c", "aria2"),
                "--dir=" + self.save_path,
                "--log=" + self.log_path, "--log-level=debug",
                "--console-log-level=warn", "--summary-interval=0",
                "--enable-dht=false", "--enable-dht6=false",
                "--bt-enable-lpd=false", "--enable-peer-exchange=false",
                "--listen-port=%d" % port,
                "--dht-listen-port=%d" % free_dual_port(),
                "--seed-ratio=0.0",          # seed (and keep announcing) until stopped
                "--file-allocation=none",
                "--bt-hash-check-seed=true", "--check-integrity=false",
                "--bt-require-crypto=false",
                "--disable-ipv6=false",
                "--rpc-save-upload-metadata=false",
                "--auto-save-interval=0",
                "--enable-rpc=false",
                torrent_path]
        self.out = open(self.out_path, "wb")
        self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=self.out,
                                     stderr=subprocess.STDOUT, start_new_session=True)
        self._pos = 0
        self._partial = ""
        self.announce_lines = []   # (time, request line)
        self.finished_at = None
        self.errors = []

    def poll(self):
        now = time.monotonic()
        try:
            with open(self.log_path, "rb") as f:
                f.seek(self._pos)
                data = f.read()
                self._pos += len(data)
        except OSError:
            data = b""
        text = self._partial + data.decode("utf-8", "replace")
        lines = text.split("\n")
        self._partial = lines.pop()
        for line in lines:
            m = ARIA2_ANNOUNCE.search(line)
            if m:
                self.announce_lines.append((now, m.group(0)))
            for what, rx in ARIA2_BAD:
                m = rx.search(line)
                if m:
                    text = m.group(1).strip() or line.strip()
                    if what == "request failed":
                        text = "tracker request to %s failed" % text
                    self.findings.add(self.name, "aria2 log (%s)" % what, text)
                    break
        if self.proc.poll() is not None and not self.errors:
            self.errors.append("aria2c exited with status %d (output: %s)" % (
                self.proc.returncode, open(self.out_path, "rb").read()[-500:]))

    def done(self, digests):
        """Complete: no control file and every file has the seeded content (aria2 logs
        "Download complete" only when it exits, so the files are what tells)."""
        if self.finished_at is not None:
            return True
        for rel, want in digests.items():
            p = os.path.join(self.save_path, rel)
            if not os.path.isfile(p) or os.path.getsize(p) != dict(PAYLOAD_FILES)[os.path.basename(rel)]:
                return False
        if os.path.exists(os.path.join(self.save_path, PAYLOAD_DIR + ".aria2")):
            return False
        if all(sha256_file(os.path.join(self.save_path, r)) == w for r, w in digests.items()):
            self.finished_at = time.monotonic()
            return True
        return False

    def request_summary(self):
        """What aria2 sent: events and the distinct keys of its announce requests."""
        events, keys, params = {}, set(), set()
        for _, line in self.announce_lines:
            q = urllib.parse.parse_qs(line.split("?", 1)[1], keep_blank_values=True)
            ev = q.get("event", ["(none)"])[0]
            events[ev] = events.get(ev, 0) + 1
            keys.update(q.get("key", []))
            params.update(q.keys())
        return events, sorted(keys), sorted(params)

    def announce_times(self):
        return [t for t, _ in self.announce_lines]

    def stop(self, timeout):
        if self.proc.poll() is None:
            # SIGINT is aria2's graceful shutdown (it sends event=stopped);
            # SIGTERM is its "emergency shutdown", which announces nothing.
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.poll()

    def close(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.out.close()


# --------------------------------------------------------------------------
# Transmission
# --------------------------------------------------------------------------

# Transmission 3.00's messages for tracker trouble (libtransmission/announcer*.c).
TR_BAD_LOG = [
    re.compile(r'(Tracker warning: ".*")'),
    re.compile(r'(Tracker error: ".*")'),
    re.compile(r'(tracker gave ".*")'),
    re.compile(r"(Scrape error: .*)"),
    # (not the start-up line "NB: invalid certs will show up as 'Could not ...'")
    re.compile(r"^(?!.*NB: invalid certs).*(Could not connect to tracker.*)"),
    re.compile(r"(Tracker gave HTTP response code .*)"),
]


class TransmissionClient:
    kind = "transmission"

    def __init__(self, name, magnet, workdir, findings, port):
        self.name, self.findings, self.port, self.magnet = name, findings, port, magnet
        self.conf = os.path.join(workdir, "conf")
        self.save_path = os.path.join(workdir, "dl")
        os.makedirs(self.conf)
        os.makedirs(self.save_path)
        self.log_path = os.path.join(workdir, "transmission.log")
        self.rpc_port = free_tcp_port()
        self.remote = which_or_fail("transmission-remote", "transmission-cli")
        daemon = which_or_fail("transmission-daemon", "transmission-daemon")
        settings = {
            "dht-enabled": False, "lpd-enabled": False, "pex-enabled": False,
            "utp-enabled": False, "port-forwarding-enabled": False,
            "peer-port": port, "peer-port-random-on-start": False,
            "bind-address-ipv4": "127.0.0.1", "bind-address-ipv6": "::1",
            "rpc-enabled": True, "rpc-port": self.rpc_port, "rpc-bind-address": "127.0.0.1",
            "rpc-authentication-required": False, "rpc-whitelist-enabled": True,
            "rpc-whitelist": "127.0.0.1", "rpc-host-whitelist-enabled": False,
            "download-dir": self.save_path, "incomplete-dir-enabled": False,
            "watch-dir-enabled": False, "start-added-torrents": True,
            "ratio-limit-enabled": False, "idle-seeding-limit-enabled": False,
            "speed-limit-up-enabled": False, "speed-limit-down-enabled": False,
            "alt-speed-enabled": False, "blocklist-enabled": False,
            "encryption": 1, "message-level": 3, "cache-size-mb": 4,
            "scrape-paused-torrents-enabled": True,
        }
        with open(os.path.join(self.conf, "settings.json"), "w") as f:
            json.dump(settings, f)
        self.log_file = open(self.log_path, "wb")
        self.proc = subprocess.Popen(
            [daemon, "--foreground", "--config-dir", self.conf, "--log-debug",
             "--no-dht", "--no-lpd", "--no-utp", "--no-portmap", "--no-auth",
             "--port", str(self.rpc_port), "--peerport", str(port),
             "--bind-address-ipv4", "127.0.0.1", "--bind-address-ipv6", "::1",
             "--rpc-bind-address", "127.0.0.1", "--download-dir", self.save_path],
            stdin=subprocess.DEVNULL, stdout=self.log_file, stderr=subprocess.STDOUT,
            start_new_session=True)
        self.session_id = ""
        self.torrent_id = None
        self.announce_seen = {}    # tracker announce URL -> set of lastAnnounceTime
        self.scrape_seen = {}
        self.tracker_stats = []
        self.finished_at = None
        self.metadata_at = None
        self.errors = []
        self._pos = 0
        self._partial = ""
        self.wait_rpc()

    def rpc(self, method, arguments):
        body = json.dumps({"method": method, "arguments": arguments}).encode()
        for _ in range(3):
            req = urllib.request.Request(
                "http://127.0.0.1:%d/transmission/rpc" % self.rpc_port, data=body,
                headers={"X-Transmission-Session-Id": self.session_id,
                         "Content-Type": "application/json"})
            try:
                with urllib.request.urlopen(req, timeout=5) as r:
                    reply = json.loads(r.read())
                if reply.get("result") != "success":
                    raise TestFailure("transmission RPC %s: %r" % (method, reply))
                return reply["arguments"]
            except urllib.error.HTTPError as exc:
                if exc.code == 409:
                    self.session_id = exc.headers.get("X-Transmission-Session-Id", "")
                    continue
                raise TestFailure("transmission RPC %s: HTTP %d" % (method, exc.code))
        raise TestFailure("transmission RPC %s: no session id" % method)

    def wait_rpc(self, timeout=20):
        deadline = time.monotonic() + timeout
        while True:
            if self.proc.poll() is not None:
                raise TestFailure("transmission-daemon exited with status %d:\n%s" % (
                    self.proc.returncode, self.tail()))
            try:
                self.rpc("session-get", {})
                return
            except (TestFailure, urllib.error.URLError, OSError):
                if time.monotonic() > deadline:
                    raise TestFailure("transmission-daemon RPC on port %d never answered:\n%s"
                                      % (self.rpc_port, self.tail()))
                time.sleep(0.2)

    def tail(self, n=30):
        try:
            with open(self.log_path, "rb") as f:
                lines = f.read().decode("utf-8", "replace").splitlines()
        except OSError:
            return "(no log)"
        return "\n".join("    | " + l for l in lines[-n:])

    def add_magnet(self):
        # transmission-remote drives the daemon, as a user would.
        r = subprocess.run([self.remote, "127.0.0.1:%d" % self.rpc_port, "--add", self.magnet],
                           capture_output=True, timeout=20)
        out = (r.stdout + r.stderr).decode("utf-8", "replace").strip()
        if r.returncode != 0 or "success" not in out:
            raise TestFailure("transmission-remote --add of the magnet failed (%d): %s"
                              % (r.returncode, out))
        ids = self.rpc("torrent-get", {"fields": ["id", "hashString"]})["torrents"]
        if len(ids) != 1:
            raise TestFailure("transmission has %d torrents after the magnet add: %r" % (len(ids), ids))
        self.torrent_id = ids[0]["id"]
        log("%s: transmission-remote added the magnet: %s" % (self.name, out))

    FIELDS = ["id", "status", "error", "errorString", "percentDone", "metadataPercentComplete",
              "haveValid", "sizeWhenDone", "leftUntilDone", "peersConnected", "trackerStats",
              "isFinished", "name"]

    def poll(self):
        now = time.monotonic()
        self._poll_log()
        if self.proc.poll() is not None:
            if not self.errors:
                self.errors.append("transmission-daemon exited with status %d" % self.proc.returncode)
            return
        if self.torrent_id is None:
            return
        ts = self.rpc("torrent-get", {"ids": [self.torrent_id], "fields": self.FIELDS})["torrents"]
        if not ts:
            return
        t = ts[0]
        self.last = t
        if t["error"] in (1, 2):
            self.findings.add(self.name, "torrent error %d (%s)" % (
                t["error"], "tracker warning" if t["error"] == 1 else "tracker error"),
                t["errorString"])
        elif t["error"] == 3:
            self.errors.append("local error: %s" % t["errorString"])
        if self.metadata_at is None and t["metadataPercentComplete"] >= 1 and t["sizeWhenDone"] > 0:
            self.metadata_at = now
        if (self.finished_at is None and self.metadata_at is not None
                and t["leftUntilDone"] == 0 and t["percentDone"] >= 1):
            self.finished_at = now
        self.tracker_stats = t["trackerStats"]
        for s in t["trackerStats"]:
            url = s["announce"]
            if s["hasAnnounced"] and s["lastAnnounceTime"]:
                self.announce_seen.setdefault(url, {})
                first = s["lastAnnounceTime"] not in self.announce_seen[url]
                self.announce_seen[url].setdefault(s["lastAnnounceTime"], now)
                if first:
                    if not s["lastAnnounceSucceeded"]:
                        what = "timed out" if s["lastAnnounceTimedOut"] else "failed"
                        self.findings.add(self.name, "announce to %s %s" % (url, what),
                                          s["lastAnnounceResult"])
                    elif s["lastAnnounceResult"] not in ("Success", ""):
                        self.findings.add(self.name, "announce to %s: tracker message" % url,
                                          s["lastAnnounceResult"])
            if s["hasScraped"] and s["lastScrapeTime"]:
                seen = self.scrape_seen.setdefault(url, set())
                if s["lastScrapeTime"] not in seen:
                    seen.add(s["lastScrapeTime"])
                    if not s["lastScrapeSucceeded"] or s["lastScrapeResult"] not in ("", "Success"):
                        self.findings.add(self.name, "scrape of %s" % s["scrape"],
                                          s["lastScrapeResult"] or "failed")

    def _poll_log(self):
        try:
            with open(self.log_path, "rb") as f:
                f.seek(self._pos)
                data = f.read()
                self._pos += len(data)
        except OSError:
            return
        text = self._partial + data.decode("utf-8", "replace")
        lines = text.split("\n")
        self._partial = lines.pop()
        for line in lines:
            for rx in TR_BAD_LOG:
                m = rx.search(line)
                if m:
                    self.findings.add(self.name, "transmission log", m.group(1).strip())
                    break

    def done(self):
        return self.finished_at is not None

    def announce_times(self, url):
        return sorted((self.announce_seen.get(url) or {}).values())

    def announce_urls(self):
        return sorted(self.announce_seen)

    def stop(self, timeout):
        if self.proc.poll() is None and self.torrent_id is not None:
            try:
                self.rpc("torrent-stop", {"ids": [self.torrent_id]})  # sends event=stopped
                deadline = time.monotonic() + min(timeout, 8)
                while time.monotonic() < deadline:
                    self.poll()
                    st = [s for s in self.tracker_stats if s["announceState"] not in (0, 1)]
                    if not st:
                        break
                    time.sleep(0.2)
            except TestFailure as exc:
                self.errors.append(str(exc))
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._poll_log()

    def close(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.log_file.close()


# --------------------------------------------------------------------------
# The test
# --------------------------------------------------------------------------

def poll_all(clients):
    for c in clients:
        c.poll()


def run(args, workdir):
    findings = Findings()
    failures = []
    notes = []
    # Missing clients fail before anything starts.
    which_or_fail("aria2c", "aria2")
    which_or_fail("transmission-daemon", "transmission-daemon")
    which_or_fail("transmission-remote", "transmission-cli")

    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(1 << 32)
    seed_root = os.path.join(workdir, "seed")
    digests = write_payload(seed_root, seed)
    base = make_torrent_dict(seed_root)
    http_url = "http://%s:%d/announce" % (args.host, args.tracker_port)
    udp_url = "udp://%s:%d" % (args.host, args.udp_port)
    lt_tiers = [[http_url], [udp_url]]
    tr_urls = [http_url, udp_url]
    v6_urls = []
    if args.dual_stack:
        # The daemon listens on :: as well: the [::1] listen sockets get a
        # tracker of their own family.
        v6_urls = ["http://[::1]:%d/announce" % args.tracker_port, "udp://[::1]:%d" % args.udp_port]
        # Only libtorrent's: transmission 3.00 answers its [::1] trackers with
        # "Could not connect to tracker" on a host without a global IPv6
        # address (it opens IPv6 tracker sockets only then), a client-side
        # limit that says nothing about the tracker.
        lt_tiers += [[u] for u in v6_urls]
    lt_torrent = torrent_with_tiers(base, lt_tiers)
    aria2_torrent = torrent_with_tiers(base, [[http_url]])
    ti = lt.torrent_info(lt.bdecode(lt_torrent))
    info_hash = ti.info_hashes().v1.to_bytes()
    magnet = "magnet:?xt=urn:btih:%s&dn=%s" % (info_hash.hex(), PAYLOAD_DIR) + "".join(
        "&tr=" + urllib.parse.quote(u, safe="") for u in tr_urls)
    tracker = Tracker(args.host, args.tracker_port, args.admin_port, args.admin_token, info_hash)
    log("content seed %d; torrent %s, %d bytes, %d pieces; libtorrent's tiers %r"
        % (seed, info_hash.hex(), ti.total_size(), ti.num_pieces(), lt_tiers))
    log("magnet for transmission: %s" % magnet)
    if tracker.swarm() is not None:
        raise TestFailure("the tracker already has a swarm for %s" % info_hash.hex())

    clients = []
    try:
        seeder = LtClient("lt-seeder", lt_torrent, seed_root, findings, free_dual_port())
        clients.append(seeder)
        deadline = time.monotonic() + min(args.timeout, 20)
        while not (seeder.done() and seeder.announce_times(http_url)):
            poll_all(clients)
            if time.monotonic() > deadline:
                raise TestFailure("the seeder never seeded and announced: %s"
                                  % seeder.endpoint_summary())
            time.sleep(0.1)
        log("lt-seeder seeding, listening on %s" % ", ".join(seeder.listen))

        path = os.path.join(workdir, "lt-leecher")
        os.makedirs(path)
        leecher = LtClient("lt-leecher", lt_torrent, path, findings, free_dual_port())
        aria2_dir = os.path.join(workdir, "aria2")
        os.makedirs(aria2_dir)
        aria2_torrent_path = os.path.join(aria2_dir, "matrix.torrent")
        with open(aria2_torrent_path, "wb") as f:
            f.write(aria2_torrent)
        aria2 = Aria2Client("aria2", aria2_torrent_path, aria2_dir, findings, free_dual_port())
        tr_dir = os.path.join(workdir, "transmission")
        os.makedirs(tr_dir)
        transmission = TransmissionClient("transmission", magnet, tr_dir, findings, free_dual_port())
        clients += [leecher, aria2, transmission]
        transmission.add_magnet()
        started = time.monotonic()
        log("started lt-leecher (ports %d), aria2 (port %d), transmission (magnet, port %d)"
            % (leecher.port, aria2.port, transmission.port))

        def leechers_done():
            return leecher.done() and aria2.done(digests) and transmission.done()

        deadline = time.monotonic() + args.timeout
        while not leechers_done():
            poll_all(clients)
            for c in clients:
                if c.errors:
                    raise TestFailure("%s failed: %s" % (c.name, "; ".join(c.errors)))
            if time.monotonic() > deadline:
                state = "lt-leecher %.0f%%, aria2 done=%s, transmission %s" % (
                    leecher.progress() * 100, aria2.done(digests),
                    {k: v for k, v in getattr(transmission, "last", {}).items()
                     if k != "trackerStats"})
                failures.append("leechers did not all finish within %.0fs: %s" % (args.timeout, state))
                break
            time.sleep(0.25)
        else:
            log("all leechers complete %.1fs after start (lt-leecher %.1fs, aria2 %s, "
                "transmission metadata %.1fs, data %.1fs)" % (
                    time.monotonic() - started, leecher.finished_at - started,
                    "%.1fs" % (aria2.finished_at - started) if aria2.finished_at else "?",
                    transmission.metadata_at - started, transmission.finished_at - started))

        # Announce rounds after completion: every client must come back at
        # least --rounds times, on each of its trackers.
        swarm = tracker.swarm()
        interval = swarm["interval"]["base_seconds"] if swarm else args.interval_hint
        min_interval = swarm["interval"]["min_seconds"] if swarm else 0
        rounds_from = time.monotonic()
        before_rounds = {p["peer_id"]: int(p["announces"]) for p in (swarm or {}).get("peers_listed", [])}
        log("tracker interval %ss, min interval %ss: watching %d announce rounds"
            % (interval, min_interval, args.rounds))

        # Counted per tracker URL. The requirement is --rounds announces to the
        # HTTP tracker, which every client has; the udp:// counts are reported,
        # and each udp:// tracker must have answered at least once (below):
        # libtorrent 2.0 gives UDP replies a fixed 60 s min interval (BEP 15
        # replies carry none), and once a torrent has sent `completed` it
        # waits for that, so lt-leecher re-announces over UDP only every 60 s.
        def counts():
            out = {}
            for c in (seeder, leecher):
                out[c.name] = {u: len([t for t in c.announce_times(u) if t > rounds_from])
                               for u in [http_url, udp_url] + v6_urls}
            out["aria2"] = {http_url: len([t for t in aria2.announce_times() if t > rounds_from])}
            out["transmission"] = {u: len([t for t in transmission.announce_times(u)
                                           if t > rounds_from]) for u in tr_urls}
            return out

        deadline = rounds_from + interval * (args.rounds + 1) * 2 + 15
        while True:
            poll_all(clients)
            c = counts()
            if all(v[http_url] >= args.rounds for v in c.values()):
                # Sit out one more interval, so that whatever those announces
                # triggered (and the UDP announces) are seen too.
                settle = time.monotonic() + interval
                while time.monotonic() < settle:
                    poll_all(clients)
                    time.sleep(0.25)
                break
            if time.monotonic() > deadline:
                failures.append("not every client announced %d times to the HTTP tracker "
                                "within %.0fs after completing (announces since: %r)"
                                % (args.rounds, deadline - rounds_from, c))
                break
            time.sleep(0.25)
        log("announces per client and tracker since completion: %r" % counts())

        # Tracker side: per-peer announce counts and the swarm's counters.
        active = set()
        swarm = tracker.swarm()
        if swarm is None:
            failures.append("the admin API has no swarm for %s" % info_hash.hex())
        else:
            counters = swarm.get("counters", {})
            log("tracker swarm counters: %r" % counters)
            for k in ("warned", "refused", "banned"):
                if counters.get(k):
                    failures.append("the tracker counted %d %s announce(s) in the swarm"
                                    % (counters[k], k))
            by_port = {}
            active = {p["peer_id"] for p in swarm.get("peers_listed", [])
                      if int(p["announces"]) > before_rounds.get(p["peer_id"], 0)}
            for p in swarm.get("peers_listed", []):
                by_port.setdefault(p["port"], []).append(p)
                log("tracker peer %s:%d %s peer_id=%s announces=%s seeder=%s left=%s flags=%s"
                    % (p["address"], p["port"], p["client"], p["peer_id"], p["announces"],
                       p["seeder"], p["left"], p["flags"]))
            for c in clients:
                recs = by_port.get(c.port, [])
                if not recs:
                    failures.append("the tracker lists no peer with %s's port %d" % (c.name, c.port))
                    continue
                grew = sum(int(r["announces"]) - before_rounds.get(r["peer_id"], 0) for r in recs)
                log("tracker side: %d announces from %s (port %d) during the rounds"
                    % (grew, c.name, c.port))
                if grew < args.rounds:
                    failures.append("the tracker counted only %d announces from %s (port %d) "
                                    "during the rounds, expected at least %d"
                                    % (grew, c.name, c.port, args.rounds))

        # libtorrent used both trackers.
        for c in (seeder, leecher):
            used = {u for (u, _), ts in c.replies.items() if ts}
            for u in [http_url, udp_url] + v6_urls:
                if u not in used:
                    failures.append("%s never got a reply from %s (announces: %r)"
                                    % (c.name, u, {k: len(v) for k, v in c.announces.items()}))
            if c.bad_sources:
                failures.append("%s connected to peers not from the tracker: %s"
                                % (c.name, sorted(c.bad_sources)))
        for u in tr_urls:
            if not transmission.announce_seen.get(u):
                failures.append("transmission never got an answer from %s (trackerStats: %r)"
                                % (u, transmission.tracker_stats))
        for c in (seeder, leecher):
            notes.extend(sorted(c.local_notes))

        # Byte-identical content.
        for c in (leecher, aria2, transmission):
            for rel, want in sorted(digests.items()):
                p = os.path.join(c.save_path, rel)
                if not os.path.isfile(p):
                    failures.append("%s: %s is missing" % (c.name, rel))
                elif sha256_file(p) != want:
                    failures.append("%s: %s differs from the seeded data (sha256 %s)"
                                    % (c.name, rel, sha256_file(p)))

        # Report what each client did, before stopping them.
        names = {0: "none", 1: "completed", 2: "started", 3: "stopped", 4: "paused"}
        for c in (seeder, leecher):
            log("%s announces per (tracker, local endpoint): %r" % (
                c.name, {"%s from %s" % k: len(v) for k, v in sorted(c.announces.items())}))
            log("%s events sent per (tracker, local endpoint): %r" % (
                c.name, {"%s from %s" % k: [names.get(e, e) for _, e in v]
                         for k, v in sorted(c.announces.items())}))
            for line in c.endpoint_summary():
                log("%s endpoint: %s" % (c.name, line))
        events, keys, params = aria2.request_summary()
        log("aria2: %d announce requests in its log; events %r; keys %r; parameters %r; "
            "first: %s" % (len(aria2.announce_lines), events, keys, params,
                           aria2.announce_lines[0][1] if aria2.announce_lines else None))
        for s in transmission.tracker_stats:
            log("transmission tracker tier %d %s: announces seen %d, lastAnnounceResult=%r, "
                "lastScrapeResult=%r, announceState=%d"
                % (s["tier"], s["announce"], len(transmission.announce_seen.get(s["announce"], {})),
                   s["lastAnnounceResult"], s["lastScrapeResult"], s["announceState"]))

        # Stop everybody (event=stopped): every peer that was still announcing
        # in the rounds must leave the swarm. A record that stopped announcing
        # before the rounds (a client that changed its peer_id) can only
        # expire; it is reported, not failed.
        for c in clients:
            c.stop(8)
        deadline = time.monotonic() + 15
        while True:
            swarm = tracker.swarm()
            left_over = (swarm or {}).get("peers_listed", [])
            if not any(p["peer_id"] in active for p in left_over):
                break
            if time.monotonic() > deadline:
                break
            time.sleep(0.3)
        for p in left_over:
            what = ("%s:%d %s peer_id=%s announces=%s left=%s" % (
                p["address"], p["port"], p["client"], p["peer_id"], p["announces"], p["left"]))
            if p["peer_id"] in active:
                failures.append("still in the swarm 15s after its client stopped: " + what)
            else:
                notes.append("stale peer record (no announce during the rounds, so it can "
                             "only expire): " + what)
        log("after stop: scrape complete=%d incomplete=%d downloaded=%d" % tracker.scrape())
        log("aria2 events over the whole run, stop included: %r" % (aria2.request_summary()[0],))
        for c in (seeder, leecher):
            log("%s stop announces: %r" % (c.name, sorted(
                "%s from %s" % k for k, v in c.announces.items() if any(e == 3 for _, e in v))))
    except TestFailure as exc:
        # A phase could not go on (no seeder, a client died): still print
        # every tracker message collected so far, then fail.
        failures.append(str(exc))
        for c in clients:
            try:
                c.poll()
            except Exception:   # noqa: BLE001 -- best effort, for the report
                pass
    finally:
        for c in clients:
            try:
                c.close()
            except Exception as exc:   # noqa: BLE001 -- cleanup must go on
                log("closing %s: %s" % (c.name, exc))

    print("", flush=True)
    print("=== tracker messages and errors seen by the clients (%d) ===" % len(findings.items))
    for client, kind, text in findings.items:
        print("  %-13s %s: %s" % (client, kind, text))
    if not findings.items:
        print("  (none)")
    print("=== notes (not failures) (%d) ===" % len(notes))
    for n in notes:
        print("  " + n)
    print("=== other failures (%d) ===" % len(failures))
    for f in failures:
        print("  " + f)
    if not failures:
        print("  (none)")
    sys.stdout.flush()
    if findings.items:
        failures.insert(0, "%d tracker warning(s)/error(s) seen by clients: %s" % (
            len(findings.items), "; ".join("%s: %s" % (c, t) for c, _, t in findings.items)))
    if failures:
        raise TestFailure("\nFAIL: ".join(failures))
    print("SUMMARY: PASS - lt-seeder, lt-leecher (127.0.0.1 + [::1], http + udp), aria2 (http) "
          "and transmission (magnet, http + udp) saw no tracker warning or error over %d announce "
          "rounds; every leecher's files are byte-identical" % args.rounds, flush=True)
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tracker-port", type=int, required=True, help="HTTP port of the tracker")
    ap.add_argument("--udp-port", type=int, required=True, help="UDP port of the tracker")
    ap.add_argument("--admin-port", type=int, required=True, help="admin API port")
    ap.add_argument("--admin-token", required=True, help="admin API bearer token")
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--rounds", type=int, default=3,
                    help="announce rounds every client must make after completing (>= 3)")
    ap.add_argument("--timeout", type=float, default=60, help="deadline of the download phase")
    ap.add_argument("--interval-hint", type=float, default=5,
                    help="interval assumed if the admin API does not tell it")
    ap.add_argument("--dual-stack", action="store_true",
                    help="the daemon also listens on [::1] (run_with_daemon.py --daemon-bind any): "
                         "libtorrent's and transmission's trackers also include "
                         "http://[::1]:PORT/announce and udp://[::1]:UDP_PORT")
    ap.add_argument("--seed", type=int, help="content seed (default random, printed)")
    ap.add_argument("--keep", action="store_true", help="keep the temporary directory")
    args = ap.parse_args()
    if args.rounds < 3:
        ap.error("--rounds must be at least 3")
    workdir = tempfile.mkdtemp(prefix="swarmkeeper-matrix-")
    try:
        return run(args, workdir)
    except TestFailure as exc:
        print("FAIL: %s" % exc, file=sys.stderr, flush=True)
        return 1
    finally:
        if args.keep:
            log("kept %s" % workdir)
        else:
            shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
