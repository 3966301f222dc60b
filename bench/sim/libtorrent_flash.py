#!/usr/bin/python3
"""Real-client confirmation of the simulator's flash-crowd scenario (not run
in CI): one rate-limited seeding libtorrent session and N rate-limited
downloading sessions on loopback, all arriving within a few seconds, against
the real swarmkeeper daemon, once with a plain random tracker and once with
swarmkeeper as shipped (self-healing). Reports the simulator's metrics.

    /usr/bin/python3 bench/sim/libtorrent_flash.py --daemon build/bin/swarmkeeper \
        [--leechers 24] [--rounds 1] [--json out.json]

Each round runs both modes on the same payload (random first, then
self-healing, alternating the order every round so a warm page cache or a
busier machine does not favour one mode). Per mode it starts a fresh daemon
on free loopback ports:

  random        --allocation.policy=random --tracker.starving-interval-scale=1
                and (in a config file) remediation.enable=false,
                health.warn-seeders=false
  self-healing  the defaults (adaptive policy, interval control, remediation)

and, for both, a time scale that fits a few-minute run: interval 60 s,
min interval 30 s, health tick 5 s. The torrent is private, the sessions have
DHT, LSD, PEX, UPnP and uTP off, so the tracker is the only way peers meet.

Metrics (as in bench/sim): median, p95 and max completion time, fraction
completed within the deadline, time to the first full copy among leechers,
seed upload (in file copies) until every piece existed at some leecher,
mean minimum piece copies among leechers, mean stalled leechers (nothing
received for 30 s). Polled every 0.5 s, so times are accurate to about that.

Exit status 0 when both modes ran (whatever the numbers), 1 on a failure,
2 on a usage or environment problem.
"""

import argparse
import json
import os
import random
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "support"))
from ports import free_port  # noqa: E402  (tests/support, after the path above)

try:
    import libtorrent as lt
except ImportError as exc:
    sys.stderr.write("cannot import libtorrent with %s (%s); use /usr/bin/python3 with "
                     "Debian's python3-libtorrent\n" % (sys.executable, exc))
    sys.exit(2)

KIB = 1024

MODES = {
    "random": ["--allocation.policy=random", "--tracker.starving-interval-scale=1"],
    "self-healing": [],
}
# Switches cannot be turned off on the command line (CAF 0.17): the random
# tracker gets them from a config file.
RANDOM_INI = "[remediation]\nenable=false\n[health]\nwarn-seeders=false\n"
COMMON = ["--tracker.interval=60s", "--tracker.min-interval=30s", "--health.tick=5s"]


def log(msg):
    print("[flash %7.1fs] %s" % (time.monotonic() - START, msg), flush=True)


START = time.monotonic()


def start_daemon(binary, mode, log_path):
    port, udp = free_port(), free_port()
    argv = [binary]
    if mode == "random":
        ini = log_path + ".ini"
        with open(ini, "w") as f:
            f.write(RANDOM_INI)
        argv.append("--config-file=%s" % ini)
    argv += ["--http-port=%d" % port, "--udp-port=%d" % udp, "--bind=127.0.0.1"]
    argv += COMMON + MODES[mode]
    logf = open(log_path, "wb")
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=logf, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError("daemon exited with %d: %s" % (proc.returncode, " ".join(argv)))
        try:
            with urllib.request.urlopen("http://127.0.0.1:%d/health" % port, timeout=1) as r:
                if r.status == 200:
                    return proc, port
        except OSError:
            pass
        time.sleep(0.1)
    proc.kill()
    raise RuntimeError("daemon did not answer /health within 30 s")


def stop_daemon(proc):
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def make_torrent(root, size, piece, announce):
    os.makedirs(os.path.join(root, "payload"))
    rng = random.Random(8)
    with open(os.path.join(root, "payload", "data.bin"), "wb") as f:
        f.write(rng.randbytes(size))
    fs = lt.file_storage()
    lt.add_files(fs, os.path.join(root, "payload"))
    ct = lt.create_torrent(fs, piece, flags=lt.create_torrent.v1_only)
    ct.add_tracker(announce)
    ct.set_priv(True)
    lt.set_piece_hashes(ct, root)
    return lt.bencode(ct.generate())


def settings(name, up, down):
    return {
        "listen_interfaces": "127.0.0.1:0",
        "enable_dht": False, "enable_lsd": False, "enable_upnp": False,
        "enable_natpmp": False, "enable_incoming_utp": False, "enable_outgoing_utp": False,
        "allow_multiple_connections_per_ip": True,
        "upload_rate_limit": up, "download_rate_limit": down,
        "ignore_limits_on_local_network": False,
        "min_reconnect_time": 1, "peer_connect_timeout": 5,
        "user_agent": name,
        "alert_mask": lt.alert_category.error | lt.alert_category.status,
    }


def session(name, torrent, save, up, down):
    ses = lt.session(settings(name, up, down))
    p = lt.add_torrent_params()
    p.ti = lt.torrent_info(lt.bdecode(torrent))
    p.save_path = save
    p.flags = (p.flags & ~lt.torrent_flags.auto_managed & ~lt.torrent_flags.paused)
    p.flags |= (lt.torrent_flags.disable_dht | lt.torrent_flags.disable_lsd
                | lt.torrent_flags.disable_pex)
    return ses, ses.add_torrent(p)


def run_mode(args, mode, size):
    work = tempfile.mkdtemp(prefix="sk-flash-%s-" % mode)
    proc, port = start_daemon(args.daemon, mode, os.path.join(work, "daemon.log"))
    try:
        torrent = make_torrent(os.path.join(work, "src"), size, args.piece_kib * KIB,
                               "http://127.0.0.1:%d/announce" % port)
        # The seed seeds from the source directory.
        seed_ses, seed = session("seed", torrent, os.path.join(work, "src"),
                                 args.seed_kib * KIB, 0)
        deadline = time.monotonic() + 30
        while not seed.status().is_seeding:
            if time.monotonic() > deadline:
                raise RuntimeError("the seed never checked its data")
            time.sleep(0.1)
        time.sleep(1.0)  # its started announce
        n_pieces = seed.status().pieces.__len__()
        leechers = []
        t0 = time.monotonic()
        for i in range(args.leechers):
            save = os.path.join(work, "l%02d" % i)
            os.makedirs(save)
            leechers.append(session("l%02d" % i, torrent, save, args.leecher_up_kib * KIB,
                                    args.leecher_down_kib * KIB))
            time.sleep(args.window / max(1, args.leechers))
        done = [None] * len(leechers)
        last_bytes = [0] * len(leechers)
        last_change = [time.monotonic()] * len(leechers)
        first_copy = None
        spread_upload = None
        min_copies, stalled = [], []
        deadline = t0 + args.timeout
        while time.monotonic() < deadline and any(d is None for d in done):
            now = time.monotonic()
            copies = [0] * n_pieces
            st_n = 0
            for i, (_, h) in enumerate(leechers):
                s = h.status()
                if s.total_wanted_done != last_bytes[i]:
                    last_bytes[i] = s.total_wanted_done
                    last_change[i] = now
                if done[i] is None and s.is_seeding:
                    done[i] = now - t0
                    if first_copy is None:
                        first_copy = now - t0
                for q, has in enumerate(s.pieces):
                    copies[q] += 1 if has else 0
                if done[i] is None and now - last_change[i] >= 30:
                    st_n += 1
            if spread_upload is None and min(copies) > 0:
                spread_upload = seed.status().total_payload_upload / size
            min_copies.append(min(copies))
            stalled.append(st_n)
            time.sleep(0.5)
        end = time.monotonic() - t0
        times = [d if d is not None else end for d in done]
        result = {
            "mode": mode,
            "leechers": len(leechers),
            "fraction_completed": sum(d is not None for d in done) / len(done),
            "median_s": statistics.median(times),
            "p95_s": sorted(times)[max(0, int(round(0.95 * (len(times) - 1))))],
            "max_s": max(times),
            "first_copy_s": first_copy,
            "seed_upload_copies": spread_upload
            if spread_upload is not None else seed.status().total_payload_upload / size,
            "min_copies_mean": statistics.mean(min_copies) if min_copies else 0,
            "stalled_mean": statistics.mean(stalled) if stalled else 0,
        }
        for ses, h in leechers + [(seed_ses, seed)]:
            ses.remove_torrent(h)
        return result
    finally:
        stop_daemon(proc)
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--daemon", required=True, help="path to build/bin/swarmkeeper")
    ap.add_argument("--leechers", type=int, default=24)
    ap.add_argument("--size-mib", type=int, default=16)
    ap.add_argument("--piece-kib", type=int, default=64)
    ap.add_argument("--seed-kib", type=int, default=200, help="seed upload limit, KiB/s")
    ap.add_argument("--leecher-up-kib", type=int, default=100)
    ap.add_argument("--leecher-down-kib", type=int, default=1024)
    ap.add_argument("--window", type=float, default=5.0, help="arrival window, seconds")
    ap.add_argument("--timeout", type=float, default=900.0)
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--json", help="write every result here")
    ap.add_argument("--keep", action="store_true", help="keep the work directories")
    args = ap.parse_args()
    if args.leechers < 1 or args.rounds < 1 or not os.access(args.daemon, os.X_OK):
        ap.error("need --leechers >= 1, --rounds >= 1 and an executable --daemon")
    size = args.size_mib * 1024 * 1024
    results = []
    for r in range(args.rounds):
        order = ["random", "self-healing"] if r % 2 == 0 else ["self-healing", "random"]
        for mode in order:
            log("round %d: %s" % (r, mode))
            res = run_mode(args, mode, size)
            res["round"] = r
            log(json.dumps(res))
            results.append(res)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    keys = ["median_s", "p95_s", "max_s", "fraction_completed", "first_copy_s",
            "seed_upload_copies", "min_copies_mean", "stalled_mean"]
    print("| mode | " + " | ".join(keys) + " |")
    print("|---|" + "---|" * len(keys))
    for mode in MODES:
        rs = [x for x in results if x["mode"] == mode]
        cells = []
        for k in keys:
            vals = [x[k] for x in rs if x[k] is not None]
            cells.append("%.2f" % statistics.mean(vals) if vals else "–")
        print("| %s | %s |" % (mode, " | ".join(cells)))
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except RuntimeError as exc:
        print("FAIL: %s" % exc, flush=True)
        sys.exit(1)
