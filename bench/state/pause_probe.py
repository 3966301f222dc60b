#!/usr/bin/env python3
"""Announce round-trip times of one UDP client, one request in flight, for
a number of seconds: what a client sees while the tracker does something
else (here: writes its state file). Prints one line:

    PROBE n=... p50_us=... p99_us=... max_us=... lost=...

and, on standard error, the five longest waits with the wall-clock time
each request was sent (seconds since the epoch, to set beside the
daemon's log lines):

    SLOWEST 1764468000.123:21500 1764468003.456:9800 ...

usage: pause_probe.py PORT SECONDS
"""
import socket
import struct
import sys
import time


def main():
    port, seconds = int(sys.argv[1]), float(sys.argv[2])
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.settimeout(2.0)
    addr = ("127.0.0.1", port)
    s.sendto(struct.pack(">QII", 0x41727101980, 0, 1), addr)
    data, _ = s.recvfrom(2048)
    _, _, cid = struct.unpack(">IIQ", data[:16])
    info_hash = b"\x5a" * 20
    # 1,000 peers in turn, each announcing every ~2 s: above a 1 s
    # tracker.min-interval, so no announce is early.
    peer_ids = [b"-SK0001-probe" + ("%07d" % i).encode() for i in range(1000)]
    rtts, lost, tid = [], 0, 2
    slowest = []  # (wait in microseconds, wall-clock time sent), the five longest
    end = time.monotonic() + seconds
    connected_at = time.monotonic()
    while time.monotonic() < end:
        if time.monotonic() - connected_at > 60:  # connection ids last two minutes
            s.sendto(struct.pack(">QII", 0x41727101980, 0, tid), addr)
            data, _ = s.recvfrom(2048)
            cid = struct.unpack(">IIQ", data[:16])[2]
            connected_at = time.monotonic()
        tid += 1
        pkt = struct.pack(">QII20s20sQQQIIIiH", cid, 1, tid, info_hash, peer_ids[tid % 1000], 0,
                          1000, 0, 0, 0, 0, 50, 7000 + tid % 1000)
        sent_at = time.time()
        t0 = time.perf_counter_ns()
        s.sendto(pkt, addr)
        try:
            while True:
                data, _ = s.recvfrom(4096)
                if len(data) >= 8 and struct.unpack(">I", data[4:8])[0] == tid:
                    break
            wait_us = (time.perf_counter_ns() - t0) // 1000
            rtts.append(wait_us)
            if len(slowest) < 5 or wait_us > slowest[-1][0]:
                slowest = sorted(slowest + [(wait_us, sent_at)], reverse=True)[:5]
        except socket.timeout:
            lost += 1
        time.sleep(0.002)
    rtts.sort()
    n = len(rtts)
    pick = lambda q: rtts[min(n - 1, int(q * n))] if n else -1
    print("PROBE n=%d p50_us=%d p99_us=%d max_us=%d lost=%d" % (n, pick(0.5), pick(0.99),
                                                               rtts[-1] if n else -1, lost))
    print("SLOWEST " + " ".join("%.3f:%d" % (at, us) for us, at in slowest), file=sys.stderr)


if __name__ == "__main__":
    main()
