"""What the daemon-level Python tests poll and read: a condition waited for
with a deadline, and the samples of a Prometheus text exposition.
"""

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
