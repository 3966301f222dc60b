// swarmkeeper web console: time-series charts drawn as SVG from the
// console's own ring buffer of samples (one per poll). Nothing here fetches:
// console.js hands each poll's /metrics samples to `record`, then calls
// `draw`. Only numbers reach the SVG (as attributes); labels are text nodes.
//
// What each chart shows, from /metrics:
//   announces/s by outcome  swarmkeeper_tracker_requests_total{outcome=announce_*}
//                           (both transports), the change between two polls
//                           divided by the time between them
//   seeders vs leechers     swarmkeeper_peers_by_role (leechers: leecher +
//                           partial_seed, as /api/swarms counts them)
//   swarms by health        swarmkeeper_swarms{health}
//   announce latency        p50 and p99 of the announces answered between two
//                           polls, from the change of each bucket of
//                           swarmkeeper_announce_latency_seconds (both
//                           transports), interpolated within the bucket
//   remediations            started and ended between two polls
//                           (swarmkeeper_remediations_started_total,
//                           swarmkeeper_remediations_ended_total), per poll
(function () {
  'use strict';

  const SVG_NS = 'http://www.w3.org/2000/svg';
  const CAPACITY = 150;            // samples kept: 5 minutes at one poll per 2 s
  const WIDTH = 520;
  const HEIGHT = 150;
  const LEFT = 46;                 // room for the y labels
  const RIGHT = 8;
  const TOP = 8;
  const BOTTOM = 20;               // room for the time labels
  const OUTCOMES = ['ok', 'refused', 'denied', 'failure'];

  /// The charts: element id, unit, series (key, label, class).
  const CHARTS = [
    { id: 'chart-announces', unit: '/s', series: OUTCOMES.map((o, i) => (
      { key: 'announce_' + o, label: o, cls: 's' + i })) },
    { id: 'chart-peers', unit: '', series: [
      { key: 'seeders', label: 'seeders', cls: 's0' },
      { key: 'leechers', label: 'leechers', cls: 's3' }] },
    { id: 'chart-health', unit: '', series: [
      { key: 'healthy', label: 'healthy', cls: 'h-healthy' },
      { key: 'degraded', label: 'degraded', cls: 'h-degraded' },
      { key: 'critical', label: 'critical', cls: 'h-critical' },
      { key: 'unevaluated', label: 'unevaluated', cls: 'h-unevaluated' }] },
    { id: 'chart-latency', unit: ' ms', series: [
      { key: 'latency_p50', label: 'p50', cls: 's0' },
      { key: 'latency_p99', label: 'p99', cls: 's2' }] },
    { id: 'chart-remediations', unit: '', series: [
      { key: 'remediations_started', label: 'started', cls: 's1' },
      { key: 'remediations_ended', label: 'ended', cls: 's0' }] },
  ];

  /// The ring: oldest first; each {at: ms (performance.now), v: {key: number|null}}.
  const samples = [];
  let counters = null;             // the previous poll's counters, for changes

  function sum(metrics, name, keep) {
    let total = null;
    for (const s of metrics[name] || []) {
      if (keep && !keep(s.labels)) continue;
      total = (total || 0) + s.value;
    }
    return total;
  }

  /// Cumulative latency buckets of both transports: [[upper bound s, count]],
  /// ascending, +Inf last.
  function buckets(metrics) {
    const byLe = new Map();
    for (const s of metrics.swarmkeeper_announce_latency_seconds_bucket || []) {
      const le = s.labels.le === '+Inf' ? Infinity : Number(s.labels.le);
      byLe.set(le, (byLe.get(le) || 0) + s.value);
    }
    return Array.from(byLe.entries()).sort((a, b) => a[0] - b[0]);
  }

  /// The q-quantile (seconds) of the announces between two bucket readings;
  /// null when none was answered (or the counters went back: a restart).
  function quantile(q, now, before) {
    if (!before || before.length !== now.length || now.length === 0) return null;
    const delta = now.map((b, i) => [b[0], b[1] - before[i][1]]);
    const total = delta[delta.length - 1][1];
    if (!(total > 0) || delta.some((b) => b[1] < 0)) return null;
    const rank = q * total;
    let lower = 0;
    let below = 0;
    for (const [le, n] of delta) {
      if (n >= rank) {
        if (le === Infinity) return lower;   // beyond the last bound: its floor
        const inBucket = n - below;
        return inBucket > 0 ? lower + (le - lower) * (rank - below) / inBucket : le;
      }
      lower = le;
      below = n;
    }
    return lower;
  }

  /// Adds one poll's sample from its parsed /metrics (name -> [{labels, value}]).
  function record(metrics, at) {
    const now = {
      at: at,
      outcome: {},
      started: sum(metrics, 'swarmkeeper_remediations_started_total'),
      ended: sum(metrics, 'swarmkeeper_remediations_ended_total'),
      buckets: buckets(metrics),
    };
    for (const o of OUTCOMES) {
      now.outcome[o] = sum(metrics, 'swarmkeeper_tracker_requests_total',
                           (l) => l.outcome === 'announce_' + o);
    }
    const v = {};
    const dt = counters ? (at - counters.at) / 1000 : 0;
    const change = (a, b) => (a === null || b === null || a < b ? null : a - b);
    for (const o of OUTCOMES) {
      const d = counters ? change(now.outcome[o], counters.outcome[o]) : null;
      v['announce_' + o] = d === null || !(dt > 0) ? null : d / dt;
    }
    const role = (r) => sum(metrics, 'swarmkeeper_peers_by_role', (l) => l.role === r);
    v.seeders = role('seeder');
    const leech = role('leecher');
    const partial = role('partial_seed');
    v.leechers = leech === null ? null : leech + (partial || 0);
    for (const h of ['healthy', 'degraded', 'critical', 'unevaluated']) {
      v[h] = sum(metrics, 'swarmkeeper_swarms', (l) => l.health === h);
    }
    const p50 = quantile(0.5, now.buckets, counters && counters.buckets);
    const p99 = quantile(0.99, now.buckets, counters && counters.buckets);
    v.latency_p50 = p50 === null ? null : p50 * 1000;
    v.latency_p99 = p99 === null ? null : p99 * 1000;
    v.remediations_started = counters ? change(now.started, counters.started) : null;
    v.remediations_ended = counters ? change(now.ended, counters.ended) : null;
    counters = now;
    samples.push({ at: at, v: v });
    while (samples.length > CAPACITY) samples.shift();
  }

  /// Forgets every sample (another token: maybe another daemon).
  function reset() {
    samples.length = 0;
    counters = null;
  }

  // -- drawing ------------------------------------------------------------------

  function svg(tag, attrs) {
    const e = document.createElementNS(SVG_NS, tag);
    for (const k of Object.keys(attrs || {})) e.setAttribute(k, String(attrs[k]));
    return e;
  }

  /// A round upper bound for the y axis: 1, 2 or 5 times a power of ten.
  function niceMax(x) {
    if (!(x > 0)) return 1;
    const p = Math.pow(10, Math.floor(Math.log10(x)));
    for (const m of [1, 2, 5, 10]) if (m * p >= x) return m * p;
    return 10 * p;
  }

  function label(x) {
    if (x >= 1e6) return (x / 1e6).toFixed(x % 1e6 === 0 ? 0 : 1) + 'M';
    if (x >= 1e4) return (x / 1e3).toFixed(0) + 'k';
    if (x >= 10 || x === Math.round(x)) return x.toFixed(0);
    return x < 1 ? x.toPrecision(2) : x.toFixed(1);
  }

  function latestText(value, unit) {
    if (value === null || value === undefined) return '–';
    const digits = value >= 100 || value === Math.round(value) ? 0 : value >= 10 ? 1 : 2;
    return value.toFixed(digits) + unit;
  }

  /// The time the x axis spans (ms): the samples kept, at least a minute,
  /// at most CAPACITY polls.
  function spanOf(pollMs, now) {
    const kept = samples.length ? now - samples[0].at : 0;
    return Math.min(CAPACITY * pollMs, Math.max(60000, kept));
  }

  function spanText(ms) {
    return ms >= 120000 ? '-' + Math.round(ms / 60000) + ' min'
      : '-' + Math.round(ms / 1000) + ' s';
  }

  /// Draws one chart into the <svg id=chart.id> and its legend (the element
  /// after it). The x axis ends now (see spanOf).
  function drawChart(chart, pollMs, now) {
    const root = document.getElementById(chart.id);
    if (!root) return;
    while (root.firstChild) root.removeChild(root.firstChild);
    root.setAttribute('viewBox', '0 0 ' + WIDTH + ' ' + HEIGHT);
    const plotW = WIDTH - LEFT - RIGHT;
    const plotH = HEIGHT - TOP - BOTTOM;
    const span = spanOf(pollMs, now);
    let peak = 0;
    for (const s of samples) {
      for (const series of chart.series) {
        const x = s.v[series.key];
        if (x !== null && x > peak) peak = x;
      }
    }
    const max = niceMax(peak);
    root.dataset.max = String(max);
    root.dataset.samples = String(samples.length);
    root.dataset.times = samples.map((s) => s.at.toFixed(1)).join(',');
    const xOf = (at) => LEFT + plotW * (1 - Math.min(span, Math.max(0, now - at)) / span);
    const yOf = (value) => TOP + plotH * (1 - value / max);

    // Grid: the axis, half and full scale, labelled.
    for (const f of [0, 0.5, 1]) {
      const y = TOP + plotH * (1 - f);
      root.appendChild(svg('line', { x1: LEFT, x2: WIDTH - RIGHT, y1: y, y2: y,
                                     class: f === 0 ? 'axis' : 'grid' }));
      const t = svg('text', { x: LEFT - 4, y: y + 4, class: 'ylabel' });
      t.textContent = label(max * f);
      root.appendChild(t);
    }
    for (const [f, text] of [[0, spanText(span)], [1, 'now']]) {
      const t = svg('text', { x: LEFT + plotW * f, y: HEIGHT - 5,
                              class: f === 0 ? 'xlabel start' : 'xlabel end' });
      t.textContent = text;
      root.appendChild(t);
    }

    const legend = root.nextElementSibling;
    if (legend) while (legend.firstChild) legend.removeChild(legend.firstChild);
    for (const series of chart.series) {
      const g = svg('g', { class: 'series ' + series.cls });
      g.dataset.series = series.key;
      g.dataset.values = samples.map((s) => {
        const x = s.v[series.key];
        return x === null || x === undefined ? '' : String(x);
      }).join(',');
      // One polyline per run of known values; a gap (no answer, a restart)
      // stays a gap.
      let run = [];
      const flush = () => {
        if (run.length === 1) {
          g.appendChild(svg('circle', { cx: run[0][0], cy: run[0][1], r: 1.8 }));
        } else if (run.length > 1) {
          g.appendChild(svg('polyline', { points: run.map((p) => p[0].toFixed(1) + ',' +
                                                           p[1].toFixed(1)).join(' ') }));
        }
        run = [];
      };
      for (const s of samples) {
        const x = s.v[series.key];
        if (x === null || x === undefined) flush();
        else run.push([xOf(s.at), yOf(x)]);
      }
      flush();
      root.appendChild(g);
      if (legend) {
        const last = samples.length ? samples[samples.length - 1].v[series.key] : null;
        const item = document.createElement('span');
        item.className = 'legend-item';
        item.dataset.series = series.key;
        const swatch = document.createElement('span');
        swatch.className = 'swatch ' + series.cls;
        item.appendChild(swatch);
        item.appendChild(document.createTextNode(series.label + ' '));
        const value = document.createElement('b');
        value.textContent = latestText(last, chart.unit);
        item.appendChild(value);
        legend.appendChild(item);
      }
    }
  }

  function draw(pollMs, now) {
    for (const chart of CHARTS) drawChart(chart, pollMs, now);
  }

  window.swarmkeeperCharts = Object.freeze({ record: record, draw: draw, reset: reset,
                                             quantile: quantile, capacity: CAPACITY });
})();
