// A node's or a link's page: its cells over time as line charts (the
// trends of /api/v1), when it was first blamed, and per run what the run
// said about it: its preflight (nodes) with remedies, blame and regressions.
(function () {
  'use strict';
  const { el } = gdr;
  const p = gdr.params;
  const isNode = document.body.dataset.page === 'node';
  const cluster = p.get('cluster') || '';
  const node = p.get('node') || '', src = p.get('src') || '', dst = p.get('dst') || '';
  const rail = p.get('rail') !== null && p.get('rail') !== '' ? Number(p.get('rail')) : null;
  const api = '/api/v1/clusters/' + encodeURIComponent(cluster);
  const ms = (ts) => new Date(ts).getTime();

  function blamedLine(h) {
    if (!Number(h.runsBlamed || 0)) return el('p', { id: 'first-blamed', text: 'Not blamed in the last ' + (h.runs || []).length + ' runs.' });
    return el('p', { id: 'first-blamed' }, el('b', { text: 'First blamed ' }),
      el('a', { href: gdr.runHref(h.firstBlamedRunId), text: gdr.time(h.firstBlamedAt) }), ' (' + gdr.ago(h.firstBlamedAt) + ')',
      h.blamedSinceRunId ? el('span', {}, '; blamed in every run since ', el('a', { href: gdr.runHref(h.blamedSinceRunId), text: gdr.time(h.blamedSince) })) : '',
      '; ' + h.runsBlamed + ' of the last ' + (h.runs || []).length + ' runs name it.');
  }

  function runsTable(h) {
    const rows = (h.runs || []).map((e) => {
      const said = el('div');
      for (const b of e.blame || []) said.append(el('div', {}, gdr.badge('blame ' + b.kind, 'fail'), ' ', b.subject, ': ', b.reason || ''));
      for (const g of e.regressions || []) {
        said.append(el('div', {}, gdr.badge('regressed', 'low'), ' ', g.subject, ' ', gdr.gbps(g.beforeGbps), ' \u2192 ', gdr.gbps(g.afterGbps), ' Gb/s (\u2212' + gdr.pct(g.dropFraction) + ')'));
      }
      if (e.excluded) said.append(el('div', {}, gdr.badge('left out', 'neutral'), ' ', e.excluded));
      if (!e.inRun && !e.excluded) said.append(el('span', { class: 'muted', text: 'not in this run' }));
      const cells = [el('a', { href: gdr.runHref(e.runId), text: gdr.time(e.startedAt) }), gdr.passBadge(!!e.passed)];
      if (isNode) {
        const pf = el('div');
        if (!e.preflightRan) pf.append(el('span', { class: 'muted', text: 'no preflight' }));
        else {
          pf.append(gdr.checkBadge(e.preflight.overall));
          for (const c of e.preflight.problems || []) {
            pf.append(el('div', {}, gdr.checkBadge(c.status), ' ', el('code', { text: c.id }), ' ', c.summary || '',
              c.remediation ? el('div', {}, el('span', { class: 'muted', text: 'remedy: ' }), el('code', { text: c.remediation })) : ''));
          }
        }
        cells.push(pf);
      }
      cells.push(said);
      return cells;
    });
    return gdr.table(isNode ? ['run', 'verdict', 'preflight', 'blame and regressions'] : ['run', 'verdict', 'blame and regressions'], rows, { id: 'history-table' });
  }

  async function nodeCharts(box) {
    const t = await gdr.json(api + '/trends/node' + gdr.query({ node: node, last: 60, rail: rail === null ? '' : rail }));
    const points = t.points || [];
    if (!points.length) { box.append(el('p', { class: 'muted', text: 'No stored cell of this node.' })); return; }
    const byRail = new Map();
    for (const pt of points) {
      const r = pt.rail || 0;
      if (!byRail.has(r)) byRail.set(r, []);
      byRail.get(r).push(pt);
    }
    box.append(el('h2', { text: 'Median of its cells over time (both directions, each rail\u2019s verdict size)' }));
    gdr.lineChart(box, [...byRail.entries()].map(([r, pts]) => ({ label: 'rail ' + r, data: pts.map((x) => ({ x: ms(x.startedAt), y: x.bwAvgGbps || 0 })) })),
      { label: 'node median Gb/s over time' });
    box.append(el('h2', { text: 'Its low and failed cells' }));
    gdr.lineChart(box, [...byRail.entries()].flatMap(([r, pts]) => [
      { label: 'low, rail ' + r, data: pts.map((x) => ({ x: ms(x.startedAt), y: x.lowCells || 0 })) },
      { label: 'failed, rail ' + r, data: pts.map((x) => ({ x: ms(x.startedAt), y: x.failedCells || 0 })) }]),
    { yTitle: 'cells', integer: true, label: 'low and failed cells over time' });
  }

  async function linkCharts(box) {
    const r = rail === null ? 0 : rail;
    const get = (a, b) => gdr.json(api + '/trends/link' + gdr.query({ src: a, dst: b, rail: r, last: 60 }));
    const [fw, bw] = await Promise.all([get(src, dst), get(dst, src)]);
    const ds = [];
    for (const [name, t] of [[src + ' \u2192 ' + dst, fw], [dst + ' \u2192 ' + src, bw]]) {
      const pts = t.points || [];
      if (pts.length) ds.push({ label: name, data: pts.map((x) => ({ x: ms(x.startedAt), y: x.status === 'RESULT_STATUS_OK' ? (x.bwAvgGbps || 0) : 0 })) });
    }
    box.append(el('h2', { text: 'Rail ' + r + ': BW average over time (each run\u2019s verdict size; 0 = failed)' }));
    if (!ds.length) { box.append(el('p', { class: 'muted', text: 'No stored cell of this link on rail ' + r + '.' })); return; }
    gdr.lineChart(box, ds, { label: 'link Gb/s over time' });
    const last = (fw.points || []).slice(-1)[0];
    if (last) box.append(el('p', { class: 'muted', id: 'link-latest', text: 'latest ' + src + ' \u2192 ' + dst + ': ' + gdr.gbps(last.bwAvgGbps) + ' Gb/s (' + (last.verdict || 'no verdict') + ') in ' + last.runId }));
  }

  (async function () {
    try {
      if (!cluster || (isNode ? !node : !(src && dst))) {
        throw new Error(isNode ? 'this page needs ?cluster=NAME&node=NAME' : 'this page needs ?cluster=NAME&src=NODE&dst=NODE[&rail=R]');
      }
      const heading = isNode ? el('h1', {}, 'Node ', el('code', { text: node }))
        : el('h1', {}, 'Link ', gdr.nodeLink(cluster, src), ' \u2194 ', gdr.nodeLink(cluster, dst), rail === null ? '' : ' rail ' + rail);
      const charts = el('div', { id: 'charts' });
      const histBox = el('div', { id: 'history' });
      gdr.show(heading, el('p', { class: 'muted' }, 'cluster ', el('a', { href: '/ui/runs' + gdr.query({ cluster: cluster }), text: cluster })), charts, histBox);
      const hq = isNode ? '/ui/data/node' + gdr.query({ cluster: cluster, node: node, last: 30 })
        : '/ui/data/link' + gdr.query({ cluster: cluster, src: src, dst: dst, rail: rail === null ? '' : rail, last: 30 });
      const [h] = await Promise.all([gdr.json(hq), isNode ? nodeCharts(charts) : linkCharts(charts)]);
      histBox.append(blamedLine(h), el('h2', { text: isNode ? 'Preflight, blame and regressions per run' : 'Blame and regressions per run' }), runsTable(h));
      document.body.dataset.ready = 'true';
    } catch (err) {
      gdr.fail(err);
    }
  })();
})();
