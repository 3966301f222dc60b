"""Free loopback ports for daemons started by tests and benchmarks.

A port handed out by binding to port 0 lies in the kernel's ephemeral range,
so any outgoing connection made between the pick and the daemon's bind (the
daemon a test started a moment earlier dialling its seeds, a client
connecting) may take it, and the daemon then cannot listen. The ports handed
out here lie below the ephemeral range, where the kernel never assigns a
source port by itself; each one is free for TCP and UDP at the time of the
pick, and one process is never handed the same port twice.

Under `ctest -j` several test processes pick at once, and a port one of them
picked stays free until its daemon binds it. So each pick is also claimed:
a file named after the port in $TMPDIR/swarmkeeper-test-ports-UID, created
exclusively (the C++ harness, tests/support/harness.cpp, uses the same
directory). A claim younger than CLAIM_SECONDS keeps every other process
off the port; the process removes its claims when it exits, and an older
claim (its process killed) is taken over.
"""

import atexit
import os
import random
import socket
import tempfile
import time

CLAIM_SECONDS = 900

_handed_out = set()
_claimed = []


def _claim_dir():
    path = os.path.join(tempfile.gettempdir(), "swarmkeeper-test-ports-%d" % os.getuid())
    os.makedirs(path, mode=0o700, exist_ok=True)
    return path


def _claim(directory, port):
    """True when this process now holds the claim on port."""
    path = os.path.join(directory, str(port))
    for _ in range(2):
        try:
            fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
        except FileExistsError:
            try:
                age = time.time() - os.stat(path).st_mtime
            except FileNotFoundError:
                continue  # released meanwhile
            if age < CLAIM_SECONDS:
                return False
            try:
                os.unlink(path)
            except FileNotFoundError:
                pass
            continue
        with os.fdopen(fd, "w") as f:
            f.write("%d\n" % os.getpid())
        _claimed.append(path)
        return True
    return False


@atexit.register
def _release():
    for path in _claimed:
        try:
            os.unlink(path)
        except OSError:
            pass


def _ephemeral_low():
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            return int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


def _bindable(host, port):
    fam = socket.AF_INET6 if ":" in host else socket.AF_INET
    for kind in (socket.SOCK_STREAM, socket.SOCK_DGRAM):
        with socket.socket(fam, kind) as s:
            try:
                s.bind((host, port))
            except OSError:
                return False
    return True


def free_port(host="127.0.0.1"):
    """A port on host, free for both TCP and UDP, outside the ephemeral range."""
    high = _ephemeral_low()
    low = 10000 if high > 12000 else 1024
    rng = random.Random(os.getpid() ^ int.from_bytes(os.urandom(4), "little"))
    directory = _claim_dir()
    for _ in range(2000):
        port = rng.randrange(low, high)
        if port in _handed_out or not _claim(directory, port):
            continue
        _handed_out.add(port)
        if _bindable(host, port):
            return port
    raise RuntimeError("no free port on %s below %d" % (host, high))


if __name__ == "__main__":
    import sys

    # ports.py [HOST [COUNT]]: COUNT distinct ports, one a line.
    host = sys.argv[1] if len(sys.argv) > 1 else "127.0.0.1"
    count = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    for _ in range(count):
        print(free_port(host))
    # The caller binds them after this process is gone: the claims stay
    # until they age out.
    _claimed.clear()
