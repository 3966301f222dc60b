#!/usr/bin/python3
"""A tracker restart loses no peer a real client needs.

A libtorrent seeder announces to swarmkeeper (started with --state-dir);
the tracker is stopped with SIGTERM and started again on the same ports
while the seeder keeps running and does not announce again (its interval
is minutes away). A libtorrent leecher that starts only then must get the
seeder in its very first tracker reply and download the whole torrent
from it; the scrape after the restart still counts the seeder.

    /usr/bin/python3 tests/e2e/libtorrent_restart.py path/to/swarmkeeper

Exit status 0 when everything held, 1 with a "FAIL:" line otherwise, 2 when
libtorrent cannot be imported.
"""
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import libtorrent_swarm as lts  # noqa: E402  (exits 2 without libtorrent)
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from ports import free_port  # noqa: E402  (tests/support, after the path above)

lt = lts.lt


class Tracker:
    def __init__(self, binary, workdir):
        self.binary = binary
        self.state = os.path.join(workdir, "state")
        self.port = free_port()
        self.log_path = os.path.join(workdir, "tracker.log")
        self.proc = None

    def start(self):
        log = open(self.log_path, "a")
        self.proc = subprocess.Popen(
            [self.binary, "--http.bind=127.0.0.1", "--http.port=%d" % self.port,
             "--udp.port=%d" % self.port, "--state-dir=" + self.state],
            stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise lts.TestFailure("tracker exited %d:\n%s" % (self.proc.returncode, self.tail()))
            try:
                with urllib.request.urlopen("http://127.0.0.1:%d/health" % self.port, timeout=2) as r:
                    if r.status == 200:
                        return
            except OSError:
                pass
            time.sleep(0.1)
        raise lts.TestFailure("tracker not healthy within 30 s:\n" + self.tail())

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        if self.proc.wait(30) != 0:
            raise lts.TestFailure("tracker exited %d on SIGTERM:\n%s" % (self.proc.returncode, self.tail()))

    def tail(self, n=30):
        try:
            with open(self.log_path) as f:
                return "".join(f.readlines()[-n:])
        except OSError:
            return ""


def run(binary, workdir):
    tracker = Tracker(binary, workdir)
    tracker.start()
    url = "http://127.0.0.1:%d/announce" % tracker.port
    digests = lts.write_payload(workdir, seed=21)
    torrent = lts.make_private_torrent(workdir, url)
    info_hash = lt.torrent_info(lt.bdecode(torrent)).info_hash().to_bytes()

    # Throttled, so the download lasts long enough to watch its connection.
    seeder = lts.Peer("seeder", torrent, workdir, upload_rate_limit=1_000_000)
    lts.poll_until([seeder], lambda: seeder.is_seed() and seeder.tracker_replies, 60,
                   "the seeder checked its files and got a tracker reply")
    lts.wait_for_scrape("127.0.0.1", tracker.port, info_hash, lambda c: c[0] == 1,
                        "the seeder", 30)
    lts.log("seeder announced; restarting the tracker (the seeder keeps running)")
    replies_before = len(seeder.tracker_replies)
    tracker.stop()
    tracker.start()
    if "state: loaded 1 swarms, 1 peers" not in open(tracker.log_path).read():
        raise lts.TestFailure("the tracker did not load the seeder back:\n" + tracker.tail())
    counts = lts.scrape("127.0.0.1", tracker.port, info_hash)
    if counts[0] != 1:
        raise lts.TestFailure("after the restart the scrape shows %r, not the seeder" % (counts,))

    leech_dir = os.path.join(workdir, "leecher")
    os.makedirs(leech_dir)
    leecher = lts.Peer("leecher", torrent, leech_dir)
    lts.poll_until([seeder, leecher], lambda: leecher.tracker_replies, 60,
                   "the leecher's first tracker reply")
    if len(seeder.tracker_replies) != replies_before:
        raise lts.TestFailure("the seeder announced again before the leecher's first reply, so "
                              "this run cannot tell what the restart kept")
    if leecher.tracker_replies[0] < 1:
        raise lts.TestFailure("the leecher's first tracker reply had %d peers: the restart lost "
                              "the seeder" % leecher.tracker_replies[0])
    lts.poll_until([seeder, leecher], lambda: leecher.is_seed(), 120, "the leecher finished")
    for rel, digest in digests.items():
        got = lts.sha256_file(os.path.join(leech_dir, rel))
        if got != digest:
            raise lts.TestFailure("%s differs after the download" % rel)
    if not leecher.tracker_peers or leecher.bad_sources:
        raise lts.TestFailure("the leecher's peers did not all come from the tracker: %r %r"
                              % (leecher.tracker_peers, leecher.bad_sources))
    lts.log("first reply after the restart: %d peer(s); download complete and identical"
            % leecher.tracker_replies[0])
    tracker.stop()


def main():
    binary = os.path.abspath(sys.argv[1])
    workdir = tempfile.mkdtemp(prefix="sk-e2e-restart-")
    try:
        run(binary, workdir)
        print("PASS")
        return 0
    except lts.TestFailure as exc:
        print("FAIL: %s" % exc)
        return 1
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
