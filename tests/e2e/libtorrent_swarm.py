#!/usr/bin/python3
"""End-to-end swarm test: real libtorrent clients that meet only through the tracker.

Run with Debian's interpreter, which has python3-libtorrent (2.0.x):

    /usr/bin/python3 tests/e2e/libtorrent_swarm.py --tracker-port 6969
    /usr/bin/python3 tests/e2e/libtorrent_swarm.py --tracker-port 8080 \
        --tracker-url udp://127.0.0.1:6969

--tracker-port is always the tracker's HTTP port: the scrapes that check what
the tracker saw go there. --tracker-url is what goes into the torrent (default
http://HOST:TRACKER_PORT/announce); with a udp:// URL (BEP 15) the clients
announce only over UDP while the HTTP scrape reads the same swarm, so a pass
also shows that UDP announces land in the swarm state HTTP serves.

What it does, in order:

1. Writes random content (two files, a few MiB, many pieces, odd sizes so the
   last piece is short) into a temporary directory and makes a v1-only
   PRIVATE torrent whose only announce URL is the tracker URL.
   Private means libtorrent uses no DHT, PEX or LSD for it, so the tracker is
   the only way peers can learn of each other (and we switch those off in the
   sessions as well).
2. Starts one seeding session and waits until the tracker has answered its
   announce and a scrape counts it as a seeder.
3. Starts N downloading sessions (separate lt.session objects, each listening
   on its own loopback port) and waits, with a deadline, until every one has
   the whole torrent.
4. Checks that every downloaded file is byte-identical to the original
   (sha256), that every downloader received peers from the tracker and was
   never connected to a peer from any other source, and that a scrape of the
   tracker counts 1 + N seeders, 0 leechers and N completed downloads.
5. Removes the torrents (libtorrent sends event=stopped) and checks the
   tracker's swarm empties.
6. Checks every session's handle.trackers(): exactly one tracker, the
   tracker URL, verified, no failures, start (and for downloaders completed)
   announces sent; and that every tracker reply came from that URL.

Throughout, any tracker_error_alert or tracker_warning_alert fails the run.
swarmkeeper answers misbehaviour (announcing too often, broken counters,
key changes, banned clients) and unhealthy swarms with `warning message` or
`failure reason`, so a pass also shows that the announces of clean
libtorrent sessions, under the daemon's default self-healing settings, raise
nothing a client would see.

Exit status 0 when everything held; 1 with a "FAIL:" line otherwise; 2 for a
usage or environment problem (e.g. libtorrent not importable).
"""

import argparse
import hashlib
import os
import random
import shutil
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
import tracker_requests  # noqa: E402  (tests/support, after the path above)

try:
    import libtorrent as lt
except ImportError as exc:  # the deploy script installs python3-libtorrent
    sys.stderr.write(
        "FAIL: cannot import libtorrent with %s (%s).\n"
        "      Install Debian's python3-libtorrent (deploy/install-deps.sh does) "
        "and run this script with /usr/bin/python3.\n" % (sys.executable, exc))
    sys.exit(2)

PAYLOAD_DIR = "e2e-payload"
# Odd sizes: the last piece of the torrent is short, and the file boundary
# falls inside a piece.
PAYLOAD_FILES = (("alpha.bin", 3 * 1024 * 1024 + 4321), ("beta.bin", 1024 * 1024 + 777))
PIECE_SIZE = 64 * 1024

# peer_info.source bits that would mean a peer was found without the tracker.
# (peer_info.incoming, 0x20, is allowed: an incoming connection comes from a
# peer that itself learned our address from the tracker.)
NON_TRACKER_SOURCES = lt.peer_info.dht | lt.peer_info.pex | lt.peer_info.lsd | lt.peer_info.resume_data


class TestFailure(Exception):
    pass


def log(msg):
    print("[e2e %7.2fs] %s" % (time.monotonic() - START, msg), flush=True)


START = time.monotonic()


# --------------------------------------------------------------------------
# Content and torrent
# --------------------------------------------------------------------------

def write_payload(root, seed):
    """Writes the payload files under root/PAYLOAD_DIR; returns {relpath: sha256}."""
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


def make_private_torrent(root, announce_url):
    """Returns the bencoded .torrent for root/PAYLOAD_DIR (v1 only, private)."""
    fs = lt.file_storage()
    lt.add_files(fs, os.path.join(root, PAYLOAD_DIR))
    # v1_only: a default libtorrent 2.0 torrent is hybrid v1+v2 and would
    # announce under two info hashes (two swarms on the tracker).
    ct = lt.create_torrent(fs, PIECE_SIZE, flags=lt.create_torrent.v1_only)
    ct.add_tracker(announce_url)
    ct.set_priv(True)
    ct.set_creator("swarmkeeper e2e")
    lt.set_piece_hashes(ct, root)
    return lt.bencode(ct.generate())


def sha256_file(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


# --------------------------------------------------------------------------
# Tracker scrape
# --------------------------------------------------------------------------

def scrape(host, port, info_hash):
    """Scrapes one info hash; returns (complete, incomplete, downloaded)."""
    url = "http://%s:%d/scrape?%s" % (host, port, tracker_requests.scrape_query([info_hash]))
    try:
        with urllib.request.urlopen(url, timeout=5) as resp:
            status, body = resp.status, resp.read()
    except (urllib.error.URLError, OSError) as exc:
        raise TestFailure("scrape %s failed: %s" % (url, exc))
    if status != 200:
        raise TestFailure("scrape returned HTTP %d" % status)
    reply = lt.bdecode(body)
    if not isinstance(reply, dict):
        raise TestFailure("scrape reply is not a bencoded dictionary: %r" % body[:200])
    if b"failure reason" in reply:
        raise TestFailure("scrape failed: %r" % reply[b"failure reason"])
    files = reply.get(b"files")
    if not isinstance(files, dict):
        raise TestFailure("scrape reply has no 'files' dictionary: %r" % body[:200])
    entry = files.get(info_hash)
    if entry is None:
        # A tracker may leave out a torrent it has no peers for.
        return (0, 0, 0)
    try:
        return (int(entry[b"complete"]), int(entry[b"incomplete"]), int(entry[b"downloaded"]))
    except (KeyError, TypeError, ValueError):
        raise TestFailure("scrape entry lacks complete/incomplete/downloaded: %r" % entry)


def wait_for_scrape(host, port, info_hash, want, what, timeout):
    """Polls the scrape until want(counts) holds; returns the counts."""
    deadline = time.monotonic() + timeout
    counts = None
    while True:
        counts = scrape(host, port, info_hash)
        if want(counts):
            return counts
        if time.monotonic() > deadline:
            raise TestFailure("tracker scrape never showed %s within %.0fs; last seen "
                              "complete=%d incomplete=%d downloaded=%d"
                              % ((what, timeout) + counts))
        time.sleep(0.2)


# --------------------------------------------------------------------------
# libtorrent peers
# --------------------------------------------------------------------------

def session_settings(user_agent, upload_rate_limit):
    return {
        # Each session on its own loopback port, chosen by the kernel.
        "listen_interfaces": "127.0.0.1:0",
        "listen_system_port_fallback": False,
        # Nothing but the tracker may introduce peers.
        "enable_dht": False,
        "enable_lsd": False,
        "enable_upnp": False,
        "enable_natpmp": False,
        # TCP only: keeps peer sources and connections simple to reason about.
        "enable_incoming_utp": False,
        "enable_outgoing_utp": False,
        # Every peer here is 127.0.0.1; without this libtorrent keeps one
        # connection per IP and downloaders could not all reach each other.
        "allow_multiple_connections_per_ip": True,
        # Nothing else is needed for a loopback tracker: libtorrent announces
        # to it from the 127.0.0.1 listen socket, and its ssrf_mitigation only
        # restricts localhost trackers to the path /announce, which we use.

        # Reconnect quickly if a first attempt races the peer's listen socket.
        "min_reconnect_time": 1,
        "peer_connect_timeout": 5,
        "tracker_receive_timeout": 10,
        # UDP trackers (BEP 15): libtorrent caches the connection id of a
        # tracker process-wide and reuses it for 60 s from every session, i.e.
        # from other source ports. The default is kept on purpose: swarmkeeper
        # binds ids to the address only, and this test proves it accepts that.
        "stop_tracker_timeout": 5,
        "user_agent": user_agent,
        # The seeder is throttled (limits apply on loopback too) so that the
        # download takes a few seconds and downloaders must trade pieces with
        # each other, which they can only do if the tracker told them about
        # each other.
        "upload_rate_limit": upload_rate_limit,
        "ignore_limits_on_local_network": False,
        "alert_mask": lt.alert_category.error | lt.alert_category.status
                      | lt.alert_category.tracker | lt.alert_category.connect,
    }


class Peer:
    """One lt.session with one torrent, and what its alerts told us."""

    def __init__(self, name, torrent_bytes, save_path, upload_rate_limit=0):
        self.name = name
        self.save_path = save_path
        self.session = lt.session(session_settings(name, upload_rate_limit))
        params = lt.add_torrent_params()
        params.ti = lt.torrent_info(lt.bdecode(torrent_bytes))
        params.save_path = save_path
        # Not auto-managed: start now, whatever the session's queueing limits.
        params.flags = (params.flags & ~lt.torrent_flags.auto_managed & ~lt.torrent_flags.paused)
        params.flags |= lt.torrent_flags.disable_dht | lt.torrent_flags.disable_lsd | lt.torrent_flags.disable_pex
        self.handle = self.session.add_torrent(params)
        self.tracker_replies = []     # num_peers of every tracker reply
        self.tracker_reply_urls = set()  # tracker URL of every tracker reply
        self.tracker_errors = []      # messages of tracker errors and warnings
        self.errors = []              # torrent / file errors
        self.tracker_peers = set()    # (ip, port) of connected peers the tracker gave us
        self.bad_sources = []         # peers that came from somewhere else
        self.received_from = {}       # remote session name -> payload bytes received
        self.finished_at = None
        self.listen_port = None

    def poll(self):
        for a in self.session.pop_alerts():
            if isinstance(a, lt.tracker_reply_alert):
                self.tracker_replies.append(a.num_peers)
                self.tracker_reply_urls.add(a.tracker_url())
            elif isinstance(a, lt.tracker_error_alert):
                # error_message() is often empty in 2.0; a.error names the cause.
                self.tracker_errors.append("error from %s: %s [%s:%d] %r (%d in a row)" % (
                    a.tracker_url(), a.error.message(), a.error.category().name(),
                    a.error.value(), a.failure_reason(), a.times_in_row))
            elif isinstance(a, lt.tracker_warning_alert):
                self.tracker_errors.append("warning: %s" % a.message())
            elif isinstance(a, lt.listen_succeeded_alert):
                self.listen_port = a.port
            elif isinstance(a, (lt.listen_failed_alert, lt.torrent_error_alert,
                                lt.file_error_alert, lt.hash_failed_alert)):
                self.errors.append(a.message())
            elif isinstance(a, lt.torrent_finished_alert) and self.finished_at is None:
                self.finished_at = time.monotonic()
        for p in self.handle.get_peer_info():
            if p.source & NON_TRACKER_SOURCES:
                self.bad_sources.append("%s:%d source=0x%x" % (p.ip[0], p.ip[1], p.source))
            if p.source & lt.peer_info.tracker:
                self.tracker_peers.add(tuple(p.ip))
            # The remote's user agent (extension handshake) names the session.
            who = p.client.decode("utf-8", "replace") if isinstance(p.client, bytes) else p.client
            if not who or who.startswith("libtorrent"):
                # Before the extension handshake: only the peer id's fingerprint.
                continue
            self.received_from[who] = max(self.received_from.get(who, 0), p.total_download)

    def status(self):
        return self.handle.status()

    def is_seed(self):
        s = self.status()
        return s.is_seeding and s.state == lt.torrent_status.seeding


def poll_until(peers, cond, timeout, what):
    deadline = time.monotonic() + timeout
    while True:
        for p in peers:
            p.poll()
            if p.errors:
                raise TestFailure("%s reported errors: %s" % (p.name, "; ".join(p.errors)))
            if p.tracker_errors:
                raise TestFailure("%s got a tracker error or warning: %s"
                                  % (p.name, "; ".join(p.tracker_errors)))
        if cond():
            return
        if time.monotonic() > deadline:
            lines = []
            for p in peers:
                s = p.status()
                lines.append("  %s: state=%s progress=%.1f%% peers=%d tracker_replies=%s "
                             "tracker_errors=%s current_tracker=%r"
                             % (p.name, s.state, s.progress * 100, s.num_peers,
                                p.tracker_replies, p.tracker_errors, s.current_tracker))
            raise TestFailure("timed out after %.0fs waiting for %s\n%s" % (timeout, what, "\n".join(lines)))
        time.sleep(0.1)


def check_tracker_state(peer, url, downloader):
    """Checks handle.trackers() shows exactly url, working, with the announces sent."""
    trackers = peer.handle.trackers()
    urls = [t["url"] for t in trackers]
    if urls != [url]:
        raise TestFailure("%s: the torrent's trackers are %r, expected only %r" % (peer.name, urls, url))
    t = trackers[0]
    if peer.tracker_reply_urls != {url}:
        raise TestFailure("%s: tracker replies came from %r, expected only %r"
                          % (peer.name, sorted(peer.tracker_reply_urls), url))
    if not t["verified"] or t["fails"] != 0:
        raise TestFailure("%s: tracker %s not verified or failing: %r" % (peer.name, url, t))
    # libtorrent 2.0 keeps the announce state per local endpoint and per info
    # hash (v1, v2); this torrent is v1 only.
    eps = t["endpoints"]
    if not eps:
        raise TestFailure("%s: tracker %s has no endpoints: %r" % (peer.name, url, t))
    states = [ep["info_hashes"][0] for ep in eps]
    if not any(s["start_sent"] for s in states):
        raise TestFailure("%s: no endpoint sent event=started to %s: %r" % (peer.name, url, eps))
    if downloader and not any(s["complete_sent"] for s in states):
        raise TestFailure("%s: no endpoint sent event=completed to %s: %r" % (peer.name, url, eps))
    for s in states:
        if s["fails"] or s["last_error"]["value"]:
            raise TestFailure("%s: tracker endpoint state shows an error: %r" % (peer.name, s))


# --------------------------------------------------------------------------
# The test
# --------------------------------------------------------------------------

def run(args, workdir):
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(1 << 32)
    content_root = os.path.join(workdir, "seed")
    digests = write_payload(content_root, seed)
    announce = args.tracker_url or "http://%s:%d/announce" % (args.host, args.tracker_port)
    torrent = make_private_torrent(content_root, announce)
    ti = lt.torrent_info(lt.bdecode(torrent))
    info_hash = ti.info_hashes().v1.to_bytes()
    if args.print_info_hash:
        print(info_hash.hex())
        return 0
    log("content seed %d (rerun with --seed %d to reproduce)" % (seed, seed))
    total = sum(size for _, size in PAYLOAD_FILES)
    log("torrent %s: %d bytes in %d files, %d pieces of %d KiB, private=%s, announce %s"
        % (info_hash.hex(), total, ti.num_files(), ti.num_pieces(), PIECE_SIZE // 1024,
           ti.priv(), announce))
    if not ti.priv():
        raise TestFailure("torrent is not private")

    before = scrape(args.host, args.tracker_port, info_hash)
    if before[:2] != (0, 0):
        raise TestFailure("the tracker already has peers for this info hash: complete=%d "
                          "incomplete=%d" % before[:2])

    # Seeder first, so that every downloader's first announce already gets it.
    seeder = Peer("seeder", torrent, content_root, upload_rate_limit=args.seeder_rate_kib * 1024)
    peers = [seeder]
    poll_until(peers, lambda: seeder.is_seed() and seeder.tracker_replies, args.timeout,
               "the seeder to verify its files and get a tracker reply")
    wait_for_scrape(args.host, args.tracker_port, info_hash,
                    lambda c: c[0] == 1 and c[1] == 0, "1 seeder, 0 leechers", 15)
    log("seeder on 127.0.0.1:%s is seeding and announced (tracker reply with %d peers)"
        % (seeder.listen_port, seeder.tracker_replies[0]))

    downloaders = []
    started = time.monotonic()
    for i in range(args.downloaders):
        path = os.path.join(workdir, "downloader%d" % (i + 1))
        os.makedirs(path)
        downloaders.append(Peer("downloader%d" % (i + 1), torrent, path))
    peers += downloaders
    log("started %d downloaders" % len(downloaders))

    poll_until(peers, lambda: all(d.is_seed() for d in downloaders), args.timeout,
               "every downloader to complete")
    elapsed = time.monotonic() - started
    log("all %d downloaders complete after %.1fs" % (len(downloaders), elapsed))

    # Tracker mediation: each downloader got peers in a tracker reply, was
    # connected to at least one peer the tracker gave it, and to none that
    # came from anywhere else.
    for d in downloaders:
        if d.bad_sources:
            raise TestFailure("%s was connected to peers not from the tracker: %s"
                              % (d.name, ", ".join(d.bad_sources)))
        if not any(n > 0 for n in d.tracker_replies):
            raise TestFailure("%s never got a tracker reply with peers (replies: %r, errors: %r)"
                              % (d.name, d.tracker_replies, d.tracker_errors))
        if not d.tracker_peers:
            raise TestFailure("%s never connected to a peer from the tracker" % d.name)

    # Downloaders traded pieces among themselves: they knew of each other,
    # and only the tracker could have told them.
    names = {d.name for d in downloaders}
    traded = sum(v for d in downloaders for k, v in d.received_from.items() if k in names)
    if traded == 0:
        raise TestFailure("no downloader received any payload from another downloader: "
                          "%s" % {d.name: d.received_from for d in downloaders})

    # Byte-identical content.
    for d in downloaders:
        for rel, want in sorted(digests.items()):
            path = os.path.join(d.save_path, rel)
            if not os.path.isfile(path):
                raise TestFailure("%s: %s is missing" % (d.name, path))
            got = sha256_file(path)
            if got != want:
                raise TestFailure("%s: %s has sha256 %s, expected %s" % (d.name, rel, got, want))
    log("every downloaded file matches the original (sha256)")

    # The tracker saw everybody: after the 'completed' announces it counts
    # 1 + N seeders, no leechers and N completed downloads.
    n = len(downloaders)
    counts = wait_for_scrape(args.host, args.tracker_port, info_hash,
                             lambda c: c[0] == 1 + n and c[1] == 0 and c[2] >= before[2] + n,
                             "complete=%d incomplete=0 downloaded>=%d" % (1 + n, before[2] + n), 15)
    log("tracker scrape: complete=%d incomplete=%d downloaded=%d" % counts)
    if counts[2] != before[2] + n:
        raise TestFailure("tracker counts %d new completed downloads, expected %d"
                          % (counts[2] - before[2], n))

    # The announces really went to the tracker URL (udp:// when asked): it is
    # each torrent's only tracker, libtorrent marks it working, and every
    # reply came from it.
    for p in peers:
        p.poll()
        check_tracker_state(p, announce, downloader=p is not seeder)
    log("every session's only tracker is %s: verified, no failures, started (and, for "
        "downloaders, completed) announces sent" % announce)

    # event=stopped removes every peer.
    for p in peers:
        p.session.remove_torrent(p.handle)
    after = wait_for_scrape(args.host, args.tracker_port, info_hash,
                            lambda c: c[0] == 0 and c[1] == 0,
                            "an empty swarm after every client stopped", 15)
    log("after stop: complete=%d incomplete=%d downloaded=%d" % after)

    print("SUMMARY: PASS — %d downloaders fetched %d bytes (%d pieces) from 1 seeder through the "
          "tracker at %s in %.1fs; all files byte-identical; scrape saw complete=%d "
          "incomplete=%d downloaded=%d, then an empty swarm after event=stopped"
          % ((n, total, ti.num_pieces(), announce, elapsed) + counts), flush=True)
    for d in downloaders:
        print("  %s: finished %.1fs after start; tracker replies (num_peers) %s; connected to "
              "tracker peers %s; payload bytes received %s"
              % (d.name, d.finished_at - started if d.finished_at else elapsed,
                 d.tracker_replies, sorted("%s:%d" % ip for ip in d.tracker_peers),
                 dict(sorted(d.received_from.items()))), flush=True)
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tracker-port", type=int, required=True, help="HTTP port of the tracker")
    ap.add_argument("--host", default="127.0.0.1", help="tracker address (default 127.0.0.1)")
    ap.add_argument("--tracker-url",
                    help="announce URL put in the torrent, e.g. udp://127.0.0.1:6969 "
                         "(default http://HOST:TRACKER_PORT/announce); scrapes still use "
                         "HTTP on --tracker-port")
    ap.add_argument("--downloaders", type=int, default=3, help="number of downloading sessions (>= 2)")
    ap.add_argument("--timeout", type=float, default=120, help="deadline in seconds for each phase")
    ap.add_argument("--seeder-rate-kib", type=int, default=2048,
                    help="seeder upload limit in KiB/s (default 2048)")
    ap.add_argument("--seed", type=int, help="content seed (default: random, printed)")
    ap.add_argument("--keep", action="store_true", help="keep the temporary directory")
    ap.add_argument("--print-info-hash", action="store_true",
                    help="only print the hex info hash for --seed (e.g. to whitelist it) and exit")
    args = ap.parse_args()
    if args.downloaders < 2:
        ap.error("--downloaders must be at least 2")
    if args.print_info_hash and args.seed is None:
        ap.error("--print-info-hash needs --seed")
    if args.tracker_url is not None and urllib.parse.urlsplit(args.tracker_url).scheme not in (
            "http", "udp"):
        ap.error("--tracker-url must be an http:// or udp:// URL")

    workdir = tempfile.mkdtemp(prefix="swarmkeeper-e2e-")
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
