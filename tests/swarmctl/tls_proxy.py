#!/usr/bin/env python3
"""A TLS-terminating proxy on loopback for swarmctl's https test.

Accepts TLS on 127.0.0.1:--port with --cert/--key, and relays the
decrypted bytes to 127.0.0.1:--target (the daemon's plain-HTTP admin port)
and back. The head of every request it decrypts (request line and
headers) is appended to --log, so the test can check what travelled inside
TLS: the token in the Authorization header, never in the request line.
Prints "ready" once it listens; runs until killed.
"""

import argparse
import socket
import ssl
import sys
import threading


def pump(src, dst, log_path=None):
    """Copies src to dst until either side closes; logs the first head."""
    head = b""
    logged = log_path is None
    try:
        while True:
            data = src.recv(65536)
            if not data:
                break
            if not logged:
                head += data
                end = head.find(b"\r\n\r\n")
                if end >= 0 or len(head) > 65536:
                    with open(log_path, "ab") as f:
                        f.write(head[: end if end >= 0 else len(head)] + b"\n\n")
                    logged = True
            dst.sendall(data)
    except OSError:
        pass
    finally:
        for s in (src, dst):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


def serve(conn, context, target, log_path):
    try:
        tls = context.wrap_socket(conn, server_side=True)
    except (ssl.SSLError, OSError):
        # A client that does not trust the certificate hangs up here.
        conn.close()
        return
    try:
        upstream = socket.create_connection(("127.0.0.1", target), timeout=10)
        upstream.settimeout(None)
    except OSError:
        tls.close()
        return
    back = threading.Thread(target=pump, args=(upstream, tls), daemon=True)
    back.start()
    pump(tls, upstream, log_path)
    back.join(timeout=10)
    tls.close()
    upstream.close()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--target", type=int, required=True)
    p.add_argument("--cert", required=True)
    p.add_argument("--key", required=True)
    p.add_argument("--log", required=True)
    a = p.parse_args()
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(a.cert, a.key)
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", a.port))
    listener.listen(16)
    print("ready", flush=True)
    while True:
        conn, _ = listener.accept()
        threading.Thread(target=serve, args=(conn, context, a.target, a.log), daemon=True).start()


if __name__ == "__main__":
    sys.exit(main())
