// The admin page's static parts (admin_page.h): its script, its style and
// the skeleton of its live section. Plain JavaScript, no library, nothing
// fetched from elsewhere. Everything the server sends reaches the page as
// text (textContent, setAttribute), never as markup: destination names come
// from folders, errors and client addresses from the network.
#include "canal/server/admin_page.h"

namespace canal::server {

namespace {

constexpr std::string_view kSection = R"HTML(<section id="admin">
<h2>Destinations</h2>
<div class="token"><label for="token">Admin token</label>
<input id="token" type="password" autocomplete="off" spellcheck="false" size="44">
<button id="forget" type="button">forget</button>
<span class="note">kept in this browser tab only (sessionStorage) and sent as Authorization: Bearer with each
stop, start or restart</span></div>
<p id="message" role="status" aria-live="polite"></p>
<table id="destinations"><thead><tr><th>destination</th><th>state</th><th>detail</th><th>position</th><th>lag</th>
<th>client</th><th>rows/s</th><th>lag history</th><th>actions</th></tr></thead>
<tbody id="destinations-body"></tbody></table>
<p id="updated" class="note">loading&hellip;</p>
<noscript><p class="note">The live table and the actions need JavaScript; the details below are as of this
page load.</p></noscript>
</section>
)HTML";

constexpr std::string_view kStyle = R"CSS(body{font-family:sans-serif;margin:1em 2em}
table{border-collapse:collapse;margin-bottom:1em}
th,td{border:1px solid #ccc;padding:2px 8px;text-align:left;vertical-align:middle}
.bad{color:#b00}.ok{color:#070}.note{color:#666;font-size:90%}
.token{margin:.5em 0}
#message{min-height:1.2em;font-weight:bold}
td.state.running{color:#070}td.state.stopped,td.state.failed{color:#b00}td.state.standby{color:#a60}
td.position{font-family:monospace}
svg.spark{vertical-align:middle;background:#f6f6f6}
svg.spark polyline{fill:none;stroke:#36c;stroke-width:1.5}
td.lag-history svg.spark polyline{stroke:#c63}
.spark-label{margin-left:.5em;font-size:90%}
td.actions button{margin-right:.3em}
)CSS";

constexpr std::string_view kScript = R"JS('use strict';
// canal-server admin page (docs/admin.md, "The page").
(function () {
  const POLL_MS = 2000;
  const TOKEN_KEY = 'canal.admin.token';
  const W = 120, H = 24;  // sparkline size
  const SVG = 'http://www.w3.org/2000/svg';
  const WHY = {400: 'bad request', 401: 'the admin token was refused', 403: 'forbidden', 404: 'not found',
               405: 'method not allowed', 413: 'request too large', 415: 'unsupported content type',
               500: 'the action failed', 503: 'unavailable'};
  const $ = (id) => document.getElementById(id);
  const tokenInput = $('token');
  const message = $('message');
  const body = $('destinations-body');
  const rows = new Map();  // destination name -> its row's cells
  let busy = false;
  let seq = 0;
  let timer = 0;

  function storage() {
    try { return window.sessionStorage; } catch (e) { return null; }  // storage may be turned off
  }
  function loadToken() {
    const s = storage();
    if (s) tokenInput.value = s.getItem(TOKEN_KEY) || '';
  }
  function saveToken() {
    const s = storage();
    if (!s) return;
    const v = tokenInput.value.trim();
    if (v) s.setItem(TOKEN_KEY, v); else s.removeItem(TOKEN_KEY);
  }
  function show(text, bad) {
    message.textContent = text;
    message.className = bad ? 'bad' : 'ok';
  }
  function refusal(status, reply) {
    const detail = reply && typeof reply.error === 'string' ? reply.error : '';
    return status + ' ' + (WHY[status] || 'HTTP error') + (detail ? ': ' + detail : '');
  }
  function fmt(v) { return v >= 100 || Number.isInteger(v) ? String(Math.round(v)) : v.toFixed(1); }
  function fmtMs(ms) { return ms >= 10000 ? fmt(ms / 1000) + ' s' : ms + ' ms'; }

  async function getJson(path) {
    const headers = {'Accept': 'application/json'};
    const token = tokenInput.value.trim();
    if (token) headers['Authorization'] = 'Bearer ' + token;  // canal.admin.readRequiresToken
    const r = await fetch(path, {headers: headers, cache: 'no-store', credentials: 'omit'});
    let reply = null;
    try { reply = await r.json(); } catch (e) { reply = null; }
    return {status: r.status, ok: r.ok, reply: reply};
  }

  function cell(tr, cls) {
    const td = document.createElement('td');
    td.className = cls;
    tr.appendChild(td);
    return td;
  }
  function sparkCell(tr, cls) {
    const td = cell(tr, cls);
    const svg = document.createElementNS(SVG, 'svg');
    svg.setAttribute('class', 'spark');
    svg.setAttribute('width', String(W));
    svg.setAttribute('height', String(H));
    svg.setAttribute('viewBox', '0 0 ' + W + ' ' + H);
    const title = document.createElementNS(SVG, 'title');
    const line = document.createElementNS(SVG, 'polyline');
    svg.appendChild(title);
    svg.appendChild(line);
    const label = document.createElement('span');
    label.className = 'spark-label';
    td.appendChild(svg);
    td.appendChild(label);
    return {svg: svg, title: title, line: line, label: label};
  }
  function drawSpark(spark, values, unit) {
    const nums = (Array.isArray(values) ? values : []).map((v) => (typeof v === 'number' && isFinite(v) ? v : null));
    const known = nums.filter((v) => v !== null);
    const max = known.reduce((m, v) => Math.max(m, v), 0);
    const points = [];
    nums.forEach((v, i) => {
      if (v === null) return;
      const x = nums.length > 1 ? 1 + (i * (W - 2)) / (nums.length - 1) : W / 2;
      const y = H - 1 - (max > 0 ? (v / max) * (H - 2) : 0);
      points.push(x.toFixed(1) + ',' + y.toFixed(1));
    });
    spark.line.setAttribute('points', points.join(' '));
    spark.svg.setAttribute('data-samples', String(known.length));
    const last = known.length ? known[known.length - 1] : null;
    spark.label.textContent = last === null ? '-' : unit === 'ms' ? fmtMs(last) : fmt(last) + ' ' + unit;
    spark.title.textContent = known.length ? 'last ' + known.length + ' samples, at most ' + fmt(max) + ' ' + unit
                                           : 'no samples yet';
  }
  function rowFor(name) {
    let row = rows.get(name);
    if (row) return row;
    const tr = document.createElement('tr');
    tr.setAttribute('data-destination', name);
    row = {tr: tr, buttons: []};
    cell(tr, 'name').textContent = name;
    row.state = cell(tr, 'state');
    row.detail = cell(tr, 'detail');
    row.position = cell(tr, 'position');
    row.lag = cell(tr, 'lag');
    row.client = cell(tr, 'client');
    row.rate = sparkCell(tr, 'rows-history');
    row.lagHistory = sparkCell(tr, 'lag-history');
    const actions = cell(tr, 'actions');
    for (const action of ['stop', 'start', 'restart']) {
      const b = document.createElement('button');
      b.type = 'button';
      b.textContent = action;
      b.setAttribute('data-action', action);
      b.addEventListener('click', () => act(name, action));
      actions.appendChild(b);
      row.buttons.push(b);
    }
    body.appendChild(tr);
    rows.set(name, row);
    return row;
  }
  function clientText(a, s) {
    if (a && a.clients) {
      const c = a.clients;
      if (c.connected) return c.address + ' (client id ' + c.client_id + ')';
      return c.subscriptions ? c.subscriptions + ' subscribed, none connected' : 'none';
    }
    if (s && s.client) return (s.client.connected ? '' : 'last ') + s.client.address + ' (client id ' + s.client.client_id + ')';
    return 'none';
  }
  function render(byName) {
    for (const [name, row] of rows) {
      if (!byName.has(name)) { row.tr.remove(); rows.delete(name); }
    }
    for (const [name, e] of byName) {
      const row = rowFor(name);
      const a = e.api, s = e.status;
      const state = a ? a.state : s ? s.state : '?';
      row.state.textContent = state;
      row.state.className = 'state ' + String(state).replace(/[^a-z]/g, '');
      const error = a ? a.last_error : s && s.last_error ? s.last_error.message : null;
      row.detail.textContent = (a ? a.detail || '' : '') + (error ? (a ? ': ' : '') + error : '');
      const pos = a ? a.position : s ? s.position_read : null;
      row.position.textContent = pos ? pos.journal + ':' + pos.offset : '-';
      row.position.title = pos && pos.gtid ? 'GTID ' + pos.gtid : '';
      const lag = a ? a.lag_ms : s ? s.lag_ms : null;
      row.lag.textContent = typeof lag === 'number' ? fmtMs(lag) : '-';
      row.client.textContent = clientText(a, s);
      const h = s && s.history ? s.history : {};
      drawSpark(row.rate, h.rows_per_second, 'rows/s');
      drawSpark(row.lagHistory, h.lag_ms, 'ms');
      for (const b of row.buttons) b.disabled = busy;
    }
  }

  async function refresh() {
    clearTimeout(timer);
    const mine = ++seq;
    let note = '';
    try {
      const [status, api] = await Promise.all([getJson('/status.json'), getJson('/api/destinations')]);
      if (mine !== seq) return;  // a newer refresh started (after an action): its answer counts
      const byName = new Map();
      if (status.ok && status.reply && Array.isArray(status.reply.destinations)) {
        for (const d of status.reply.destinations) byName.set(String(d.name), {status: d});
        const healthy = $('healthy');
        if (healthy) {
          healthy.textContent = status.reply.healthy ? 'healthy: every destination active here is streaming'
                                                     : 'not healthy';
          healthy.className = status.reply.healthy ? 'ok' : 'bad';
        }
      } else {
        note += ' /status: ' + refusal(status.status, status.reply) + '.';
      }
      if (api.ok && api.reply && Array.isArray(api.reply.destinations)) {
        for (const d of api.reply.destinations) {
          const e = byName.get(String(d.name)) || {};
          e.api = d;
          byName.set(String(d.name), e);
        }
      } else {
        note += ' admin API: ' + refusal(api.status, api.reply) + '.';
      }
      render(byName);
      $('updated').textContent = 'updated ' + new Date().toLocaleTimeString() + note;
    } catch (e) {
      if (mine !== seq) return;
      $('updated').textContent = 'the server does not answer (' + e.message + '); trying again';
    }
    timer = setTimeout(refresh, POLL_MS);
  }

  function setBusy(on) {
    busy = on;
    for (const row of rows.values()) for (const b of row.buttons) b.disabled = on;
  }

  async function act(name, action) {
    const token = tokenInput.value.trim();
    if (!token) {
      show('Type the admin token first: ' + action + ' needs it.', true);
      tokenInput.focus();
      return;
    }
    if (!window.confirm(action + ' destination "' + name + '" on this server?')) {
      show(action + ' ' + name + ': cancelled', false);
      return;
    }
    setBusy(true);
    show(action + ' ' + name + ': sent, waiting for the server', false);
    try {
      const r = await fetch('/api/destinations/' + encodeURIComponent(name) + '/' + action,
                            {method: 'POST', headers: {'Authorization': 'Bearer ' + token}, cache: 'no-store',
                             credentials: 'omit'});
      let reply = null;
      try { reply = await r.json(); } catch (e) { reply = null; }
      if (r.ok && reply && reply.ok) {
        const now = reply.state && reply.state.state ? reply.state.state : '?';
        show(action + ' ' + name + ': ' + reply.result + '; state now ' + now, false);
      } else {
        show(action + ' ' + name + (r.status >= 500 ? ' failed: ' : ' refused: ') + refusal(r.status, reply), true);
      }
    } catch (e) {
      show(action + ' ' + name + ': the server does not answer (' + e.message + ')', true);
    } finally {
      setBusy(false);
    }
    refresh();
  }

  loadToken();
  tokenInput.addEventListener('input', saveToken);
  $('forget').addEventListener('click', () => { tokenInput.value = ''; saveToken(); show('token forgotten', false); });
  refresh();
})();
)JS";

}  // namespace

std::string_view AdminPageScript() { return kScript; }
std::string_view AdminPageStyle() { return kStyle; }
std::string_view AdminPageSection() { return kSection; }

}  // namespace canal::server
