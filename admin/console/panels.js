// swarmkeeper web console: the panels that list and change things (the
// page of swarms with its search, sort and paging; the events; the ban list;
// the access list) and the operator's actions, each sent only after a
// confirmation dialog. console.js polls and owns the shared helpers; it
// builds these panels with `window.swarmkeeperPanels(helpers)` and calls
// their render functions with each poll's answers. The rules of console.js
// hold here too: API data reaches the page through textContent only.
(function () {
  'use strict';

  const EVENTS_SHOWN = 200;

  window.swarmkeeperPanels = function (helpers) {
    const { $, el, cell, clear, setText, ago, rate, swarmRow, api, ApiError,
            pollNow, select, selectedHash, refused, showError } = helpers;

    // The swarm page: prefix (lower-case hex, '' for all), sort, size, offset.
    const browse = { prefix: '', sort: 'size', limit: 25, offset: 0, total: 0 };
    let accessMode = 'off';     // the access list's mode, from the last poll
    let eventsList = [];        // the last poll's events, newest first

    /// The query of the swarm page the form asks for.
    function browseQuery() {
      return (browse.prefix ? 'prefix=' + browse.prefix + '&' : '') + 'sort=' + browse.sort +
        '&limit=' + browse.limit + '&offset=' + browse.offset;
    }

    function renderBrowse(list) {
      const body = $('swarms-table').tBodies[0];
      clear(body);
      for (const s of list.swarms) {
        const row = swarmRow(s);
        row.appendChild(cell(s.peers, 'num'));
        row.appendChild(cell(s.seeders, 'num'));
        row.appendChild(cell(s.leechers, 'num'));
        row.appendChild(cell(s.partial_seeds, 'num'));
        row.appendChild(cell(s.downloaded, 'num'));
        row.appendChild(cell(rate(s.announce_rate), 'num'));
        row.appendChild(cell(s.policy));
        body.appendChild(row);
      }
      browse.total = list.total;
      const more = list.truncated ? '+' : '';
      const what = browse.prefix ? ' starting with ' + browse.prefix : '';
      setText('swarms-total', '(' + list.total + more + what + ')');
      setText('page-info', list.swarms.length === 0 ? 'none'
        : (list.offset + 1) + '–' + (list.offset + list.swarms.length) + ' of ' + list.total +
          more);
      $('page-prev').disabled = browse.offset === 0;
      $('page-next').disabled = browse.offset + browse.limit >= list.total;
      $('swarms-empty').hidden = list.swarms.length > 0;
    }

    // -- events, bans, access list -------------------------------------------------

    // Each filter by kind and detail. Operator actions are the operator-*
    // kinds and the restarts and remediations an operator caused (the
    // supervisor says so in the detail: "restarted by an operator",
    // "operator; ...", "stopped by an operator").
    const EVENT_GROUPS = {
      restarts: (k) => k === 'restart' || k === 'restart-fresh' || k === 'give-up',
      remediations: (k) => k.indexOf('remediation-') === 0,
      operator: (k, d) => k.indexOf('operator-') === 0 ||
        ((k.indexOf('restart') === 0 || k.indexOf('remediation-') === 0) &&
         /\boperator\b/.test(d || '')),
      health: (k) => k === 'health',
    };

    function eventClass(kind) {
      if (EVENT_GROUPS.restarts(kind)) return kind === 'give-up' ? 'ev-bad' : 'ev-warn';
      if (kind.indexOf('operator-') === 0) return 'ev-operator';
      return '';
    }

    function renderEvents(answer) {
      const list = Array.isArray(answer && answer.events) ? answer.events : [];
      // The log is oldest first; newest first here.
      eventsList = list.slice().reverse();
      drawEvents();
    }

    function drawEvents() {
      const filter = $('events-filter').value;
      const keep = EVENT_GROUPS[filter] || (() => true);
      const shown = eventsList.filter((e) => keep(String(e.kind), String(e.detail)))
        .slice(0, EVENTS_SHOWN);
      const body = $('events-table').tBodies[0];
      clear(body);
      for (const e of shown) {
        const row = el('tr');
        row.dataset.kind = String(e.kind);
        row.appendChild(cell(ago(e.age_seconds)));
        row.appendChild(cell(e.kind, eventClass(String(e.kind))));
        const h = cell(e.hash === null ? '–' : e.hash, 'hash');
        if (typeof e.hash === 'string') {
          h.classList.add('link');
          h.addEventListener('click', () => select(e.hash));
        }
        row.appendChild(h);
        row.appendChild(cell(e.detail, 'wrap'));
        body.appendChild(row);
      }
      $('events-empty').hidden = shown.length > 0;
      setText('events-total', '(' + shown.length + ' shown of ' + eventsList.length + ')');
    }

    function renderBans(answer) {
      const list = Array.isArray(answer && answer.bans) ? answer.bans : [];
      const body = $('bans-table').tBodies[0];
      clear(body);
      for (const b of list) {
        const row = el('tr');
        row.dataset.prefix = String(b.prefix);
        row.appendChild(cell(b.prefix, 'mono'));
        row.appendChild(cell(b.reason, 'wrap'));
        const td = el('td');
        const btn = el('button', 'Unban…');
        btn.type = 'button';
        btn.className = 'unban';
        btn.addEventListener('click', () => confirmed(
          'Lift the ban on this client prefix?', 'peer_id prefix "' + b.prefix + '"', 'Unban',
          () => api('/api/bans/' + encodeURIComponent(b.prefix), false, 'DELETE'),
          () => 'Unbanned "' + b.prefix + '".'));
        td.appendChild(btn);
        row.appendChild(td);
        body.appendChild(row);
      }
      $('bans-empty').hidden = list.length > 0;
      setText('bans-total', '(' + list.length + ')');
    }

    function renderAccess(a) {
      accessMode = a && typeof a.mode === 'string' ? a.mode : 'off';
      const off = accessMode === 'off';
      $('access-off').hidden = !off;
      $('access-detail').hidden = off;
      $('action-deny').disabled = off;
      $('action-deny').title = off ? 'the access list is off (access.mode)' : '';
      if (off) {
        setText('access-summary', '(off)');
        return;
      }
      const hashes = Array.isArray(a.hashes) ? a.hashes : [];
      setText('access-summary', '(' + accessMode + ' list: ' + a.count + ' info_hashes' +
              (hashes.length < a.count ? ', first ' + hashes.length + ' shown' : '') + ')');
      // An allow list serves what it names; a deny list refuses it.
      const listed = accessMode === 'allow' ? 'deny' : 'allow';
      const body = $('access-table').tBodies[0];
      clear(body);
      for (const h of hashes) {
        const row = el('tr');
        row.dataset.hash = String(h);
        row.appendChild(cell(h, 'hash'));
        const td = el('td');
        const btn = el('button', listed === 'allow' ? 'Allow…' : 'Deny…');
        btn.type = 'button';
        btn.addEventListener('click', () => accessAction(String(h), listed));
        td.appendChild(btn);
        row.appendChild(td);
        body.appendChild(row);
      }
      $('access-empty').hidden = hashes.length > 0;
    }

    // -- actions (each after a confirmation) ------------------------------------------

    let pendingConfirm = null;   // resolves the open dialog's promise

    /// Shows the dialog; resolves true on Confirm, false on Cancel or Escape.
    function ask(title, detail, okText) {
      const dialog = $('confirm-dialog');
      if (pendingConfirm !== null) pendingConfirm(false);
      setText('confirm-text', title);
      setText('confirm-detail', detail);
      setText('confirm-ok', okText || 'Confirm');
      return new Promise((resolve) => {
        pendingConfirm = (answer) => {
          pendingConfirm = null;
          if (dialog.open) dialog.close();
          resolve(answer);
        };
        dialog.showModal();
        $('confirm-cancel').focus();
      });
    }

    function showResult(message, ok) {
      const box = $('action-result');
      box.textContent = message;
      box.className = ok ? 'ok' : 'failed';
      box.hidden = false;
    }

    /// Asks, then sends; shows what the daemon answered and polls at once.
    async function confirmed(title, detail, okText, send, describe) {
      if (!(await ask(title, detail, okText))) {
        showResult('Cancelled: nothing was sent.', true);
        return;
      }
      try {
        const answer = await send();
        showResult(describe(answer), true);
      } catch (e) {
        if (e instanceof ApiError && e.status === 401) {
          refused(e.message);
          return;
        }
        const why = e instanceof ApiError
          ? (e.status === 0 ? 'no answer (' + e.message + ')' : e.status + ': ' + e.message)
          : String(e && e.message || e);
        showResult('Failed: ' + why, false);
      }
      pollNow();
    }

    /// Only 40 lower-case hex digits go into an action's URL, wherever the
    /// hash came from (a row, an event, the lookup box).
    function isHash(hash) {
      return typeof hash === 'string' && /^[0-9a-f]{40}$/.test(hash);
    }

    function swarmPath(hash, what) {
      if (!isHash(hash)) throw new Error('not an info_hash: ' + hash);
      return '/api/swarms/' + hash + '/' + what;
    }

    function accessAction(hash, how) {
      if (!isHash(hash)) {
        showResult('An info_hash is 40 hex digits.', false);
        return;
      }
      const refuse = how === 'deny';
      confirmed(refuse ? 'Deny this torrent? Its swarm ends and its peers are dropped.'
        : 'Serve this torrent again?', 'info_hash ' + hash + ' (' + accessMode + ' list)',
      refuse ? 'Deny' : 'Allow',
      () => api('/api/access/' + hash + '/' + how, false, 'POST'),
      (r) => refuse ? 'Denied ' + hash + (r.swarm_ended ? '; its swarm ended (' +
        r.peers_dropped + ' peers dropped).' : '.') : 'Allowed ' + hash + '.');
    }

    function startActions() {
      $('confirm-form').addEventListener('submit', (ev) => {
        ev.preventDefault();
        if (pendingConfirm !== null) pendingConfirm(true);
      });
      $('confirm-cancel').addEventListener('click', () => {
        if (pendingConfirm !== null) pendingConfirm(false);
      });
      $('confirm-dialog').addEventListener('close', () => {
        if (pendingConfirm !== null) pendingConfirm(false);
      });
      $('action-policy').addEventListener('click', () => {
        const hash = selectedHash();
        const policy = $('policy-select').value;
        if (hash === null) return;
        confirmed(policy === 'default' ? 'Unpin the policy of this swarm (back to the default)?'
          : 'Pin the allocation policy "' + policy + '" on this swarm?', 'info_hash ' + hash,
        'Set policy', () => api(swarmPath(hash, 'policy'), false, 'POST', { policy: policy }),
        (r) => 'Policy of ' + hash + ': ' + r.previous + ' → ' + r.policy +
          (r.pinned ? ' (pinned)' : ''));
      });
      $('action-restart').addEventListener('click', () => {
        const hash = selectedHash();
        if (hash === null) return;
        confirmed('Restart the actor of this swarm? It restarts from its last state.',
          'info_hash ' + hash, 'Restart', () => api(swarmPath(hash, 'restart'), false, 'POST'),
          (r) => 'Restarting ' + hash + ' (actor ' + r.old_actor_id + ' replaced).');
      });
      $('action-remediation-start').addEventListener('click', () => {
        const hash = selectedHash();
        if (hash === null) return;
        confirmed('Start a remediation of this swarm?', 'info_hash ' + hash, 'Start',
          () => api(swarmPath(hash, 'remediation/start'), false, 'POST'),
          () => 'Remediation of ' + hash + ' started.');
      });
      $('action-remediation-stop').addEventListener('click', () => {
        const hash = selectedHash();
        if (hash === null) return;
        confirmed('Stop the remediation of this swarm? Its settings go back to what they were.',
          'info_hash ' + hash, 'Stop',
          () => api(swarmPath(hash, 'remediation/stop'), false, 'POST'),
          () => 'Remediation of ' + hash + ' stopped.');
      });
      $('action-deny').addEventListener('click', () => {
        const hash = selectedHash();
        if (hash !== null) accessAction(hash, 'deny');
      });
      $('ban-form').addEventListener('submit', (ev) => {
        ev.preventDefault();
        const prefix = $('ban-prefix').value;
        const reason = $('ban-reason').value.trim();
        if (prefix === '' || reason === '') {
          showResult('A ban needs a peer_id prefix and a reason.', false);
          return;
        }
        confirmed('Ban every client whose peer_id starts with this prefix?',
          'prefix "' + prefix + '", reason "' + reason + '"', 'Ban',
          () => api('/api/bans', false, 'POST', { prefix: prefix, reason: reason }),
          (r) => {
            $('ban-prefix').value = '';
            $('ban-reason').value = '';
            return 'Banned "' + r.prefix + '": ' + r.reason;
          });
      });
      const accessInput = (how) => {
        const value = $('access-input').value.trim().toLowerCase();
        if (!/^[0-9a-f]{40}$/.test(value)) {
          showResult('An info_hash is 40 hex digits.', false);
          return;
        }
        accessAction(value, how);
      };
      $('access-allow').addEventListener('click', () => accessInput('allow'));
      $('access-deny').addEventListener('click', () => accessInput('deny'));
      $('events-filter').addEventListener('change', drawEvents);
      $('search-form').addEventListener('submit', (ev) => {
        ev.preventDefault();
        const value = $('search-input').value.trim().toLowerCase();
        if (value !== '' && !/^[0-9a-f]{1,40}$/.test(value)) {
          showError('Search by the first hex digits of an info_hash (0-9, a-f).');
          return;
        }
        showError(null);
        browse.prefix = value;
        browse.offset = 0;
        pollNow();
      });
      const resort = () => {
        browse.sort = $('sort-select').value;
        browse.limit = Number($('page-size').value);
        browse.offset = 0;
        pollNow();
      };
      $('sort-select').addEventListener('change', resort);
      $('page-size').addEventListener('change', resort);
      $('page-prev').addEventListener('click', () => {
        browse.offset = Math.max(0, browse.offset - browse.limit);
        pollNow();
      });
      $('page-next').addEventListener('click', () => {
        if (browse.offset + browse.limit < browse.total) browse.offset += browse.limit;
        pollNow();
      });
    }

    return Object.freeze({ browseQuery: browseQuery, renderBrowse: renderBrowse,
                           renderEvents: renderEvents, renderBans: renderBans,
                           renderAccess: renderAccess, start: startActions });
  };
})();
