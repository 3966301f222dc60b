#!/usr/bin/env python3
"""The daemon enlarges glibc's per-thread malloc cache by re-executing
itself once with `glibc.malloc.tcache_count` in $GLIBC_TUNABLES
(app/malloc_tuning.hpp). Started as an operator starts it, the process that
serves must be the one started (same pid, same name, so service managers,
`pidof` and `kill` keep working) and must run with the tunable; an
operator's own `tcache_count` must be left alone (no re-execution); other
tunables are kept. A sanitizer build (its allocator ignores glibc's
tunables) must not re-execute at all.

usage: malloc_tuning_test.py path/to/swarmkeeper
"""
import os
import re
import subprocess
import sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from ports import free_port  # noqa: E402  (tests/support, after the path above)
from daemon_checks import serving  # noqa: E402

MARKER = "SWARMKEEPER_MALLOC_TUNED"


def started(binary, tunables):
    """(comm, initial environment) of a daemon started with $GLIBC_TUNABLES =
    tunables (None: unset), read from /proc of the pid started once it
    serves."""
    env = {k: v for k, v in os.environ.items() if k not in ("GLIBC_TUNABLES", MARKER)}
    if tunables is not None:
        env["GLIBC_TUNABLES"] = tunables
    port = free_port()
    cmd = [binary, "--http.bind=127.0.0.1", f"--http.port={port}", f"--udp.port={port}",
           "--admin.port=0"]
    with serving(cmd, re.compile("serving HTTP"), env=env) as (proc, _):
        with open(f"/proc/{proc.pid}/comm") as f:
            comm = f.read().strip()
        with open(f"/proc/{proc.pid}/environ", "rb") as f:
            environ = dict(item.decode().split("=", 1) for item in f.read().split(b"\0")
                           if b"=" in item)
    return comm, environ


def sanitized(binary):
    out = subprocess.run(["ldd", binary], capture_output=True, text=True).stdout
    return "libasan" in out or "libtsan" in out


def main():
    binary = sys.argv[1]
    name = os.path.basename(binary)[:15]
    if sanitized(binary):
        _, environ = started(binary, None)
        assert MARKER not in environ and "GLIBC_TUNABLES" not in environ, \
            f"sanitizer build: expected no re-execution, environment {environ}"
        print("sanitizer build: not re-executed")
        print("PASS")
        return

    # Nothing set: re-executed once, with the cache enlarged, under its own
    # name (an exec of /proc/self/exe would have renamed it "exe").
    comm, environ = started(binary, None)
    assert comm == name, f"process name {comm!r}, expected {name!r}"
    assert environ.get(MARKER) == "1", f"not re-executed: environment {environ}"
    assert environ.get("GLIBC_TUNABLES") == "glibc.malloc.tcache_count=128", environ
    print(f"default: re-executed as {comm!r} with GLIBC_TUNABLES={environ['GLIBC_TUNABLES']}")

    # The operator's own cache size: not re-executed, left as it was.
    _, environ = started(binary, "glibc.malloc.tcache_count=7")
    assert MARKER not in environ, f"re-executed over the operator's setting: {environ}"
    assert environ.get("GLIBC_TUNABLES") == "glibc.malloc.tcache_count=7", environ
    print("operator's tcache_count=7: kept, not re-executed")

    # Other tunables: re-executed, and they come first in the new value.
    # (glibc cuts the variable as it reads it, so /proc shows the first
    # tunable only; ld.so --list-tunables shows both in effect.)
    _, environ = started(binary, "glibc.malloc.arena_max=2")
    assert environ.get(MARKER) == "1", f"not re-executed: environment {environ}"
    assert environ.get("GLIBC_TUNABLES", "").startswith("glibc.malloc.arena_max=2"), environ
    both = subprocess.run(
        ["/lib64/ld-linux-x86-64.so.2", "--list-tunables"], capture_output=True, text=True,
        env={"GLIBC_TUNABLES": "glibc.malloc.arena_max=2:glibc.malloc.tcache_count=128"})
    assert both.returncode == 0, both.stderr
    assert "glibc.malloc.tcache_count: 0x80" in both.stdout, both.stdout
    assert "glibc.malloc.arena_max: 0x2" in both.stdout, both.stdout
    print("operator's arena_max=2: kept, re-executed with the cache added")
    print("PASS")


if __name__ == "__main__":
    main()
