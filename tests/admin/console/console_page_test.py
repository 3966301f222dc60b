#!/usr/bin/python3
"""The web console in a real browser against the real daemon.

    console_page_test.py --daemon build/bin/swarmkeeper

1. Starts the daemon on free loopback ports with an admin port and token and
   health evaluated every second (--health.tick=1s).
2. Creates four swarms with real HTTP announces: one healthy (3 seeders, 3
   leechers), one degraded (1 seeder, 11 leechers: few seeders; it is big
   enough to get a remediation actor), one critical (6 leechers: no seeders)
   and one with a single peer, below health.min-peers: unevaluated, never
   critical. One leecher of the critical swarm announces the peer_id
   `<img src=x id=pwned>`: markup, if the page ever put API text into HTML.
3. Drives /console/ in headless Chromium through Selenium (chromedriver) and
   checks, each time against what the API itself answers:
   the redirect from /, the token form, the counts by health, the cluster
   panel ("single node"), the unhealthy list (health, reasons, sizes, policy, remediation), one swarm's detail
   (health, reasons, policy, interval, peers, remediation history), that the
   hostile peer_id is shown as text and created no element, a live update
   without reload (a new announce shows up), no browser console errors (CSP
   violations included), the `#token=` fragment being taken and removed from
   the address bar, the banner for a refused token, and the banner once the
   daemon is gone.

Every wait polls a condition with a deadline; nothing sleeps a fixed time.
Exit status 0 on success, 1 with a "FAIL:" line otherwise. A missing
Chromium, chromedriver or Selenium is a failure, never a skip.
"""

import argparse
import hashlib
import json
import math
import re
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "support"))
import tracker_requests  # noqa: E402  (tests/support, after the path above)
from daemon_checks import parse_metrics  # noqa: E402  (tests/support, after the path above)
from ports import free_port  # noqa: E402  (tests/support, after the path above)

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
TOKEN = "console-page-token-0123456789"
WAIT = 30.0          # generous: a loaded 2-core CI machine
XSS_PEER_ID = b"<img src=x id=pwned>"
assert len(XSS_PEER_ID) == 20

started = time.monotonic()


def log(msg):
    print("[console_page %5.1fs] %s" % (time.monotonic() - started, msg), flush=True)


class Failure(Exception):
    pass


def check(cond, msg):
    if not cond:
        raise Failure(msg)


try:
    from selenium import webdriver
    from selenium.common.exceptions import WebDriverException
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
except ImportError as e:
    print("FAIL: cannot import selenium (%s); install python3-selenium "
          "(deploy/install-deps.sh)" % e, flush=True)
    sys.exit(1)


# -- the daemon -----------------------------------------------------------------


def free_udp_port():
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def http(url, headers=None, timeout=5):
    """(status, body bytes); status 0 when nothing answered."""
    req = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()
    except (urllib.error.URLError, OSError):
        return 0, b""


class Daemon:
    def __init__(self, binary, workdir):
        self.binary = binary
        self.log_path = os.path.join(workdir, "daemon.log")
        self.proc = None

    def start(self):
        for attempt in range(3):
            self.http_port = free_port()
            self.admin_port = free_port()
            udp_port = free_udp_port()
            argv = [self.binary, "--bind=127.0.0.1", "--http-port=%d" % self.http_port,
                    "--udp-port=%d" % udp_port, "--admin-port=%d" % self.admin_port,
                    "--admin-token=" + TOKEN, "--health.tick=1s", "--log-level=warn",
                    "--access.mode=deny"]
            with open(self.log_path, "ab") as out:
                self.proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT,
                                             stdin=subprocess.DEVNULL)
            deadline = time.monotonic() + WAIT
            while time.monotonic() < deadline:
                if self.proc.poll() is not None:
                    break       # e.g. a port taken between probe and bind: retry
                if self.api_status("/api/node") == 200:
                    return
                time.sleep(0.05)  # poll interval
            self.stop()
            log("daemon start attempt %d failed" % (attempt + 1))
        raise Failure("the daemon did not start:\n" + self.log_tail())

    def api_status(self, path):
        return http("http://127.0.0.1:%d%s" % (self.admin_port, path),
                    {"Authorization": "Bearer " + TOKEN})[0]

    def api(self, path):
        status, body = http("http://127.0.0.1:%d%s" % (self.admin_port, path),
                            {"Authorization": "Bearer " + TOKEN})
        check(status == 200, "API %s answered %d: %r" % (path, status, body[:300]))
        return json.loads(body)

    def announce(self, info_hash, peer_id, port, left):
        q = tracker_requests.announce_query(info_hash, peer_id, port, left)
        status, body = http("http://127.0.0.1:%d/announce?%s" % (self.http_port, q))
        check(status == 200 and b"failure reason" not in body,
              "announce answered %d: %r" % (status, body[:200]))

    def announce_reply(self, info_hash, peer_id, port, left):
        """The raw reply body of an announce (a refusal is not a failure here)."""
        q = tracker_requests.announce_query(info_hash, peer_id, port, left)
        status, body = http("http://127.0.0.1:%d/announce?%s" % (self.http_port, q))
        check(status == 200, "announce answered %d: %r" % (status, body[:200]))
        return body

    def metrics(self):
        status, body = http("http://127.0.0.1:%d/metrics" % self.admin_port,
                            {"Authorization": "Bearer " + TOKEN})
        check(status == 200, "/metrics answered %d" % status)
        return parse_metrics(body.decode())

    def stop(self):
        """SIGTERM; returns the exit status (None if it had to be killed)."""
        if self.proc is None or self.proc.poll() is not None:
            return None if self.proc is None else self.proc.returncode
        self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            return None

    def log_tail(self, lines=30):
        try:
            with open(self.log_path, "rb") as f:
                text = f.read().decode("utf-8", "replace").splitlines()
        except OSError:
            return "(no log)"
        return "\n".join("    | " + line for line in text[-lines:]) or "    | (empty)"


def ih(label):
    return hashlib.sha1(label.encode()).digest()


def peer(label):
    """An Azureus-style qBittorrent 4.5.2 peer_id: "-qB4520-" + 12 bytes."""
    return b"-qB4520-" + hashlib.sha1(label.encode()).hexdigest()[:12].encode()


def peer_id_text(hex_id):
    """The console's rendering of a peer_id (see peerIdText in console.js)."""
    out = []
    for b in bytes.fromhex(hex_id):
        if b == 0x5C:
            out.append("\\\\")
        elif 0x20 <= b < 0x7F:
            out.append(chr(b))
        else:
            out.append("\\x%02x" % b)
    return "".join(out)


# -- waiting ----------------------------------------------------------------------

def wait_for(what, probe, timeout=WAIT):
    """Polls probe() until it returns None (done); fails with its last answer
    (a description of what still differs) after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    last = None
    while True:
        try:
            last = probe()
        except WebDriverException as e:     # e.g. a row replaced while read
            last = "browser: %s" % str(e).splitlines()[0]
        if last is None:
            return
        if time.monotonic() > deadline:
            raise Failure("%s: still %s after %.0f s" % (what, last, timeout))
        time.sleep(0.2)  # poll interval


# -- reading the page ---------------------------------------------------------------

READ_TABLE = """
return Array.from(document.querySelectorAll(arguments[0] + ' tbody tr')).map(tr => ({
  hash: tr.dataset.hash || null,
  cells: Array.from(tr.cells).map(td => td.textContent),
  tags: Array.from(tr.cells).map(td => Array.from(td.querySelectorAll('.tag'))
                                          .map(s => s.textContent)),
}));
"""


def table(driver, selector):
    return driver.execute_script(READ_TABLE, selector)


def text(driver, element_id):
    return driver.execute_script(
        "const e = document.getElementById(arguments[0]); return e ? e.textContent : null;",
        element_id)


def visible(driver, element_id):
    return driver.execute_script(
        "const e = document.getElementById(arguments[0]); return !!e && !e.hidden;", element_id)


def api_counts(d):
    return {h: d.api("/api/swarms?health=%s&limit=0" % h)["total"]
            for h in ("healthy", "degraded", "critical", "unevaluated")}


def page_counts(driver):
    return {h: text(driver, "count-" + h) for h in ("healthy", "degraded", "critical",
                                                     "unevaluated")}


def compare_counts(driver, d, expected):
    api = api_counts(d)
    if api != expected:
        return "API counts %s, expected %s" % (api, expected)
    page = page_counts(driver)
    want = {h: str(n) for h, n in api.items()}
    if page != want:
        return "page counts %s, API %s" % (page, want)
    if text(driver, "count-total") != str(sum(api.values())):
        return "page total %s, API %d" % (text(driver, "count-total"), sum(api.values()))
    return None


def compare_unhealthy(driver, d):
    api = d.api("/api/swarms?health=unhealthy&sort=size&limit=100")
    active = {r["hash"]: r for r in d.api("/api/remediations")["active"]}
    want = []
    for s in api["swarms"]:
        want.append({"hash": s["hash"], "health": s["health"], "reasons": s["reasons"],
                     "peers": str(s["peers"]), "seeders": str(s["seeders"]),
                     "leechers": str(s["leechers"]), "policy": s["policy"],
                     "remediation": s["hash"] in active})
    got = []
    for row in table(driver, "#unhealthy-table"):
        c = row["cells"]
        got.append({"hash": row["hash"], "health": c[1], "reasons": row["tags"][2],
                    "peers": c[3], "seeders": c[4], "leechers": c[5], "policy": c[7],
                    "remediation": c[8].startswith("running")})
        if c[0] != row["hash"]:
            return "row shows hash %r but selects %r" % (c[0], row["hash"])
    if got != want:
        return "page rows %s, API %s" % (got, want)
    return None


def compare_detail(driver, d, hash_hex):
    s = d.api("/api/swarms/" + hash_hex)
    if text(driver, "detail-hash") != hash_hex:
        return "detail shows %r" % text(driver, "detail-hash")
    h = s["health_detail"]
    reasons = driver.execute_script(
        "return Array.from(document.querySelectorAll('#detail-reasons .tag'))"
        ".map(e => e.textContent);")
    got = {"state": text(driver, "detail-state"), "reasons": reasons,
           "policy": text(driver, "detail-policy"),
           "roles": text(driver, "detail-roles")}
    want = {"state": h["state"], "reasons": h["reasons"], "policy": s["knobs"]["policy"],
            "roles": "%d / %d" % (s["seeders"], s["leechers"])}
    if got != want:
        return "detail %s, API %s" % (got, want)
    iv = s["interval"]
    interval = text(driver, "detail-interval")
    want_iv = "%d s (base %d s, min %d s" % (iv["scaled_seconds"], iv["base_seconds"],
                                              iv["min_seconds"])
    if not interval.startswith(want_iv):
        return "interval %r, API %r" % (interval, want_iv)
    rows = table(driver, "#peers-table")
    got_peers = sorted((r["cells"][0], r["cells"][1], r["cells"][2], r["cells"][3])
                       for r in rows)
    want_peers = sorted(("%s:%d" % (p["address"], p["port"]), peer_id_text(p["peer_id"]),
                         p["client"], "seeder" if p["seeder"] else "leecher")
                        for p in s["peers_listed"])
    if got_peers != want_peers:
        return "peers %s, API %s" % (got_peers, want_peers)
    history = table(driver, "#history-table")
    got_hist = [(r["cells"][1], r["cells"][2], r["cells"][3]) for r in history]
    want_hist = [(r["action"], r["strategy"], r["reason"])
                 for r in reversed(s["remediation_history"])]
    if got_hist != want_hist:
        return "remediation history %s, API %s" % (got_hist, want_hist)
    return None


def severe_logs(driver):
    """Browser console errors (JS exceptions, CSP violations, failed loads)."""
    return [e["message"] for e in driver.get_log("browser") if e.get("level") == "SEVERE"]



# -- charts, search, actions -----------------------------------------------------------

# The plot area of every chart (see charts.js: HEIGHT 150, TOP 8, BOTTOM 20).
CHART_TOP, CHART_PLOT_HEIGHT = 8.0, 122.0

READ_CHART = """
const svg = document.getElementById(arguments[0]);
if (!svg || !svg.dataset.samples) return null;
const series = {};
for (const g of svg.querySelectorAll('g.series')) {
  const pts = [];
  for (const pl of g.querySelectorAll('polyline'))
    for (const p of pl.getAttribute('points').split(' ')) pts.push(p.split(',').map(Number));
  for (const c of g.querySelectorAll('circle'))
    pts.push([Number(c.getAttribute('cx')), Number(c.getAttribute('cy'))]);
  pts.sort((a, b) => a[0] - b[0]);
  series[g.dataset.series] = {
    values: g.dataset.values.split(',').map(v => v === '' ? null : Number(v)),
    points: pts,
  };
}
const legend = {};
for (const item of svg.nextElementSibling.querySelectorAll('.legend-item'))
  legend[item.dataset.series] = item.querySelector('b').textContent;
return {max: Number(svg.dataset.max), times: svg.dataset.times.split(',').map(Number),
        series: series, legend: legend};
"""


def chart(driver, chart_id):
    return driver.execute_script(READ_CHART, chart_id)


def chart_last(driver, chart_id, key):
    """The latest value of one series and whether its last drawn point sits
    where that value belongs on the chart's scale."""
    c = chart(driver, chart_id)
    if c is None or key not in c["series"]:
        return None, "no chart %s series %s" % (chart_id, key)
    values = c["series"][key]["values"]
    if not values or values[-1] is None:
        return None, "%s %s: no latest value (%s)" % (chart_id, key, values[-3:])
    v = values[-1]
    points = c["series"][key]["points"]
    known = sum(1 for x in values if x is not None)
    if len(points) != known:
        return None, "%s %s: %d points drawn for %d values" % (chart_id, key, len(points), known)
    want_y = CHART_TOP + CHART_PLOT_HEIGHT * (1 - v / c["max"])
    if abs(points[-1][1] - want_y) > 0.06:
        return None, "%s %s: last point at y=%.2f, value %s belongs at y=%.2f" % (
            chart_id, key, points[-1][1], v, want_y)
    return v, None


def counted_since(driver, chart_id, key, first):
    """What a rate series adds up to from sample `first` on: the sum of
    rate x time between samples, i.e. the change of the daemon's counter."""
    c = chart(driver, chart_id)
    values, times = c["series"][key]["values"], c["times"]
    total = 0.0
    for i in range(max(first, 1), len(values)):
        if values[i] is not None:
            total += values[i] * (times[i] - times[i - 1]) / 1000.0
    return total


def samples(driver, chart_id):
    c = chart(driver, chart_id)
    return 0 if c is None else len(c["times"])


def check_charts(driver, d, expected):
    # Gauges: the latest sample is what /metrics says now, drawn to scale.
    def gauges():
        m = d.metrics()
        want = {"seeders": m['swarmkeeper_peers_by_role{role="seeder"}'],
                "leechers": m['swarmkeeper_peers_by_role{role="leecher"}'] +
                m['swarmkeeper_peers_by_role{role="partial_seed"}']}
        for key, value in want.items():
            got, why = chart_last(driver, "chart-peers", key)
            if why or got != value:
                return why or "chart %s %s, /metrics %s" % (key, got, value)
        counts = api_counts(d)
        for state, n in counts.items():
            got, why = chart_last(driver, "chart-health", state)
            if why or got != n:
                return why or "chart %s %s, API %s" % (state, got, n)
        if counts != expected:
            return "API counts %s" % counts
        return None
    wait_for("seeders/leechers and health charts match /metrics", gauges)

    # A rate: twelve announces add up to twelve in the announce_ok series
    # (two new leechers in each of six one-peer swarms: they stay below
    # health.min-peers, so the counts by health do not change).
    first = samples(driver, "chart-announces")
    m0 = d.metrics()
    for i in range(12):
        d.announce(ih("console-page-%d" % (i // 2)), peer("p-more-%d" % i), 7450 + i, 500)

    def twelve():
        got = counted_since(driver, "chart-announces", "announce_ok", first)
        return None if abs(got - 12) < 0.05 else "announce_ok adds up to %.3f since sample %d" % (
            got, first)
    wait_for("the announces chart counts the twelve announces", twelve)
    m1 = d.metrics()
    ok = lambda m: sum(v for k, v in m.items()  # noqa: E731
                       if k.startswith("swarmkeeper_tracker_requests_total{") and
                       'outcome="announce_ok"' in k)
    check(ok(m1) - ok(m0) == 12, "/metrics counted %s announces" % (ok(m1) - ok(m0)))

    # Latency: a p50 and a p99 for the samples with announces, in order and
    # within the histogram's range (1 s is its last bound).
    c = chart(driver, "chart-latency")
    pairs = [(a, b) for a, b in zip(c["series"]["latency_p50"]["values"],
                                    c["series"]["latency_p99"]["values"])
             if a is not None and b is not None]
    check(pairs, "no latency sample: %s" % c["series"])
    check(all(0 < a <= b <= 1000 for a, b in pairs), "latency p50/p99 (ms) %s" % pairs)
    legend = c["legend"]
    check(legend.get("latency_p99", "–") != "–" or c["series"]["latency_p99"]["values"][-1] is None,
          "latency legend %s" % legend)
    log("charts: gauges match /metrics, 12 announces counted, %d latency samples" % len(pairs))


def check_search(driver, d):
    def rows():
        return [r["hash"] for r in table(driver, "#swarms-table")]

    def matches(query):
        want = [s["hash"] for s in d.api("/api/swarms?" + query)["swarms"]]
        got = rows()
        return None if got == want else "rows %s, API %s" % (got, want)

    # Sorted by hash, ten a page: page one, then page two, then back.
    driver.execute_script("document.getElementById('sort-select').value = 'hash';"
                          "document.getElementById('sort-select').dispatchEvent("
                          "new Event('change'));"
                          "document.getElementById('page-size').value = '10';"
                          "document.getElementById('page-size').dispatchEvent("
                          "new Event('change'));")
    wait_for("page one by hash", lambda: matches("sort=hash&limit=10&offset=0"))
    check(len(rows()) == 10, "page one has %d rows" % len(rows()))
    driver.find_element(By.ID, "page-next").click()
    wait_for("page two by hash", lambda: matches("sort=hash&limit=10&offset=10"))
    check(len(rows()) == 2, "page two has %d rows" % len(rows()))
    check(driver.execute_script("return document.getElementById('page-next').disabled"),
          "Next is enabled on the last page")
    driver.find_element(By.ID, "page-prev").click()
    wait_for("page one again", lambda: matches("sort=hash&limit=10&offset=0"))

    # A prefix (upper case typed): the daemon's search, every match shown.
    crit = ih("console-critical").hex()
    box = driver.find_element(By.ID, "search-input")
    box.clear()
    box.send_keys(crit[:4].upper())
    driver.find_element(By.ID, "search-submit").click()
    wait_for("search by prefix", lambda: matches("prefix=%s&sort=hash&limit=10" % crit[:4]))
    check(crit in rows(), "the critical swarm is not found by %s: %s" % (crit[:4], rows()))
    # A bad prefix: a clear message, nothing asked.
    box.clear()
    box.send_keys("xyz")
    driver.find_element(By.ID, "search-submit").click()
    wait_for("bad prefix message", lambda: None if "hex digits" in (
        text(driver, "error-banner") or "") else "banner %r" % text(driver, "error-banner"))
    box.clear()
    driver.find_element(By.ID, "search-submit").click()
    wait_for("all swarms again", lambda: matches("sort=hash&limit=10&offset=0"))
    log("swarm list: paging and prefix search match the API")


def confirm_dialog(driver, accept, contains):
    """Waits for the confirmation, checks its text, then confirms or cancels."""
    def opened():
        if not driver.execute_script("return document.getElementById('confirm-dialog').open"):
            return "no confirmation open"
        said = text(driver, "confirm-text") + " " + text(driver, "confirm-detail")
        return None if contains in said else "confirmation says %r" % said
    wait_for("confirmation naming %s" % contains, opened)
    driver.find_element(By.ID, "confirm-ok" if accept else "confirm-cancel").click()
    wait_for("confirmation closed", lambda: None if not driver.execute_script(
        "return document.getElementById('confirm-dialog').open") else "still open")


def result_says(driver, words):
    def probe():
        got = text(driver, "action-result") or ""
        return None if visible(driver, "action-result") and words in got else "result %r" % got
    return probe


def show_swarm(driver, hash_hex):
    box = driver.find_element(By.ID, "lookup-input")
    box.clear()
    box.send_keys(hash_hex)
    box.submit()
    wait_for("detail of %s" % hash_hex, lambda: None if text(driver, "detail-hash") == hash_hex
             and text(driver, "detail-state") else "detail %r" % text(driver, "detail-hash"))


def check_actions(driver, d, dh):
    ops = lambda m: m.get('swarmkeeper_remediations_ended_total{how="operator_stop"}', 0)  # noqa
    # Remediation stop: the degraded swarm's remediation runs (started by
    # the supervisor); stopping it is counted and drawn as an ended one.
    wait_for("a remediation of the degraded swarm", lambda: None if dh in
             [r["hash"] for r in d.api("/api/remediations")["active"]] else "none running")
    first = samples(driver, "chart-remediations")
    show_swarm(driver, dh)
    wait_for("Stop remediation enabled", lambda: None if not driver.execute_script(
        "return document.getElementById('action-remediation-stop').disabled") else "disabled")
    before = ops(d.metrics())
    driver.find_element(By.ID, "action-remediation-stop").click()
    confirm_dialog(driver, True, dh)
    wait_for("remediation stopped", result_says(driver, "stopped"))
    check(ops(d.metrics()) == before + 1, "operator stops %s -> %s" % (before, ops(d.metrics())))

    def drawn():
        c = chart(driver, "chart-remediations")
        ended = sum(v for v in c["series"]["remediations_ended"]["values"][first:] if v)
        return None if ended >= 1 else "ended series %s" % c["series"]["remediations_ended"]
    wait_for("the remediations chart shows the end", drawn)

    # Policy: Cancel sends nothing; Confirm pins it.
    old = d.api("/api/swarms/" + dh)["knobs"]["policy"]
    driver.execute_script("document.getElementById('policy-select').value = 'random';")
    driver.find_element(By.ID, "action-policy").click()
    confirm_dialog(driver, False, "random")
    wait_for("cancel reported", result_says(driver, "Cancelled"))
    check(d.api("/api/swarms/" + dh)["knobs"]["policy"] == old, "a cancelled policy was applied")
    driver.find_element(By.ID, "action-policy").click()
    confirm_dialog(driver, True, "random")
    wait_for("policy result", result_says(driver, "→ random"))
    s = d.api("/api/swarms/" + dh)
    check(s["knobs"]["policy"] == "random" and s["policy_pinned"] is True,
          "policy after the action: %s pinned %s" % (s["knobs"]["policy"], s["policy_pinned"]))
    wait_for("detail shows the policy", lambda: None if text(driver, "detail-policy") == "random"
             else "detail policy %r" % text(driver, "detail-policy"))

    # Ban: the banned client is refused; the row's Unban lifts it.
    driver.find_element(By.ID, "ban-prefix").send_keys("-XX0001-")
    driver.find_element(By.ID, "ban-reason").send_keys("console test ban")
    driver.find_element(By.ID, "ban-submit").click()
    confirm_dialog(driver, True, "-XX0001-")
    wait_for("ban result", result_says(driver, "Banned"))
    check([b["prefix"] for b in d.api("/api/bans")["bans"]] == ["-XX0001-"], "bans after ban")
    wait_for("ban row", lambda: None if [r["cells"][0] for r in table(driver, "#bans-table")] ==
             ["-XX0001-"] else "rows %s" % table(driver, "#bans-table"))
    body = d.announce_reply(ih("console-healthy"), b"-XX0001-" + b"b" * 12, 7501, 10)
    check(b"failure reason" in body, "a banned client was served: %r" % body[:200])
    driver.find_element(By.CSS_SELECTOR, "#bans-table button.unban").click()
    confirm_dialog(driver, True, "-XX0001-")
    wait_for("unban result", result_says(driver, "Unbanned"))
    check(d.api("/api/bans")["bans"] == [], "bans after unban")

    # Deny: a torrent denied from its detail ends and is refused after.
    doomed = ih("console-doomed")
    d.announce(doomed, peer("doomed"), 7601, 100)
    show_swarm(driver, doomed.hex())
    driver.find_element(By.ID, "action-deny").click()
    confirm_dialog(driver, True, doomed.hex())
    wait_for("deny result", result_says(driver, "Denied"))
    check(d.api("/api/access")["hashes"] == [doomed.hex()], "access list after deny")
    check(d.api_status("/api/swarms/" + doomed.hex()) == 404, "the denied swarm still runs")
    body = d.announce_reply(doomed, peer("doomed-2"), 7602, 100)
    check(b"failure reason" in body, "a denied torrent was served: %r" % body[:200])
    wait_for("access row", lambda: None if [r["cells"][0] for r in table(driver, "#access-table")]
             == [doomed.hex()] else "rows %s" % table(driver, "#access-table"))
    # The detail, still open on it, says the swarm is gone. Its 404 is the
    # only browser error allowed (Chromium logs every failed load).
    wait_for("detail of the denied swarm", lambda: None if visible(driver, "detail-missing") and
             "no longer exists" in text(driver, "detail-missing") else "detail note %r" %
             text(driver, "detail-missing"))
    expected_404 = "/api/swarms/%s - Failed to load resource: the server responded with a " \
                   "status of 404" % doomed.hex()
    others = [m for m in severe_logs(driver) if expected_404 not in m]
    check(not others, "browser console errors during the actions: %s" % others)

    # Restart: the critical swarm gets a new actor, its peers kept.
    crit = ih("console-critical").hex()
    show_swarm(driver, crit)
    before = d.api("/api/swarms/" + crit)
    driver.find_element(By.ID, "action-restart").click()
    confirm_dialog(driver, True, crit)
    wait_for("restart result", result_says(driver, "actor %d replaced" % before["actor_id"]))

    def restarted():
        try:
            now = d.api("/api/swarms/" + crit)
        except Failure as e:        # between the old actor and the new one
            return str(e)
        if now["actor_id"] == before["actor_id"] or now["peers"] != before["peers"]:
            return "actor %s, %s peers (before: %s, %s)" % (
                now["actor_id"], now["peers"], before["actor_id"], before["peers"])
        shown = text(driver, "detail-actor") or ""
        return None if shown.startswith("%d / " % now["actor_id"]) else "detail actor %r" % shown
    wait_for("the swarm restarted with its peers", restarted)
    # A poll of the detail may fall between the old actor and the new one;
    # the page shows that in the detail, and Chromium logs the failed load.
    gap = re.compile(r"/api/swarms/%s - Failed to load resource: the server responded with a "
                     r"status of (404|503|504)" % crit)
    others = [m for m in severe_logs(driver) if not gap.search(m)]
    check(not others, "browser console errors around the restart: %s" % others)

    # The events view lists the operator's actions as the API does.
    driver.execute_script("document.getElementById('events-filter').value = 'operator';"
                          "document.getElementById('events-filter').dispatchEvent("
                          "new Event('change'));")

    def operator_events():
        # operator-* kinds, and restarts and remediations an operator caused.
        want = [(e["kind"], e["detail"]) for e in reversed(d.api("/api/events")["events"])
                if e["kind"].startswith("operator-") or
                (e["kind"].startswith(("restart", "remediation-")) and
                 re.search(r"\boperator\b", e["detail"]))]
        got = [(r["cells"][1], r["cells"][3]) for r in table(driver, "#events-table")]
        kinds = {k for k, _ in got}
        if got != want:
            return "rows %s, API %s" % (got, want)
        if not {"operator-policy", "operator-ban", "operator-unban", "operator-access",
                "restart", "remediation-stop"} <= kinds:
            return "kinds %s" % kinds
        return None
    wait_for("operator events", operator_events)
    driver.execute_script("document.getElementById('events-filter').value = 'all';"
                          "document.getElementById('events-filter').dispatchEvent("
                          "new Event('change'));")
    log("actions: remediation stop, policy (cancel, confirm), ban, unban, deny, restart; "
        "events shown")


def screenshot_traffic(d, seconds):
    """Real announces for the charts of the screenshots: peers join the
    healthy swarm in pairs (a seeder, a leecher: it stays healthy) and
    announce again at a varying pace, and now and then a banned client and a
    denied torrent are refused. Only with --screenshots, after every check
    above."""
    status, _ = http_post(d, "/api/bans", {"prefix": "-XX0002-", "reason": "screenshot ban"})
    check(status == 201, "ban for the screenshots answered %d" % status)
    healthy = ih("console-healthy")
    end = time.monotonic() + seconds
    i = 0
    while time.monotonic() < end:
        burst = 1 + int(4 * (1 + math.sin(i / 15.0)))
        for _ in range(burst):
            i += 1
            # New pairs up to 100 (tracker.max-peers-per-address counts
            # every peer of this one address), then the same peers again.
            n = i if i <= 100 else 1 + (i * 37) % 100
            d.announce_reply(healthy, peer("shot-seed-%d" % n), 20000 + n, 0)
            d.announce_reply(healthy, peer("shot-leech-%d" % n), 21000 + n, 1000 + n)
        if i % 7 == 0:
            d.announce_reply(healthy, b"-XX0002-" + b"%012d" % i, 9000, 10)
        if i % 11 == 0:
            d.announce_reply(ih("console-doomed"), peer("shot-denied-%d" % i), 9001, 10)
        time.sleep(0.5)  # pacing of the traffic, not a wait for a condition
    status, _ = http_post(d, "/api/bans/-XX0002-", None, "DELETE")
    check(status == 200, "unban after the screenshots answered %d" % status)


def http_post(d, path, body, method="POST"):
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request("http://127.0.0.1:%d%s" % (d.admin_port, path), data=data,
                                 method=method,
                                 headers={"Authorization": "Bearer " + TOKEN,
                                          "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=5) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def take_screenshots(driver, d, directory):
    """PNGs of four panels; made smaller with pngquant (Debian's pngquant)
    when it is installed."""
    os.makedirs(directory, exist_ok=True)
    # The sticky header would cover the top of each panel in its picture.
    driver.execute_script("document.querySelector('header').style.position = 'static';")
    driver.execute_script("document.getElementById('sort-select').value = 'size';"
                          "document.getElementById('sort-select').dispatchEvent("
                          "new Event('change'));")
    # The one-digit prefix most swarms start with.
    firsts = [s["hash"][0] for s in d.api("/api/swarms?limit=100")["swarms"]]
    digit = max(sorted(set(firsts)), key=firsts.count)
    box = driver.find_element(By.ID, "search-input")
    box.clear()
    box.send_keys(digit)
    driver.find_element(By.ID, "search-submit").click()
    wait_for("search for the screenshot", lambda: None if (text(driver, "swarms-total") or "")
             .endswith("starting with %s)" % digit) else text(driver, "swarms-total"))
    for element_id, name in (("charts", "console-charts.png"), ("detail", "console-swarm.png"),
                             ("browse", "console-swarms.png"), ("events", "console-events.png")):
        driver.execute_script("document.getElementById(arguments[0]).scrollIntoView();",
                              element_id)
        path = os.path.join(directory, name)
        driver.find_element(By.ID, element_id).screenshot(path)
        if shutil.which("pngquant"):
            subprocess.run(["pngquant", "--force", "--skip-if-larger", "--output", path, "64",
                            path], check=False)
    log("screenshots in %s" % directory)


# -- the test -------------------------------------------------------------------------

def run(args, workdir):
    for path in (CHROMIUM, CHROMEDRIVER):
        check(os.access(path, os.X_OK),
              "%s is missing: install chromium and chromium-driver (deploy/install-deps.sh)"
              % path)
    d = Daemon(args.daemon, workdir)
    d.start()
    driver = None
    try:
        healthy, degraded, critical = ih("console-healthy"), ih("console-degraded"), \
            ih("console-critical")
        small = ih("console-small")
        for i in range(3):
            d.announce(healthy, peer("h-seed-%d" % i), 7001 + i, 0)
            d.announce(healthy, peer("h-leech-%d" % i), 7011 + i, 5000 + i)
        d.announce(degraded, peer("d-seed"), 7100, 0)
        for i in range(11):
            d.announce(degraded, peer("d-leech-%d" % i), 7101 + i, 4000 + i)
        for i in range(5):
            d.announce(critical, peer("c-leech-%d" % i), 7201 + i, 9000 + i)
        d.announce(critical, XSS_PEER_ID, 7210, 8000)
        d.announce(small, peer("s-leech"), 7301, 9000)
        # Eight more one-peer swarms: twelve in all, so the swarm list has
        # two pages of ten.
        for i in range(8):
            d.announce(ih("console-page-%d" % i), peer("p-%d" % i), 7400 + i, 1000)
        hh, dh, ch, sh = healthy.hex(), degraded.hex(), critical.hex(), small.hex()
        expected = {"healthy": 1, "degraded": 1, "critical": 1, "unevaluated": 9}

        def evaluated():
            got = {h: d.api("/api/swarms/" + h)["health"] for h in (hh, dh, ch)}
            want = {hh: "healthy", dh: "degraded", ch: "critical"}
            ticked = d.api("/api/swarms/" + sh)["health_detail"]["evaluated"]
            if got != want or not ticked:
                return "health %s, small swarm ticked: %s" % (got, ticked)
            small_health = d.api("/api/swarms/" + sh)["health"]
            check(small_health == "unevaluated", "a one-peer swarm is %s" % small_health)
            return None
        wait_for("swarms evaluated by the daemon", evaluated)
        log("daemon up (admin port %d), swarms evaluated" % d.admin_port)

        opts = webdriver.ChromeOptions()
        opts.binary_location = CHROMIUM
        for a in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                  "--no-first-run", "--disable-extensions", "--disable-background-networking",
                  "--window-size=1400,1000", "--user-data-dir=" + os.path.join(workdir, "chrome")):
            opts.add_argument(a)
        opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        driver = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=opts)
        driver.set_page_load_timeout(WAIT)
        driver.set_script_timeout(WAIT)
        log("browser up: %s" % driver.capabilities.get("browserVersion"))
        base = "http://127.0.0.1:%d" % d.admin_port

        # / redirects to the page, which asks for the token (nothing stored).
        driver.get(base + "/")
        check(driver.current_url == base + "/console/", "/ led to %s" % driver.current_url)
        wait_for("token form", lambda: None if visible(driver, "login") else "login hidden")
        check(not visible(driver, "dashboard"), "dashboard shown before a token was given")
        driver.find_element(By.ID, "token-input").send_keys(TOKEN)
        driver.find_element(By.ID, "token-submit").click()
        wait_for("dashboard", lambda: None if visible(driver, "dashboard") else
                 "hidden; banner %r" % text(driver, "error-banner"))
        check(driver.execute_script("return sessionStorage.getItem('swarmkeeper.admin-token')")
              == TOKEN, "token not kept in sessionStorage")
        check("token" not in driver.current_url, "token in the URL: %s" % driver.current_url)

        # Counts by health, the unhealthy list and the node row.
        wait_for("counts by health match the API", lambda: compare_counts(driver, d, expected))
        wait_for("unhealthy list matches the API", lambda: compare_unhealthy(driver, d))
        hashes = sorted(r["hash"] for r in table(driver, "#unhealthy-table"))
        check(hashes == sorted([dh, ch]), "unhealthy rows %s" % hashes)
        node = d.api("/api/node")
        nodes = table(driver, "#nodes-table")
        check(len(nodes) == 1 and nodes[0]["cells"][0] == node["node"] and
              nodes[0]["cells"][1] == node["version"], "node row %s, API %s %s" % (
                  nodes, node["node"], node["version"]))
        log("counts, unhealthy list and node row match the API")

        # The cluster panel of a daemon without a cluster: "single node".
        cluster = d.api("/api/cluster")
        check(cluster["enabled"] is False, "GET /api/cluster: %r" % cluster)

        def single_node():
            if not visible(driver, "cluster-single") or visible(driver, "cluster-detail"):
                return "single-node note %s, member table %s" % (
                    visible(driver, "cluster-single"), visible(driver, "cluster-detail"))
            if "Single node" not in (text(driver, "cluster-single") or ""):
                return "note %r" % text(driver, "cluster-single")
            return None

        wait_for("the cluster panel says single node", single_node)
        log("cluster panel: single node")

        # One swarm's detail: click the critical swarm's row.
        driver.find_element(By.CSS_SELECTOR, "#unhealthy-table tr[data-hash='%s']" % ch).click()
        wait_for("detail of the critical swarm", lambda: compare_detail(driver, d, ch))
        # The degraded one has a remediation actor: its history shows too.
        driver.find_element(By.CSS_SELECTOR, "#unhealthy-table tr[data-hash='%s']" % dh).click()
        wait_for("detail of the degraded swarm", lambda: compare_detail(driver, d, dh))
        driver.find_element(By.CSS_SELECTOR, "#unhealthy-table tr[data-hash='%s']" % ch).click()
        wait_for("detail of the critical swarm again", lambda: compare_detail(driver, d, ch))
        log("swarm detail matches the API")

        # The hostile peer_id is text, not markup.
        ids = driver.execute_script(
            "return Array.from(document.querySelectorAll('#peers-table td.peer-id'))"
            ".map(td => [td.textContent, td.childElementCount]);")
        check([XSS_PEER_ID.decode(), 0] in ids, "peer_id cells %s" % ids)
        check(driver.execute_script("return document.getElementById('pwned') === null && "
                                    "document.getElementsByTagName('img').length === 0;"),
              "the peer_id became an element")
        log("hostile peer_id shown as text")

        # Live update: a new leecher shows up without a reload.
        driver.execute_script("window.consoleTestMarker = 42;")
        d.announce(critical, peer("c-late"), 7203, 7000)

        def grown():
            row = [r for r in table(driver, "#unhealthy-table") if r["hash"] == ch]
            if not row or row[0]["cells"][3] != "7":
                return "unhealthy row %s" % row
            if len(table(driver, "#peers-table")) != 7:
                return "%d peer rows" % len(table(driver, "#peers-table"))
            return None
        wait_for("new peer shown live", grown)
        wait_for("detail after the update matches the API", lambda: compare_detail(driver, d, ch))
        check(driver.execute_script("return window.consoleTestMarker") == 42, "page reloaded")
        check(text(driver, "last-updated") != "never", "no 'last updated' time")
        logs = severe_logs(driver)
        check(not logs, "browser console errors: %s" % logs)
        log("live update seen, no console errors")

        check_charts(driver, d, expected)
        check_search(driver, d)
        check_actions(driver, d, dh)
        if args.screenshots:
            screenshot_traffic(d, args.screenshot_seconds)
            take_screenshots(driver, d, args.screenshots)
        logs = severe_logs(driver)
        check(not logs, "browser console errors after the actions: %s" % logs)

        # #token= is taken and removed from the address bar.
        driver.execute_script("sessionStorage.clear();")
        driver.get("about:blank")
        driver.get(base + "/console/#token=" + urllib.parse.quote(TOKEN))
        wait_for("dashboard from the #token fragment", lambda: None
                 if visible(driver, "dashboard") else "hidden; url %s" % driver.current_url)
        check(driver.current_url == base + "/console/",
              "token left in the address bar: %s" % driver.current_url)

        # A wrong token: the banner says so and the form comes back.
        driver.find_element(By.ID, "forget-token").click()
        wait_for("token form again", lambda: None if visible(driver, "login") else "login hidden")
        driver.find_element(By.ID, "token-input").send_keys("wrong-token-" + "x" * 20)
        driver.find_element(By.ID, "token-submit").click()

        def refused():
            banner = text(driver, "error-banner") or ""
            if not visible(driver, "error-banner") or "refused" not in banner or "401" not in banner:
                return "banner %r (visible %s)" % (banner, visible(driver, "error-banner"))
            if visible(driver, "dashboard") or not visible(driver, "login"):
                return "dashboard still shown"
            return None
        wait_for("banner for a refused token", refused)
        check(driver.execute_script("return sessionStorage.getItem('swarmkeeper.admin-token')")
              is None, "a refused token stays stored")
        log("refused token: banner %r" % text(driver, "error-banner"))

        # The right token clears the banner; then the daemon goes away.
        driver.find_element(By.ID, "token-input").send_keys(TOKEN)
        driver.find_element(By.ID, "token-submit").click()
        wait_for("dashboard again", lambda: None if visible(driver, "dashboard") and
                 not visible(driver, "error-banner") else "banner %r" %
                 text(driver, "error-banner"))
        wait_for("counts again", lambda: compare_counts(driver, d, expected))
        status = d.stop()
        check(status == 0, "daemon exit status %s" % status)

        def unreachable():
            banner = text(driver, "error-banner") or ""
            if not visible(driver, "error-banner") or "Cannot reach the daemon" not in banner:
                return "banner %r" % banner
            return None
        wait_for("banner for an unreachable daemon", unreachable)
        check(visible(driver, "dashboard") and text(driver, "count-critical") == "1",
              "the last data should stay visible")
        log("unreachable daemon: banner %r" % text(driver, "error-banner"))
    except Failure:
        if driver is not None:
            try:
                log("page text:\n" + driver.execute_script("return document.body.innerText;"))
                log("browser log: %s" % driver.get_log("browser"))
            except WebDriverException:
                pass
        raise
    finally:
        if driver is not None:
            driver.quit()
        d.stop()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--daemon", required=True, help="the swarmkeeper binary")
    ap.add_argument("--screenshots", metavar="DIR",
                    help="also save PNGs of the console's panels there (README images), "
                    "after --screenshot-seconds of announces for the charts")
    ap.add_argument("--screenshot-seconds", type=float, default=90.0)
    args = ap.parse_args()
    workdir = tempfile.mkdtemp(prefix="sk-console-")
    daemon_log = os.path.join(workdir, "daemon.log")
    try:
        run(args, workdir)
    except (Failure, WebDriverException) as e:
        print("FAIL: %s" % e, flush=True)
        try:
            with open(daemon_log, "rb") as f:
                print("daemon log:\n" + f.read().decode("utf-8", "replace")[-3000:], flush=True)
        except OSError:
            pass
        return 1
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    log("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
