#!/usr/bin/python3
"""Runs a command against a freshly started swarmkeeper daemon.

    run_with_daemon.py --daemon build/bin/swarmkeeper -- CMD ARG... {port} {udp_port} ...
    run_with_daemon.py --daemon ... --daemon-arg=--admin-port={admin_port} \
        --daemon-arg=--admin-token=T -- CMD --admin-port {admin_port} ...

1. Picks a free loopback TCP port and a free UDP port and starts the daemon
   with --http-port=PORT --udp-port=UDP_PORT --bind=127.0.0.1 (plus any
   --daemon-arg), logging to a temporary file. The UDP port is never left at
   its default (6969), so parallel runs do not collide on it.
2. Waits, with a deadline and no fixed sleep, until GET /health answers 200.
   If the daemon exits before that (say another process took the port between
   our probe and its bind), it retries on a new port a few times.
3. Runs CMD with every "{port}" in its arguments replaced by the HTTP port
   and every "{udp_port}" by the UDP port, and a deadline. "{admin_port}" (in
   daemon arguments and in CMD) is a third free loopback TCP port, picked
   with the others, for tests that enable the admin API with --daemon-arg.
4. Checks the daemon is still running, stops it with SIGTERM and checks it
   exits 0 within the stop deadline.

Exit status: 0 when the command and the daemon's start and stop all
succeeded, 1 otherwise (with a "FAIL:" line and the tail of the daemon log).
Uses only the standard library so that any python3 can run it.
"""

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from ports import free_port  # noqa: E402  (tests/support, after the path above)

START_ATTEMPTS = 3


def log(msg):
    print("[run_with_daemon] %s" % msg, flush=True)


def substitute(arg, port, udp_port, admin_port=None):
    arg = arg.replace("{port}", str(port)).replace("{udp_port}", str(udp_port))
    if admin_port is not None:
        arg = arg.replace("{admin_port}", str(admin_port))
    return arg


def health_ok(host, port):
    try:
        with urllib.request.urlopen("http://%s:%d/health" % (host, port), timeout=1) as r:
            return r.status == 200
    except urllib.error.HTTPError:
        return False
    except (urllib.error.URLError, OSError):
        return False


def tail(path, lines=40):
    try:
        with open(path, "rb") as f:
            data = f.read().decode("utf-8", "replace").splitlines()
    except OSError:
        return "(no log)"
    return "\n".join("    | " + l for l in data[-lines:]) or "    | (empty)"


class Daemon:
    def __init__(self, argv, log_path):
        self.argv = argv
        self.log_path = log_path
        self.log_file = open(log_path, "ab")
        # Own process group: a signal sent to us (Ctrl-C) does not reach it
        # directly; we stop it ourselves and check how it exits.
        self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=self.log_file,
                                     stderr=subprocess.STDOUT, start_new_session=True)

    def running(self):
        return self.proc.poll() is None

    def stop(self, timeout):
        """SIGTERM, wait; returns the exit status or None after a SIGKILL."""
        if self.running():
            self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            return None
        finally:
            self.log_file.close()


def start_daemon(args, log_path):
    """Starts the daemon and waits for /health; returns (daemon, port, udp_port, admin_port)."""
    for attempt in range(1, START_ATTEMPTS + 1):
        port = free_port(args.host)
        udp_port = free_port(args.host)
        admin_port = free_port(args.host)
        argv = [args.daemon, "--http-port=%d" % port, "--udp-port=%d" % udp_port]
        if args.daemon_bind != "any":
            argv.append("--bind=%s" % (args.daemon_bind or args.host))
        argv += [substitute(a, port, udp_port, admin_port) for a in args.daemon_arg]
        log("starting %s (attempt %d)" % (" ".join(argv), attempt))
        daemon = Daemon(argv, log_path)
        deadline = time.monotonic() + args.startup_timeout
        while True:
            if not daemon.running():
                rc = daemon.proc.returncode
                daemon.log_file.close()
                log("daemon exited with status %d before serving:\n%s" % (rc, tail(log_path)))
                break  # maybe a port was taken: try other ones
            if health_ok(args.host, port):
                log("daemon pid %d serving on %s:%d after %.2fs"
                    % (daemon.proc.pid, args.host, port,
                       args.startup_timeout - (deadline - time.monotonic())))
                return daemon, port, udp_port, admin_port
            if time.monotonic() > deadline:
                daemon.stop(args.stop_timeout)
                raise RuntimeError("GET /health on port %d never answered 200 within %.0fs"
                                   % (port, args.startup_timeout))
            time.sleep(0.05)
    raise RuntimeError("the daemon did not start in %d attempts" % START_ATTEMPTS)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--daemon", required=True, help="path of the swarmkeeper binary")
    ap.add_argument("--daemon-arg", action="append", default=[],
                    help="extra daemon argument ({port}, {udp_port}, {admin_port} are "
                         "replaced); "
                         "repeatable")
    ap.add_argument("--host", default="127.0.0.1", help="address to bind and probe")
    ap.add_argument("--daemon-bind",
                    help="address the daemon binds (default: --host); 'any': no --bind, so the "
                         "daemon listens on 0.0.0.0 and :: (for tests whose clients also use "
                         "[::1]); ports are still probed free on --host")
    ap.add_argument("--startup-timeout", type=float, default=20)
    ap.add_argument("--test-timeout", type=float, default=240)
    ap.add_argument("--stop-timeout", type=float, default=15)
    ap.add_argument("--keep-log", action="store_true", help="keep the daemon log file")
    ap.add_argument("command", nargs=argparse.REMAINDER,
                    help="-- CMD ARG... ({port}, {udp_port}, {admin_port} are replaced)")
    args = ap.parse_args()
    cmd = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not cmd:
        ap.error("no command given after --")
    if not os.access(args.daemon, os.X_OK):
        print("FAIL: daemon %s is not an executable file" % args.daemon, file=sys.stderr)
        return 1

    # CTest (or a user) stopping us must not leave a daemon behind.
    def on_signal(signum, _frame):
        raise KeyboardInterrupt("signal %d" % signum)
    signal.signal(signal.SIGTERM, on_signal)

    fd, log_path = tempfile.mkstemp(prefix="swarmkeeper-daemon-", suffix=".log")
    os.close(fd)
    daemon = None
    failure = None
    try:
        daemon, port, udp_port, admin_port = start_daemon(args, log_path)
        argv = [substitute(a, port, udp_port, admin_port) for a in cmd]
        log("running %s" % " ".join(argv))
        try:
            rc = subprocess.run(argv, timeout=args.test_timeout).returncode
        except subprocess.TimeoutExpired:
            rc = None
            failure = "the command did not finish within %.0fs" % args.test_timeout
        if rc not in (0, None):
            failure = "the command exited with status %d" % rc
        if not daemon.running():
            failure = (failure + "; " if failure else "") + (
                "the daemon died during the test (status %d)" % daemon.proc.returncode)
        else:
            t0 = time.monotonic()
            status = daemon.stop(args.stop_timeout)
            if status is None:
                failure = (failure + "; " if failure else "") + (
                    "the daemon did not exit within %.0fs of SIGTERM (killed)" % args.stop_timeout)
            elif status != 0:
                failure = (failure + "; " if failure else "") + (
                    "the daemon exited with status %d after SIGTERM" % status)
            else:
                log("daemon exited 0 %.2fs after SIGTERM" % (time.monotonic() - t0))
    except RuntimeError as exc:
        failure = str(exc)
    except KeyboardInterrupt as exc:
        failure = "interrupted (%s)" % exc
    finally:
        if daemon is not None and daemon.running():
            daemon.stop(args.stop_timeout)

    if failure:
        print("FAIL: %s\n  daemon log %s:\n%s" % (failure, log_path, tail(log_path)),
              file=sys.stderr, flush=True)
        return 1
    if args.keep_log:
        log("daemon log kept at %s" % log_path)
    else:
        os.unlink(log_path)
    log("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
