#!/usr/bin/env python3
"""SIGTERM while clients pipeline HTTP announces: what each connection saw.

    sigterm_drain_check.py --daemon build/sanitize-asan/bin/swarmkeeper \
        [--connections 8] [--depth 64] [--seconds 3] [--stop-at-sigterm]

In ctest against the Release daemon (app_sigterm_drain, and with
--stop-at-sigterm app_sigterm_drain_quiet); by hand it is most telling
against a sanitized (slower) daemon, where a drain overlaps more traffic.

Each connection keeps --depth announces in flight (a new request per response),
so the server always has parsed requests in its ring and more bytes unread
in its socket. After --seconds the daemon gets SIGTERM. Per connection the
script records the requests written, the responses read, whether the last
response carried `Connection: close`, and how the connection ended (EOF,
or a reset seen as ECONNRESET or EPIPE). A reset means the server closed with unread bytes in its
receive buffer, and the kernel dropped whatever it had not yet sent: the
responses it had already written are lost too. Exit 1 if any connection
ended with a reset, or with requests left unanswered and no
`Connection: close` response to tell the client so (a connection whose every
request was answered may simply be closed), or if the daemon did not exit 0.
"""

import argparse
import select
import signal
import socket
import subprocess
import os
import sys
import tempfile
import time
import urllib.request
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from ports import free_port  # noqa: E402  (tests/support, after the path above)


def request(i, c):
    h = ("%040x" % (i * 7919 + c * 104729 + 1))[:40]
    ih = "".join("%" + h[k:k + 2] for k in range(0, 40, 2))
    pid = "".join("%%%02x" % ((c * 31 + k) & 0xFF) for k in range(20))
    return ("GET /announce?info_hash=%s&peer_id=%s&port=%d&uploaded=0&downloaded=0&left=1"
            " HTTP/1.1\r\nHost: t\r\n\r\n" % (ih, pid, 6881 + (i % 1000))).encode()


class conn:
    def __init__(self, port, index, depth):
        self.s = socket.create_connection(("127.0.0.1", port))
        self.s.setblocking(False)
        self.index, self.depth = index, depth
        self.sent = self.received = 0
        self.out = b""
        self.buf = b""
        self.last_close = False
        self.end = None
        self.writing = True
        self.at_sigterm = 0

    def fill(self):
        while self.writing and self.sent - self.received < self.depth:
            self.out += request(self.sent, self.index)
            self.sent += 1

    def on_writable(self):
        try:
            n = self.s.send(self.out)
            self.out = self.out[n:]
        except (BrokenPipeError, ConnectionResetError) as e:
            self.writing = False
            self.end = self.end or ("EPIPE" if isinstance(e, BrokenPipeError) else "ECONNRESET")

    def on_readable(self):
        try:
            data = self.s.recv(1 << 16)
        except ConnectionResetError:
            self.end = "ECONNRESET"
            return False
        if not data:
            self.end = self.end or "EOF"
            return False
        self.buf += data
        while True:
            head_end = self.buf.find(b"\r\n\r\n")
            if head_end < 0:
                break
            head = self.buf[:head_end].decode("latin-1").lower()
            length = 0
            for line in head.split("\r\n"):
                if line.startswith("content-length:"):
                    length = int(line.split(":", 1)[1])
            if len(self.buf) < head_end + 4 + length:
                break
            self.received += 1
            self.last_close = "connection: close" in head
            self.buf = self.buf[head_end + 4 + length:]
        return True


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--daemon", required=True)
    ap.add_argument("--connections", type=int, default=8)
    ap.add_argument("--depth", type=int, default=64)
    ap.add_argument("--seconds", type=float, default=3.0)
    ap.add_argument("--stop-at-sigterm", action="store_true",
                    help="stop sending when the signal goes out (default: keep pipelining, "
                         "as a client that does not know)")
    a = ap.parse_args()
    port, udp = free_port(), free_port()
    err = tempfile.NamedTemporaryFile(prefix="sk-sigterm-", suffix=".log", delete=False)
    d = subprocess.Popen([a.daemon, "--http-port=%d" % port, "--udp-port=%d" % udp,
                          "--bind=127.0.0.1"], stdout=err, stderr=err)
    deadline = time.monotonic() + 30
    while True:
        try:
            urllib.request.urlopen("http://127.0.0.1:%d/health" % port, timeout=1).read()
            break
        except OSError:
            if time.monotonic() > deadline or d.poll() is not None:
                sys.exit("daemon did not start; log in " + err.name)
            time.sleep(0.05)
    conns = [conn(port, i, a.depth) for i in range(a.connections)]
    stop_at = time.monotonic() + a.seconds
    signalled = False
    open_ = list(conns)
    while open_:
        if not signalled and time.monotonic() >= stop_at:
            d.send_signal(signal.SIGTERM)
            signalled = True
            for c in conns:
                c.at_sigterm = c.received
                if a.stop_at_sigterm:
                    c.writing = False
        for c in open_:
            c.fill()
        r, w, _ = select.select([c.s for c in open_], [c.s for c in open_ if c.out and c.writing], [], 1)
        by = {c.s: c for c in open_}
        for s in w:
            by[s].on_writable()
        for s in r:
            if not by[s].on_readable():
                open_.remove(by[s])
                s.close()
    status = d.wait(timeout=60)
    bad = 0
    total_sent = total_received = 0
    for c in conns:
        total_sent += c.sent
        total_received += c.received
        ok = c.end == "EOF" and (c.last_close or c.received == c.sent)
        flag = "" if ok else "  <-- "
        if flag:
            bad += 1
        print("conn %d: %d written, %d answered (%d after SIGTERM), last had Connection: close: %s, ended by %s%s"
              % (c.index, c.sent, c.received, c.received - c.at_sigterm, c.last_close, c.end, flag))
    print("total: %d requests written, %d answered; daemon exit %d; daemon log %s"
          % (total_sent, total_received, status, err.name))
    sys.exit(1 if bad or status != 0 else 0)


if __name__ == "__main__":
    main()
