#!/usr/bin/env python3
"""The daemon's readiness under systemd's Type=notify, without systemd.

A datagram socket stands in for $NOTIFY_SOCKET. The daemon must send
READY=1 only once its listeners are bound (an HTTP announce and a UDP
connect succeed the moment it arrives), RELOADING=1 then READY=1 around a
SIGHUP, and STOPPING=1 on SIGTERM before it exits 0. Without
NOTIFY_SOCKET it must start as usual."""

import argparse
import os
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time
import urllib.request
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from ports import free_port  # noqa: E402  (tests/support, after the path above)


def recv_state(sock, timeout):
    sock.settimeout(timeout)
    data = sock.recv(4096).decode()
    return dict(line.split("=", 1) for line in data.splitlines() if "=" in line)


def wait_for(sock, key, timeout=30.0):
    deadline = time.monotonic() + timeout
    seen = []
    while time.monotonic() < deadline:
        try:
            state = recv_state(sock, deadline - time.monotonic())
        except socket.timeout:
            break
        seen.append(state)
        if key in state:
            return state, seen
    raise AssertionError(f"no {key} within {timeout} s; got {seen}")


def announce(port):
    url = (f"http://127.0.0.1:{port}/announce?info_hash=" + "%01" * 20 +
           "&peer_id=-XX0001-abcdefghijkl&port=6881&uploaded=0&downloaded=0&left=1&compact=1")
    with urllib.request.urlopen(url, timeout=5) as r:
        body = r.read()
    assert body.startswith(b"d"), body


def udp_connect(port):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.settimeout(5)
    s.sendto(struct.pack(">QII", 0x41727101980, 0, 1234), ("127.0.0.1", port))
    data, _ = s.recvfrom(64)
    s.close()
    action, tid = struct.unpack(">II", data[:8])
    assert action == 0 and tid == 1234, data


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--daemon", required=True)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "notify")
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        sock.bind(path)
        http_port = free_port()
        udp_port = free_port()
        access = os.path.join(tmp, "access.list")
        with open(access, "w") as f:
            f.write("# empty\n")
        env = dict(os.environ, NOTIFY_SOCKET=path)
        proc = subprocess.Popen(
            [args.daemon, f"--http.port={http_port}", f"--udp.port={udp_port}",
             "--http.bind=127.0.0.1", f"--access.file={access}", "--access.mode=deny"],
            env=env, stderr=subprocess.PIPE, text=True)
        try:
            ready, _ = wait_for(sock, "READY")
            assert ready["READY"] == "1", ready
            # Bound before READY=1: both transports answer at once.
            announce(http_port)
            udp_connect(udp_port)
            assert "STATUS" in ready and ready["STATUS"], ready

            proc.send_signal(signal.SIGHUP)
            _, seen = wait_for(sock, "READY")
            assert any(s.get("RELOADING") == "1" for s in seen), seen

            proc.send_signal(signal.SIGTERM)
            state, _ = wait_for(sock, "STOPPING")
            assert state["STOPPING"] == "1", state
            rc = proc.wait(timeout=30)
            assert rc == 0, f"exit status {rc}: {proc.stderr.read()}"
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()

        # Without NOTIFY_SOCKET nothing changes: it serves as before.
        env = {k: v for k, v in os.environ.items() if k != "NOTIFY_SOCKET"}
        proc = subprocess.Popen([args.daemon, f"--http.port={http_port}", "--no-udp",
                                 "--http.bind=127.0.0.1"], env=env, stderr=subprocess.PIPE)
        try:
            deadline = time.monotonic() + 30
            while True:
                try:
                    announce(http_port)
                    break
                except OSError:
                    if time.monotonic() > deadline:
                        raise
                    time.sleep(0.05)
            proc.send_signal(signal.SIGTERM)
            assert proc.wait(timeout=30) == 0
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    print("notify_test: ok")


if __name__ == "__main__":
    try:
        main()
    except AssertionError as e:
        print(f"notify_test: FAILED: {e}", file=sys.stderr)
        sys.exit(1)
