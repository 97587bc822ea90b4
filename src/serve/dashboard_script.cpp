#include "serve/dashboard_page.hpp"

namespace overhead::serve {

// The dashboard's script: polls GET /metrics once a second, parses the Prometheus text and fills
// the page's tables. It writes text with textContent only (never markup), so a label in the
// exposition cannot become markup in the page. Rates and latencies are computed from the change
// of counters and histograms between scrapes, as Prometheus' rate() and histogram_quantile() do,
// so they show what happens now rather than an average since the server started.
std::string_view dashboard_js() {
  return R"js('use strict';
(() => {
  const POLL_MS = 1000;
  const WINDOW_MS = 10000;   // the "last 10 s" columns
  const SPARK_POINTS = 120;  // two minutes of polls
  const STAGE_ORDER = ['queue', 'render', 'encode', 'decode', 'publish', 'total'];

  // The bearer token lives in this closure only: no storage, no URL, no cookie.
  let token = '';
  let timer = 0;
  let generation = 0;  // bumped by a new token, so a scrape already under way cannot start a second loop
  let polls = 0;
  let history = [];  // {t, m}: scrapes over the last window, oldest first
  let spark = [];    // requests/s between consecutive scrapes

  const $ = (id) => document.getElementById(id);

  // ---- Prometheus text format (version 0.0.4) ----

  function parseValue(s) {
    if (s === '+Inf') return Infinity;
    if (s === '-Inf') return -Infinity;
    return Number(s);
  }

  // One sample line: name, optional {labels}, value (an optional timestamp is ignored).
  // Returns null for a line that does not parse, which is skipped rather than failing the scrape.
  function parseLine(line) {
    let i = 0;
    while (i < line.length && line[i] !== '{' && line[i] !== ' ' && line[i] !== '\t') i++;
    const name = line.slice(0, i);
    if (!name) return null;
    const labels = {};
    if (line[i] === '{') {
      i++;
      for (;;) {
        while (line[i] === ' ' || line[i] === ',') i++;
        if (line[i] === '}') { i++; break; }
        const eq = line.indexOf('=', i);
        if (eq < 0 || line[eq + 1] !== '"') return null;
        const key = line.slice(i, eq).trim();
        let value = '';
        i = eq + 2;
        while (i < line.length && line[i] !== '"') {
          if (line[i] === '\\' && i + 1 < line.length) {
            const c = line[i + 1];
            value += c === 'n' ? '\n' : c;
            i += 2;
          } else {
            value += line[i++];
          }
        }
        if (i >= line.length) return null;
        i++;
        labels[key] = value;
      }
    }
    const rest = line.slice(i).trim().split(/\s+/);
    const value = parseValue(rest[0]);
    if (rest[0] === '' || Number.isNaN(value) && rest[0] !== 'NaN') return null;
    return { name, labels, value };
  }

  function parseExposition(text) {
    const samples = [];
    for (const raw of text.split('\n')) {
      const line = raw.trim();
      if (!line || line[0] === '#') continue;
      const s = parseLine(line);
      if (s) samples.push(s);
    }
    return samples;
  }

  // ---- The figures this page shows, out of one scrape ----

  const HISTOGRAMS = {
    overhead_stage_duration_seconds: ['stages', 'stage'],
    overhead_http_request_duration_seconds: ['routes', 'route'],
  };

  function histogramOf(map, key) {
    let h = map.get(key);
    if (!h) { h = { buckets: new Map(), sum: 0, count: 0 }; map.set(key, h); }
    return h;
  }

  function model(samples) {
    const m = { requests: new Map(), stages: new Map(), routes: new Map(), dead: new Map(), keys: new Map(),
                inFlight: NaN, awaiting: NaN, queueVisible: NaN, queueTaken: NaN };
    const keyOf = (k) => {
      let e = m.keys.get(k);
      if (!e) { e = { admitted: 0, refused: 0, prompt: 0, completion: 0, cost: 0 }; m.keys.set(k, e); }
      return e;
    };
    for (const { name, labels, value } of samples) {
      if (name === 'overhead_http_requests_total') {
        m.requests.set(labels.route + ' ' + labels.status, { route: labels.route, status: Number(labels.status), n: value });
      } else if (name === 'overhead_http_requests_in_flight') {
        m.inFlight = value;
      } else if (name === 'overhead_requests_awaiting_reply') {
        m.awaiting = value;
      } else if (name === 'overhead_input_queue_messages') {
        if (labels.state === 'visible') m.queueVisible = value;
        if (labels.state === 'in_flight') m.queueTaken = value;
      } else if (name === 'overhead_dead_letters_total') {
        m.dead.set(labels.kind, value);
      } else if (name === 'overhead_key_requests_total') {
        if (labels.outcome === 'admitted') keyOf(labels.key).admitted = value;
        else keyOf(labels.key).refused += value;
      } else if (name === 'overhead_key_tokens_total') {
        keyOf(labels.key)[labels.kind === 'prompt' ? 'prompt' : 'completion'] = value;
      } else if (name === 'overhead_key_cost_usd_total') {
        keyOf(labels.key).cost = value;
      } else {
        for (const [family, [field, label]] of Object.entries(HISTOGRAMS)) {
          if (!name.startsWith(family + '_')) continue;
          const h = histogramOf(m[field], labels[label]);
          const suffix = name.slice(family.length + 1);
          if (suffix === 'bucket') h.buckets.set(parseValue(labels.le), value);
          else if (suffix === 'sum') h.sum = value;
          else if (suffix === 'count') h.count = value;
        }
      }
    }
    return m;
  }

  // Requests answered on the /v1 routes: the work, without scrapes, health checks or this page.
  function answered(m) {
    let n = 0;
    for (const r of m.requests.values()) if (r.route.startsWith('/v1/')) n += r.n;
    return n;
  }

  // The histogram's change since `base` (all of it without one), buckets sorted by bound.
  function histogramDelta(now, base) {
    const buckets = [];
    for (const [le, c] of now.buckets) buckets.push([le, c - (base ? base.buckets.get(le) || 0 : 0)]);
    buckets.sort((a, b) => a[0] - b[0]);
    return { buckets, sum: now.sum - (base ? base.sum : 0), count: now.count - (base ? base.count : 0) };
  }

  // histogram_quantile(): the bucket holding rank q*count, linearly interpolated inside it.
  // Infinity when the rank falls in the +Inf bucket (above the last bound).
  function quantile(q, h) {
    if (!(h.count > 0)) return NaN;
    const rank = q * h.count;
    let prevLe = 0;
    let prevCum = 0;
    for (const [le, cum] of h.buckets) {
      if (cum >= rank) {
        if (le === Infinity) return Infinity;
        const inBucket = cum - prevCum;
        return inBucket > 0 ? prevLe + (le - prevLe) * (rank - prevCum) / inBucket : le;
      }
      prevLe = le;
      prevCum = cum;
    }
    return NaN;
  }

  function lastBound(h) {
    let b = NaN;
    for (const [le] of h.buckets) if (le !== Infinity) b = le;
    return b;
  }

  // ---- Formatting: plain numbers, units spelled out ----

  const DASH = '\u2014';
  function fmtCount(n) { return Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : DASH; }
  function fmtRate(r) {
    if (!Number.isFinite(r)) return DASH;
    return r.toFixed(r < 10 ? 2 : r < 100 ? 1 : 0);
  }
  function fmtSeconds(s, bound) {
    if (s === Infinity) return '> ' + fmtSeconds(bound);
    if (!Number.isFinite(s)) return DASH;
    if (s < 1e-3) return (s * 1e6).toPrecision(3) + ' \u00b5s';
    if (s < 1) return (s * 1e3).toPrecision(3) + ' ms';
    return s.toPrecision(3) + ' s';
  }

  function setText(id, text) { const el = $(id); if (el) el.textContent = text; }

  function setState(state, message) {
    document.body.dataset.state = state;
    setText('status', message);
  }

  // Replaces a table body's rows; each row is [key, cells...], and cells get ids
  // `${idPrefix}-${key}-${column}` when idPrefix is given.
  function fillBody(bodyId, rows, columns, emptyText, idPrefix) {
    const body = $(bodyId);
    const fresh = document.createElement('tbody');
    fresh.id = bodyId;
    if (rows.length === 0) {
      const tr = fresh.insertRow();
      const td = tr.insertCell();
      td.colSpan = columns.length + 1;
      td.textContent = emptyText;
    }
    for (const [key, ...cells] of rows) {
      const tr = fresh.insertRow();
      tr.dataset.key = key;
      const th = document.createElement('th');
      th.scope = 'row';
      th.textContent = key;
      tr.appendChild(th);
      cells.forEach((text, c) => {
        const td = tr.insertCell();
        if (idPrefix) td.id = idPrefix + '-' + key + '-' + columns[c];
        td.textContent = text;
      });
    }
    body.replaceWith(fresh);
  }

  const LATENCY_COLUMNS = ['count-window', 'mean-window', 'p50', 'p99', 'count', 'mean'];

  function latencyRows(now, base, field, order) {
    const keys = [...now[field].keys()];
    const rank = (k) => { const i = order.indexOf(k); return i < 0 ? order.length : i; };
    keys.sort((a, b) => rank(a) - rank(b) || (a < b ? -1 : a > b ? 1 : 0));
    return keys.map((k) => {
      const all = now[field].get(k);
      const w = base ? histogramDelta(all, base[field].get(k)) : null;
      const bound = lastBound(all);
      const wc = w ? w.count : NaN;
      return [k, w ? fmtCount(wc) : DASH,
              wc > 0 ? fmtSeconds(w.sum / wc) : DASH,
              wc > 0 ? fmtSeconds(quantile(0.5, w), bound) : DASH,
              wc > 0 ? fmtSeconds(quantile(0.99, w), bound) : DASH,
              fmtCount(all.count),
              all.count > 0 ? fmtSeconds(all.sum / all.count) : DASH];
    });
  }

  function errorRows(now, base) {
    const rows = [];
    for (const [key, r] of now.requests) {
      if (r.status < 400) continue;
      const before = base ? base.requests.get(key) : undefined;
      rows.push(['HTTP ' + r.status + ' on ' + r.route, base ? fmtCount(r.n - (before ? before.n : 0)) : DASH, fmtCount(r.n)]);
    }
    for (const [kind, n] of now.dead) {
      if (!(n > 0)) continue;
      const before = base ? base.dead.get(kind) || 0 : 0;
      rows.push(['dead letter: ' + kind, base ? fmtCount(n - before) : DASH, fmtCount(n)]);
    }
    rows.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
    return rows;
  }

  // One row per API key (keys with --api-keys; at most the gateway's label bound, the rest as _other).
  function keyRows(now, base) {
    const rows = [];
    for (const [key, k] of [...now.keys.entries()].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))) {
      const before = base ? base.keys.get(key) : undefined;
      rows.push([key, base ? fmtCount(k.admitted - (before ? before.admitted : 0)) : DASH, fmtCount(k.admitted), fmtCount(k.refused),
                 fmtCount(k.prompt), fmtCount(k.completion), '$' + (k.cost < 0.01 ? k.cost.toExponential(2) : k.cost.toFixed(4))]);
    }
    return rows;
  }

  function drawSparkline() {
    const peak = Math.max(0, ...spark);
    const step = 240 / (SPARK_POINTS - 1);
    const x0 = 240 - step * (spark.length - 1);
    const points = spark.map((v, i) => (x0 + i * step).toFixed(1) + ',' + (47 - (peak > 0 ? 44 * v / peak : 0)).toFixed(1));
    $('spark-line').setAttribute('points', points.join(' '));
    setText('spark-peak', fmtRate(peak));
  }

  function render(t, m) {
    // A counter going back means the server restarted: the old scrapes describe another process.
    if (history.length && answered(m) < answered(history[history.length - 1].m)) { history = []; spark = []; }
    const prev = history.length ? history[history.length - 1] : null;
    history.push({ t, m });
    while (history.length > 2 && history[1].t <= t - WINDOW_MS) history.shift();
    const base = history.length > 1 ? history[0] : null;

    if (prev) {
      const perPoll = (answered(m) - answered(prev.m)) / ((t - prev.t) / 1000);
      setText('throughput', fmtRate(perPoll));
      spark.push(perPoll);
      if (spark.length > SPARK_POINTS) spark.shift();
      drawSparkline();
    }
    setText('throughput-window', base ? fmtRate((answered(m) - answered(base.m)) / ((t - base.t) / 1000)) : DASH);
    setText('requests-total', fmtCount(answered(m)));
    setText('in-flight', fmtCount(m.inFlight));
    setText('awaiting-reply', fmtCount(m.awaiting));
    setText('queue-depth', fmtCount(m.queueVisible));
    setText('queue-taken', fmtCount(m.queueTaken));
    const b = base ? base.m : null;
    fillBody('stages-body', latencyRows(m, b, 'stages', STAGE_ORDER), LATENCY_COLUMNS, 'No chat request yet.', 'stage');
    fillBody('routes-body', latencyRows(m, b, 'routes', []), LATENCY_COLUMNS, 'No request yet.', '');
    fillBody('errors-body', errorRows(m, b), ['window', 'all'], 'None.', '');
    fillBody('keys-body', keyRows(m, b), ['window', 'admitted', 'refused', 'prompt', 'completion', 'cost'], 'No API key used yet.', 'key');
    polls++;
    document.body.dataset.polls = String(polls);
    const when = new Date().toLocaleTimeString('en-GB');
    setText('updated', when);
    setState('live', 'Live, updated ' + when);
  }

  // ---- Polling ----

  // Resolves true when polling should go on.
  async function poll() {
    let res;
    try {
      res = await fetch('/metrics', { cache: 'no-store', headers: token ? { Authorization: 'Bearer ' + token } : {} });
    } catch (e) {
      setState('error', 'Cannot reach /metrics (' + e.message + '); trying again.');
      return true;
    }
    if (res.status === 401) {
      // Polling again with the same (or no) token would only be refused again: wait for one.
      setState('auth', token ? 'The token was refused: enter it again.' : 'This server needs a bearer token to show its metrics.');
      $('token-form').hidden = false;
      $('token').focus();
      return false;
    }
    if (!res.ok) {
      setState('error', '/metrics answered HTTP ' + res.status + '; trying again.');
      return true;
    }
    const text = await res.text();
    render(performance.now(), model(parseExposition(text)));
    return true;
  }

  function loop() {
    const g = generation;
    timer = 0;
    poll().then((again) => { if (again && g === generation) timer = setTimeout(loop, POLL_MS); },
                (e) => {
                  setState('error', 'Dashboard error: ' + e.message);
                  if (g === generation) timer = setTimeout(loop, POLL_MS);
                });
  }

  $('token-form').addEventListener('submit', (ev) => {
    ev.preventDefault();
    const input = $('token');
    token = input.value.trim();
    input.value = '';
    $('token-form').hidden = true;
    setState('loading', 'Loading\u2026');
    generation++;
    if (timer) clearTimeout(timer);
    loop();
  });

  loop();
})();
)js";
}

}  // namespace overhead::serve
