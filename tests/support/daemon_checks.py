"""What the daemon-level Python tests poll and read: a condition waited for
with a deadline, the samples of a Prometheus text exposition, the
scheduling policy of a process's threads, and a daemon held while it
serves.
"""

import contextlib
import os
import signal
import subprocess
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


@contextlib.contextmanager
def serving(cmd, ready, env=None, timeout=60):
    """(process, match) of a daemon started with `cmd` (and `env`), once a
    line of its output matches the compiled regex `ready`; on the way out it
    is stopped with SIGTERM and must exit with status 0 within 30 s.
    AssertionError with its output when no line matches within `timeout`."""
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            env=env)
    seen = []
    deadline = time.monotonic() + timeout
    try:
        match = None
        for line in proc.stdout:
            seen.append(line)
            match = ready.search(line)
            if match or time.monotonic() > deadline:
                break
        if not match:
            raise AssertionError(f"no line like {ready.pattern!r} from {' '.join(cmd)}:\n"
                                 f"{''.join(seen)}")
        yield proc, match
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            raise AssertionError("daemon did not stop on SIGTERM")
    assert proc.returncode == 0, f"exit status {proc.returncode} after SIGTERM"
