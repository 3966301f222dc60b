"""A BEP 15 client for the Python daemon tests: one UDP socket bound to a
source address of its own (so that per-address limits can be exercised from
127.0.0.x), connected once, then announces one at a time or a flood with a
window of requests in flight.

Import it from a test with
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "support"))
"""

import random
import socket
import struct

from tracker_requests import udp_announce_packet, udp_connect_packet


class udp_client:
    def __init__(self, source, port, timeout=10):
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind((source, 0))
        self.sock.settimeout(timeout)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
        self.dest = ("127.0.0.1", port)
        self.tid = random.randrange(1 << 31)
        tid = self.next_tid()
        self.sock.sendto(udp_connect_packet(tid), self.dest)
        data, _ = self.sock.recvfrom(2048)
        action, got, self.conn = struct.unpack("!IIQ", data[:16])
        assert action == 0 and got == tid, data

    def next_tid(self):
        self.tid = (self.tid + 1) & 0x7FFFFFFF
        return self.tid

    def packet(self, tid, info_hash, peer_id, port, left=1000, numwant=-1, event="started"):
        """The announce request with transaction id `tid`."""
        return udp_announce_packet(self.conn, tid, info_hash, peer_id, port, left, event=event,
                                   numwant=numwant)

    def announce(self, info_hash, peer_id, port, left=1000, numwant=-1, event="started"):
        """Sends one announce and returns its reply (datagrams answering
        earlier requests are skipped); socket.timeout when none comes."""
        tid = self.next_tid()
        packet = self.packet(tid, info_hash, peer_id, port, left, numwant, event)
        self.sock.sendto(packet, self.dest)
        while True:
            data, _ = self.sock.recvfrom(65536)
            if struct.unpack("!I", data[4:8])[0] == tid:
                return data

    def flood(self, requests, window=128):
        """Sends (info_hash, peer_id, port, left) requests with up to
        `window` in flight; returns the replies in request order
        (socket.timeout when one is lost)."""
        pending = {}
        replies = [None] * len(requests)
        nxt = 0
        while nxt < len(requests) or pending:
            while nxt < len(requests) and len(pending) < window:
                tid = self.next_tid()
                self.sock.sendto(self.packet(tid, *requests[nxt]), self.dest)
                pending[tid] = nxt
                nxt += 1
            data, _ = self.sock.recvfrom(65536)
            tid = struct.unpack("!I", data[4:8])[0]
            if tid in pending:
                replies[pending.pop(tid)] = data
        return replies
