#!/usr/bin/env python3
"""The daemon's default thread counts follow the CPUs it may use: started
with the default config under `taskset -c 0`, it must start one I/O thread
and one scheduler thread (not one per core of the machine), and under a
two-CPU mask one I/O thread and two scheduler threads. Every thread runs
under SCHED_BATCH by default (`scheduler.batch`) and under SCHED_OTHER with
`--no-batch`.

usage: cpu_budget_test.py path/to/swarmkeeper
"""
import os
import re
import sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from ports import free_port  # noqa: E402  (tests/support, after the path above)
from daemon_checks import serving, thread_policies  # noqa: E402

LINE = re.compile(r"serving HTTP on .*\((\d+) I/O threads, (\d+) scheduler threads\)")


def threads_under(binary, cpus, extra=(), wrapper=()):
    """(I/O threads, scheduler threads, {thread: policy}) of a daemon started
    under `taskset -c cpus` (and `wrapper`), read once it serves."""
    port = free_port()
    cmd = ["taskset", "-c", cpus, *wrapper, binary, "--http.bind=127.0.0.1", f"--http.port={port}",
           f"--udp.port={port}", "--admin.port=0", *extra]
    with serving(cmd, LINE) as (proc, m):
        return int(m.group(1)), int(m.group(2)), thread_policies(proc.pid)


def main():
    binary = sys.argv[1]
    io, workers, policies = threads_under(binary, "0")
    got = (io, workers)
    assert got == (1, 1), f"pinned to one CPU: expected 1 I/O and 1 scheduler thread, got {got}"
    print(f"taskset -c 0: {got[0]} I/O thread, {got[1]} scheduler thread")
    # The threads that serve (I/O, UDP, CAF's workers and clock) all exist
    # by the time the daemon says it serves.
    assert len(policies) >= 4 and set(policies.values()) == {os.SCHED_BATCH}, \
        f"default: every thread under SCHED_BATCH ({os.SCHED_BATCH}), got {policies}"
    print(f"default: {len(policies)} threads, all SCHED_BATCH")
    # Started under SCHED_BATCH itself, so --no-batch must set SCHED_OTHER,
    # not merely leave the inherited policy alone.
    _, _, policies = threads_under(binary, "0", ["--no-batch"], ["chrt", "-b", "0"])
    assert len(policies) >= 4 and set(policies.values()) == {os.SCHED_OTHER}, \
        f"--no-batch: every thread under SCHED_OTHER ({os.SCHED_OTHER}), got {policies}"
    print(f"--no-batch: {len(policies)} threads, all SCHED_OTHER")
    allowed = sorted(os.sched_getaffinity(0))
    if len(allowed) >= 2:
        mask = f"{allowed[0]},{allowed[1]}"
        got = threads_under(binary, mask)[:2]
        assert got == (1, 2), f"two CPUs: expected 1 I/O and 2 scheduler threads, got {got}"
        print(f"taskset -c {mask}: {got[0]} I/O thread, {got[1]} scheduler threads")
    else:
        print("only one CPU in this test's own mask: the two-CPU case was not run")
    print("PASS")


if __name__ == "__main__":
    main()
