// gdrbench dashboard: what every page shares. The pages read the server's
// JSON API (/api/v1, controller.proto in protobuf's JSON mapping) and the
// dashboard's own views (/ui/data, dashboard.proto) with the session
// cookie; writes carry X-Gdrbench-Request so the server knows they come
// from these scripts (cross-site request forgery defence).
(function (global) {
  'use strict';
  const body = document.body;

  const gdr = {
    role: body.dataset.role || 'read',
    user: body.dataset.user || '',
    canWrite() { return this.role === 'write'; },
    params: new URLSearchParams(global.location.search),
  };

  gdr.el = function (tag, attrs, ...kids) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === undefined || v === null || v === false) continue;
      if (k === 'class') e.className = v;
      else if (k === 'text') e.textContent = v;
      else if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
      else if (k === 'dataset') Object.assign(e.dataset, v);
      else e.setAttribute(k, v === true ? '' : v);
    }
    for (const k of kids.flat()) {
      if (k === undefined || k === null || k === false) continue;
      e.append(k instanceof Node ? k : String(k));
    }
    return e;
  };
  const el = gdr.el;

  async function request(path, opts) {
    const o = Object.assign({ credentials: 'same-origin' }, opts || {});
    o.headers = Object.assign({ 'X-Gdrbench-Request': '1' }, o.headers || {});
    const res = await fetch(path, o);
    if (!res.ok) {
      let msg = res.status + ' ' + res.statusText;
      try { const j = await res.json(); if (j.error && j.error.message) msg = j.error.message; } catch (e) { /* not JSON */ }
      const err = new Error(msg);
      err.status = res.status;
      throw err;
    }
    return res;
  }
  gdr.json = async (path, opts) => (await request(path, opts)).json();
  gdr.bytes = async (path) => (await request(path)).arrayBuffer();
  gdr.post = (path, bodyObj) => gdr.json(path, {
    method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(bodyObj || {}),
  });
  gdr.query = function (obj) {
    const q = new URLSearchParams();
    for (const [k, v] of Object.entries(obj)) if (v !== undefined && v !== null && v !== '') q.set(k, v);
    const s = q.toString();
    return s ? '?' + s : '';
  };

  // --- formatting
  gdr.time = function (ts) {
    if (!ts) return '-';
    const d = new Date(ts);
    const pad = (n) => String(n).padStart(2, '0');
    return d.getFullYear() + '-' + pad(d.getMonth() + 1) + '-' + pad(d.getDate()) + ' ' + pad(d.getHours()) + ':' + pad(d.getMinutes());
  };
  // An x tick of a time axis: the date when the ticks span days, the time of
  // day when they all fall on one day (same-day runs would all read "12-04"),
  // both when they span a few days.
  gdr.timeTick = function (v, ticks) {
    const t = gdr.time(v);
    const first = ticks && ticks.length ? ticks[0].value : v;
    const last = ticks && ticks.length ? ticks[ticks.length - 1].value : v;
    if (gdr.time(first).slice(0, 10) === gdr.time(last).slice(0, 10)) return t.slice(11, 16);
    if (last - first < 3 * 86400e3) return t.slice(5, 16);
    return t.slice(5, 10);
  };
  // Whether every point of every dataset has the same y (or there is none).
  gdr.flat = function (datasets) {
    const ys = datasets.flatMap((d) => d.data.map((p) => p.y));
    return ys.every((y) => y === ys[0]);
  };
  gdr.ago = function (ts) {
    if (!ts) return '';
    const s = (Date.now() - new Date(ts).getTime()) / 1000;
    if (s < 90) return Math.round(s) + ' s ago';
    if (s < 5400) return Math.round(s / 60) + ' min ago';
    if (s < 129600) return Math.round(s / 3600) + ' h ago';
    return Math.round(s / 86400) + ' days ago';
  };
  gdr.duration = function (a, b) {
    if (!a || !b) return '-';
    const s = (new Date(b) - new Date(a)) / 1000;
    if (s < 120) return s.toFixed(0) + ' s';
    if (s < 7200) return (s / 60).toFixed(1) + ' min';
    return (s / 3600).toFixed(1) + ' h';
  };
  gdr.seconds = (s) => (s === undefined || s < 0 ? '-' : s < 120 ? s.toFixed(0) + ' s' : (s / 60).toFixed(1) + ' min');
  gdr.gbps = (v) => (global.GdrMatrix ? global.GdrMatrix.gbpsText(v || 0) : Number(v || 0).toPrecision(3));
  gdr.pct = (f, digits) => (f === undefined || f === null ? '-' : (100 * f).toFixed(digits === undefined ? 1 : digits) + ' %');
  gdr.signedPct = (f) => ((f || 0) >= 0 ? '+' : '\u2212') + Math.abs(100 * (f || 0)).toFixed(1) + ' %';
  gdr.size = function (b) {
    b = Number(b || 0);
    if (global.GdrMatrix) return global.GdrMatrix.sizeName(b);
    return b + ' B';
  };
  gdr.num = (v) => Number(v || 0).toLocaleString('en-US');
  gdr.badge = (text, kind) => el('span', { class: 'badge ' + kind, text: text });
  gdr.passBadge = (passed) => gdr.badge(passed ? 'PASS' : 'FAIL', passed ? 'pass' : 'fail');
  gdr.checkBadge = function (status) {
    const s = String(status || '').replace('CHECK_STATUS_', '');
    return gdr.badge(s || '?', s === 'FAIL' ? 'fail' : s === 'WARN' ? 'warn' : s === 'PASS' ? 'pass' : 'neutral');
  };
  gdr.kindName = (k) => String(k || '').replace('REGRESSION_KIND_', '').toLowerCase();
  gdr.refName = (r) => (r === 'REGRESSION_REFERENCE_BASELINE' ? 'the baseline'
    : r === 'REGRESSION_REFERENCE_HISTORY' ? "each link's history" : 'the last passing run');

  // --- links
  gdr.runHref = (id) => '/ui/runs/' + encodeURIComponent(id);
  gdr.nodeHref = (cluster, node) => '/ui/node' + gdr.query({ cluster: cluster, node: node });
  gdr.linkHref = (cluster, src, dst, rail) => '/ui/link' + gdr.query({ cluster: cluster, src: src, dst: dst, rail: rail });
  gdr.nodeLink = (cluster, node) => el('a', { href: gdr.nodeHref(cluster, node), text: node });

  // Which nodes a blame subject names (controller/analysis' texts, see
  // server/web/blame_subject.h): checked against the run's node names.
  gdr.parseBlame = function (blame, names) {
    const s = blame.subject || '';
    const railOf = (t) => { const m = / rail (\d+)$/.exec(t); return m ? [t.slice(0, m.index), Number(m[1])] : [t, undefined]; };
    const link = (t) => {
      for (let at = t.indexOf('->'); at >= 0; at = t.indexOf('->', at + 1)) {
        const both = at > 0 && t[at - 1] === '<';
        const a = t.slice(0, both ? at - 1 : at), b = t.slice(at + 2);
        if (names.has(a) && names.has(b)) return { nodes: [a, b], both: both };
      }
      return null;
    };
    if (blame.kind === 'node') return names.has(s) ? { nodes: [s] } : null;
    if (blame.kind === 'nic') { const [n, r] = railOf(s); return names.has(n) ? { nodes: [n], rail: r } : null; }
    if (blame.kind === 'link') {
      const whole = link(s);
      if (whole) return whole;
      const [t, r] = railOf(s);
      const l = link(t);
      if (l) l.rail = r;
      return l;
    }
    return null;
  };

  // The subject of a blame or regression as links to its node or link page.
  gdr.subjectLinks = function (cluster, subject, parsed) {
    if (!parsed) return el('span', { text: subject });
    if (parsed.nodes.length === 1) {
      return el('span', {}, gdr.nodeLink(cluster, parsed.nodes[0]), parsed.rail !== undefined ? ' rail ' + parsed.rail : '');
    }
    return el('a', { href: gdr.linkHref(cluster, parsed.nodes[0], parsed.nodes[1], parsed.rail), text: subject });
  };

  gdr.table = function (headers, rows, opts) {
    const t = el('table', opts || {});
    t.append(el('thead', {}, el('tr', {}, headers.map((h) => {
      const num = h.startsWith('#');
      return el('th', { class: num ? 'num' : null, text: num ? h.slice(1) : h });
    }))));
    const tb = el('tbody');
    for (const r of rows) {
      tb.append(el('tr', {}, r.map((c, i) => el('td', { class: headers[i] && headers[i].startsWith('#') ? 'num' : null },
        c instanceof Node ? c : c === undefined || c === null ? '' : String(c)))));
    }
    t.append(tb);
    return t;
  };

  gdr.main = document.getElementById('main');
  gdr.show = function (...kids) { gdr.main.textContent = ''; gdr.main.append(...kids); };
  gdr.fail = function (err) {
    console.error(err);
    gdr.main.append(el('p', { class: 'error', role: 'alert', text: String(err.message || err) }));
    document.body.dataset.error = String(err.message || err);
  };

  // A line chart over time (Chart.js 3 from Debian's libjs-chart.js, linear
  // x axis in ms since the epoch: no date adapter needed).
  gdr.lineChart = function (container, datasets, opts) {
    opts = opts || {};
    const wrap = el('div', { class: 'chart' });
    const canvas = el('canvas', { role: 'img', 'aria-label': opts.label || 'chart' });
    wrap.append(canvas);
    container.append(wrap);
    if (!global.Chart) { wrap.replaceWith(el('p', { class: 'error', text: 'Chart.js did not load (libjs-chart.js)' })); return null; }
    const palette = ['#1f5fbf', '#c62828', '#1f8a3b', '#b7791f', '#7b3fa0', '#0f7c86', '#5f6675', '#d0487f'];
    return new global.Chart(canvas, {
      type: 'line',
      data: { datasets: datasets.map((d, i) => Object.assign({ borderColor: palette[i % palette.length],
        backgroundColor: palette[i % palette.length], pointRadius: 2.5, borderWidth: 1.6, tension: 0 }, d)) },
      options: {
        animation: false, maintainAspectRatio: false, parsing: false, normalized: true,
        interaction: { mode: 'nearest', intersect: false },
        scales: {
          x: { type: 'linear', ticks: { callback: (v, i, ticks) => gdr.timeTick(v, ticks), maxTicksLimit: 8 } },
          // Gb/s and counts are never negative: Chart.js pads a flat series (all
          // 0) by one unit both ways unless the axis begins at zero. Counts
          // (opts.integer) start at 0 and step by whole numbers.
          y: { title: { display: true, text: opts.yTitle || 'Gb/s' },
            beginAtZero: !!opts.zero || !!opts.integer || gdr.flat(datasets), suggestedMax: opts.yMax,
            ticks: opts.integer ? { precision: 0 } : {} },
        },
        plugins: {
          legend: { position: 'bottom' },
          tooltip: { callbacks: { title: (items) => items.length ? gdr.time(items[0].parsed.x) : '' } },
        },
      },
    });
  };

  global.gdr = gdr;
})(window);
