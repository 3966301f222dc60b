// swarmkeeper web console: polls the admin API every POLL_MS and renders the
// node, the swarm counts by health, the unhealthy swarms, one swarm's detail
// and the cluster; the charts are charts.js, the page of swarms, the events,
// the ban and access lists and the operator's actions panels.js.
//
// Security rules of this file (the daemon also sends a strict CSP):
// - Every string from the API reaches the page through textContent (the el()
//   helper below); nothing here ever parses markup (no HTML setters or
//   writers; tests/console checks) or builds it from data. Peer ids are raw
//   bytes chosen by whoever announces, so they are shown as escaped text.
// - The admin token lives in sessionStorage (this tab only, gone when it is
//   closed) and travels only in the Authorization header, never in a URL.
//   A "#token=..." fragment (never sent to the server) is read once and then
//   removed from the address bar and the history entry.
(function () {
  'use strict';

  const POLL_MS = 2000;
  const FETCH_TIMEOUT_MS = 8000;
  const TOKEN_KEY = 'swarmkeeper.admin-token';
  const UNHEALTHY_LIMIT = 100;
  const HEALTH_STATES = ['healthy', 'degraded', 'critical', 'unevaluated'];

  const $ = (id) => document.getElementById(id);

  // -- state -------------------------------------------------------------------

  let token = null;
  let selected = null;        // info_hash (lower-case hex) shown in the detail view
  let timer = null;           // the pending poll
  let inFlight = false;       // a poll is running
  let again = false;          // poll once more as soon as the running one ends
  let generation = 0;         // bumped on token change: stale polls are ignored
  let lastUpdated = null;     // Date of the last complete successful poll
  let previous = null;        // counters of the previous poll, for rates
  const charts = window.swarmkeeperCharts;
  let panels = null;          // panels.js, built in start()

  // -- DOM helpers (text only) -------------------------------------------------

  /// Creates an element; `text` goes through textContent, `cls` into className.
  function el(tag, text, cls) {
    const e = document.createElement(tag);
    if (text !== undefined && text !== null) e.textContent = String(text);
    if (cls) e.className = cls;
    return e;
  }

  function setText(id, text) {
    $(id).textContent = text === undefined || text === null ? '' : String(text);
  }

  function clear(node) {
    while (node.firstChild) node.removeChild(node.firstChild);
  }

  function cell(text, cls) {
    return el('td', text, cls);
  }

  function stateCell(state) {
    return el('td', state, 'state-' + safeClass(state));
  }

  /// Only the four known states become class names (the others get none).
  function safeClass(state) {
    return HEALTH_STATES.indexOf(state) >= 0 ? state : 'unknown';
  }

  function tags(list) {
    const td = el('td', null, 'wrap');
    if (!Array.isArray(list) || list.length === 0) {
      td.textContent = '–';
      return td;
    }
    for (const item of list) td.appendChild(el('span', item, 'tag'));
    return td;
  }

  function tagsInto(id, list) {
    const node = $(id);
    clear(node);
    if (!Array.isArray(list) || list.length === 0) {
      node.textContent = '–';
      return;
    }
    for (const item of list) node.appendChild(el('span', item, 'tag'));
  }

  // -- formatting --------------------------------------------------------------

  function num(x, digits) {
    if (x === null || x === undefined || Number.isNaN(x)) return '–';
    return Number(x).toFixed(digits === undefined ? 0 : digits);
  }

  function rate(x) {
    if (x === null || x === undefined) return '–';
    return x < 10 ? Number(x).toFixed(2) : Number(x).toFixed(1);
  }

  function bytes(n) {
    if (n === null || n === undefined) return '–';
    const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
    let v = Number(n);
    let u = 0;
    while (v >= 1024 && u < units.length - 1) {
      v /= 1024;
      ++u;
    }
    return (u === 0 ? String(v) : v.toFixed(1)) + ' ' + units[u];
  }

  function duration(seconds) {
    if (seconds === null || seconds === undefined) return '–';
    let s = Math.max(0, Math.floor(Number(seconds)));
    const d = Math.floor(s / 86400);
    s -= d * 86400;
    const h = Math.floor(s / 3600);
    s -= h * 3600;
    const m = Math.floor(s / 60);
    s -= m * 60;
    if (d > 0) return d + 'd ' + h + 'h ' + m + 'm';
    if (h > 0) return h + 'h ' + m + 'm ' + s + 's';
    if (m > 0) return m + 'm ' + s + 's';
    return s + 's';
  }

  function ago(seconds) {
    return seconds === null || seconds === undefined ? '–' : duration(seconds) + ' ago';
  }

  function percent(p) {
    return p === null || p === undefined ? '–' : (Number(p) * 100).toFixed(1) + ' %';
  }

  /// A peer_id (40 hex digits from the API) as text: printable ASCII as is,
  /// a backslash as "\\", any other byte as "\xNN". The result is only ever
  /// put into textContent.
  function peerIdText(hex) {
    if (typeof hex !== 'string' || !/^[0-9a-fA-F]*$/.test(hex) || hex.length % 2 !== 0) {
      return String(hex);
    }
    let out = '';
    for (let i = 0; i < hex.length; i += 2) {
      const b = parseInt(hex.substr(i, 2), 16);
      if (b === 0x5c) out += '\\\\';
      else if (b >= 0x20 && b < 0x7f) out += String.fromCharCode(b);
      else out += '\\x' + hex.substr(i, 2).toLowerCase();
    }
    return out;
  }

  function address(p) {
    const a = String(p.address);
    return (a.indexOf(':') >= 0 ? '[' + a + ']' : a) + ':' + p.port;
  }

  function clock(date) {
    const two = (n) => (n < 10 ? '0' : '') + n;
    return two(date.getHours()) + ':' + two(date.getMinutes()) + ':' + two(date.getSeconds());
  }

  // -- the API -----------------------------------------------------------------

  class ApiError extends Error {
    constructor(status, message, path) {
      super(message);
      this.status = status;   // 0: no answer (network error or timeout)
      this.path = path;
    }
  }

  /// GETs `path` with the token; resolves to parsed JSON (or text when
  /// `asText`); rejects with ApiError. `method` and `payload` (an object, sent
  /// as JSON) make it another request.
  async function api(path, asText, method, payload) {
    const ctrl = new AbortController();
    const t = setTimeout(() => ctrl.abort(), FETCH_TIMEOUT_MS);
    let res;
    const headers = { Authorization: 'Bearer ' + token };
    if (payload !== undefined) headers['Content-Type'] = 'application/json';
    try {
      res = await fetch(path, {
        method: method || 'GET',
        headers: headers,
        body: payload === undefined ? undefined : JSON.stringify(payload),
        cache: 'no-store',
        credentials: 'omit',
        redirect: 'error',
        signal: ctrl.signal,
      });
    } catch (e) {
      const why = e && e.name === 'AbortError'
        ? 'no answer within ' + FETCH_TIMEOUT_MS / 1000 + ' s'
        : (e && e.message) || 'network error';
      throw new ApiError(0, why, path);
    } finally {
      clearTimeout(t);
    }
    const body = await res.text().catch(() => '');
    if (!res.ok) {
      let message = res.statusText || 'error';
      try {
        const j = JSON.parse(body);
        if (j && typeof j.error === 'string') message = j.error;
      } catch (ignored) { /* not JSON: keep the status text */ }
      throw new ApiError(res.status, message, path);
    }
    if (asText) return body;
    try {
      return JSON.parse(body);
    } catch (e) {
      throw new ApiError(res.status, 'the answer is not JSON', path);
    }
  }

  /// Samples of the Prometheus text: name -> [{labels: {k: v}, value}].
  function parseMetrics(text) {
    const out = {};
    for (const line of text.split('\n')) {
      if (line === '' || line[0] === '#') continue;
      const m = /^([A-Za-z_:][A-Za-z0-9_:]*)(?:\{([^}]*)\})?\s+(\S+)$/.exec(line);
      if (!m) continue;
      const labels = {};
      const re = /([A-Za-z_][A-Za-z0-9_]*)="((?:[^"\\]|\\.)*)"/g;
      let l;
      while ((l = re.exec(m[2] || '')) !== null) labels[l[1]] = l[2];
      (out[m[1]] = out[m[1]] || []).push({ labels: labels, value: Number(m[3]) });
    }
    return out;
  }

  function metric(metrics, name, label, value) {
    for (const s of metrics[name] || []) {
      if (label === undefined || s.labels[label] === value) return s.value;
    }
    return null;
  }

  // -- polling -----------------------------------------------------------------

  function schedule(ms) {
    if (timer !== null) clearTimeout(timer);
    timer = setTimeout(poll, ms);
  }

  /// Polls at once (after a click): now if idle, else right after the
  /// running poll.
  function pollNow() {
    if (inFlight) {
      again = true;
      return;
    }
    schedule(0);
  }

  function stopPolling() {
    if (timer !== null) clearTimeout(timer);
    timer = null;
    again = false;
  }

  async function poll() {
    timer = null;
    if (token === null) return;
    inFlight = true;
    const gen = generation;
    const hash = selected;
    try {
      const detail = hash === null ? Promise.resolve(null)
        : api('/api/swarms/' + hash).catch((e) => {
          // A swarm may end or restart while shown: say so in the detail view
          // instead of failing the whole update. Token and network errors
          // still fail it.
          if (e.status === 404 || e.status === 503 || e.status === 504) return { missing: e };
          throw e;
        });
      const page = panels.browseQuery();
      const [node, metricsText, unhealthy, listed, remediations, swarm, cluster, events, bans,
             access] =
        await Promise.all([
          api('/api/node'),
          api('/metrics', true),
          api('/api/swarms?health=unhealthy&sort=size&limit=' + UNHEALTHY_LIMIT),
          api('/api/swarms?' + page),
          api('/api/remediations'),
          detail,
          api('/api/cluster'),
          api('/api/events'),
          api('/api/bans'),
          api('/api/access'),
        ]);
      if (gen !== generation) return;
      const metrics = parseMetrics(metricsText);
      const at = performance.now();
      charts.record(metrics, at);
      charts.draw(POLL_MS, at);
      renderNode(node, metrics);
      renderCounts(metrics);
      renderUnhealthy(unhealthy, remediations);
      if (page === panels.browseQuery()) panels.renderBrowse(listed);
      renderCluster(cluster);
      panels.renderEvents(events);
      panels.renderBans(bans);
      panels.renderAccess(access);
      if (hash !== null && hash === selected) renderDetail(hash, swarm, remediations);
      lastUpdated = new Date();
      $('last-updated').dateTime = lastUpdated.toISOString();
      showError(null);
      $('dashboard').hidden = false;
      $('login').hidden = true;
      $('forget-token').hidden = false;
      tick();
    } catch (e) {
      if (gen !== generation) return;
      if (e instanceof ApiError && e.status === 401) {
        refused(e.message);
        return;
      }
      const what = e instanceof ApiError ? e : new ApiError(-1, String(e && e.message || e), '');
      if (what.status === 0) {
        showError('Cannot reach the daemon at ' + location.host + ' (' + what.message + '). ' +
                  staleNote() + ' Retrying every ' + POLL_MS / 1000 + ' s.');
        setText('status-line', 'unreachable');
      } else if (what.status > 0) {
        showError('The daemon answered ' + what.status + ' to ' + what.path + ': ' + what.message +
                  '. ' + staleNote());
      } else {
        showError('The console failed to show the answer: ' + what.message + '. ' + staleNote());
      }
    } finally {
      if (gen === generation) {
        inFlight = false;
        if (token !== null) schedule(again ? 0 : POLL_MS);
        again = false;
      }
    }
  }

  function staleNote() {
    return lastUpdated === null ? 'No data yet.'
      : 'The data shown is from ' + clock(lastUpdated) + '.';
  }

  function showError(message) {
    const banner = $('error-banner');
    if (message === null) {
      banner.hidden = true;
      banner.textContent = '';
    } else {
      banner.textContent = message;
      banner.hidden = false;
    }
  }

  /// The token was refused: forget it and ask again.
  function refused(message) {
    forgetToken();
    showError('The daemon refused the admin token (401: ' + message + '). ' +
              'Enter the token from the daemon\'s admin.token setting.');
    setText('status-line', 'token refused');
  }

  // -- rendering ---------------------------------------------------------------

  function renderNode(node, metrics) {
    const now = performance.now();
    const admin = (node.requests && node.requests.admin) || {};
    const udp = node.requests && node.requests.udp;
    const http = node.requests && node.requests.http;
    const sample = {
      at: now,
      announces: (metrics.swarmkeeper_announces_total || []).reduce((n, s) => n + s.value, 0),
      udp: udp ? udp.received : null,
      admin: (admin.ok || 0) + (admin.client_errors || 0) + (admin.server_errors || 0) +
             (admin.unauthorized || 0),
    };
    // Rates from two polls' counters (announces: both transports'
    // swarmkeeper_announces_total). A restarted daemon starts them at 0
    // again: never show a negative rate.
    const per = (key) => {
      if (previous === null || sample[key] === null || previous[key] === null) return null;
      const dt = (sample.at - previous.at) / 1000;
      return dt > 0 ? Math.max(0, sample[key] - previous[key]) / dt : null;
    };
    const row = el('tr');
    row.dataset.node = node.node;
    row.appendChild(cell(node.node, 'mono'));
    row.appendChild(cell(node.version));
    row.appendChild(cell(duration(node.uptime_seconds)));
    row.appendChild(cell(node.actors ? node.actors.swarms : '–', 'num'));
    row.appendChild(cell(node.actors ? node.actors.running : '–', 'num'));
    row.appendChild(cell(rate(per('announces')), 'num'));
    row.appendChild(cell(udp ? rate(per('udp')) : 'off', 'num'));
    row.appendChild(cell(http ? http.connections : 'off', 'num'));
    row.appendChild(cell(rate(per('admin')), 'num'));
    row.appendChild(cell(bytes(node.memory && node.memory.resident_bytes), 'num'));
    row.appendChild(cell(node.scheduler_threads, 'num'));
    // One node today; the table takes one row per node of a cluster.
    const body = $('nodes-table').tBodies[0];
    clear(body);
    body.appendChild(row);
    previous = sample;
    setText('status-line', 'connected to ' + node.node + ' (swarmkeeper ' + node.version + ')');
  }

  function renderCounts(metrics) {
    let total = 0;
    for (const state of HEALTH_STATES) {
      const n = metric(metrics, 'swarmkeeper_swarms', 'health', state);
      setText('count-' + state, n === null ? '–' : n);
      total += n || 0;
    }
    setText('count-total', total);
    setText('count-remediations', num(metric(metrics, 'swarmkeeper_remediations_active')));
  }

  function remediationText(entry) {
    if (!entry) return '–';
    const actions = Array.isArray(entry.actions) ? entry.actions : [];
    if (actions.length === 0) return 'running';
    const last = actions[actions.length - 1];
    return 'running: ' + last.action + (last.strategy ? ' ' + last.strategy : '');
  }

  /// A table row for swarm `s` that selects it when clicked, starting with
  /// its hash and health cells (every swarm table has those first).
  function swarmRow(s) {
    const row = el('tr');
    row.dataset.hash = s.hash;
    if (s.hash === selected) row.className = 'selected';
    row.addEventListener('click', () => select(s.hash));
    row.appendChild(cell(s.hash, 'hash'));
    row.appendChild(stateCell(s.health));
    return row;
  }

  function renderUnhealthy(list, remediations) {
    const running = {};
    for (const r of (remediations && remediations.active) || []) running[r.hash] = r;
    const body = $('unhealthy-table').tBodies[0];
    clear(body);
    for (const s of list.swarms) {
      const row = swarmRow(s);
      row.appendChild(tags(s.reasons));
      row.appendChild(cell(s.peers, 'num'));
      row.appendChild(cell(s.seeders, 'num'));
      row.appendChild(cell(s.leechers, 'num'));
      row.appendChild(cell(rate(s.announce_rate), 'num'));
      row.appendChild(cell(s.policy));
      row.appendChild(cell(remediationText(running[s.hash])));
      body.appendChild(row);
    }
    $('unhealthy-empty').hidden = list.swarms.length > 0;
    setText('unhealthy-total', list.total > list.swarms.length
      ? '(' + list.swarms.length + ' largest of ' + list.total + ')'
      : '(' + list.total + ')');
  }

  /// The cluster panel: "single node" when clustering is off, else the
  /// members as the answering node sees them and the recorded migrations.
  function renderCluster(c) {
    const single = !c.enabled;
    $('cluster-single').hidden = !single;
    $('cluster-detail').hidden = single;
    const members = Array.isArray(c.members) ? c.members : [];
    if (single) {
      setText('cluster-summary', '');
      return;
    }
    const live = members.filter((m) => m.state === 'live').length;
    setText('cluster-summary', '(' + live + ' of ' + members.length + ' live, seen from ' +
            c.node + ')');
    const body = $('members-table').tBodies[0];
    clear(body);
    for (const m of members) {
      const row = el('tr');
      row.appendChild(cell(m.self ? m.name + ' (this node)' : m.name));
      const known = ['live', 'suspect', 'left', 'gone'].indexOf(m.state) >= 0;
      row.appendChild(cell(m.state, known ? 'member-' + m.state : ''));
      row.appendChild(cell(m.address === null ? '–' : m.address, 'mono'));
      row.appendChild(cell(m.swarms === null ? 'unknown' : m.swarms, 'num'));
      row.appendChild(cell(m.handoffs_pending === null ? '–' : m.handoffs_pending, 'num'));
      body.appendChild(row);
    }
    const migrations = Array.isArray(c.migrations) ? c.migrations : [];
    const mbody = $('migrations-table').tBodies[0];
    clear(mbody);
    for (const r of migrations) {
      const row = el('tr');
      row.appendChild(cell(typeof r.finished_ms === 'number'
        ? clock(new Date(r.finished_ms)) : '–'));
      row.appendChild(cell(r.from === null ? '–' : r.from));
      row.appendChild(cell(r.to));
      row.appendChild(cell(r.hash, 'hash'));
      row.appendChild(cell(r.reason));
      row.appendChild(cell(r.peers, 'num'));
      mbody.appendChild(row);
    }
    $('migrations-table').hidden = migrations.length === 0;
    $('migrations-empty').hidden = migrations.length !== 0;
    setText('migrations-total', c.handoffs_pending > 0
      ? '(' + c.handoffs_pending + ' swarms being handed over now)' : '');
  }

  function signals(s) {
    if (!s) return '–';
    return s.state + ' (' + s.seeders + ' S / ' + s.leechers + ' L, ' + s.stalled + ' stalled)';
  }

  function renderDetail(hash, s, remediations) {
    $('detail').hidden = false;
    setText('detail-hash', hash);
    const running = ((remediations && remediations.active) || []).some((r) => r.hash === hash);
    $('action-remediation-stop').disabled = !running;
    $('action-remediation-start').disabled = running;
    if (s && s.missing) {
      const e = s.missing;
      setText('detail-missing', e.status === 404
        ? 'This swarm no longer exists (no peers left, or never announced).'
        : 'The swarm did not answer (' + e.status + ': ' + e.message + '); showing older data.');
      $('detail-missing').hidden = false;
      if (e.status === 404) {
        clear($('peers-table').tBodies[0]);
        clear($('history-table').tBodies[0]);
        setText('detail-peer-count', '');
      }
      return;
    }
    $('detail-missing').hidden = true;
    const h = s.health_detail || {};
    const state = $('detail-state');
    state.textContent = h.state;
    state.className = 'state-' + safeClass(h.state);
    tagsInto('detail-reasons', h.reasons);
    setText('detail-roles', s.seeders + ' / ' + s.leechers);
    setText('detail-stalled', h.stalled + ' / ' + h.quarantined);
    setText('detail-completion-rate', rate(h.completion_rate));
    setText('detail-announce-rate', rate(h.announce_rate));
    setText('detail-progress',
            percent(h.progress_p25) + ' / ' + percent(h.progress_median) + ' / ' +
            percent(h.progress_p75));
    setText('detail-evaluated', h.evaluated ? ago(h.age_seconds) : 'not yet');
    const k = s.knobs || {};
    setText('detail-policy', k.policy);
    setText('detail-pinned', s.policy_pinned === true ? 'policy pinned by an operator'
      : s.policy_pinned === false ? 'policy not pinned' : '');
    const iv = s.interval || {};
    setText('detail-interval', iv.scaled_seconds + ' s (base ' + iv.base_seconds + ' s, min ' +
            iv.min_seconds + ' s, scale ' + k.interval_scale + ')');
    setText('detail-leecher-scale', k.leecher_interval_scale);
    setText('detail-knobs', (k.seeder_warning ? 'on' : 'off') + ' / ' +
            (k.quarantine_strict ? 'on' : 'off'));
    setText('detail-actor', s.actor_id + ' / ' + s.owner_node);
    const c = s.counters || {};
    setText('detail-counters',
            c.announces + ' / ' + c.refused + ' / ' + c.warned + ' / ' + c.banned);

    const peers = Array.isArray(s.peers_listed) ? s.peers_listed : [];
    setText('detail-peer-count', peers.length < s.peer_count
      ? '(first ' + peers.length + ' of ' + s.peer_count + ')'
      : '(' + s.peer_count + ')');
    const pbody = $('peers-table').tBodies[0];
    clear(pbody);
    for (const p of peers) {
      const row = el('tr');
      row.appendChild(cell(address(p), 'mono'));
      const id = cell(peerIdText(p.peer_id), 'mono peer-id');
      id.title = p.peer_id;   // the exact bytes, in hex
      row.appendChild(id);
      row.appendChild(cell(p.client));
      row.appendChild(cell(p.seeder ? 'seeder' : 'leecher'));
      row.appendChild(cell(p.left, 'num'));
      const prog = el('td', null, 'num');
      if (p.progress !== null && p.progress !== undefined) {
        const meter = el('meter');
        meter.min = 0;
        meter.max = 1;
        meter.value = Number(p.progress);
        prog.appendChild(meter);
        prog.appendChild(document.createTextNode(' ' + percent(p.progress)));
      } else {
        prog.textContent = '–';
      }
      row.appendChild(prog);
      row.appendChild(cell(p.announces, 'num'));
      row.appendChild(tags(p.flags));
      pbody.appendChild(row);
    }

    const history = Array.isArray(s.remediation_history) ? s.remediation_history : [];
    const hbody = $('history-table').tBodies[0];
    clear(hbody);
    for (let i = history.length - 1; i >= 0; --i) {   // newest first
      const r = history[i];
      const row = el('tr');
      row.appendChild(cell(ago(r.age_seconds)));
      row.appendChild(cell(r.action));
      row.appendChild(cell(r.strategy));
      row.appendChild(cell(r.reason));
      row.appendChild(cell(r.detail, 'wrap'));
      row.appendChild(cell(signals(r.before)));
      row.appendChild(cell(signals(r.after)));
      hbody.appendChild(row);
    }
    $('history-empty').hidden = history.length > 0;
  }

  function markSelected() {
    for (const id of ['unhealthy-table', 'swarms-table']) {
      for (const row of $(id).tBodies[0].rows) {
        row.className = row.dataset.hash === selected ? 'selected' : '';
      }
    }
  }

  function select(hash) {
    const next = hash === null ? null : String(hash).toLowerCase();
    // Another swarm: the policy choice starts over, never carried across.
    if (next !== selected) $('policy-select').value = 'default';
    selected = next;
    markSelected();
    if (selected === null) {
      $('detail').hidden = true;
      return;
    }
    $('detail').hidden = false;
    setText('detail-hash', selected);
    pollNow();
  }

  // -- "last updated" ----------------------------------------------------------

  function tick() {
    if (lastUpdated === null) return;
    const age = Math.max(0, Math.round((Date.now() - lastUpdated.getTime()) / 1000));
    setText('last-updated', clock(lastUpdated) + ' (' + age + ' s ago)');
  }

  // -- token -------------------------------------------------------------------

  function useToken(value) {
    token = value;
    ++generation;
    inFlight = false;
    previous = null;
    charts.reset();
    try {
      sessionStorage.setItem(TOKEN_KEY, value);
    } catch (ignored) { /* storage off: the token lives in this page only */ }
    setText('status-line', 'connecting…');
    stopPolling();
    schedule(0);
  }

  function forgetToken() {
    token = null;
    ++generation;
    inFlight = false;
    stopPolling();
    try {
      sessionStorage.removeItem(TOKEN_KEY);
    } catch (ignored) { /* nothing stored */ }
    $('dashboard').hidden = true;
    $('forget-token').hidden = true;
    $('login').hidden = false;
    setText('status-line', 'not connected');
    $('token-input').focus();
  }

  /// Takes a token from "#token=..." and removes it from the address bar.
  function tokenFromFragment() {
    const m = /^#token=([^&]*)/.exec(location.hash);
    if (!m) return null;
    history.replaceState(null, '', location.pathname + location.search);
    let value = m[1];
    try {
      value = decodeURIComponent(value);
    } catch (ignored) { /* not percent-encoded: take it as it is */ }
    return value.trim() === '' ? null : value.trim();
  }

  function start() {
    $('token-form').addEventListener('submit', (ev) => {
      ev.preventDefault();
      const value = $('token-input').value.trim();
      $('token-input').value = '';
      if (value === '') {
        showError('Enter the admin token.');
        return;
      }
      showError(null);
      useToken(value);
    });
    $('forget-token').addEventListener('click', () => {
      showError(null);
      forgetToken();
    });
    $('detail-close').addEventListener('click', () => select(null));
    panels = window.swarmkeeperPanels({
      $: $, el: el, cell: cell, clear: clear, setText: setText, ago: ago, rate: rate,
      swarmRow: swarmRow, api: api, ApiError: ApiError,
      pollNow: pollNow, select: select, selectedHash: () => selected, refused: refused,
      showError: showError,
    });
    panels.start();
    $('lookup-form').addEventListener('submit', (ev) => {
      ev.preventDefault();
      const value = $('lookup-input').value.trim();
      if (!/^[0-9a-fA-F]{40}$/.test(value)) {
        showError('An info_hash is 40 hex digits.');
        return;
      }
      showError(null);
      select(value);
    });
    window.addEventListener('hashchange', () => {
      const t = tokenFromFragment();
      if (t !== null) useToken(t);
    });
    setInterval(tick, 1000);

    let initial = tokenFromFragment();
    if (initial === null) {
      try {
        initial = sessionStorage.getItem(TOKEN_KEY);
      } catch (ignored) { /* storage off */ }
    }
    if (initial) {
      useToken(initial);
    } else {
      forgetToken();
    }
  }

  start();
})();
