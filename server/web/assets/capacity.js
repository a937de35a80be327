// The capacity report of a cluster over a period (/api/v1/clusters/C/capacity,
// capacity.proto): per rail and per leaf/spine group the distribution of
// delivered bandwidth (min, p5, median, max) against the link rate, intra-
// against cross-leaf, the trend over the period, headroom, and the weakest
// links with their own trend. CSV from the same report; printable.
(function () {
  'use strict';
  const { el } = gdr;
  const p = gdr.params;
  const state = { cluster: p.get('cluster') || '', days: Number(p.get('days') || 30) };
  const SVG = 'http://www.w3.org/2000/svg';

  function controls(clusters) {
    const cl = el('select', { name: 'cluster', onchange: (e) => go({ cluster: e.target.value }) },
      clusters.map((c) => el('option', { value: c.name, text: c.name, selected: c.name === state.cluster })));
    const days = el('select', { name: 'days', onchange: (e) => go({ days: e.target.value }) },
      [7, 30, 90, 180, 365].map((d) => el('option', { value: d, text: 'last ' + d + ' days', selected: d === state.days })));
    const csv = el('a', { id: 'capacity-csv', href: '/api/v1/clusters/' + encodeURIComponent(state.cluster) + '/capacity.csv' + gdr.query({ days: state.days }), text: 'CSV' });
    return el('div', { class: 'filters' }, el('label', {}, 'cluster', cl), el('label', {}, 'period', days),
      el('span', {}, csv, ' \u00b7 ', el('button', { type: 'button', text: 'print / PDF', onclick: () => window.print() })));
  }

  function go(change) {
    const q = Object.assign({ cluster: state.cluster, days: state.days }, change);
    location.href = '/ui/capacity' + gdr.query(q);
  }

  // Where min, p5, median and max sit against the link rate.
  function distBar(g) {
    const top = Math.max(g.linkGbps || 0, g.maxGbps || 0) || 1;
    const pos = (v) => (100 * (v || 0) / top).toFixed(2) + '%';
    const bar = el('div', { class: 'bar', title: 'min ' + gdr.gbps(g.minGbps) + ', p5 ' + gdr.gbps(g.p5Gbps) + ', median ' + gdr.gbps(g.medianGbps) + ', max ' + gdr.gbps(g.maxGbps) + ' Gb/s' + (g.linkGbps ? ' of ' + gdr.gbps(g.linkGbps) : '') });
    const range = el('i'); range.style.left = pos(g.minGbps); range.style.width = 'calc(' + pos(g.maxGbps) + ' - ' + pos(g.minGbps) + ')';
    const p5 = el('i'); p5.style.left = pos(g.p5Gbps); p5.style.width = 'calc(' + pos(g.maxGbps) + ' - ' + pos(g.p5Gbps) + ')'; p5.style.background = '#3f9a57';
    const med = el('b'); med.style.left = pos(g.medianGbps);
    bar.append(range, p5, med);
    if (g.linkGbps) { const line = el('s'); line.style.left = pos(g.linkGbps); bar.append(line); }
    return bar;
  }

  function spark(points, link) {
    const w = 120, h = 28;
    const s = document.createElementNS(SVG, 'svg');
    s.setAttribute('width', w); s.setAttribute('height', h); s.setAttribute('class', 'spark');
    const vals = points.map((x) => x.gbps || 0);
    const top = Math.max(link || 0, ...vals) || 1;
    const pts = vals.map((v, i) => ((vals.length > 1 ? i / (vals.length - 1) : 0.5) * (w - 4) + 2).toFixed(1) + ',' + (h - 2 - (v / top) * (h - 4)).toFixed(1));
    const line = document.createElementNS(SVG, 'polyline');
    line.setAttribute('points', pts.join(' ')); line.setAttribute('fill', 'none'); line.setAttribute('stroke', '#c62828'); line.setAttribute('stroke-width', '1.5');
    s.append(line);
    return s;
  }

  function railSection(rail, groups, report) {
    const all = groups.find((g) => g.group === 'all') || groups[0];
    const box = el('div', { class: 'rail-block', dataset: { rail: rail } },
      el('h2', { text: 'Rail ' + rail + (all.linkGbps ? ' (link ' + gdr.gbps(all.linkGbps) + ' Gb/s)' : ' (link rate unknown)') }));
    const t = (pt) => new Date(pt.startedAt).getTime();
    const ds = [
      { label: 'max', data: (all.trend || []).map((x) => ({ x: t(x), y: x.maxGbps || 0 })) },
      { label: 'median', data: (all.trend || []).map((x) => ({ x: t(x), y: x.medianGbps || 0 })) },
      { label: 'p5', data: (all.trend || []).map((x) => ({ x: t(x), y: x.p5Gbps || 0 })) },
      { label: 'min', data: (all.trend || []).map((x) => ({ x: t(x), y: x.minGbps || 0 })) },
    ];
    for (const name of ['intra-leaf', 'cross-leaf']) {
      const g = groups.find((x) => x.group === name);
      if (g) ds.push({ label: name + ' median', borderDash: [4, 3], data: (g.trend || []).map((x) => ({ x: t(x), y: x.medianGbps || 0 })) });
    }
    box.append(el('h3', { text: 'Trend over the period (every cell of the rail, per run)' }));
    gdr.lineChart(box, ds, { yMax: all.linkGbps || undefined, label: 'rail ' + rail + ' bandwidth over the period' });
    const acc = report.acceptanceFraction || 0;
    box.append(gdr.table(['group', '#cells', '#failed', '#min', '#p5', '#median', '#max', 'distribution vs link rate', '#median % of link', '#p5 % of link',
      '#p5 \u2212 ' + (acc ? Math.round(100 * acc) + ' % line' : 'line'), '#median change'], groups.map((g) => [
      g.group, gdr.num(g.okCells), gdr.num(g.failedCells), gdr.gbps(g.minGbps), gdr.gbps(g.p5Gbps), gdr.gbps(g.medianGbps), gdr.gbps(g.maxGbps),
      distBar(g), g.linkGbps ? gdr.pct(g.medianFraction) : '-', g.linkGbps ? gdr.pct(g.p5Fraction) : '-',
      g.linkGbps && acc ? el('span', { class: (g.p5MarginFraction || 0) < 0 ? 'error' : null, text: gdr.signedPct(g.p5MarginFraction) }) : '-',
      gdr.signedPct(g.medianChangeFraction)]), { class: 'groups', dataset: { rail: rail } }));
    return box;
  }

  function weakest(report) {
    const box = el('div', { id: 'weakest-box' }, el('h2', { text: 'Weakest links' }),
      el('p', { class: 'muted', text: 'Lowest share of the link rate in the newest run that measured them; the trend is every run of the period.' }));
    const rows = (report.weakest || []).map((w) => [w.rail || 0,
      el('a', { href: gdr.linkHref(report.cluster, w.src, w.dst, w.rail || 0), text: w.src + ' \u2192 ' + w.dst }),
      w.srcLeaf || w.dstLeaf ? (w.srcLeaf || '?') + ' \u2192 ' + (w.dstLeaf || '?') : '-',
      gdr.gbps(w.latestGbps), w.latestFraction ? gdr.pct(w.latestFraction) : '-', gdr.gbps(w.firstGbps),
      el('span', { class: (w.changeFraction || 0) < -0.05 ? 'error' : null, text: gdr.signedPct(w.changeFraction) }),
      gdr.gbps(w.medianGbps), spark(w.trend || [], w.linkGbps), (w.trend || []).length]);
    box.append(gdr.table(['#rail', 'link', 'leaves', '#latest Gb/s', '#% of link', '#first Gb/s', '#change', '#median', 'trend', '#runs'], rows, { id: 'weakest' }));
    return box;
  }

  (async function () {
    try {
      const clusters = (await gdr.json('/api/v1/clusters')).clusters || [];
      if (!state.cluster && clusters.length) state.cluster = clusters[0].name;
      if (!state.cluster) { gdr.show(el('h1', { text: 'Capacity' }), el('p', { class: 'muted', text: 'No cluster has stored runs yet.' })); return; }
      const r = await gdr.json('/api/v1/clusters/' + encodeURIComponent(state.cluster) + '/capacity' + gdr.query({ days: state.days, weakest: 20 }));
      const head = el('div', {}, el('h1', { text: 'Capacity of ' + r.cluster + ', the last ' + r.days + ' days' }), controls(clusters),
        el('p', { class: 'muted', text: gdr.time(r.since) + ' \u2013 ' + gdr.time(r.until) + ': ' + (r.runs || 0) + ' runs' +
          (r.runsWithoutStats ? ', ' + r.runsWithoutStats + ' more stored before the server kept capacity statistics' : '') }),
        el('p', { id: 'capacity-summary', text: r.summary || '' }),
        r.topologyLabelled ? '' : el('p', { class: 'muted', text: 'The runs carry no leaf labels: add leaf: (and spine_group:) to the inventory\u2019s nodes for per-leaf groups.' }));
      gdr.show(head);
      const byRail = new Map();
      for (const g of r.groups || []) {
        const k = g.rail || 0;
        if (!byRail.has(k)) byRail.set(k, []);
        byRail.get(k).push(g);
      }
      for (const [rail, groups] of byRail) gdr.main.append(railSection(rail, groups, r));
      gdr.main.append(weakest(r));
      document.body.dataset.ready = 'true';
    } catch (err) {
      gdr.fail(err);
    }
  })();
})();
