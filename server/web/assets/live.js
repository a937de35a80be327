// A live run (gdrbench sweep --server streaming its finished tests, issue
// 30): its state from /api/v1/live-runs/ID and its cells as they land, read
// from /api/v1/live-runs/ID/cells from the last test seen on, every 2 s.
// A matrix per rail and size (nodes up to 64; past that, the latest cells),
// and the stored run's link once the final upload closed the live run.
(function () {
  'use strict';
  const { el } = gdr;
  const runId = decodeURIComponent(location.pathname.split('/').pop());
  const title = el('h1', {}, 'Live run ', el('code', { text: runId }));
  const facts = el('div', { class: 'kv', id: 'live-facts' });
  const grids = el('div', { id: 'live-cells' });
  const latest = el('div', { id: 'live-latest' });
  const cells = new Map();  // "rail>dstRail@size|src|dst" -> the latest cell
  let nextTest = 0, plan = null, landed = 0;
  const recent = [];

  function key(c) { return (c.rail || 0) + '>' + (c.dstRail === undefined ? (c.rail || 0) : c.dstRail) + '@' + c.sizeBytes; }

  function render() {
    grids.textContent = '';
    latest.textContent = '';
    const nodes = (plan && plan.nodes) || [];
    const lanes = new Map();
    for (const [k, c] of cells) {
      const lane = k.split('|')[0];
      if (!lanes.has(lane)) lanes.set(lane, []);
      lanes.get(lane).push(c);
    }
    if (nodes.length && nodes.length <= 64) {
      const order = (lane) => lane.split(/[>@]/).map(Number);
      const byLane = (a, b) => { const x = order(a[0]), y = order(b[0]); return x[0] - y[0] || x[1] - y[1] || x[2] - y[2]; };
      for (const [lane, list] of [...lanes.entries()].sort(byLane)) {
        const at = new Map(list.map((c) => [c.src + '|' + c.dst, c]));
        const [rails, size] = lane.split('@');
        grids.append(el('h2', { text: 'rail ' + rails.replace('>', ' \u2192 ') + ', ' + gdr.size(Number(size)) }),
          gdr.table(['src \\ dst'].concat(nodes), nodes.map((s) => [s].concat(nodes.map((d) => {
            const c = at.get(s + '|' + d);
            if (!c) return s === d ? '' : '\u00b7';
            const ok = c.status === 'RESULT_STATUS_OK';
            return el('span', { class: ok ? '' : 'error', title: c.status, text: ok ? gdr.gbps(c.bwAvgGbps) : 'ERR' });
          }))), { class: 'live-matrix' }));
      }
    }
    latest.append(el('h2', { text: 'Latest cells' }), gdr.table(['rail', 'size', 'src', 'dst', 'status', 'Gb/s'],
      recent.slice(-50).reverse().map((c) => [String(c.rail || 0), gdr.size(Number(c.sizeBytes)), c.src, c.dst,
        c.status.replace('RESULT_STATUS_', '').toLowerCase(), gdr.gbps(c.bwAvgGbps)])));
  }

  function showState(r) {
    facts.textContent = '';
    const fact = (k, v) => facts.append(el('span', {}, el('b', { text: k + ' ' }), v));
    if (r.state === 'LIVE_RUN_STATE_STORED') {
      fact('state', gdr.badge('stored', 'pass'));
      facts.append(el('a', { href: gdr.runHref(runId), id: 'live-run-link', text: 'open the stored run' }));
      return true;
    }
    plan = r.plan || plan;
    fact('state', gdr.badge('in progress', 'running'));
    fact('cluster', (plan && plan.cluster) || 'default');
    fact('tests', gdr.num(r.nextTest) + (plan && Number(plan.testsPlanned) ? ' / ' + gdr.num(plan.testsPlanned) : ''));
    fact('cells', gdr.num(r.cells));
    fact('opened by', r.openedBy || '-');
    fact('updated', gdr.ago(r.updatedAt));
    return false;
  }

  async function poll() {
    const base = '/api/v1/live-runs/' + encodeURIComponent(runId);
    const done = showState(await gdr.json(base));
    for (let page = 0; page < 20 && !done; ++page) {
      const r = await gdr.json(base + '/cells' + gdr.query({ from_test: nextTest, page_size: 5000 }));
      const got = r.cells || [];
      for (const c of got) {
        cells.set(key(c) + '|' + c.src + '|' + c.dst, c);
        recent.push(c);
      }
      if (recent.length > 200) recent.splice(0, recent.length - 200);
      landed += got.length;
      nextTest = Number(r.nextTest || nextTest);
      if (!got.length) break;
    }
    render();
    document.body.dataset.cells = String(landed);
    document.body.dataset.ready = 'true';
    if (!done) setTimeout(() => poll().catch(gdr.fail), 2000);
  }

  gdr.show(title, facts, grids, latest,
    el('p', { class: 'muted', text: 'Live: cells appear as the sweep\u2019s controller sends them; the run is stored when the sweep ends.' }));
  poll().catch(gdr.fail);
})();
