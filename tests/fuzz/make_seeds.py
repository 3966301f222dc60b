#!/usr/bin/env python3
"""Writes the hand-made seed corpora in tests/fuzz/corpus/<target>/.

The seeds are small, readable examples of each input kind: the byte strings
of BEP 3 (bencode), BEP 15 (UDP packets), BEP 23 (compact replies), BEP 41
(UDP URL data), BEP 48 (scrape), typical client queries, HTTP requests and
config files. The files are checked in; rerun this script after changing it
(it rewrites only the files it names, so seeds added by hand stay).

    tests/fuzz/make_seeds.py [--dump-config FILE]

--dump-config names the output of `swarmkeeper --dump-config` to add as a
config seed (every option with its default).
"""
import argparse
import hashlib
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))

HASH_A = bytes.fromhex("0123456789abcdef0123456789abcdef01234567")
HASH_B = bytes(range(20))
HASH_C = b"\xff" * 20
PEER_LT = b"-lt0D80-" + b"abcdefghijkl"
PEER_QB = b"-qB4650-" + b"\x00\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b"


def write(target, name, data):
    d = os.path.join(HERE, "corpus", target)
    os.makedirs(d, exist_ok=True)
    if isinstance(data, str):
        data = data.encode("latin-1")
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def pct(b):
    return "".join("%%%02X" % c for c in b)


def pct_mixed(b):
    """How libtorrent escapes: unreserved bytes as is, the rest as %xx."""
    out = []
    for c in b:
        ch = chr(c)
        if ch.isalnum() or ch in "-_.~":
            out.append(ch)
        else:
            out.append("%%%02x" % c)
    return "".join(out)


# -- bencode (BEP 3 and tracker replies) ---------------------------------------
def bencode_seeds():
    s = {
        "bep3_string": "4:spam",
        "bep3_empty_string": "0:",
        "bep3_int": "i3e",
        "bep3_negative": "i-3e",
        "bep3_zero": "i0e",
        "bep3_list": "l4:spam4:eggse",
        "bep3_empty_list": "le",
        "bep3_dict": "d3:cow3:moo4:spam4:eggse",
        "bep3_dict_list": "d4:spaml1:a1:bee",
        "bep3_empty_dict": "de",
        "int64_extremes": "li9223372036854775807ei-9223372036854775808ee",
        "nested": "d1:ad1:bd1:cl1:dl1:eeeeee",
        # BEP 23 compact announce reply, BEP 7 peers6, BEP 24 external ip.
        "bep23_reply": b"d8:completei5e10:downloadedi2e10:incompletei3e8:intervali1800e"
        b"12:min intervali900e5:peers12:" + bytes([10, 0, 0, 1, 0x1a, 0xe1, 192, 168, 1, 2, 0x1a, 0xe2])
        + b"6:peers618:" + bytes(15) + b"\x01\x1a\xe1e",
        "external_ip": b"d11:external ip4:\xc0\x00\x02\x018:intervali1800e5:peers0:e",
        "noncompact_reply": b"d8:intervali1800e5:peersld2:ip8:10.0.0.17:peer id20:" + PEER_LT
        + b"4:porti6881eeee",
        # BEP 48 scrape reply.
        "bep48_scrape": b"d5:filesd20:" + HASH_A + b"d8:completei5e10:downloadedi50e"
        b"10:incompletei10eeee",
        # BEP 31 failure with retry in.
        "bep31_failure": "d14:failure reason19:torrent not allowed8:retry ini30ee",
        # A small metainfo file (BEP 3).
        "metainfo": b"d8:announce35:http://tracker.example:6969/announce4:infod6:lengthi1024e"
        b"4:name8:file.bin12:piece lengthi16384e6:pieces20:" + HASH_B + b"ee",
        # Rejected: leading zero, -0, unsorted keys, duplicate key, trailing data.
        "bad_leading_zero": "i03e",
        "bad_negative_zero": "i-0e",
        "bad_unsorted": "d1:b0:1:a0:e",
        "bad_duplicate": "d1:a0:1:a0:e",
        "bad_trailing": "i1ei2e",
        "bad_length_zero": "03:abc",
        "bad_eof": "l4:spam",
        "bad_key": "di1e0:e",
    }
    for k, v in s.items():
        write("bencode", k, v)


# -- HTTP announce / scrape query strings ---------------------------------------
def announce_query(info_hash=HASH_A, peer=PEER_LT, extra=""):
    return ("info_hash=%s&peer_id=%s&port=6881&uploaded=0&downloaded=0&left=1000"
            "&corrupt=0&key=ABCDEF01&event=started&numwant=200&compact=1&no_peer_id=1"
            "&supportcrypto=1&redundant=0%s" % (pct_mixed(info_hash), pct_mixed(peer), extra))


def query_seeds():
    s = {
        "libtorrent_started": announce_query(),
        "transmission": "info_hash=%s&peer_id=%s&port=51413&uploaded=0&downloaded=0&left=0"
        "&numwant=80&key=1a2b3c4d&compact=1&supportcrypto=1&event=completed"
        % (pct(HASH_B), pct_mixed(b"-TR2940-" + b"x" * 12)),
        "stopped_ip_v6": announce_query(HASH_C, PEER_QB, "&event=stopped&ip=2001%3Adb8%3A%3A1"),
        "paused_ip_v4": announce_query(extra="&event=paused&ip=192.0.2.7&trackerid=abc"),
        "plus_and_repeats": announce_query(extra="&port=06881&key=a+b&numwant=-1"),
        "minimal": "info_hash=%s&peer_id=%s&port=1" % (pct(HASH_A), pct(PEER_LT)),
        "noncompact": announce_query(extra="&compact=0&no_peer_id=0"),
        "max_numbers": announce_query(extra="&uploaded=18446744073709551615&left=00000000000000000001"),
        "bep48_scrape": "info_hash=%s&info_hash=%s&info_hash=%s" % (pct(HASH_A), pct_mixed(HASH_B),
                                                                      pct(HASH_C)),
        "bad_escape": "info_hash=%zz&peer_id=x&port=1",
        "empty_pairs": "&&info_hash=&=&peer_id&",
    }
    for k, v in s.items():
        write("announce_query", k, v)


# -- UDP (BEP 15, BEP 41) -------------------------------------------------------
PROTOCOL_ID = 0x41727101980
CONN = 0x1122334455667788


def udp_announce(event=2, numwant=-1, ip=0, key=0xDEADBEEF, port=6881, options=b"",
                 downloaded=0, left=1000, uploaded=0):
    return (struct.pack(">QII", CONN, 1, 0x01020304) + HASH_A + PEER_LT
            + struct.pack(">qqqIIIiH", downloaded, left, uploaded, event, ip, key, numwant, port)
            + options)


def udp_seeds():
    s = {
        "bep15_connect": struct.pack(">QII", PROTOCOL_ID, 0, 0x2a2a2a2a),
        "bep15_announce_started": udp_announce(),
        "bep15_announce_completed_ip": udp_announce(event=1, ip=0xC0000201, numwant=50),
        "bep15_announce_stopped": udp_announce(event=3, numwant=0, left=0),
        "bep21_announce_paused": udp_announce(event=4, numwant=0x7fffffff),
        "bep41_url_data": udp_announce(options=b"\x02\x09/announce\x01\x02\x0b?passkey=ab\x00junk"),
        "bep41_truncated": udp_announce(options=b"\x02\x10/ann"),
        "bep41_unknown_option": udp_announce(options=b"\x07\x02xy\x02\x01/"),
        "bep15_scrape_one": struct.pack(">QII", CONN, 2, 7) + HASH_A,
        "bep15_scrape_three": struct.pack(">QII", CONN, 2, 8) + HASH_A + HASH_B + HASH_C + b"\x01",
        "bad_protocol_id": struct.pack(">QII", 1, 0, 1),
        "error_action": struct.pack(">QII", CONN, 3, 1) + b"oops",
        "unknown_action": struct.pack(">QII", CONN, 9, 1),
        "short": b"\x00" * 15,
        "announce_short": udp_announce()[:97],
        "negative_amount": udp_announce(downloaded=-1),
    }
    for k, v in s.items():
        write("udp_request", k, v)

    peers4 = bytes([10, 0, 0, 1, 0x1a, 0xe1, 192, 168, 1, 2, 0xc8, 0xd5])
    peers6 = bytes(15) + b"\x01\x1a\xe1"
    r = {
        "bep15_connect_reply": struct.pack(">IIQ", 0, 0x2a2a2a2a, CONN),
        "bep15_announce_reply_v4": struct.pack(">IIiii", 1, 7, 1800, 3, 5) + peers4,
        "bep15_announce_reply_v6": struct.pack(">IIiii", 1, 7, 1800, 0, 1) + peers6,
        "bep15_scrape_reply": struct.pack(">II", 2, 8) + struct.pack(">iii", 5, 50, 10) * 2,
        "bep15_error_reply": struct.pack(">II", 3, 9) + b"connection id expired",
        "negative_counts": struct.pack(">IIiii", 1, 7, -1, -2, -3),
        "ragged": struct.pack(">IIiii", 1, 7, 1800, 3, 5) + b"\x01\x02\x03",
    }
    for k, v in r.items():
        write("udp_response", k, v)


# -- addresses --------------------------------------------------------------------
def address_seeds():
    s = {
        "v4": "192.0.2.1\n203.0.113.7, 10.0.0.2\n198.51.100.9",
        "v6": "2001:db8::1\n2001:db8::7, [fd00::2]\n::1",
        "v4_mapped_block": "::ffff:10.0.0.0/104\n::ffff:192.0.2.1\n",
        "blocks": "10.0.0.0/8\n10.1.2.3,10.0.0.5\n",
        "v6_full": "fe80:0000:0000:0000:0204:61ff:fe9d:f156/64\nunknown, 198.51.100.2\n 192.0.2.4 ",
        "v6_tail": "::ffff:1.2.3.4\n1::2:3:4:5:6:7\n[::]",
        "key": "00112233445566778899aabbccddeeff\n\n",
        "bad": "010.0.0.1/33\n1.2.3.4:80, _hidden\n1.2.3.4.5",
    }
    for k, v in s.items():
        write("address", k, v)


# -- HTTP requests ---------------------------------------------------------------
def http_seeds():
    q = announce_query()
    scrape = "info_hash=%s&info_hash=%s" % (pct(HASH_A), pct(HASH_B))
    s = {
        "announce": "GET /announce?%s HTTP/1.1\r\nHost: tracker\r\nUser-Agent: x\r\n\r\n" % q,
        "pipelined": "GET /announce?%s HTTP/1.1\r\nHost: t\r\n\r\nGET /scrape?%s HTTP/1.1\r\n"
        "Host: t\r\n\r\nGET /health HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n" % (q, scrape),
        "http10_keep_alive": "GET /scrape?%s HTTP/1.0\r\nConnection: keep-alive\r\n\r\n"
        "GET /scrape HTTP/1.0\r\n\r\n" % scrape,
        "forwarded": "GET /announce?%s HTTP/1.1\r\nHost: t\r\nX-Forwarded-For: 203.0.113.9, 127.0.0.2"
        "\r\nX-Forwarded-For: 127.0.0.3\r\nX-Real-IP: 198.51.100.1\r\n\r\n" % q,
        "post_body": "POST /announce HTTP/1.1\r\nHost: t\r\nContent-Length: 4\r\n\r\nbody",
        "chunked": "GET /announce HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n4\r\nbody\r\n0\r\n\r\n",
        "not_found": "GET /favicon.ico HTTP/1.1\r\n\r\n",
        "long_target": "GET /announce?" + "a" * 600 + " HTTP/1.1\r\n\r\n",
        "long_header": "GET /health HTTP/1.1\r\nX: " + "b" * 1100 + "\r\n\r\n",
        "bad_request_line": "GET\r\n\r\n",
        "bad_query": "GET /announce?info_hash=%zz HTTP/1.1\r\n\r\n",
        "delete": "DELETE /scrape HTTP/1.1\r\n\r\n",
    }
    for k, v in s.items():
        write("http_request", k, v)


# -- admin inputs: ban prefixes and specs, access files, peer_ids ---------------
def admin_seeds():
    s = {
        "prefix": "-XX0001-",
        "prefix_escaped": "exbc%00",
        "prefix_specials": "%3D%3B%25%22",
        "ban_spec": "-XX0001-=XX 0.0.1 corrupts data;-YY=YY clients are not allowed",
        "ban_spec_blanks": " -XX = old client ;; -XX0105-=known bad version;",
        "access_file": "# torrents of the 2026 release\n0123456789abcdef0123456789abcdef01234567\n"
        "  89ABCDEF0123456789ABCDEF0123456789ABCDEF\t\n\n",
        "access_bad_line": "0123456789abcdef0123456789abcdef01234567\nnot a hash\n",
        "mode_allow": "allow",
        "mode_deny": "deny",
        "peer_qbittorrent": b"-qB4650-" + b"abcdefghijkl",
        "peer_transmission": b"-TR2940-" + b"abcdefghijkl",
        "peer_libtorrent": b"-lt0D80-" + b"abcdefghijkl",
        "peer_mainline": b"M4-3-6--" + b"abcdefghijkl",
        "peer_shadow": b"S58B-----" + b"abcdefghijk",
        "peer_bitcomet": b"exbc\x00\x38LORD" + b"abcdefghij",
        "peer_tixati": b"TIX0193-" + b"abcdefghijkl",
    }
    for k, v in s.items():
        write("admin_input", k, v)


# -- admin API requests: "METHOD TARGET\nBODY" ------------------------------------
def admin_api_seeds():
    h = HASH_B.hex()  # the swarm the harness creates
    s = {
        "node": "GET /api/node",
        "swarms": "GET /api/swarms?limit=5&offset=0",
        "swarm": "GET /api/swarms/" + h,
        "swarm_unknown": "GET /api/swarms/" + HASH_C.hex(),
        "policy": "POST /api/swarms/%s/policy\n{\"policy\":\"role-aware\"}" % h,
        "policy_bad": "POST /api/swarms/%s/policy\n{\"policy\":7}" % h,
        "restart": "POST /api/swarms/%s/restart" % h,
        "move": "POST /api/swarms/%s/move\n{\"node\":\"b\"}" % h,
        "remediation": "POST /api/swarms/%s/remediation/start" % h,
        "events": "GET /api/events",
        "remediations": "GET /api/remediations",
        "cluster": "GET /api/cluster",
        "metrics": "GET /metrics",
        "bans": "GET /api/bans",
        "ban_add": "POST /api/bans\n{\"prefix\":\"-XX0001-\",\"reason\":\"corrupts data\"}",
        "ban_delete": "DELETE /api/bans/exbc%2500",
        "access": "GET /api/access",
        "access_allow": "POST /api/access/%s/allow" % HASH_A.hex(),
        "access_deny": "POST /api/access/%s/deny" % HASH_A.hex(),
        "access_reload": "POST /api/access/reload",
        "console": "GET /console/",
        "wrong_method": "PUT /api/node",
        "not_found": "GET /api/nothing?x=%zz",
    }
    for k, v in s.items():
        write("admin_api", k, v)


# -- config files ------------------------------------------------------------------
def config_seeds(dump):
    s = {
        "empty": "",
        "http": '[http]\nport=6970\nbind="127.0.0.1"\nmax-url-length=4096\n'
        'trusted-proxies=["10.0.0.0/8", "::1"]\nread-timeout=5s\n',
        "udp": '[udp]\nenable=true\nport=6971\nconnection-id-key="00112233445566778899aabbccddeeff"\n',
        "admin": '[admin]\nport=0\ntoken="secret"\n',
        "bad_type": "[http]\nport=\"6969\"\n",
        "unknown_key": "[http]\nprot=6969\n",
        "bad_range": "[http]\nport=70000\n",
        "clients": '[clients]\nbanned="-XX0001-=old client;exbc%00=broken"\n',
    }
    for k, v in s.items():
        write("config", k, v)
    if dump:
        with open(dump, "rb") as f:
            write("config", "dump_config_defaults", f.read())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dump-config")
    args = ap.parse_args()
    bencode_seeds()
    query_seeds()
    udp_seeds()
    address_seeds()
    http_seeds()
    admin_seeds()
    admin_api_seeds()
    config_seeds(args.dump_config)


if __name__ == "__main__":
    main()
