"""The announce and scrape requests the Python tests send, built once: HTTP
query strings (BEP 3, BEP 48) and BEP 15 packets, and the bencode decoder
their answers are read with. Binary values (info_hash,
peer_id) are raw bytes and every byte of them is percent-encoded, as
BitTorrent clients do.

Import it from a test with
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "support"))
"""

import struct
import urllib.parse

# BEP 15: the magic of a connect request and the numbers of the events.
UDP_PROTOCOL_ID = 0x41727101980
UDP_EVENTS = {None: 0, "completed": 1, "started": 2, "stopped": 3}


def quote(raw):
    """Percent-encodes every byte of `raw` (bytes)."""
    return urllib.parse.quote_from_bytes(raw, safe="")


def announce_query(info_hash, peer_id, port, left, event=None, numwant=None, uploaded=0,
                   downloaded=0, compact=1):
    """The query string of one announce (without the leading '?')."""
    parts = ["info_hash=" + quote(info_hash), "peer_id=" + quote(peer_id), "port=%d" % port,
             "uploaded=%d" % uploaded, "downloaded=%d" % downloaded, "left=%d" % left,
             "compact=%d" % compact]
    if numwant is not None:
        parts.append("numwant=%d" % numwant)
    if event:
        parts.append("event=" + event)
    return "&".join(parts)


def scrape_query(hashes):
    """The query string of a scrape of every hash in `hashes` (bytes each)."""
    return "&".join("info_hash=" + quote(h) for h in hashes)


def udp_connect_packet(transaction):
    """A BEP 15 connect request."""
    return struct.pack(">QII", UDP_PROTOCOL_ID, 0, transaction)


def udp_announce_packet(connection, transaction, info_hash, peer_id, port, left, event="started",
                        numwant=-1, uploaded=0, downloaded=0, key=0):
    """A BEP 15 announce request (no IP address claimed, no options)."""
    return struct.pack(">QII20s20sQQQIIIiH", connection, 1, transaction, info_hash, peer_id,
                       downloaded, left, uploaded, UDP_EVENTS[event], 0, key, numwant, port)


def udp_reply_header(data):
    """(action, transaction) of a BEP 15 reply."""
    return struct.unpack(">II", data[:8])


def bdecode(data, i=0):
    """(value, next index) of the bencoded value at data[i:]: dicts (bytes
    keys), lists, integers and byte strings."""
    c = data[i:i + 1]
    if c == b"d":
        i += 1
        out = {}
        while data[i:i + 1] != b"e":
            k, i = bdecode(data, i)
            v, i = bdecode(data, i)
            out[k] = v
        return out, i + 1
    if c == b"l":
        i += 1
        out = []
        while data[i:i + 1] != b"e":
            v, i = bdecode(data, i)
            out.append(v)
        return out, i + 1
    if c == b"i":
        end = data.index(b"e", i)
        return int(data[i + 1:end]), end + 1
    colon = data.index(b":", i)
    n = int(data[i:colon])
    return data[colon + 1:colon + 1 + n], colon + 1 + n
