"""What the daemon-level Python tests poll and read: a condition waited for
with a deadline, the samples of a Prometheus text exposition, and the
scheduling policy of a process's threads.
"""

import os
import time


def wait_until(what, predicate, timeout, poll=0.05):
    """The first true value of predicate() within timeout seconds, polled
    every `poll` seconds; AssertionError naming `what` otherwise."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(poll)  # poll interval, not a fixed wait
    raise AssertionError(f"timed out waiting for {what}")


def parse_metrics(text):
    """{'name{labels}': value} of every sample line of a /metrics text."""
    out = {}
    for line in text.splitlines():
        if line.startswith("#") or not line.strip():
            continue
        name, value = line.rsplit(" ", 1)
        out[name] = float(value)
    return out


def thread_policies(pid):
    """{thread name (id): scheduling policy} of every thread of `pid`
    (field 41 of /proc/PID/task/TID/stat; the name may hold spaces). A
    thread that ends while they are read is left out."""
    out = {}
    for tid in os.listdir("/proc/%d/task" % pid):
        try:
            with open("/proc/%d/task/%s/stat" % (pid, tid)) as f:
                stat = f.read()
        except (FileNotFoundError, ProcessLookupError):
            continue
        name = stat[stat.index("(") + 1:stat.rindex(")")]
        fields = stat[stat.rindex(")") + 2:].split()
        out["%s (%s)" % (name, tid)] = int(fields[41 - 3])
    return out
