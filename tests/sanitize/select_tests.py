#!/usr/bin/env python3
"""Which ctest tests of a sanitized build run under which sanitizer.

    select_tests.py {asan|tsan} < ctest --show-only=json-v1 output
    select_tests.py {asan|tsan} --targets < ctest --show-only=json-v1 output
    select_tests.py {asan|tsan} --check < ctest --show-only=json-v1 output

Prints ctest's `-I` argument for the selected tests (`0,0,0,<n>,<n>,...`);
with --targets the CMake targets those tests need, one a line; with
--check nothing, and exits 1 if a binary or script named below is not in
the test list (renamed or gone: the stage would silently run less). The
rules are here and nowhere else; README.md explains each choice.

A gtest binary's tests are registered one per test case
(gtest_discover_tests), so a test is selected by the executable its command
runs (`<target>_NOT_BUILT` before the binary exists), and a script test by
its name. Under ASan every test binary of the build runs, including ones
added after this file was written; under TSan the binaries listed below.
"""

import json
import os
import re
import sys

# Labels that never run in a sanitizer stage: the fuzz stage has its own
# sanitized build; e2e and console drive real BitTorrent clients and a
# browser, which spend their time outside our code; deploy checks the
# systemd unit and the package built from the normal build (its readiness
# and reload paths run in the admin tests too).
EXCLUDED_LABELS = {"fuzz", "e2e", "console", "deploy"}

# Tests that are not label-excluded but still stay out:
#   layering       greps include lines: no compiled code runs.
#   cluster_netns  cluster_daemons again with each node in a network
#                  namespace: the same code paths, plus root and RUN_SERIAL.
EXCLUDED_NAMES = {"layering", "cluster_netns"}

# Binaries that are not ours to sanitize: sim_tests checks the simulator in
# bench/ (built only with the benchmarks, which a sanitized build leaves off).
EXCLUDED_BINARIES = {"sim_tests"}

# ASan + UBSan: every test binary (unit, actor and daemon-level), and the
# daemon-level script tests, which start the sanitized daemon and swarmctl.
# app_sigterm_drain and app_sigterm_drain_quiet: pipelined requests already
# read are answered before a connection closes on SIGTERM, also at a
# sanitized daemon's slower pace.
ASAN_SCRIPTS = {
    "app_sample_config_is_generated", "app_sigterm_drain", "app_sigterm_drain_quiet",
    "cluster_daemons", "cluster_rebalance",
}

# ThreadSanitizer: where threads meet. The actors on CAF's real scheduler
# (runtime, supervision, cluster), the gateway and the UDP server in-process
# (I/O threads handing tickets to actors and answers back), the prober, the
# daemon end to end over HTTP and UDP, the admin API beside the tracker, and
# three daemons as a cluster.
TSAN_BINARIES = {
    "runtime_tests", "supervision_tests", "cluster_tests",
    "net_unit_tests", "net_udp_tests", "net_probe_tests",
    "net_integration_tests", "admin_tests",
}
TSAN_SCRIPTS = {"cluster_daemons"}

# CMake targets behind the script tests.
SCRIPT_TARGETS = {
    "app_sample_config_is_generated": {"swarmkeeper"},
    "app_sigterm_drain": {"swarmkeeper"},
    "app_sigterm_drain_quiet": {"swarmkeeper"},
    "cluster_daemons": {"swarmkeeper", "swarmctl"},
    "cluster_rebalance": {"swarmkeeper"},
}

NOT_BUILT = re.compile(r"^(.*)_NOT_BUILT$")


def labels_of(test):
    for prop in test.get("properties", []):
        if prop.get("name") == "LABELS":
            return set(prop.get("value", []))
    return set()


def binary_of(test, build_dir):
    """The test binary (CMake target) a gtest test runs, or None for a script."""
    m = NOT_BUILT.match(test["name"])
    if m:
        return m.group(1)
    command = test.get("command") or [""]
    exe = os.path.realpath(command[0]) if command[0] else ""
    if build_dir and exe.startswith(build_dir + os.sep):
        return os.path.basename(exe)
    return None


def select(kind, tests, build_dir):
    """(number, name, binary or None) of each selected test, 1-based."""
    scripts = ASAN_SCRIPTS if kind == "asan" else TSAN_SCRIPTS
    chosen = []
    for number, test in enumerate(tests, start=1):
        name = test["name"]
        if labels_of(test) & EXCLUDED_LABELS or name in EXCLUDED_NAMES:
            continue
        binary = binary_of(test, build_dir)
        if binary is not None:
            if binary in EXCLUDED_BINARIES:
                continue
            if kind == "tsan" and binary not in TSAN_BINARIES:
                continue
            chosen.append((number, name, binary))
        elif name in scripts:
            chosen.append((number, name, None))
    return chosen


def main():
    args = sys.argv[1:]
    if not args or args[0] not in ("asan", "tsan") or args[1:] not in ([], ["--targets"], ["--check"]):
        sys.exit("usage: select_tests.py {asan|tsan} [--targets|--check] < ctest-json")
    kind = args[0]
    doc = json.load(sys.stdin)
    tests = doc["tests"]
    # ctest's JSON names no build directory; the binaries live under the
    # directory of its CTestTestfile, which is the caller's working directory.
    build_dir = os.path.realpath(os.getcwd())
    chosen = select(kind, tests, build_dir)
    if args[1:] == ["--check"]:
        binaries = {b for _, _, b in chosen if b}
        names = {n for _, n, _ in chosen}
        wanted_binaries = TSAN_BINARIES if kind == "tsan" else set()
        wanted_scripts = ASAN_SCRIPTS if kind == "asan" else TSAN_SCRIPTS
        missing = sorted(wanted_binaries - binaries) + sorted(wanted_scripts - names)
        if missing:
            sys.exit("select_tests.py %s: named here but not in the test list: %s"
                     % (kind, ", ".join(missing)))
        if not binaries:
            sys.exit("select_tests.py %s: no test binary selected" % kind)
        return
    if args[1:] == ["--targets"]:
        targets = {b for _, _, b in chosen if b}
        for _, name, b in chosen:
            if b is None:
                targets |= SCRIPT_TARGETS[name]
        print("\n".join(sorted(targets)))
        return
    unbuilt = sorted({b for _, n, b in chosen if NOT_BUILT.match(n)})
    if unbuilt:
        sys.exit("select_tests.py: not built: %s" % ", ".join(unbuilt))
    if not chosen:
        sys.exit("select_tests.py: no test matched (was the build complete?)")
    print("0,0,0," + ",".join(str(n) for n, _, _ in chosen))


if __name__ == "__main__":
    main()
